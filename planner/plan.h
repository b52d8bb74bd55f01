// The planner's entry points: pure functions of their requests.
#pragma once

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "planner/plan_limits.h"

namespace cloneset::planner {

absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request);
// The same plan built into `*response` (cleared first), which may live on a protobuf arena: what the service
// does, so a plan of thousands of actions makes no heap allocation. On error `*response` is left cleared.
absl::Status PlanInto(const v1::PlanRequest& request, v1::PlanResponse* response);
// The same, abandoned with CANCELLED (and `*response` cleared) once `cancelled` answers true: the service passes
// the call's cancellation and deadline (plan_limits.h).
absl::Status PlanInto(const v1::PlanRequest& request, v1::PlanResponse* response, const CancelCheck& cancelled);
absl::StatusOr<v1::ValidateResponse> Validate(const v1::ValidateRequest& request);
absl::StatusOr<v1::ComputeRevisionResponse> ComputeRevision(const v1::ComputeRevisionRequest& request);

}  // namespace cloneset::planner
