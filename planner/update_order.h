// The order in which update candidates are taken (semantics §5.4): common/update_order.h holds the rule (the image
// pre-download coordinator orders its nodes with it too); this is the planner's side, which reads each pod's
// ActivePods key from its PodFacts instead of the pod message.
#pragma once

#include <vector>

#include "absl/time/time.h"
#include "common/update_order.h"
#include "planner/context.h"

namespace cloneset::planner {

// Full §5.4 order of `candidates` (indexes into `pods`).
// `facts` and `cold`, when given, hold the two halves of ComputePodFacts(*pods[i]) at [i] and save reading the
// pods again.
std::vector<int> SortUpdateCandidates(const pb::UpdateStrategy& strategy, const std::vector<const pb::Pod*>& pods,
                                      std::vector<int> candidates, const PodHotFacts* facts = nullptr,
                                      const PodColdFacts* cold = nullptr);

// The individual steps, exposed for tests and the simulate CLI.
void SortByActivePodsOrder(const std::vector<const pb::Pod*>& pods, std::vector<int>& candidates,
                           const PodHotFacts* facts = nullptr, const PodColdFacts* cold = nullptr);
using common::ScatterCandidates;
using common::SortByPriority;
using common::TrailingNumber;

// The ActivePods key of a pod from its facts (the same fields common::ActiveKeyOf reads from the message).
common::ActiveKey ActiveKeyOf(const PodHotFacts& facts, const PodColdFacts& cold);
inline common::ActiveKey ActiveKeyOf(const PodFacts& facts) { return ActiveKeyOf(facts, facts); }

}  // namespace cloneset::planner
