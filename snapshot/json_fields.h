// Path-aware typed readers over nlohmann::json, shared by the nlohmann-based decoders of this folder (internal:
// include only from snapshot/*.cc). A JSON null counts as an absent field, as in Kubernetes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"

namespace cloneset::snapshot::internal {

namespace pb = ::cloneset::planner::v1;
using Json = nlohmann::json;

// absl::StrCat for std::string_view (Debian's abseil has its own string_view type).
inline void AppendPiece(std::string& out, std::string_view v) { out.append(v); }
inline void AppendPiece(std::string& out, absl::string_view v) { out.append(v.data(), v.size()); }
inline void AppendPiece(std::string& out, const char* v) { out.append(v); }
inline void AppendPiece(std::string& out, const std::string& v) { out.append(v); }
inline void AppendPiece(std::string& out, char v) { out.push_back(v); }
template <typename T>
  requires std::is_integral_v<T>
void AppendPiece(std::string& out, T v) {
  out.append(std::to_string(v));
}
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (AppendPiece(out, args), ...);
  return out;
}

// "a.b" (or "b" for an empty parent).
std::string Path(std::string_view parent, std::string_view key);
// `path[i]`.
std::string Index(std::string_view parent, size_t i);

// INVALID_ARGUMENT "<path>: expected <what>, got <type name>".
absl::Status TypeError(std::string_view path, std::string_view expected, const Json& got);

// The member `key` of `object`, or nullptr when missing or null. `object` must be an object.
const Json* Field(const Json& object, std::string_view key);

absl::Status RequireObject(const Json& value, std::string_view path);
absl::Status RequireArray(const Json& value, std::string_view path);

absl::Status ReadString(const Json& value, std::string_view path, std::string* out);
absl::Status ReadBool(const Json& value, std::string_view path, bool* out);
absl::Status ReadInt32(const Json& value, std::string_view path, int32_t* out);
absl::Status ReadInt64(const Json& value, std::string_view path, int64_t* out);
// A JSON integer, or a string which is kept as is (percentages are checked by Validate, not here).
absl::Status ReadIntOrString(const Json& value, std::string_view path, pb::IntOrString* out);
absl::Status ReadStringMap(const Json& value, std::string_view path,
                           google::protobuf::Map<std::string, std::string>* out);
absl::Status ReadStringList(const Json& value, std::string_view path,
                            google::protobuf::RepeatedPtrField<std::string>* out);
// RFC3339 ("2024-01-02T03:04:05Z", fractional seconds and offsets accepted).
absl::Status ReadTime(const Json& value, std::string_view path, google::protobuf::Timestamp* out);
// Timestamps are parsed and formatted by base/time_format.h; these convert to and from the message and word the
// decoders' error (shared with the simdjson pod decoder).
void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out);
absl::Time TimeOf(const google::protobuf::Timestamp& ts);
// INVALID_ARGUMENT "<path>: "<text>" is not an RFC3339 time".
absl::Status TimeError(std::string_view path, std::string_view text);

absl::Status ReadObjectMeta(const Json& value, std::string_view path, pb::ObjectMeta* out);
absl::Status ReadCondition(const Json& value, std::string_view path, pb::Condition* out);

// Parses `json` as one JSON document; a syntax error is INVALID_ARGUMENT naming the byte offset.
absl::Status ParseDocument(std::string_view json, std::string_view what, Json* out);

}  // namespace cloneset::snapshot::internal

// Returns from the enclosing function when `expr` yields a non-OK status.
#define SNAPSHOT_RETURN_IF_ERROR(expr)         \
  do {                                         \
    if (absl::Status _st = (expr); !_st.ok()) { \
      return _st;                              \
    }                                          \
  } while (false)
