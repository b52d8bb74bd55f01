// The annotations an in-place update writes on the pod (semantics §5.8): apps.kruise.io/inplace-update-state (what
// the update started from and which batches ran) and apps.kruise.io/inplace-update-grace (the spec waiting for its
// grace period), as data and their JSON codec. Both are written as Go writes them (base/go_json.h) so upstream's
// readers parse them. The planner writes them; the planner and the node agent read them with ParseInPlaceState,
// and decide completion with kruise/inplace_completion.h.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::kruise {

// Label/annotation values a container reads through env valueFrom.fieldRef (env from metadata).
struct RefMetadata {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  bool operator==(const RefMetadata&) const = default;
};

// The cpu/memory requests and limits an in-place resize sets on one container (upstream ResourceRequirements):
// resource -> quantity in Go's canonical form ("500m", "1Gi").
struct ContainerResources {
  std::map<std::string, std::string> requests;
  std::map<std::string, std::string> limits;
  bool operator==(const ContainerResources&) const = default;
};

// What an in-place update changes (upstream UpdateSpec); the grace annotation holds it while the update waits.
struct InPlaceUpdateSpec {
  std::string revision;
  std::string old_revision;  // the pod's revision before this update (ours; lets a rollback during grace undo it)
  std::map<std::string, std::string> container_images;               // container -> image
  std::map<std::string, RefMetadata> container_ref_metadata;         // container -> metadata it reads
  // container -> resources to resize to (only with the InPlaceWorkloadVerticalScaling gate).
  std::map<std::string, ContainerResources> container_resources;
  std::map<std::string, std::string> set_labels;                     // template metadata changes
  std::map<std::string, std::string> set_annotations;
  std::vector<std::string> remove_labels;
  std::vector<std::string> remove_annotations;
  std::vector<std::string> add_finalizers;
  std::vector<std::string> remove_finalizers;
  bool update_env_from_metadata = false;
  int32_t grace_seconds = 0;

  // Only resources change (upstream VerticalUpdateOnly): no image, no env from metadata.
  bool ResizeOnly() const {
    return !container_resources.empty() && container_images.empty() && !update_env_from_metadata;
  }
};

// ---- The apps.kruise.io/inplace-update-state annotation ----
struct LastContainerStatus {
  std::string image_id;
  std::string container_id;  // ours (ignored by Go readers): a restart with the same image ID still completes
};
struct ContainerBatch {
  std::string timestamp;
  std::vector<std::string> containers;
};
struct InPlaceUpdateState {
  std::string revision;
  std::string update_timestamp;  // RFC3339
  std::map<std::string, LastContainerStatus> last_container_statuses;
  bool update_env_from_metadata = false;
  bool update_resources = false;
  bool update_images = false;
  std::map<std::string, std::string> next_container_images;
  std::map<std::string, RefMetadata> next_container_ref_metadata;
  std::map<std::string, ContainerResources> next_container_resources;
  std::vector<std::string> pre_check_containers_required_ready;  // preCheckBeforeNext; empty = nil
  std::vector<ContainerBatch> container_batches_record;
};

// Whether a later batch waits (nextContainerImages, nextContainerRefMetadata or nextContainerResources).
inline bool HasNextBatch(const InPlaceUpdateState& state) {
  return !state.next_container_images.empty() || !state.next_container_ref_metadata.empty() ||
         !state.next_container_resources.empty();
}

// Go struct field order, omitempty as upstream (lastContainerStatuses is null when empty).
std::string FormatInPlaceState(const InPlaceUpdateState& state);
// InvalidArgument naming the annotation when `json` is not a JSON object. Members of the wrong type read as empty
// (upstream's reader would fail on them too; ours only writes well-typed ones).
absl::StatusOr<InPlaceUpdateState> ParseInPlaceState(std::string_view json);

// ---- The apps.kruise.io/inplace-update-grace annotation (the pending spec) ----
std::string FormatGraceSpec(const InPlaceUpdateSpec& spec);
absl::StatusOr<InPlaceUpdateSpec> ParseGraceSpec(std::string_view json);

// The state/grace annotation of a pod (current key, else the legacy key); "" if absent.
std::string_view InPlaceStateAnnotation(const ::cloneset::planner::v1::Pod& pod);
std::string_view InPlaceGraceAnnotation(const ::cloneset::planner::v1::Pod& pod);

}  // namespace cloneset::kruise
