#include "devcluster/k8s_protobuf.h"

#include <memory>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/unknown_field_set.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/time_format.h"
#include "devcluster/k8s/k8s_objects.pb.h"

namespace cloneset::devcluster {
namespace {

namespace pb = google::protobuf;
using nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);

struct Kind {
  const char* api_version;
  const char* kind;
  const pb::Message* prototype;
};

const std::vector<Kind>& Kinds() {
  static const auto* kinds = new std::vector<Kind>{
      {"v1", "ConfigMap", &k8s::ConfigMap::default_instance()},
      {"v1", "Namespace", &k8s::Namespace::default_instance()},
      {"v1", "Secret", &k8s::Secret::default_instance()},
      {"v1", "ServiceAccount", &k8s::ServiceAccount::default_instance()},
      {"v1", "Service", &k8s::Service::default_instance()},
      {"apps/v1", "Deployment", &k8s::Deployment::default_instance()},
      {"policy/v1", "PodDisruptionBudget", &k8s::PodDisruptionBudget::default_instance()},
      {"rbac.authorization.k8s.io/v1", "Role", &k8s::Role::default_instance()},
      {"rbac.authorization.k8s.io/v1", "ClusterRole", &k8s::ClusterRole::default_instance()},
      {"rbac.authorization.k8s.io/v1", "RoleBinding", &k8s::RoleBinding::default_instance()},
      {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &k8s::ClusterRoleBinding::default_instance()},
  };
  return *kinds;
}

std::string SupportedKinds() {
  std::vector<std::string> names;
  for (const auto& k : Kinds()) names.push_back(absl::StrCat(k.api_version, " ", k.kind));
  return absl::StrJoin(names, ", ");
}

std::string Field(const std::string& path, const std::string& name) {
  return path.empty() ? std::string(name) : absl::StrCat(path, ".", name);
}

absl::Status Invalid(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("protobuf body: ", path, ": ", what));
}

// gogo-protobuf writes every non-pointer field of the Go struct, zero or not, so fields this server does
// not model arrive all the time; a zero one carries nothing. Anything else would be lost if skipped.
absl::Status CheckUnknownFields(const pb::Message& m, const std::string& path) {
  const pb::UnknownFieldSet& unknown = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const pb::UnknownField& f = unknown.field(i);
    bool zero = false;
    switch (f.type()) {
      case pb::UnknownField::TYPE_VARINT: zero = f.varint() == 0; break;
      case pb::UnknownField::TYPE_FIXED32: zero = f.fixed32() == 0; break;
      case pb::UnknownField::TYPE_FIXED64: zero = f.fixed64() == 0; break;
      case pb::UnknownField::TYPE_LENGTH_DELIMITED: zero = f.length_delimited().empty(); break;
      case pb::UnknownField::TYPE_GROUP: zero = false; break;
    }
    if (!zero)
      return absl::UnimplementedError(absl::StrCat(
          "protobuf body: field number ", f.number(), " of ", m.GetDescriptor()->name(), " at ",
          path.empty() ? "the object" : path,
          " is not decoded by this server; send the object as application/json"));
  }
  return absl::OkStatus();
}

absl::StatusOr<json> MessageToJson(const pb::Message& m, const std::string& path);

// metav1.Time: JSON carries whole seconds in RFC 3339, UTC; an empty message is the zero time (null).
absl::StatusOr<json> TimeToJson(const k8s::Time& t, const std::string& path) {
  if (!t.has_seconds() && !t.has_nanos()) return json(nullptr);
  // Go's JSON encoding of time.Time refuses years outside 0000-9999.
  constexpr int64_t kMin = -62135596800;  // 0001-01-01T00:00:00Z
  constexpr int64_t kMax = 253402300799;  // 9999-12-31T23:59:59Z
  if (t.seconds() < kMin || t.seconds() > kMax)
    return Invalid(path, absl::StrCat("time ", t.seconds(), " s is outside years 1 to 9999"));
  return json(base::FormatTime(absl::FromUnixSeconds(t.seconds())));
}

absl::StatusOr<json> SpecialToJson(const pb::Message& m, const std::string& path, bool* handled) {
  *handled = true;
  if (const auto* t = dynamic_cast<const k8s::Time*>(&m)) return TimeToJson(*t, path);
  if (const auto* q = dynamic_cast<const k8s::Quantity*>(&m)) {
    if (!pb::internal::IsStructurallyValidUTF8(q->value())) return Invalid(path, "quantity is not valid UTF-8");
    return json(q->value());
  }
  if (const auto* v = dynamic_cast<const k8s::IntOrString*>(&m)) {
    if (v->type() == 0) return json(v->intval());
    if (v->type() == 1) {
      if (!pb::internal::IsStructurallyValidUTF8(v->strval())) return Invalid(path, "string is not valid UTF-8");
      return json(v->strval());
    }
    return Invalid(path, absl::StrCat("IntOrString type ", v->type(), " is neither 0 (int) nor 1 (string)"));
  }
  *handled = false;
  return json(nullptr);
}

