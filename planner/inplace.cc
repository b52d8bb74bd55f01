#include "planner/inplace.h"

#include <string>

#include "absl/status/statusor.h"
#include "common/inplace_completion.h"

namespace cloneset::planner {

bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state) {
  for (const auto& [name, last] : state.last_container_statuses) {
    if (common::ContainerUpdateProgress({last.image_id, last.container_id}, common::Observe(pod, name),
                                        state.update_env_from_metadata) != common::ContainerUpdate::kDone) {
      return false;
    }
  }
  return true;
}

bool InPlaceUpdateCompleted(const pb::Pod& pod) {
  const std::string_view state_json = InPlaceStateAnnotation(pod);
  if (state_json.empty()) return true;
  if (!InPlaceGraceAnnotation(pod).empty()) return false;
  absl::StatusOr<InPlaceUpdateState> state = ParseInPlaceState(std::string(state_json));
  if (!state.ok()) return true;  // upstream: an unparsable state does not block the pod
  if (!state->next_container_images.empty() || !state->next_container_ref_metadata.empty()) return false;
  return ContainersUpdateCompleted(pod, *state);
}

}  // namespace cloneset::planner
