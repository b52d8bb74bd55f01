// StartInPlaceUpdates (proto/planner.proto) back to the per-pod actions and events it stands for.
#pragma once

#include <vector>

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

// Replaces every StartInPlaceUpdates action of `plan` by its targets' actions (PatchPodStatus when the batch has
// a status template, then PatchPod) and puts the targets' events in PlanResponse.events where they belong: the
// plan becomes, byte for byte, the one planned without PlanRequest.accept_in_place_batches. A plan without batches
// is left untouched. Works on messages on an arena (elements are only appended and swapped).
void ExpandInPlaceBatches(pb::PlanResponse* plan);

// One action or event of the expanded plan, named without building it: the plan's own action (event) `index` when
// `target` is negative; otherwise target `target` of the batch that is action `index`: its PatchPodStatus when
// `status`, its PatchPod when not (an event: the target's event). ExpandInPlaceBatches is these, built, in the
// orders below; an applier that builds each action only when it writes it (applier.h) reaches its first write
// without building the rest.
struct ExpandedRef {
  int index = 0;
  int target = -1;
  bool status = false;
};
// The expanded plan's actions, in order (the plan's own, one to one, when it has no batch).
std::vector<ExpandedRef> ExpandedActionOrder(const pb::PlanResponse& plan);
// The expanded plan's events, in order.
std::vector<ExpandedRef> ExpandedEventOrder(const pb::PlanResponse& plan);
// The action `ref` names: the plan's own, or the target's, built into `scratch`.
const pb::Action& ExpandedAction(const pb::PlanResponse& plan, const ExpandedRef& ref, pb::Action* scratch);
// The event `ref` names: the plan's own, or the target's, built into `scratch`.
const pb::Event& ExpandedEvent(const pb::PlanResponse& plan, const ExpandedRef& ref, pb::Event* scratch);

}  // namespace cloneset::planapi
