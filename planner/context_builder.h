// Builds the PlanContext of one reconcile (semantics §0.5 steps 4-7): the spec with every default resolved, the
// effective selector, the owned pods split into claimed / inactive / released, the owned PVCs, and the chosen
// revisions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "planner/context.h"
#include "planner/plan_builder.h"
#include "planner/spec.h"

namespace cloneset::planner {

// Splits request.pods (checking each: PodLooksValid, unique names) into ctx.pods with their facts,
// ctx.inactive_pods and ctx.released_pods, all in name order, in one pass. Needs ctx.clone_set, ctx.selector and
// the chosen revisions. INVALID_ARGUMENT for the first bad pod in request order.
absl::Status ClassifyPods(const pb::PlanRequest& request, PlanContext& ctx);

// The whole context. May append revision actions (CreateRevision/UpdateRevision) to `plan`.
absl::StatusOr<PlanContext> BuildContext(const pb::PlanRequest& request, PlanBuilder& plan);

}  // namespace cloneset::planner
