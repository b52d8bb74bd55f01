#include "devcluster/versions.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "conversion/cloneset.h"

namespace cloneset::devcluster {

absl::StatusOr<nlohmann::json> ConvertToVersion(const ResourceType& type, const nlohmann::json& object,
                                                std::string_view version) {
  const std::string want = absl::StrCat(type.group, "/", std::string(version));
  if (object.is_object() && object.value("apiVersion", "") == want) return object;
  if (type.conversion_strategy != "Webhook") {
    nlohmann::json out = object;
    out["apiVersion"] = want;
    return out;
  }
  absl::StatusOr<nlohmann::json> out =
      type.group == "apps.kruise.io" && type.kind == "CloneSet"
          ? conversion::ConvertCloneSet(object, want)
          : absl::UnimplementedError("the embedded cluster converts CloneSets only and calls no conversion webhook");
  if (out.ok()) return out;
  // kube-apiserver names the version converted from.
  const std::string from = object.is_object() ? object.value("apiVersion", "") : "";
  return absl::InternalError(absl::StrCat("conversion webhook for ", from, ", Kind=", type.kind,
                                          " failed: ", out.status().message()));
}

absl::StatusOr<std::string> SerializedInVersion(const ResourceType& type, const std::string& stored_json,
                                                std::string_view version) {
  const std::string want = absl::StrCat("\"apiVersion\":\"", type.group, "/", std::string(version), "\"");
  // The store serializes apiVersion first: an object already in the version needs no parse.
  if (stored_json.compare(1, want.size(), want) == 0) return stored_json;
  nlohmann::json parsed = nlohmann::json::parse(stored_json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InternalError("stored object is not JSON");
  absl::StatusOr<nlohmann::json> out = ConvertToVersion(type, parsed, version);
  if (!out.ok()) return out.status();
  return out->dump();
}

absl::StatusOr<std::string> StoredInVersion(const ResourceType& type, const ObjectPtr& object) {
  if (!type.MultiVersion()) return object->json;
  return SerializedInVersion(type, object->json, type.version);
}

absl::StatusOr<nlohmann::json> ParsedInVersion(const ResourceType& type, const ObjectPtr& object) {
  if (!type.MultiVersion()) return object->Parse();
  return ConvertToVersion(type, object->Parse(), type.version);
}

}  // namespace cloneset::devcluster
