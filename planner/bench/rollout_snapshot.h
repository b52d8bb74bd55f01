// A synthetic mid-rollout snapshot for benchmarks and documentation: a CloneSet of `pods` pods moving from image
// v1 to v2 with InPlaceIfPossible, half of the pods already updated, partition 25 %, maxSurge 10 %,
// maxUnavailable 20 %, every tenth pod not ready. Revisions are computed by the real ComputeRevision so that the
// planner recognises them.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planner::bench {

absl::StatusOr<v1::PlanRequest> MidRolloutRequest(int32_t pods);

}  // namespace cloneset::planner::bench
