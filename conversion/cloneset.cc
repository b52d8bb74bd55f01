#include "conversion/cloneset.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "conversion/stash.h"
#include "kruise/keys.h"

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;

constexpr char kRollingUpdate[] = "RollingUpdate";
constexpr char kOnDelete[] = "OnDelete";

std::string TypeName(const Json& v) { return v.type_name(); }

absl::Status WrongType(const std::string& path, const char* want, const Json& got) {
  return absl::InvalidArgumentError(path + ": must be " + want + ", got " + TypeName(got));
}

// The member `key` of object `o`, or nullptr when absent or null (a JSON null counts as absent, as in Kubernetes).
Json* Member(Json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

// The object member `key` (nullptr when absent); an error when it is there but not an object.
absl::StatusOr<Json*> ObjectMember(Json& o, const char* key, const std::string& path) {
  Json* v = Member(o, key);
  if (v != nullptr && !v->is_object()) return WrongType(path, "an object", *v);
  return v;
}

absl::StatusOr<std::optional<std::string>> StringMember(Json& o, const char* key, const std::string& path) {
  Json* v = Member(o, key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(path, "a string", *v);
  return std::optional<std::string>(v->get<std::string>());
}

absl::StatusOr<std::optional<bool>> BoolMember(Json& o, const char* key, const std::string& path) {
  Json* v = Member(o, key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return WrongType(path, "a boolean", *v);
  return std::optional<bool>(v->get<bool>());
}

// metadata.labels or metadata.annotations: the string value of `key`, if any.
absl::StatusOr<std::optional<std::string>> MetaString(Json& object, const char* map, const char* key) {
  Json* meta = Member(object, "metadata");
  if (meta == nullptr) return std::optional<std::string>();
  if (!meta->is_object()) return WrongType("metadata", "an object", *meta);
  Json* m = Member(*meta, map);
  if (m == nullptr) return std::optional<std::string>();
  const std::string path = std::string("metadata.") + map;
  if (!m->is_object()) return WrongType(path, "an object", *m);
  return StringMember(*m, key, path + "[\"" + key + "\"]");
}

void SetMeta(Json& object, const char* map, const char* key, const std::string& value) {
  object["metadata"][map][key] = value;
}

// Removes metadata.<map>[key]; a map (and then a metadata) left empty by the removal goes too, so that adding the
// key back on the way back gives the same object.
void EraseMeta(Json& object, const char* map, const char* key) {
  Json* meta = Member(object, "metadata");
  if (meta == nullptr) return;
  Json* m = Member(*meta, map);
  if (m == nullptr || !m->is_object() || !m->contains(key)) return;
  m->erase(key);
  if (!m->empty()) return;
  meta->erase(map);
  if (meta->empty()) object.erase("metadata");
}

// The annotations are read as the v1alpha1 decoder reads them (snapshot/cloneset_json.cc), so that a setting
// means the same in both versions: an int32 (absl::SimpleAtoi), or for the parallelism any text ending in '%'.
std::optional<int32_t> ParseInt32(const std::string& s) {
  int32_t v = 0;
  if (!absl::SimpleAtoi(s, &v)) return std::nullopt;
  return v;
}

bool IsPercent(const std::string& s) { return !s.empty() && s.back() == '%'; }

// One image pre-download setting: its v1alpha1 annotation and its v1beta1 field.
struct PreDownloadSetting {
  const char* annotation;
  const char* field;
  bool int_or_percent;
};
constexpr PreDownloadSetting kPreDownload[] = {
    {kruise::kPreDownloadParallelismAnnotation, "imagePreDownloadParallelism", true},
    {kruise::kPreDownloadTimeoutSecondsAnnotation, "imagePreDownloadTimeoutSeconds", false},
    {kruise::kPreDownloadMinUpdatedReadyPodsAnnotation, "imagePreDownloadMinUpdatedReadyPods", false},
};

// The field value an annotation means; nullopt when it means nothing v1beta1 can hold (then it stays an annotation).
std::optional<Json> PreDownloadValue(const PreDownloadSetting& s, const std::string& annotation) {
  if (std::optional<int32_t> n = ParseInt32(annotation)) return Json(*n);
  if (s.int_or_percent && IsPercent(annotation)) return Json(annotation);
  return std::nullopt;
}

// The annotation a field value is written as.
absl::StatusOr<std::string> PreDownloadAnnotation(const PreDownloadSetting& s, const Json& value,
                                                  const std::string& path) {
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (s.int_or_percent && value.is_string()) return value.get<std::string>();
  return WrongType(path, s.int_or_percent ? "an integer or a string" : "an integer", value);
}

// The spec, created when absent: what the versions' defaults mean differs (PVC reuse), so even an object without one
// says it in the other version.
absl::StatusOr<Json*> SpecOf(Json& cs) {
  absl::StatusOr<Json*> spec = ObjectMember(cs, "spec", "spec");
  if (!spec.ok() || *spec != nullptr) return spec;
  return &(cs["spec"] = Json::object());
}

absl::Status ToV1beta1(Json& cs) {
  cs["apiVersion"] = kruise::kV1beta1;
  absl::StatusOr<std::optional<std::string>> exclude = MetaString(cs, "labels", kruise::kExcludePreparingDeleteLabel);
  if (!exclude.ok()) return exclude.status();
  std::vector<std::pair<const PreDownloadSetting*, Json>> predownload;
  for (const PreDownloadSetting& s : kPreDownload) {
    absl::StatusOr<std::optional<std::string>> a = MetaString(cs, "annotations", s.annotation);
    if (!a.ok()) return a.status();
    if (!a->has_value()) continue;
    if (std::optional<Json> v = PreDownloadValue(s, **a)) predownload.emplace_back(&s, std::move(*v));
  }
  absl::StatusOr<Json*> spec = SpecOf(cs);
  if (!spec.ok()) return spec.status();

  // scaleStrategy: v1beta1 always says whether PVCs are reused, because its default is the opposite of v1alpha1's.
  absl::StatusOr<Json*> ss = ObjectMember(**spec, "scaleStrategy", "spec.scaleStrategy");
  if (!ss.ok()) return ss.status();
  Json& scale = *ss != nullptr ? **ss : ((**spec)["scaleStrategy"] = Json::object());
  absl::StatusOr<std::optional<bool>> disable =
      BoolMember(scale, "disablePVCReuse", "spec.scaleStrategy.disablePVCReuse");
  if (!disable.ok()) return disable.status();
  scale.erase("disablePVCReuse");
  scale["enablePVCReuse"] = !disable->value_or(false);
  if (*exclude == "true") {
    scale["excludePreparingDelete"] = true;
    EraseMeta(cs, "labels", kruise::kExcludePreparingDeleteLabel);
  }

  // updateStrategy: the type is the pod update policy; every other member is a rolling-update one.
  absl::StatusOr<Json*> us = ObjectMember(**spec, "updateStrategy", "spec.updateStrategy");
  if (!us.ok()) return us.status();
  if (*us == nullptr && predownload.empty()) return absl::OkStatus();
  Json alpha = *us != nullptr ? **us : Json::object();
  absl::StatusOr<std::optional<std::string>> type = StringMember(alpha, "type", "spec.updateStrategy.type");
  if (!type.ok()) return type.status();
  // podUpdatePolicy is not a v1alpha1 field: one written there means nothing and must not start to (the stash
  // keeps it).
  Json rolling = Json::object();
  for (auto it = alpha.begin(); it != alpha.end(); ++it) {
    if (it.key() != "type" && it.key() != "podUpdatePolicy") rolling[it.key()] = it.value();
  }
  Json beta = Json::object();
  if (*type == kOnDelete) {
    beta["type"] = kOnDelete;
  } else {
    beta["type"] = kRollingUpdate;
    if (type->has_value()) rolling["podUpdatePolicy"] = **type;
  }
  absl::StatusOr<Json*> ips = ObjectMember(rolling, "inPlaceUpdateStrategy", "spec.updateStrategy.inPlaceUpdateStrategy");
  if (!ips.ok()) return ips.status();
  if (*ips != nullptr) {
    // v1alpha1 reads these settings from the annotations only: fields written there mean nothing (the stash keeps
    // them), and only the annotations become fields.
    for (const PreDownloadSetting& s : kPreDownload) (*ips)->erase(s.field);
  }
  if (!predownload.empty()) {
    Json& in_place = *ips != nullptr ? **ips : (rolling["inPlaceUpdateStrategy"] = Json::object());
    for (auto& [setting, value] : predownload) {
      in_place[setting->field] = std::move(value);
      EraseMeta(cs, "annotations", setting->annotation);
    }
  }
  if (!rolling.empty()) beta["rollingUpdate"] = std::move(rolling);
  (**spec)["updateStrategy"] = std::move(beta);
  return absl::OkStatus();
}

absl::Status ToV1alpha1(Json& cs) {
  cs["apiVersion"] = kruise::kV1alpha1;
  absl::StatusOr<std::optional<std::string>> exclude = MetaString(cs, "labels", kruise::kExcludePreparingDeleteLabel);
  if (!exclude.ok()) return exclude.status();
  for (const PreDownloadSetting& s : kPreDownload) {
    // Only checked here: in v1beta1 these annotations mean nothing, so none passes to v1alpha1 as is.
    absl::StatusOr<std::optional<std::string>> a = MetaString(cs, "annotations", s.annotation);
    if (!a.ok()) return a.status();
    EraseMeta(cs, "annotations", s.annotation);
  }
  absl::StatusOr<Json*> spec = SpecOf(cs);
  if (!spec.ok()) return spec.status();

  absl::StatusOr<Json*> ss = ObjectMember(**spec, "scaleStrategy", "spec.scaleStrategy");
  if (!ss.ok()) return ss.status();
  bool excluded = false;
  if (*ss != nullptr) {
    Json& scale = **ss;
    absl::StatusOr<std::optional<bool>> enable =
        BoolMember(scale, "enablePVCReuse", "spec.scaleStrategy.enablePVCReuse");
    if (!enable.ok()) return enable.status();
    absl::StatusOr<std::optional<bool>> exclude_field =
        BoolMember(scale, "excludePreparingDelete", "spec.scaleStrategy.excludePreparingDelete");
    if (!exclude_field.ok()) return exclude_field.status();
    scale.erase("enablePVCReuse");
    scale.erase("excludePreparingDelete");
    scale.erase("disablePVCReuse");  // not a v1beta1 field: one written there means nothing (the stash keeps it)
    // v1beta1 without enablePVCReuse does not reuse PVCs; v1alpha1 without disablePVCReuse does.
    if (!enable->value_or(false)) scale["disablePVCReuse"] = true;
    excluded = exclude_field->value_or(false);
  } else {
    (**spec)["scaleStrategy"] = Json{{"disablePVCReuse", true}};
  }
  if (excluded) {
    SetMeta(cs, "labels", kruise::kExcludePreparingDeleteLabel, "true");
  } else if (*exclude == "true") {
    EraseMeta(cs, "labels", kruise::kExcludePreparingDeleteLabel);  // v1beta1 reads the field only
  }

  absl::StatusOr<Json*> us = ObjectMember(**spec, "updateStrategy", "spec.updateStrategy");
  if (!us.ok()) return us.status();
  if (*us == nullptr) return absl::OkStatus();
  Json beta = std::move(**us);
  absl::StatusOr<std::optional<std::string>> type = StringMember(beta, "type", "spec.updateStrategy.type");
  if (!type.ok()) return type.status();
  absl::StatusOr<Json*> ru = ObjectMember(beta, "rollingUpdate", "spec.updateStrategy.rollingUpdate");
  if (!ru.ok()) return ru.status();
  // Members beside type and rollingUpdate mean nothing in v1beta1; in v1alpha1 some would (partition, ...), so none
  // passes (the stash keeps them).
  Json alpha = Json::object();
  std::optional<std::string> policy;
  if (*ru != nullptr) {
    Json& rolling = **ru;
    absl::StatusOr<std::optional<std::string>> p =
        StringMember(rolling, "podUpdatePolicy", "spec.updateStrategy.rollingUpdate.podUpdatePolicy");
    if (!p.ok()) return p.status();
    policy = *p;
    for (auto it = rolling.begin(); it != rolling.end(); ++it) {
      if (it.key() != "podUpdatePolicy") alpha[it.key()] = it.value();
    }
    absl::StatusOr<Json*> ips =
        ObjectMember(alpha, "inPlaceUpdateStrategy", "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy");
    if (!ips.ok()) return ips.status();
    if (*ips != nullptr) {
      Json& in_place = **ips;
      bool moved = false;
      for (const PreDownloadSetting& s : kPreDownload) {
        Json* v = Member(in_place, s.field);
        if (v == nullptr) continue;
        absl::StatusOr<std::string> a = PreDownloadAnnotation(
            s, *v, std::string("spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.") + s.field);
        if (!a.ok()) return a.status();
        SetMeta(cs, "annotations", s.annotation, *a);
        in_place.erase(s.field);
        moved = true;
      }
      if (moved && in_place.empty()) alpha.erase("inPlaceUpdateStrategy");
    }
  }
  if (*type == kOnDelete) {
    alpha["type"] = kOnDelete;
  } else if (policy.has_value()) {
    alpha["type"] = *policy;
  }
  **us = std::move(alpha);
  return absl::OkStatus();
}

absl::Status CheckCloneSet(const Json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("must be an object, got " + TypeName(object));
  const auto kind = object.find("kind");
  if (kind != object.end() && !(kind->is_string() && *kind == "CloneSet")) {
    return absl::InvalidArgumentError("kind: " + kind->dump() + " is not \"CloneSet\"");
  }
  const auto api = object.find("apiVersion");
  if (api == object.end() || !api->is_string() || (*api != kruise::kV1alpha1 && *api != kruise::kV1beta1)) {
    return absl::InvalidArgumentError("apiVersion: " + (api == object.end() ? std::string("missing") : api->dump()) +
                                      " is not \"" + kruise::kV1alpha1 + "\" or \"" + kruise::kV1beta1 + "\"");
  }
  return absl::OkStatus();
}

absl::Status CheckTarget(std::string_view to) {
  if (to == kruise::kV1alpha1 || to == kruise::kV1beta1) return absl::OkStatus();
  return absl::InvalidArgumentError("desiredAPIVersion: \"" + std::string(to) + "\" is not \"" + kruise::kV1alpha1 +
                                    "\" or \"" + kruise::kV1beta1 + "\"");
}

absl::Status Plain(Json& object, std::string_view to) {
  return to == kruise::kV1beta1 ? ToV1beta1(object) : ToV1alpha1(object);
}

// Takes the annotation `key` off `object` and returns its value (empty when absent or not a string).
std::string TakeAnnotation(Json& object, const char* key) {
  Json* meta = Member(object, "metadata");
  if (meta == nullptr || !meta->is_object()) return "";
  Json* m = Member(*meta, "annotations");
  if (m == nullptr || !m->is_object()) return "";
  auto it = m->find(key);
  if (it == m->end()) return "";
  std::string value = it->is_string() ? it->get<std::string>() : "";
  EraseMeta(object, "annotations", key);
  return value;
}

// The entries a stash may apply: never the identity (apiVersion, kind, metadata other than labels and annotations),
// which conversion must leave as the API server sent it. The converter writes no others; a hand-made one is skipped.
bool OnlyLabelsAndAnnotations(const std::optional<Json>& v) {
  if (!v.has_value()) return true;
  if (!v->is_object()) return false;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it.key() != "labels" && it.key() != "annotations") return false;
  }
  return true;
}

std::vector<StashEntry> Applicable(std::vector<StashEntry> entries) {
  std::vector<StashEntry> out;
  for (StashEntry& e : entries) {
    const std::string p = e.path.to_string();
    if (p == "/apiVersion" || p == "/kind") continue;
    // A whole metadata only when one side has none (an object without a name): labels and annotations alone.
    if (p == "/metadata" && !(OnlyLabelsAndAnnotations(e.was) && OnlyLabelsAndAnnotations(e.value))) continue;
    if (p.rfind("/metadata/", 0) == 0 && p.rfind("/metadata/labels", 0) != 0 &&
        p.rfind("/metadata/annotations", 0) != 0) {
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

absl::StatusOr<Json> ConvertCloneSetPlain(const Json& object, std::string_view to_api_version) {
  if (absl::Status s = CheckTarget(to_api_version); !s.ok()) return s;
  if (absl::Status s = CheckCloneSet(object); !s.ok()) return s;
  Json out = object;
  if (out["apiVersion"] == to_api_version) return out;
  if (absl::Status s = Plain(out, to_api_version); !s.ok()) return s;
  return out;
}

absl::StatusOr<Json> ConvertCloneSet(const Json& object, std::string_view to_api_version) {
  if (absl::Status s = CheckTarget(to_api_version); !s.ok()) return s;
  if (absl::Status s = CheckCloneSet(object); !s.ok()) return s;
  if (object["apiVersion"] == to_api_version) return object;
  const bool to_beta = to_api_version == kruise::kV1beta1;
  const std::string from_api_version = object["apiVersion"].get<std::string>();
  // The stash this object carries holds what its own version could not say of the other; the one written on the
  // result holds what the result's version cannot say of this object.
  const char* incoming = to_beta ? kV1beta1StashAnnotation : kV1alpha1StashAnnotation;
  const char* outgoing = to_beta ? kV1alpha1StashAnnotation : kV1beta1StashAnnotation;
  Json source = object;
  const std::string stash = TakeAnnotation(source, incoming);
  TakeAnnotation(source, outgoing);  // never meaningful on this side: only the converter writes it, on the other
  Json out = source;
  if (absl::Status s = Plain(out, to_api_version); !s.ok()) return s;
  Json back = out;
  if (absl::Status s = Plain(back, from_api_version); !s.ok()) return s;
  if (!stash.empty()) {
    // A stash this converter wrote always converts back; one that does not (edited by hand) is not applied.
    Json restored = out;
    ApplyStash(Applicable(DecodeStash(stash)), &restored);
    Json restored_back = restored;
    if (Plain(restored_back, from_api_version).ok()) {
      out = std::move(restored);
      back = std::move(restored_back);
    }
  }
  const std::vector<StashEntry> lost = DiffForStash(back, source);
  if (!lost.empty()) out["metadata"]["annotations"][outgoing] = EncodeStash(lost);
  return out;
}

}  // namespace cloneset::conversion
