// The planner's entry points: pure functions of their requests.
#pragma once

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planner {

absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request);
absl::StatusOr<v1::ValidateResponse> Validate(const v1::ValidateRequest& request);
absl::StatusOr<v1::ComputeRevisionResponse> ComputeRevision(const v1::ComputeRevisionRequest& request);

}  // namespace cloneset::planner
