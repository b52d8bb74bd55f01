#include "planapi/plan_schedule.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <thread>

#include "kube/watch_stream.h"

namespace cloneset::planapi {

namespace {

// The pod `a` is about ("" for actions that are not about one pod), without a copy where the action names it; a
// CreatePod's name is parsed from its JSON into `parsed`.
std::string_view PodNameOf(const pb::Action& a, std::string* parsed) {
  switch (a.kind_case()) {
    case pb::Action::kCreatePod: {
      auto meta = kube::ReadObjectMeta(a.create_pod().pod_json());
      *parsed = meta.ok() ? std::move(meta->name) : "";
      return *parsed;
    }
    case pb::Action::kDeletePod: return a.delete_pod().name();
    case pb::Action::kPatchPod: return a.patch_pod().name();
    case pb::Action::kPatchPodStatus: return a.patch_pod_status().name();
    case pb::Action::kResizePod: return a.resize_pod().name();
    case pb::Action::kCreatePvc: return a.create_pvc().pod_name();  // before the pod's other actions
    case pb::Action::kExpandPvc: return a.expand_pvc().pod_name();
    default: return {};
  }
}

}  // namespace

std::string PodOfAction(const pb::Action& a) {
  std::string parsed;
  return std::string(PodNameOf(a, &parsed));
}

PlanStages::PlanStages(const pb::PlanResponse& plan) : plan_(plan), order_(ExpandedActionOrder(plan)) {}

const pb::Action& PlanStages::Action(int k, pb::Action* scratch) const {
  return ExpandedAction(plan_, order_[k], scratch);
}

std::string_view PlanStages::Pod(int k) {
  const ExpandedRef& ref = order_[k];
  // A target's actions are about the target (ExpandedAction names it in both).
  if (ref.target >= 0) return plan_.actions(ref.index).start_in_place_updates().targets(ref.target).name();
  const pb::Action& a = plan_.actions(ref.index);
  if (!a.has_create_pod()) return PodNameOf(a, nullptr);
  return PodNameOf(a, &names_.emplace_back());
}

bool PlanStages::Next(PlanStage* stage) {
  if (next_ >= size()) return false;
  stage->groups.clear();
  group_of_.clear();
  names_.clear();
  const std::string_view first = Pod(next_);
  if (first.empty()) {  // a barrier: alone in its stage (also a CreatePod whose pod has no name)
    stage->creates = false;
    stage->groups.push_back({next_++});
    return true;
  }
  // Whether action `k` is a CreatePod, and of which slow-start batch.
  const auto creation = [&](int k, int* batch) {
    const ExpandedRef& ref = order_[k];
    if (ref.target >= 0 || !plan_.actions(ref.index).has_create_pod()) return false;
    *batch = plan_.actions(ref.index).create_pod().batch();
    return true;
  };
  // A stage is a run of pod actions that are all creations of one slow-start batch, or all not creations.
  int batch = 0;
  stage->creates = creation(next_, &batch);
  for (std::string_view pod = first;;) {
    auto [it, added] = group_of_.try_emplace(pod, stage->groups.size());
    if (added) stage->groups.emplace_back();
    stage->groups[it->second].push_back(next_++);
    if (next_ >= size()) break;
    pod = Pod(next_);
    if (pod.empty()) break;
    int b = 0;
    if (creation(next_, &b) != stage->creates || (stage->creates && b != batch)) break;
  }
  return true;
}

std::vector<PlanStage> SchedulePlan(const pb::PlanResponse& plan) {
  std::vector<PlanStage> stages;
  PlanStages cursor(plan);
  for (PlanStage stage; cursor.Next(&stage);) stages.push_back(std::move(stage));
  return stages;
}

void RunGroups(const std::vector<std::vector<int>>& groups, int parallelism, std::atomic<bool>& stop,
               const std::function<void(int)>& run) {
  std::atomic<size_t> next{0};
  const auto runner = [&] {
    for (size_t g = next++; g < groups.size(); g = next++) {
      for (int action : groups[g]) {
        if (stop.load()) return;
        run(action);
      }
    }
  };
  const size_t runners = std::min<size_t>(std::max(parallelism, 1), groups.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < runners; ++t) threads.emplace_back(runner);
  runner();
  for (auto& t : threads) t.join();
}

}  // namespace cloneset::planapi
