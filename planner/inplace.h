// In-place updates (semantics §5.7-§5.9), by concern: what can be updated in place (planner/inplace_spec.h), the
// state and grace annotations (kruise/inplace_state.h), applying one batch (planner/inplace_batch.h), and here
// completion detection, which decides with the rule the node agent shares (kruise/inplace_completion.h).
#pragma once

#include <string>
#include <vector>

#include "cloneset/planner/v1/planner.pb.h"
#include "planner/inplace_batch.h"
#include "planner/inplace_spec.h"
#include "kruise/inplace_state.h"

namespace cloneset::planner {

// Containers of the state's last batch have restarted on their new spec (§5.9 "containers completed") and, when
// the update resized the pod (updateResources), the kubelet has carried the resize out: kruise::ContainersCompletion,
// the rule the node agent decides with too.
bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state);
// DefaultCheckInPlaceUpdateCompleted (kruise::CheckInPlaceUpdate): no state -> true; grace pending, an unparsable
// state or a next batch pending -> false; else ContainersUpdateCompleted.
bool InPlaceUpdateCompleted(const pb::Pod& pod);

// An in-place resize the kubelet holds back: the pod's PodResizePending condition (reason Deferred or Infeasible)
// while its in-place update, which resized it, waits for it (semantics §5.9, "Pending resizes").
struct PendingResize {
  std::string pod;
  std::string reason;   // Deferred, Infeasible (the kubelet's reason)
  std::string message;  // the kubelet's message
};
// The active pods of `ctx` with such a resize, in pod order. Reads the pods whose in-place update has not
// completed only (lifecycle Updating or InPlaceUpdateReady not settled).
std::vector<PendingResize> PendingResizes(const PlanContext& ctx);

}  // namespace cloneset::planner