// One value of field `f` (element `index` of a repeated field, or the singular value when index < 0).
absl::StatusOr<json> ValueToJson(const pb::Message& m, const pb::FieldDescriptor* f, int index,
                                 const std::string& path) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      if (f->type() == pb::FieldDescriptor::TYPE_BYTES) return json(absl::Base64Escape(s));
      if (!pb::internal::IsStructurallyValidUTF8(s)) return Invalid(path, "string is not valid UTF-8");
      return json(std::move(s));
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL: return json(rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f));
    case pb::FieldDescriptor::CPPTYPE_INT32: return json(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case pb::FieldDescriptor::CPPTYPE_INT64: return json(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
      const pb::Message& sub = rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f);
      bool handled;
      auto special = SpecialToJson(sub, path, &handled);
      if (handled) return special;
      return MessageToJson(sub, path);
    }
    default: return absl::InternalError(absl::StrCat("k8s_objects.proto: unhandled type of ", f->full_name()));
  }
}

bool IsZero(const json& v) {
  return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) || (v.is_boolean() && !v.get<bool>()) ||
         (v.is_number() && v == 0);
}

absl::StatusOr<json> MessageToJson(const pb::Message& m, const std::string& path) {
  if (auto s = CheckUnknownFields(m, path); !s.ok()) return s;
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);  // present fields only
  json out = json::object();
  for (const pb::FieldDescriptor* f : fields) {
    const std::string at = Field(path, f->name());
    if (f->is_map()) {
      json map = json::object();
      const pb::FieldDescriptor* key = f->message_type()->map_key();
      const pb::FieldDescriptor* value = f->message_type()->map_value();
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        const pb::Message& entry = r->GetRepeatedMessage(m, f, i);
        std::string k = entry.GetReflection()->GetString(entry, key);
        if (!pb::internal::IsStructurallyValidUTF8(k)) return Invalid(at, "map key is not valid UTF-8");
        auto v = ValueToJson(entry, value, -1, absl::StrCat(at, "[\"", k, "\"]"));
        if (!v.ok()) return v.status();
        map[k] = std::move(*v);  // empty values are values: labels {"a": ""}
      }
      if (!map.empty()) out[f->name()] = std::move(map);
    } else if (f->is_repeated()) {
      json list = json::array();
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        auto v = ValueToJson(m, f, i, absl::StrCat(at, "[", i, "]"));
        if (!v.ok()) return v.status();
        list.push_back(std::move(*v));
      }
      out[f->name()] = std::move(list);
    } else {
      auto v = ValueToJson(m, f, -1, at);
      if (!v.ok()) return v.status();
      bool keep = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ? !v->is_null()
                                                                        : !IsZero(*v) || f->options().GetExtension(k8s::go_pointer);
      if (keep) out[f->name()] = std::move(*v);
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ProtobufDecodableKinds() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& k : Kinds()) out.emplace_back(k.api_version, k.kind);
  return out;
}

absl::StatusOr<json> DecodeKubernetesProtobuf(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic)
    return absl::InvalidArgumentError(
        "protobuf body: it does not start with the 4-byte \"k8s\\0\" prefix of the Kubernetes protobuf encoding");
  body.remove_prefix(kMagic.size());
  k8s::Unknown envelope;
  if (!envelope.ParseFromArray(body.data(), static_cast<int>(body.size())))
    return absl::InvalidArgumentError("protobuf body: the runtime.Unknown envelope is not a valid protobuf message");
  if (!envelope.contentencoding().empty())
    return absl::UnimplementedError(absl::StrCat("protobuf body: contentEncoding \"", absl::CHexEscape(envelope.contentencoding()),
                                                 "\" is not supported; send the object uncompressed"));
  if (!envelope.contenttype().empty() && envelope.contenttype() != kKubernetesProtobufMediaType)
    return absl::UnimplementedError(absl::StrCat("protobuf body: contentType \"", absl::CHexEscape(envelope.contenttype()),
                                                 "\" is not supported"));
  const std::string& api_version = envelope.typemeta().apiversion();
  const std::string& kind = envelope.typemeta().kind();
  if (api_version.empty() || kind.empty())
    return absl::InvalidArgumentError("protobuf body: typeMeta.apiVersion and typeMeta.kind are required");
  const Kind* found = nullptr;
  for (const auto& k : Kinds())
    if (api_version == k.api_version && kind == k.kind) found = &k;
  if (!found)
    return absl::UnimplementedError(absl::StrCat(
        "protobuf bodies are decoded for ", SupportedKinds(), " only, not for ", absl::CHexEscape(api_version), " ",
        absl::CHexEscape(kind), "; send the object as application/json"));
  std::unique_ptr<pb::Message> object(found->prototype->New());
  if (!object->ParseFromString(envelope.raw()))
    return absl::InvalidArgumentError(
        absl::StrCat("protobuf body: raw is not a valid ", api_version, " ", kind, " message"));
  auto out = MessageToJson(*object, "");
  if (!out.ok()) return out.status();
  (*out)["apiVersion"] = api_version;
  (*out)["kind"] = kind;
  return out;
}

}  // namespace cloneset::devcluster
