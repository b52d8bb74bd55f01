// The annotations an in-place update writes on the pod (semantics §5.8): apps.kruise.io/inplace-update-state (what
// the update started from and which batches ran) and apps.kruise.io/inplace-update-grace (the spec waiting for its
// grace period). Both are written as Go writes them (planner/go_json.h) so upstream's readers parse them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "planner/context.h"
#include "planner/inplace_spec.h"

namespace cloneset::planner {

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
absl::StatusOr<InPlaceUpdateState> ParseInPlaceState(const std::string& json);

// ---- The apps.kruise.io/inplace-update-grace annotation (the pending spec) ----
std::string FormatGraceSpec(const InPlaceUpdateSpec& spec);
absl::StatusOr<InPlaceUpdateSpec> ParseGraceSpec(const std::string& json);

// The state/grace annotation of a pod (current key, else the legacy key); "" if absent.
std::string_view InPlaceStateAnnotation(const pb::Pod& pod);
std::string_view InPlaceGraceAnnotation(const pb::Pod& pod);

// FormatRfc3339 with a per-thread memo of the last value (a plan formats the same `now` many times).
const std::string& Rfc3339(absl::Time t);

}  // namespace cloneset::planner
