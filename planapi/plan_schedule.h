// Which actions of a plan may be in flight at the same time.
//
// A plan is a list of actions the planner decided from one snapshot; each pod action is guarded by its own
// precondition (resourceVersion or uid), so pod actions on different pods do not depend on each other. What
// does matter, and what the schedule keeps:
//  * stages run one after the other, in plan order: revision, PVC, CloneSet and image-pull-job actions are
//    stages of their own (revisions are written before the pods that carry their hash), and every slow-start
//    batch of creations is one stage (the batch after a failure must not start);
//  * inside a stage, the actions of one pod form a group and run in plan order (a pod's InPlaceUpdateReady=False
//    status patch before its spec patch; a pod's PVCs are created inside its CreatePod action, before the pod);
//  * groups of one stage are independent and may run concurrently (RunGroups).
//
// Pure: the schedule is a function of the plan.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "planapi/in_place_batches.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

struct PlanStage {
  // Indices into PlanResponse.actions; each group in plan order, groups ordered by their first action.
  std::vector<std::vector<int>> groups;
  bool creates = false;  // a slow-start batch of CreatePod actions
};

// The stages of the expanded plan (in_place_batches.h); indices into its actions, which are the plan's own when it
// has no StartInPlaceUpdates.
std::vector<PlanStage> SchedulePlan(const pb::PlanResponse& plan);

// SchedulePlan one stage at a time, over the expanded plan without building its actions: a stage is known, and
// may run, before the actions after it are looked at, and an action is built (ExpandedAction) only when it is
// written. A 100 000-pod rollout's plan reaches its first write without copying its 20 000 in-place patches
// first. The plan must outlive the stages; not thread-safe (Action is: it builds into the caller's scratch).
class PlanStages {
 public:
  explicit PlanStages(const pb::PlanResponse& plan);
  // The next stage, or false after the last.
  bool Next(PlanStage* stage);
  // How many actions the expanded plan has.
  int size() const { return static_cast<int>(order_.size()); }
  // Action `k` of the expanded plan: the plan's own, or built into `scratch`.
  const pb::Action& Action(int k, pb::Action* scratch) const;

 private:
  // The pod action `k` is about ("": none); a CreatePod's name is parsed into `names_`.
  std::string_view Pod(int k);

  const pb::PlanResponse& plan_;
  std::vector<ExpandedRef> order_;
  int next_ = 0;
  std::deque<std::string> names_;  // the current stage's CreatePod names (the group index points into them)
  absl::flat_hash_map<std::string_view, size_t> group_of_;  // pod -> group index in the current stage
};

// The pod an action is about ("" for actions that are not about one pod).
std::string PodOfAction(const pb::Action& action);

// Runs the groups with at most `parallelism` of them in flight (the calling thread is one of the runners), each
// group's actions in order. No action starts once `stop` is true (`run` sets it, e.g. after a failure with
// stop_on_error); actions in flight finish.
void RunGroups(const std::vector<std::vector<int>>& groups, int parallelism, std::atomic<bool>& stop,
               const std::function<void(int)>& run);

}  // namespace cloneset::planapi
