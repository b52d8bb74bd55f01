// The production wiring of PlannerFunctions: planner/plan.h.
#pragma once

#include "planner/service/planner_service.h"

namespace cloneset::planner::service {

PlannerFunctions DefaultPlannerFunctions();

}  // namespace cloneset::planner::service
