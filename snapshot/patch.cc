#include "snapshot/patch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "nlohmann/json.hpp"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

using Json = nlohmann::json;  // sorted keys: byte-stable bodies for equal patches

ApiRequest Patch(std::string_view api_prefix, std::string_view namespace_, std::string suffix,
                 const char* content_type, const Json& body) {
  ApiRequest req;
  req.method = "PATCH";
  req.path = internal::Cat(api_prefix, "/namespaces/", namespace_, "/", suffix);
  req.path_suffix = std::move(suffix);
  req.content_type = content_type;
  req.body = body.dump();
  return req;
}

std::string ApiPrefix(std::string_view api_version) {
  if (api_version.empty()) return "/apis/apps.kruise.io/v1alpha1";
  return internal::Cat("/apis/", api_version);
}

// Sorted so that a plan gives byte-identical bodies whatever the proto map's iteration order.
std::vector<std::pair<std::string, std::string>> Sorted(const google::protobuf::Map<std::string, std::string>& m) {
  std::vector<std::pair<std::string, std::string>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end());
  return v;
}

// A condition is set as a whole. The strategic merge patch merges list items by "type" and keeps the fields the
// patch leaves out, so an empty reason or message is sent as null: otherwise InPlaceUpdateReady=True would keep
// the "StartInPlaceUpdate" reason of its False phase, and a planner that asks for exactly {True, "", ""} would
// write it again on every plan.
Json ConditionJson(const pb::Condition& c) {
  Json j;
  j["type"] = c.type();
  j["status"] = c.status();
  j["reason"] = c.reason().empty() ? Json(nullptr) : Json(c.reason());
  j["message"] = c.message().empty() ? Json(nullptr) : Json(c.message());
  if (c.has_last_transition_time()) {
    j["lastTransitionTime"] = base::FormatTime(internal::TimeOf(c.last_transition_time()));
  }
  return j;
}

}  // namespace

ApiRequest PodPatchRequest(std::string_view namespace_, const pb::PatchPod& patch) {
  Json meta = Json::object();
  if (!patch.resource_version().empty()) meta["resourceVersion"] = patch.resource_version();
  Json labels = Json::object();
  for (const auto& [k, v] : Sorted(patch.set_labels())) labels[k] = v;
  for (const std::string& k : patch.remove_labels()) labels[k] = nullptr;
  if (!labels.empty()) meta["labels"] = std::move(labels);
  Json annotations = Json::object();
  for (const auto& [k, v] : Sorted(patch.set_annotations())) annotations[k] = v;
  for (const std::string& k : patch.remove_annotations()) annotations[k] = nullptr;
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  if (!patch.add_finalizers().empty()) {
    meta["finalizers"] = Json(std::vector<std::string>(patch.add_finalizers().begin(), patch.add_finalizers().end()));
  }
  if (!patch.remove_finalizers().empty()) {
    meta["$deleteFromPrimitiveList/finalizers"] =
        Json(std::vector<std::string>(patch.remove_finalizers().begin(), patch.remove_finalizers().end()));
  }
  if (!patch.remove_owner_uids().empty()) {
    Json refs = Json::array();
    for (const std::string& uid : patch.remove_owner_uids()) refs.push_back({{"$patch", "delete"}, {"uid", uid}});
    meta["ownerReferences"] = std::move(refs);
  }
  Json body = Json::object();
  body["metadata"] = std::move(meta);
  if (!patch.container_images().empty()) {
    Json containers = Json::array();
    for (const auto& [name, image] : Sorted(patch.container_images())) {
      containers.push_back({{"name", name}, {"image", image}});
    }
    body["spec"] = {{"containers", std::move(containers)}};
  }
  return Patch("/api/v1", namespace_, internal::Cat("pods/", patch.name()), kStrategicMergePatch, body);
}

