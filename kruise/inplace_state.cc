#include "kruise/inplace_state.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "nlohmann/json.hpp"
#include "base/go_json.h"
#include "base/json_read.h"
#include "kruise/keys.h"

namespace cloneset::kruise {
namespace {

namespace pb = ::cloneset::planner::v1;
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
using base::json_read::ParseJsonObject;
using base::json_read::StringList;
using base::json_read::StringMap;

OrderedJson RefMetadataJson(const RefMetadata& ref) {
  OrderedJson out = OrderedJson::object();
  if (!ref.labels.empty()) out["labels"] = ref.labels;
  if (!ref.annotations.empty()) out["annotations"] = ref.annotations;
  return out;
}

std::map<std::string, RefMetadata> ParseRefMetadata(const Json& object) {
  std::map<std::string, RefMetadata> out;
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    RefMetadata ref;
    if (it.value().is_object()) {
      ref.labels = StringMap(it.value().value("labels", Json::object()));
      ref.annotations = StringMap(it.value().value("annotations", Json::object()));
    }
    out[it.key()] = std::move(ref);
  }
  return out;
}

// A v1.ResourceRequirements as Go writes it: limits before requests, each omitted when empty, keys sorted.
OrderedJson ResourcesJson(const ContainerResources& r) {
  OrderedJson out = OrderedJson::object();
  if (!r.limits.empty()) out["limits"] = r.limits;
  if (!r.requests.empty()) out["requests"] = r.requests;
  return out;
}

OrderedJson ResourcesMapJson(const std::map<std::string, ContainerResources>& by_container) {
  OrderedJson out = OrderedJson::object();
  for (const auto& [name, resources] : by_container) out[name] = ResourcesJson(resources);
  return out;
}

std::map<std::string, ContainerResources> ParseResourcesMap(const Json& object) {
  std::map<std::string, ContainerResources> out;
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    ContainerResources r;
    if (it.value().is_object()) {
      r.limits = StringMap(it.value().value("limits", Json::object()));
      r.requests = StringMap(it.value().value("requests", Json::object()));
    }
    out[it.key()] = std::move(r);
  }
  return out;
}

}  // namespace

std::string FormatInPlaceState(const InPlaceUpdateState& state) {
  // Go's struct field order; omitempty as upstream, except lastContainerStatuses, which is null when empty.
  OrderedJson doc = OrderedJson::object();
  doc["revision"] = state.revision;
  doc["updateTimestamp"] = state.update_timestamp;
  OrderedJson last = nullptr;
  for (const auto& [name, status] : state.last_container_statuses) {
    OrderedJson entry = OrderedJson::object();
    if (!status.image_id.empty()) entry["imageID"] = status.image_id;
    if (!status.container_id.empty()) entry["containerID"] = status.container_id;
    last[name] = std::move(entry);
  }
  doc["lastContainerStatuses"] = std::move(last);
  if (state.update_env_from_metadata) doc["updateEnvFromMetadata"] = true;
  if (state.update_resources) doc["updateResources"] = true;
  if (state.update_images) doc["updateImages"] = true;
  if (!state.next_container_images.empty()) doc["nextContainerImages"] = state.next_container_images;
  if (!state.next_container_ref_metadata.empty()) {
    OrderedJson refs = OrderedJson::object();
    for (const auto& [name, ref] : state.next_container_ref_metadata) refs[name] = RefMetadataJson(ref);
    doc["nextContainerRefMetadata"] = std::move(refs);
  }
  if (!state.next_container_resources.empty()) {
    doc["nextContainerResources"] = ResourcesMapJson(state.next_container_resources);
  }
  if (!state.pre_check_containers_required_ready.empty()) {
    OrderedJson pre_check = OrderedJson::object();
    pre_check["containersRequiredReady"] = state.pre_check_containers_required_ready;
    doc["preCheckBeforeNext"] = std::move(pre_check);
  }
  if (!state.container_batches_record.empty()) {
    OrderedJson batches = OrderedJson::array();
    for (const ContainerBatch& batch : state.container_batches_record) {
      OrderedJson entry = OrderedJson::object();
      entry["timestamp"] = batch.timestamp;
      entry["containers"] = batch.containers;
      batches.push_back(std::move(entry));
    }
    doc["containerBatchesRecord"] = std::move(batches);
  }
  std::string out;
  out.reserve(256);
  base::AppendGoJson(out, doc);
  return out;
}

