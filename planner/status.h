// Status computation (semantics §7).
#pragma once

#include "absl/status/status.h"
#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// Computes the new status from the snapshot (before this plan's writes), the Scale/Update errors, and the
// Progressing condition rules; pushes the progress-deadline and minReadySeconds requeues into `plan`.
pb::CloneSetStatus ComputeStatus(const PlanContext& ctx, const absl::Status& scale_error,
                                 const absl::Status& update_error, PlanBuilder& plan);

// §7.2: whether `next` must be written over `previous`.
bool StatusNeedsWrite(const pb::CloneSetStatus& previous, const pb::CloneSetStatus& next);

}  // namespace cloneset::planner
