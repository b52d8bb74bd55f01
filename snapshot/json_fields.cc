#include "snapshot/json_fields.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/time_format.h"

namespace cloneset::snapshot::internal {

std::string Path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  if (key.empty()) return std::string(parent);
  return Cat(parent, ".", key);
}

std::string Index(std::string_view parent, size_t i) { return Cat(parent, "[", i, "]"); }

absl::Status TypeError(std::string_view path, std::string_view expected, const Json& got) {
  return absl::InvalidArgumentError(Cat(path, ": expected ", expected, ", got ", got.type_name()));
}

const Json* Field(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::Status RequireObject(const Json& value, std::string_view path) {
  if (!value.is_object()) return TypeError(path, "object", value);
  return absl::OkStatus();
}

absl::Status RequireArray(const Json& value, std::string_view path) {
  if (!value.is_array()) return TypeError(path, "array", value);
  return absl::OkStatus();
}

absl::Status ReadString(const Json& value, std::string_view path, std::string* out) {
  if (!value.is_string()) return TypeError(path, "string", value);
  *out = value.get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadBool(const Json& value, std::string_view path, bool* out) {
  if (!value.is_boolean()) return TypeError(path, "boolean", value);
  *out = value.get<bool>();
  return absl::OkStatus();
}

absl::Status ReadInt64(const Json& value, std::string_view path, int64_t* out) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(Cat(path, ": ", u, " is out of range"));
    }
    *out = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  if (value.is_number_integer()) {
    *out = value.get<int64_t>();
    return absl::OkStatus();
  }
  if (value.is_number_float()) {
    return absl::InvalidArgumentError(Cat(path, ": expected integer, got ", value.dump()));
  }
  return TypeError(path, "integer", value);
}

absl::Status ReadInt32(const Json& value, std::string_view path, int32_t* out) {
  int64_t v = 0;
  SNAPSHOT_RETURN_IF_ERROR(ReadInt64(value, path, &v));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(Cat(path, ": ", v, " is out of the int32 range"));
  }
  *out = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status ReadIntOrString(const Json& value, std::string_view path, pb::IntOrString* out) {
  if (value.is_string()) {
    out->set_str_value(value.get<std::string>());
    return absl::OkStatus();
  }
  if (!value.is_number()) return TypeError(path, "integer or string", value);
  int32_t v = 0;
  SNAPSHOT_RETURN_IF_ERROR(ReadInt32(value, path, &v));
  out->set_int_value(v);
  return absl::OkStatus();
}

absl::Status ReadStringMap(const Json& value, std::string_view path,
                           google::protobuf::Map<std::string, std::string>* out) {
  SNAPSHOT_RETURN_IF_ERROR(RequireObject(value, path));
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) return TypeError(Path(path, key), "string", v);
    (*out)[key] = v.get<std::string>();
  }
  return absl::OkStatus();
}

absl::Status ReadStringList(const Json& value, std::string_view path,
                            google::protobuf::RepeatedPtrField<std::string>* out) {
  SNAPSHOT_RETURN_IF_ERROR(RequireArray(value, path));
  for (size_t i = 0; i < value.size(); ++i) {
    SNAPSHOT_RETURN_IF_ERROR(ReadString(value[i], Index(path, i), out->Add()));
  }
  return absl::OkStatus();
}

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const absl::Duration since_epoch = t - absl::UnixEpoch();
  const int64_t seconds = absl::ToInt64Seconds(since_epoch);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(since_epoch - absl::Seconds(seconds))));
}

