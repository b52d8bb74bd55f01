// Update (semantics §5 steps 2-6): move pods to the target revision within the budgets. Step 1, the refresh of
// every pod, is refresh.h.
#pragma once

#include "absl/status/status.h"
#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// Steps 2-6 of §5 (only when Scale did not act and refresh modified nothing). The error sets FailedUpdate.
absl::Status PlanUpdate(const PlanContext& ctx, PlanBuilder& plan);

}  // namespace cloneset::planner
