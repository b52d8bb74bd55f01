// Refresh (semantics §5.1 step 1, §5.9): every pod's in-place completion, grace periods, next batches, lifecycle
// transitions and pod-template-hash, before Update moves any pod. Always runs, even when Scale acted.
#pragma once

#include "absl/status/status.h"
#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// Step 1 of §5.1 (refresh: in-place completion, grace periods, next batches, lifecycle transitions,
// pod-template-hash). Always runs, even when Scale acted. Returns true when a pod was modified (then no pod is
// updated in this plan).
bool PlanRefresh(const PlanContext& ctx, PlanBuilder& plan, absl::Status* error);

// The InPlaceUpdateReady=True writes of PlanRefresh are needed only for pods that stay: those of pods the plan
// deletes are dropped, and a plan that scales drops them all, as upstream, whose refresh belongs to the update
// phase (a scaling reconcile never reaches it; the pods it creates or deletes bring the next reconcile, which
// writes the condition of the pods that remain). Runs once every stage has written its actions.
void DropUnneededInPlaceReadyWrites(bool scaling, PlanBuilder& plan);

}  // namespace cloneset::planner
