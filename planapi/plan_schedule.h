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
#include <functional>
#include <string>
#include <vector>

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

struct PlanStage {
  // Indices into PlanResponse.actions; each group in plan order, groups ordered by their first action.
  std::vector<std::vector<int>> groups;
  bool creates = false;  // a slow-start batch of CreatePod actions
};

std::vector<PlanStage> SchedulePlan(const pb::PlanResponse& plan);

// The pod an action is about ("" for actions that are not about one pod).
std::string PodOfAction(const pb::Action& action);

// Runs the groups with at most `parallelism` of them in flight (the calling thread is one of the runners), each
// group's actions in order. No action starts once `stop` is true (`run` sets it, e.g. after a failure with
// stop_on_error); actions in flight finish.
void RunGroups(const std::vector<std::vector<int>>& groups, int parallelism, std::atomic<bool>& stop,
               const std::function<void(int)>& run);

}  // namespace cloneset::planapi