absl::StatusOr<InPlaceUpdateState> ParseInPlaceState(std::string_view json) {
  Json doc;
  if (!ParseJsonObject(json, &doc)) {
    return absl::InvalidArgumentError("annotation apps.kruise.io/inplace-update-state: not a JSON object");
  }
  InPlaceUpdateState state;
  state.revision = doc.value("revision", "");
  state.update_timestamp = doc.value("updateTimestamp", "");
  const Json statuses = doc.value("lastContainerStatuses", Json());
  if (statuses.is_object()) {
    for (auto it = statuses.begin(); it != statuses.end(); ++it) {
      if (!it.value().is_object()) continue;
      state.last_container_statuses[it.key()] = {it.value().value("imageID", ""), it.value().value("containerID", "")};
    }
  }
  state.update_env_from_metadata = doc.value("updateEnvFromMetadata", false);
  state.update_resources = doc.value("updateResources", false);
  state.update_images = doc.value("updateImages", false);
  state.next_container_images = StringMap(doc.value("nextContainerImages", Json::object()));
  state.next_container_ref_metadata = ParseRefMetadata(doc.value("nextContainerRefMetadata", Json::object()));
  state.next_container_resources = ParseResourcesMap(doc.value("nextContainerResources", Json::object()));
  const Json pre_check = doc.value("preCheckBeforeNext", Json());
  if (pre_check.is_object()) {
    state.pre_check_containers_required_ready = StringList(pre_check.value("containersRequiredReady", Json()));
  }
  const Json batches = doc.value("containerBatchesRecord", Json());
  if (batches.is_array()) {
    for (const Json& batch : batches) {
      if (!batch.is_object()) continue;
      state.container_batches_record.push_back(
          {batch.value("timestamp", ""), StringList(batch.value("containers", Json::array()))});
    }
  }
  return state;
}

std::string FormatGraceSpec(const InPlaceUpdateSpec& spec) {
  OrderedJson doc = OrderedJson::object();
  doc["revision"] = spec.revision;
  if (!spec.container_images.empty()) doc["containerImages"] = spec.container_images;
  if (!spec.container_ref_metadata.empty()) {
    OrderedJson refs = OrderedJson::object();
    for (const auto& [name, ref] : spec.container_ref_metadata) refs[name] = RefMetadataJson(ref);
    doc["containerRefMetadata"] = std::move(refs);
  }
  if (!spec.container_resources.empty()) doc["containerResources"] = ResourcesMapJson(spec.container_resources);
  // metaDataPatch is a []byte upstream, hence base64 of a strategic merge patch.
  OrderedJson meta = OrderedJson::object();
  OrderedJson labels = OrderedJson::object();
  for (const auto& [k, v] : spec.set_labels) labels[k] = v;
  for (const std::string& k : spec.remove_labels) labels[k] = nullptr;
  OrderedJson annotations = OrderedJson::object();
  for (const auto& [k, v] : spec.set_annotations) annotations[k] = v;
  for (const std::string& k : spec.remove_annotations) annotations[k] = nullptr;
  if (!labels.empty()) meta["labels"] = std::move(labels);
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  if (!spec.add_finalizers.empty()) meta["finalizers"] = spec.add_finalizers;
  if (!spec.remove_finalizers.empty()) meta["$deleteFromPrimitiveList/finalizers"] = spec.remove_finalizers;
  if (!meta.empty()) doc["metaDataPatch"] = absl::Base64Escape(OrderedJson{{"metadata", meta}}.dump());
  if (spec.update_env_from_metadata) doc["updateEnvFromMetadata"] = true;
  if (spec.grace_seconds != 0) doc["graceSeconds"] = spec.grace_seconds;
  if (!spec.old_revision.empty()) doc["oldRevision"] = spec.old_revision;
  return doc.dump();
}

