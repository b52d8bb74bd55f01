// The diff calculation (semantics §4.1): how many pods to create, delete and update, with partition, surge and
// the unavailability budgets.
#pragma once

#include <cstdint>

#include "planner/context.h"

namespace cloneset::planner {

enum class RevisionCheck {
  kScale,   // isUpdScale: PreparingUpdate counts as updated under the PreparingUpdateAsUpdate gate
  kUpdate,  // isUpdUpdate: plain revision match
};

struct ScaleDiff {
  int32_t scale_up_num = 0;
  int32_t scale_up_num_old = 0;
  int32_t scale_up_limit = 0;
  int32_t scale_down_num = 0;
  int32_t scale_down_num_old = 0;
  int32_t delete_ready_limit = 0;
  int32_t update_num = 0;
  int32_t update_max_unavailable = 0;
  int32_t use_surge = 0;
  int32_t use_surge_old = 0;
};

ScaleDiff CalculateDiff(const PlanContext& ctx, RevisionCheck check);

}  // namespace cloneset::planner
