// StartInPlaceUpdates (proto/planner.proto) back to the per-pod actions and events it stands for.
#pragma once

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planner {

// Replaces every StartInPlaceUpdates action of `plan` by its targets' actions (PatchPodStatus when the batch has
// a status template, then PatchPod) and puts the targets' events in PlanResponse.events where they belong: the
// plan becomes, byte for byte, the one planned without PlanRequest.accept_in_place_batches. A plan without batches
// is left untouched. Works on messages on an arena (elements are only appended and swapped).
void ExpandInPlaceBatches(v1::PlanResponse* plan);

}  // namespace cloneset::planner
