// The order in which update candidates are taken (semantics §5.4): the default "least useful first" order,
// then priority (weight or order), then scatter, then PreparingUpdate pods first. Every step is a stable sort,
// so the same snapshot always yields the same order (upstream's first step is an unstable sort).
#pragma once

#include <vector>

#include "absl/time/time.h"
#include "planner/context.h"

namespace cloneset::planner {

// Full §5.4 order of `candidates` (indexes into `pods`).
// `facts`, when given, holds ComputePodFacts(*pods[i]) at [i] and saves reading the pods again.
std::vector<int> SortUpdateCandidates(const pb::UpdateStrategy& strategy, const std::vector<const pb::Pod*>& pods,
                                      std::vector<int> candidates, const PodFacts* facts = nullptr);

// The individual steps, exposed for tests and the simulate CLI.
void SortByActivePodsOrder(const std::vector<const pb::Pod*>& pods, std::vector<int>& candidates,
                           const PodFacts* facts = nullptr);
void SortByPriority(const pb::UpdatePriorityStrategy& priority, const std::vector<const pb::Pod*>& pods,
                    std::vector<int>& candidates);
std::vector<int> ScatterCandidates(const google::protobuf::RepeatedPtrField<pb::UpdateScatterTerm>& terms,
                                   const std::vector<const pb::Pod*>& pods, std::vector<int> candidates);

// k8s label selector semantics (matchLabels AND matchExpressions). An unknown operator or a malformed
// requirement makes the selector invalid: returns false and sets *valid = false when given.
bool SelectorMatches(const pb::LabelSelector& selector, const google::protobuf::Map<std::string, std::string>& labels,
                     bool* valid = nullptr);

// The integer formed by the trailing decimal digits of `value` ("o-10" -> 10, "abc" -> 0).
int64_t TrailingNumber(std::string_view value);

}  // namespace cloneset::planner
