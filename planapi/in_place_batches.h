// StartInPlaceUpdates (proto/planner.proto) back to the per-pod actions and events it stands for.
#pragma once

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

// The annotation a pod's in-place update state is written to (the planner reads it back, planner/context.h).
inline constexpr char kInPlaceStateAnnotation[] = "apps.kruise.io/inplace-update-state";

// Replaces every StartInPlaceUpdates action of `plan` by its targets' actions (PatchPodStatus when the batch has
// a status template, then PatchPod) and puts the targets' events in PlanResponse.events where they belong: the
// plan becomes, byte for byte, the one planned without PlanRequest.accept_in_place_batches. A plan without batches
// is left untouched. Works on messages on an arena (elements are only appended and swapped).
void ExpandInPlaceBatches(pb::PlanResponse* plan);

}  // namespace cloneset::planapi