absl::Time TimeOf(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

absl::Status TimeError(std::string_view path, std::string_view text) {
  return absl::InvalidArgumentError(Cat(path, ": \"", text, "\" is not an RFC3339 time"));
}

absl::Status ReadTime(const Json& value, std::string_view path, google::protobuf::Timestamp* out) {
  if (!value.is_string()) return TypeError(path, "RFC3339 string", value);
  const std::string& text = value.get_ref<const std::string&>();
  absl::StatusOr<absl::Time> t = base::ParseTime(text);
  if (!t.ok()) return TimeError(path, text);
  SetTimestamp(*t, out);
  return absl::OkStatus();
}

absl::Status ReadObjectMeta(const Json& value, std::string_view path, pb::ObjectMeta* out) {
  SNAPSHOT_RETURN_IF_ERROR(RequireObject(value, path));
  for (const auto& [key, v] : value.items()) {
    if (v.is_null()) continue;
    const std::string p = Path(path, key);
    if (key == "name") {
      SNAPSHOT_RETURN_IF_ERROR(ReadString(v, p, out->mutable_name()));
    } else if (key == "namespace") {
      SNAPSHOT_RETURN_IF_ERROR(ReadString(v, p, out->mutable_namespace_()));
    } else if (key == "uid") {
      SNAPSHOT_RETURN_IF_ERROR(ReadString(v, p, out->mutable_uid()));
    } else if (key == "resourceVersion") {
      SNAPSHOT_RETURN_IF_ERROR(ReadString(v, p, out->mutable_resource_version()));
    } else if (key == "generation") {
      int64_t g = 0;
      SNAPSHOT_RETURN_IF_ERROR(ReadInt64(v, p, &g));
      out->set_generation(g);
    } else if (key == "labels") {
      SNAPSHOT_RETURN_IF_ERROR(ReadStringMap(v, p, out->mutable_labels()));
    } else if (key == "annotations") {
      SNAPSHOT_RETURN_IF_ERROR(ReadStringMap(v, p, out->mutable_annotations()));
    } else if (key == "finalizers") {
      SNAPSHOT_RETURN_IF_ERROR(ReadStringList(v, p, out->mutable_finalizers()));
    } else if (key == "creationTimestamp") {
      SNAPSHOT_RETURN_IF_ERROR(ReadTime(v, p, out->mutable_creation_timestamp()));
    } else if (key == "deletionTimestamp") {
      SNAPSHOT_RETURN_IF_ERROR(ReadTime(v, p, out->mutable_deletion_timestamp()));
    } else if (key == "ownerReferences") {
      SNAPSHOT_RETURN_IF_ERROR(RequireArray(v, p));
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string rp = Index(p, i);
        const Json& r = v[i];
        SNAPSHOT_RETURN_IF_ERROR(RequireObject(r, rp));
        pb::OwnerReference* ref = out->add_owner_references();
        if (const Json* f = Field(r, "apiVersion")) {
          SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(rp, "apiVersion"), ref->mutable_api_version()));
        }
        if (const Json* f = Field(r, "kind")) {
          SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(rp, "kind"), ref->mutable_kind()));
        }
        if (const Json* f = Field(r, "name")) {
          SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(rp, "name"), ref->mutable_name()));
        }
        if (const Json* f = Field(r, "uid")) {
          SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(rp, "uid"), ref->mutable_uid()));
        }
        bool b = false;
        if (const Json* f = Field(r, "controller")) {
          SNAPSHOT_RETURN_IF_ERROR(ReadBool(*f, Path(rp, "controller"), &b));
          ref->set_controller(b);
        }
        if (const Json* f = Field(r, "blockOwnerDeletion")) {
          SNAPSHOT_RETURN_IF_ERROR(ReadBool(*f, Path(rp, "blockOwnerDeletion"), &b));
          ref->set_block_owner_deletion(b);
        }
      }
    }
  }
  return absl::OkStatus();
}


absl::Status ReadCondition(const Json& value, std::string_view path, pb::Condition* out) {
  SNAPSHOT_RETURN_IF_ERROR(RequireObject(value, path));
  if (const Json* f = Field(value, "type")) SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(path, "type"), out->mutable_type()));
  if (const Json* f = Field(value, "status")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(path, "status"), out->mutable_status()));
  }
  if (const Json* f = Field(value, "reason")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(path, "reason"), out->mutable_reason()));
  }
  if (const Json* f = Field(value, "message")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadString(*f, Path(path, "message"), out->mutable_message()));
  }
  if (const Json* f = Field(value, "lastTransitionTime")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadTime(*f, Path(path, "lastTransitionTime"), out->mutable_last_transition_time()));
  }
  if (const Json* f = Field(value, "lastUpdateTime")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadTime(*f, Path(path, "lastUpdateTime"), out->mutable_last_update_time()));
  }
  return absl::OkStatus();
}

absl::Status ParseDocument(std::string_view json, std::string_view what, Json* out) {
  try {
    *out = Json::parse(json.begin(), json.end());
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(Cat(what, ": malformed JSON at byte ", e.byte));
  }
  return RequireObject(*out, what);
}

}  // namespace cloneset::snapshot::internal
