#include "planner/update_order.h"

#include "planner/predicates.h"

namespace cloneset::planner {

common::ActiveKey ActiveKeyOf(const PodHotFacts& f, const PodColdFacts& cold) {
  common::ActiveKey key;
  key.node_name = cold.node_name;
  key.phase = f.phase_ordinal;
  key.ready = f.k8s_ready;
  key.ready_time = f.ready_since;
  key.restarts = f.max_restarts;
  key.created = f.created;
  return key;
}

void SortByActivePodsOrder(const std::vector<const pb::Pod*>& pods, std::vector<int>& candidates,
                           const PodHotFacts* facts, const PodColdFacts* cold) {
  common::SortByActivePodsOrder(candidates, [&](int i) {
    return facts != nullptr ? ActiveKeyOf(facts[i], cold[i]) : common::ActiveKeyOf(*pods[i]);
  });
}

std::vector<int> SortUpdateCandidates(const pb::UpdateStrategy& strategy, const std::vector<const pb::Pod*>& pods,
                                      std::vector<int> candidates, const PodHotFacts* facts,
                                      const PodColdFacts* cold) {
  return common::SortUpdateCandidates(
      strategy, pods, std::move(candidates),
      [&](int i) { return facts != nullptr ? ActiveKeyOf(facts[i], cold[i]) : common::ActiveKeyOf(*pods[i]); },
      [&](int i) {
        return facts != nullptr ? facts[i].lifecycle == Lifecycle::kPreparingUpdate
                                : LifecycleState(*pods[i]) == kStatePreparingUpdate;
      });
}

}  // namespace cloneset::planner
