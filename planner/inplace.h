// In-place updates (semantics §5.7-§5.9), by concern: what can be updated in place (planner/inplace_spec.h), the
// state and grace annotations (planner/inplace_state.h), applying one batch (planner/inplace_batch.h), and here
// completion detection, which decides with the rule the node agent shares (common/inplace_completion.h).
#pragma once

#include "cloneset/planner/v1/planner.pb.h"
#include "planner/inplace_batch.h"
#include "planner/inplace_spec.h"
#include "planner/inplace_state.h"

namespace cloneset::planner {

// Containers of the state's last batch have restarted on their new spec (§5.9 "containers completed"): the rule
// of common/inplace_completion.h for each, the one the node agent decides with too.
bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state);
// DefaultCheckInPlaceUpdateCompleted: no state -> true; grace pending or a next batch pending -> false.
bool InPlaceUpdateCompleted(const pb::Pod& pod);

}  // namespace cloneset::planner