ApiRequest PodResizeRequest(std::string_view namespace_, const pb::ResizePod& resize) {
  Json body = Json::object();
  if (!resize.resource_version().empty()) body["metadata"] = {{"resourceVersion", resize.resource_version()}};
  Json containers = Json::array();
  for (const pb::ResizePod::ContainerResources& c : resize.containers()) {
    Json resources = Json::object();
    for (const auto& [list, values] : {std::pair{"requests", &c.requests()}, std::pair{"limits", &c.limits()}}) {
      if (values->empty()) continue;
      Json quantities = Json::object();
      for (const auto& [name, quantity] : Sorted(*values)) quantities[name] = quantity;
      resources[list] = std::move(quantities);
    }
    containers.push_back({{"name", c.name()}, {"resources", std::move(resources)}});
  }
  body["spec"] = {{"containers", std::move(containers)}};
  return Patch("/api/v1", namespace_, internal::Cat("pods/", resize.name(), "/resize"), kStrategicMergePatch, body);
}

bool OnlyOwnConditions(const pb::PatchPodStatus& patch) {
  if (patch.set_conditions().empty()) return false;
  bool in_place = false;
  for (const pb::Condition& c : patch.set_conditions()) {
    if (c.type() == kInPlaceUpdateReadyCondition) {
      in_place = true;
    } else if (c.type() != "Ready" || c.status() != "False") {
      return false;
    }
  }
  return in_place;
}

ApiRequest PodStatusPatchRequest(std::string_view namespace_, const pb::PatchPodStatus& patch) {
  Json body = Json::object();
  if (OnlyOwnConditions(patch) && !patch.uid().empty()) {
    body["metadata"] = {{"uid", patch.uid()}};
  } else if (!patch.resource_version().empty()) {
    body["metadata"] = {{"resourceVersion", patch.resource_version()}};
  }
  Json conditions = Json::array();
  for (const pb::Condition& c : patch.set_conditions()) conditions.push_back(ConditionJson(c));
  body["status"] = {{"conditions", std::move(conditions)}};
  return Patch("/api/v1", namespace_, internal::Cat("pods/", patch.name(), "/status"), kStrategicMergePatch, body);
}

ApiRequest RevisionPatchRequest(std::string_view namespace_, const pb::UpdateRevision& update) {
  Json meta = Json::object();
  if (!update.resource_version().empty()) meta["resourceVersion"] = update.resource_version();
  if (!update.set_labels().empty()) {
    for (const auto& [k, v] : Sorted(update.set_labels())) meta["labels"][k] = v;
  }
  if (!update.set_annotations().empty()) {
    for (const auto& [k, v] : Sorted(update.set_annotations())) meta["annotations"][k] = v;
  }
  Json body = {{"metadata", std::move(meta)}};
  if (update.revision() != 0) body["revision"] = update.revision();
  return Patch("/apis/apps/v1", namespace_, internal::Cat("controllerrevisions/", update.name()), kMergePatch, body);
}

absl::StatusOr<ApiRequest> CloneSetPatchRequest(std::string_view namespace_, std::string_view cloneset_name,
                                                std::string_view api_version, const pb::PatchCloneSet& patch) {
  Json body;
  try {
    body = Json::parse(patch.merge_patch_json());
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(
        internal::Cat("patch_clone_set.merge_patch_json: malformed JSON at byte ", e.byte));
  }
  if (!body.is_object()) {
    return absl::InvalidArgumentError("patch_clone_set.merge_patch_json: expected a JSON object");
  }
  if (!patch.resource_version().empty()) {
    if (body.contains("metadata") && !body["metadata"].is_object()) {
      return absl::InvalidArgumentError("patch_clone_set.merge_patch_json: metadata is not an object");
    }
    body["metadata"]["resourceVersion"] = patch.resource_version();
  }
  return Patch(ApiPrefix(api_version), namespace_, internal::Cat("clonesets/", cloneset_name), kMergePatch, body);
}

