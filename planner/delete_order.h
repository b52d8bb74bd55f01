// Which pods a scale-in deletes first (semantics §4.6): the comparator, the same-node and topology-spread rankers,
// and choosePodsToDelete. Stable sorts throughout, so equal pods keep their (name) order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/context.h"

namespace cloneset::planner {

// pod-deletion-cost: absent or malformed (not a base-10 int32, "+", leading zeros) -> 0.
int32_t DeletionCost(const pb::Pod& pod);

// topologySpreadConstraints[].topologyKey of a PodTemplateSpec JSON (empty when none or malformed).
std::vector<std::string> TopologySpreadKeys(const std::string& template_json);

// Rank per pod (same order as `pods`): the spread ranker when `spread_keys` is non-empty, else the same-node ranker.
std::vector<double> RankPods(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods,
                             const std::vector<std::string>& spread_keys);

// `pods` ordered for deletion (first = deleted first), ranked among themselves.
std::vector<const pb::Pod*> SortForDeletion(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods);

// choosePodsToDelete(totalDiff, currentRevDiff, notUpdated, updated).
std::vector<const pb::Pod*> ChoosePodsToDelete(const PlanContext& ctx, int32_t total_diff, int32_t current_rev_diff,
                                               const std::vector<const pb::Pod*>& not_updated,
                                               const std::vector<const pb::Pod*>& updated);

}  // namespace cloneset::planner
