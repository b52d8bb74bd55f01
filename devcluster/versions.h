// A custom resource in another version its CRD serves, as kube-apiserver converts it. Strategy None changes
// apiVersion only. Strategy Webhook: kube-apiserver calls the webhook the CRD names; the embedded cluster answers in
// process with the same conversion the webhook runs (conversion/cloneset.h, CloneSets only), so both API servers
// convert alike without a webhook process beside the embedded one (docs/compatibility.md, "Conversion").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "devcluster/resources.h"
#include "devcluster/store_types.h"

namespace cloneset::devcluster {

// `object` (stored in any version of `type`) in `version`. Internal (500) when the conversion fails, in
// kube-apiserver's words, naming the version converted from ("conversion webhook for apps.kruise.io/v1beta1,
// Kind=CloneSet failed: ...").
absl::StatusOr<nlohmann::json> ConvertToVersion(const ResourceType& type, const nlohmann::json& object,
                                                std::string_view version);

// The serialized object in `version` (the stored serialization itself when it is already in it).
absl::StatusOr<std::string> SerializedInVersion(const ResourceType& type, const std::string& stored_json,
                                                std::string_view version);

// A stored object as `type` (a type in the version a request names, ResourceType::InVersion) serves it: itself when
// the type is served in one version only.
absl::StatusOr<std::string> StoredInVersion(const ResourceType& type, const ObjectPtr& object);
absl::StatusOr<nlohmann::json> ParsedInVersion(const ResourceType& type, const ObjectPtr& object);

}  // namespace cloneset::devcluster
