// Image pre-download decisions (semantics §8).
#pragma once

#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

void PlanImagePreDownload(const PlanContext& ctx, PlanBuilder& plan);

}  // namespace cloneset::planner
