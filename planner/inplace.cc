#include "planner/inplace.h"

#include <string>

#include "absl/status/statusor.h"
#include "kruise/inplace_completion.h"
#include "common/resources.h"
#include "planner/context_facts.h"
#include "planner/pod_source.h"

namespace cloneset::planner {

bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state) {
  for (const auto& [name, last] : state.last_container_statuses) {
    if (kruise::ContainerUpdateProgress({last.image_id, last.container_id}, kruise::Observe(pod, name),
                                        state.update_env_from_metadata) != kruise::ContainerUpdate::kDone) {
      return false;
    }
  }
  // A resize is done when the kubelet reports the spec's resources and no resize condition is left.
  return !state.update_resources || common::PodResizeProgress(pod).state == common::ResizeState::kDone;
}

bool InPlaceUpdateCompleted(const pb::Pod& pod) {
  const std::string_view state_json = InPlaceStateAnnotation(pod);
  if (state_json.empty()) return true;
  if (!InPlaceGraceAnnotation(pod).empty()) return false;
  absl::StatusOr<InPlaceUpdateState> state = ParseInPlaceState(std::string(state_json));
  if (!state.ok()) return true;  // upstream: an unparsable state does not block the pod
  if (HasNextBatch(*state)) return false;
  return ContainersUpdateCompleted(pod, *state);
}

std::vector<PendingResize> PendingResizes(const PlanContext& ctx) {
  std::vector<PendingResize> out;
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  for (size_t i = 0; i < facts.size(); ++i) {
    const PodHotFacts& f = facts[i];
    const bool settled = f.in_place_gate ? f.in_place_settled : true;
    if (!f.has_in_place_state || (f.lifecycle != Lifecycle::kUpdating && settled)) continue;
    if (cold[i].in_place_state.find("\"updateResources\":true") == std::string_view::npos) continue;
    const common::ResizeProgress progress = common::PodResizeProgress(PodAt(ctx, i));
    if (progress.state != common::ResizeState::kPending) continue;
    out.push_back({std::string(cold[i].name), progress.reason, progress.message});
  }
  return out;
}

}  // namespace cloneset::planner
