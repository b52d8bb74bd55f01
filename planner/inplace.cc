#include "planner/inplace.h"

#include <string>

#include "absl/status/statusor.h"
#include "common/resources.h"
#include "kruise/inplace_completion.h"
#include "planner/context_facts.h"
#include "planner/pod_source.h"

namespace cloneset::planner {

bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state) {
  return kruise::ContainersCompletion(pod, state).progress == kruise::InPlaceProgress::kComplete;
}

bool InPlaceUpdateCompleted(const pb::Pod& pod) { return kruise::CheckInPlaceUpdate(pod).Completed(); }

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