absl::StatusOr<InPlaceUpdateSpec> ParseGraceSpec(std::string_view json) {
  Json doc;
  if (!ParseJsonObject(json, &doc)) {
    return absl::InvalidArgumentError("annotation apps.kruise.io/inplace-update-grace: not a JSON object");
  }
  InPlaceUpdateSpec spec;
  spec.revision = doc.value("revision", "");
  spec.old_revision = doc.value("oldRevision", "");
  spec.container_images = StringMap(doc.value("containerImages", Json::object()));
  spec.container_ref_metadata = ParseRefMetadata(doc.value("containerRefMetadata", Json::object()));
  spec.container_resources = ParseResourcesMap(doc.value("containerResources", Json::object()));
  spec.update_env_from_metadata = doc.value("updateEnvFromMetadata", false);
  const Json grace = doc.value("graceSeconds", Json());
  if (grace.is_number_integer()) spec.grace_seconds = grace.get<int32_t>();
  const Json patch_b64 = doc.value("metaDataPatch", Json());
  if (patch_b64.is_string()) {
    std::string decoded;
    Json patch;
    if (!absl::Base64Unescape(patch_b64.get<std::string>(), &decoded) || !ParseJsonObject(decoded, &patch)) {
      return absl::InvalidArgumentError("annotation apps.kruise.io/inplace-update-grace: bad metaDataPatch");
    }
    const Json meta = patch.value("metadata", Json::object());
    for (const auto& [field, set, remove] :
         {std::tuple{"labels", &spec.set_labels, &spec.remove_labels},
          std::tuple{"annotations", &spec.set_annotations, &spec.remove_annotations}}) {
      const Json values = meta.value(field, Json::object());
      if (!values.is_object()) continue;
      for (auto it = values.begin(); it != values.end(); ++it) {
        if (it.value().is_null()) {
          remove->push_back(it.key());
        } else if (it.value().is_string()) {
          (*set)[it.key()] = it.value().get<std::string>();
        }
      }
    }
    spec.add_finalizers = StringList(meta.value("finalizers", Json::array()));
    spec.remove_finalizers = StringList(meta.value("$deleteFromPrimitiveList/finalizers", Json::array()));
  }
  return spec;
}

namespace {
// Looked up for every pod of every plan: static keys avoid building a std::string per lookup.
std::string_view FirstAnnotation(const pb::Pod& pod, const std::string& key, const std::string& legacy) {
  const auto& annotations = pod.metadata().annotations();
  if (annotations.empty()) return {};
  auto it = annotations.find(key);
  if (it != annotations.end() && !it->second.empty()) return it->second;
  it = annotations.find(legacy);
  return it == annotations.end() ? std::string_view() : std::string_view(it->second);
}
}  // namespace

std::string_view InPlaceStateAnnotation(const pb::Pod& pod) {
  static const std::string* const kKey = new std::string(kInPlaceStateAnnotation);
  static const std::string* const kLegacy = new std::string(kLegacyInPlaceStateAnnotation);
  return FirstAnnotation(pod, *kKey, *kLegacy);
}

std::string_view InPlaceGraceAnnotation(const pb::Pod& pod) {
  static const std::string* const kKey = new std::string(kInPlaceGraceAnnotation);
  static const std::string* const kLegacy = new std::string(kLegacyInPlaceGraceAnnotation);
  return FirstAnnotation(pod, *kKey, *kLegacy);
}

}  // namespace cloneset::kruise
