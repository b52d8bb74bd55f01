#include "planner/service/default_functions.h"

#include "planner/plan.h"

namespace cloneset::planner::service {

PlannerFunctions DefaultPlannerFunctions() {
  return PlannerFunctions{
      .plan = [](const v1::PlanRequest& r) { return ::cloneset::planner::Plan(r); },
      .plan_into = [](const v1::PlanRequest& r, v1::PlanResponse* response,
                      const CancelCheck& cancelled) { return ::cloneset::planner::PlanInto(r, response, cancelled); },
      .validate = [](const v1::ValidateRequest& r) { return ::cloneset::planner::Validate(r); },
      .compute_revision = [](const v1::ComputeRevisionRequest& r) { return ::cloneset::planner::ComputeRevision(r); },
  };
}

}  // namespace cloneset::planner::service
