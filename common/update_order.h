// The order in which a CloneSet's pods are updated (docs/semantics.md, "Update order"): the default "least useful
// first" order of Kubernetes' ActivePods, then the priority strategy (weight or order), then the scatter
// strategy, then PreparingUpdate pods first. Every step is a stable sort, so the same pods always give the same
// order (upstream's first step is an unstable sort). The planner orders its update candidates with it
// (planner/update_order.h) and the image pre-download coordinator the nodes it pulls on (imagepull/coordinator.h),
// so images arrive on the nodes in the order their pods are updated.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::common {

namespace pb = ::cloneset::planner::v1;

// Everything the ActivePods comparator reads of a pod. Unset times are InfinitePast.
struct ActiveKey {
  std::string_view node_name;
  int phase = 0;  // Pending and anything unknown 0, Unknown 1, Running 2
  bool ready = false;  // the Ready condition is True
  absl::Time ready_time = absl::InfinitePast();  // its lastTransitionTime
  int32_t restarts = 0;  // the most restarts of any container
  absl::Time created = absl::InfinitePast();
};
// The key read from the pod message (the planner reads the same fields from its per-pod facts).
ActiveKey ActiveKeyOf(const pb::Pod& pod);

// The pod's lifecycle state label (lifecycle.apps.kruise.io/state) is PreparingUpdate.
bool IsPreparingUpdate(const pb::Pod& pod);

// The whole order of `candidates` (indexes into `pods`; entries of `pods` that are not candidates may be
// nullptr). `key_of(i)` is the ActiveKey of pods[i], `preparing_update(i)` whether its lifecycle state is
// PreparingUpdate.
std::vector<int> SortUpdateCandidates(const pb::UpdateStrategy& strategy, const std::vector<const pb::Pod*>& pods,
                                      std::vector<int> candidates, absl::FunctionRef<ActiveKey(int)> key_of,
                                      absl::FunctionRef<bool(int)> preparing_update);

// The steps.
void SortByActivePodsOrder(std::vector<int>& candidates, absl::FunctionRef<ActiveKey(int)> key_of);
void SortByPriority(const pb::UpdatePriorityStrategy& priority, const std::vector<const pb::Pod*>& pods,
                    std::vector<int>& candidates);
std::vector<int> ScatterCandidates(const google::protobuf::RepeatedPtrField<pb::UpdateScatterTerm>& terms,
                                   const std::vector<const pb::Pod*>& pods, std::vector<int> candidates);

// The integer formed by the trailing decimal digits of `value` ("o-10" -> 10, "abc" -> 0).
int64_t TrailingNumber(std::string_view value);

}  // namespace cloneset::common
