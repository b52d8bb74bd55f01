// Plan actions turned into concrete Kubernetes API requests: the patches of existing objects, and the paths and
// bodies of the creations and deletions (the executor's plan writer, executor/apply.cc, sends them; how it reads
// the answers is its own). The executor prefixes `path` with the server URL; it is the full path below the API
// root, e.g. /api/v1/namespaces/ns/pods/p/status.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::snapshot {

namespace pb = ::cloneset::planner::v1;

inline constexpr char kStrategicMergePatch[] = "application/strategic-merge-patch+json";
inline constexpr char kMergePatch[] = "application/merge-patch+json";

struct ApiRequest {
  std::string method;        // "PATCH"
  std::string path;          // /api/v1/namespaces/<ns>/pods/<name>
  std::string path_suffix;   // the part after the namespace: pods/<name>
  std::string content_type;  // kStrategicMergePatch or kMergePatch
  std::string body;          // compact JSON
};

// Pod metadata/spec: strategic merge patch. Removed labels/annotations are null; finalizers are added through
// the merge list and removed with $deleteFromPrimitiveList; containers merge by name carrying only name+image;
// owner references are removed with {"$patch":"delete","uid":...}; metadata.resourceVersion is the precondition.
ApiRequest PodPatchRequest(std::string_view namespace_, const pb::PatchPod& patch);
inline constexpr char kInPlaceUpdateReadyCondition[] = "InPlaceUpdateReady";

// An in-place resize: strategic merge patch on pods/<name>/resize (Kubernetes 1.32 and later) of the containers'
// requests and limits, merged by container name and resource; metadata.resourceVersion is the precondition.
ApiRequest PodResizeRequest(std::string_view namespace_, const pb::ResizePod& resize);

// Whether the patch sets only conditions a stale snapshot cannot get wrong: InPlaceUpdateReady (written only by
// the CloneSet controller, set as a whole, and by the node agent to True under its own resourceVersion guard),
// optionally with Ready=False (what the kubelet itself computes while a readiness gate is False). Not when it
// carries a read-modify-write of a shared value such as KruisePodReady's list of keys in its message.
bool OnlyOwnConditions(const pb::PatchPodStatus& patch);

// Pod status conditions: strategic merge patch on pods/<name>/status (conditions merge by type).
// The precondition: with OnlyOwnConditions and a uid, metadata.uid (the API server refuses the patch for another
// pod of that name) and no resourceVersion, so the write does not lose to the kubelet's status writes (pod start,
// probes) that the planner never looked at. Otherwise metadata.resourceVersion.
ApiRequest PodStatusPatchRequest(std::string_view namespace_, const pb::PatchPodStatus& patch);
// apps/v1 ControllerRevision labels/annotations/revision: merge patch with the resourceVersion precondition.
ApiRequest RevisionPatchRequest(std::string_view namespace_, const pb::UpdateRevision& update);
// The CloneSet itself: the planner's merge patch, plus metadata.resourceVersion when given. `api_version` is the
// CloneSet's ("apps.kruise.io/v1alpha1" when empty). Fails when merge_patch_json is not a JSON object.
absl::StatusOr<ApiRequest> CloneSetPatchRequest(std::string_view namespace_, std::string_view cloneset_name,
                                                std::string_view api_version, const pb::PatchCloneSet& patch);
// The status subresource write: merge patch {"status": StatusToJson(status)} on clonesets/<name>/status.
ApiRequest CloneSetStatusRequest(std::string_view namespace_, std::string_view cloneset_name,
                                 std::string_view api_version, const pb::CloneSetStatus& status);

// UpdatePvcOwner: a merge patch of the claim's metadata.ownerReferences, the snapshot's `pvc` ones without
// remove_owner_uid plus add_owner, under the action's metadata.resourceVersion.
ApiRequest PvcOwnerPatchRequest(std::string_view namespace_, const pb::PersistentVolumeClaim& pvc,
                                const pb::UpdatePvcOwner& update);

// ExpandPvc: a merge patch of the claim's spec.resources.requests.storage under the action's
// metadata.resourceVersion (the API server refuses a shrink, and a growth the claim's StorageClass does not allow).
ApiRequest PvcExpandRequest(std::string_view namespace_, const pb::ExpandPvc& expand);

// The collections a plan POSTs to (CreatePod's PVCs and pod, CreatePvc, CreateRevision, CreateImagePullJob); an
// object's own path is the collection's plus "/<name>" (the deletions, and the GETs that read an outcome back).
std::string PodsPath(std::string_view namespace_);
std::string PvcsPath(std::string_view namespace_);
std::string RevisionsPath(std::string_view namespace_);
std::string ImagePullJobsPath(std::string_view namespace_);
// The CloneSet's own path, under its apiVersion as given.
std::string CloneSetPath(std::string_view namespace_, std::string_view cloneset_name, std::string_view api_version);
// The body of every DELETE of a plan: DeleteOptions with the uid precondition when `uid` is not empty.
std::string DeleteBody(std::string_view uid);

// Dispatches on the action kind: PatchPod, PatchPodStatus, ResizePod, ExpandPvc, UpdateRevision and PatchCloneSet. Other
// kinds are not patches and get INVALID_ARGUMENT.
absl::StatusOr<ApiRequest> ActionToPatch(const pb::Action& action, std::string_view namespace_,
                                         std::string_view cloneset_name, std::string_view api_version);

}  // namespace cloneset::snapshot