ApiRequest CloneSetStatusRequest(std::string_view namespace_, std::string_view cloneset_name,
                                 std::string_view api_version, const pb::CloneSetStatus& status) {
  ApiRequest req = Patch(ApiPrefix(api_version), namespace_, internal::Cat("clonesets/", cloneset_name, "/status"),
                         kMergePatch, Json::object());
  // StatusToJson keeps the API's field order; splice it in rather than re-sorting through nlohmann.
  req.body = internal::Cat("{\"status\":", StatusToJson(status), "}");
  return req;
}

ApiRequest PvcOwnerPatchRequest(std::string_view namespace_, const pb::PersistentVolumeClaim& pvc,
                                const pb::UpdatePvcOwner& update) {
  const auto owner_json = [](const pb::OwnerReference& o) {
    return Json{{"apiVersion", o.api_version()}, {"kind", o.kind()},
                {"name", o.name()},              {"uid", o.uid()},
                {"controller", o.controller()},  {"blockOwnerDeletion", o.block_owner_deletion()}};
  };
  Json owners = Json::array();
  for (const auto& o : pvc.metadata().owner_references()) {
    if (o.uid() != update.remove_owner_uid()) owners.push_back(owner_json(o));
  }
  if (update.has_add_owner()) owners.push_back(owner_json(update.add_owner()));
  const Json body = {{"metadata", {{"resourceVersion", update.resource_version()}, {"ownerReferences", owners}}}};
  return Patch("/api/v1", namespace_, internal::Cat("persistentvolumeclaims/", update.name()), kMergePatch, body);
}

ApiRequest PvcExpandRequest(std::string_view namespace_, const pb::ExpandPvc& expand) {
  const Json body = {{"metadata", {{"resourceVersion", expand.resource_version()}}},
                     {"spec", {{"resources", {{"requests", {{"storage", expand.storage()}}}}}}}};
  return Patch("/api/v1", namespace_, internal::Cat("persistentvolumeclaims/", expand.name()), kMergePatch, body);
}

std::string PodsPath(std::string_view namespace_) {
  return internal::Cat("/api/v1/namespaces/", namespace_, "/pods");
}
std::string PvcsPath(std::string_view namespace_) {
  return internal::Cat("/api/v1/namespaces/", namespace_, "/persistentvolumeclaims");
}
std::string RevisionsPath(std::string_view namespace_) {
  return internal::Cat("/apis/apps/v1/namespaces/", namespace_, "/controllerrevisions");
}
std::string ImagePullJobsPath(std::string_view namespace_) {
  return internal::Cat("/apis/apps.kruise.io/v1alpha1/namespaces/", namespace_, "/imagepulljobs");
}
std::string CloneSetPath(std::string_view namespace_, std::string_view cloneset_name, std::string_view api_version) {
  return internal::Cat("/apis/", api_version, "/namespaces/", namespace_, "/clonesets/", cloneset_name);
}

std::string DeleteBody(std::string_view uid) {
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!uid.empty()) body["preconditions"] = {{"uid", std::string(uid)}};
  return body.dump();
}

absl::StatusOr<ApiRequest> ActionToPatch(const pb::Action& action, std::string_view namespace_,
                                         std::string_view cloneset_name, std::string_view api_version) {
  switch (action.kind_case()) {
    case pb::Action::kPatchPod:
      return PodPatchRequest(namespace_, action.patch_pod());
    case pb::Action::kPatchPodStatus:
      return PodStatusPatchRequest(namespace_, action.patch_pod_status());
    case pb::Action::kResizePod:
      return PodResizeRequest(namespace_, action.resize_pod());
    case pb::Action::kExpandPvc:
      return PvcExpandRequest(namespace_, action.expand_pvc());
    case pb::Action::kUpdateRevision:
      return RevisionPatchRequest(namespace_, action.update_revision());
    case pb::Action::kPatchCloneSet:
      return CloneSetPatchRequest(namespace_, cloneset_name, api_version, action.patch_clone_set());
    default:
      return absl::InvalidArgumentError(
          internal::Cat("action: kind ", static_cast<int>(action.kind_case()), " is not a patch"));
  }
}

}  // namespace cloneset::snapshot
