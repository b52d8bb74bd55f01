#include "planapi/plan_schedule.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "kube/watch_stream.h"

namespace cloneset::planapi {

std::string PodOfAction(const pb::Action& a) {
  switch (a.kind_case()) {
    case pb::Action::kCreatePod: {
      auto meta = kube::ReadObjectMeta(a.create_pod().pod_json());
      return meta.ok() ? meta->name : "";
    }
    case pb::Action::kDeletePod: return a.delete_pod().name();
    case pb::Action::kPatchPod: return a.patch_pod().name();
    case pb::Action::kPatchPodStatus: return a.patch_pod_status().name();
    case pb::Action::kCreatePvc: return a.create_pvc().pod_name();  // before the pod's other actions
    default: return "";
  }
}

std::vector<PlanStage> SchedulePlan(const pb::PlanResponse& plan) {
  std::vector<PlanStage> stages;
  std::map<std::string, size_t> group_of;  // pod -> group index in stages.back()
  int stage_batch = 0;
  bool pod_stage = false;  // stages.back() takes more pod actions
  const auto open = [&](bool creates, bool pods) {
    stages.push_back({{}, creates});
    group_of.clear();
    pod_stage = pods;
  };
  for (int i = 0; i < plan.actions_size(); ++i) {
    const pb::Action& a = plan.actions(i);
    const std::string pod = PodOfAction(a);
    if (pod.empty()) {  // a barrier: alone in its stage (also a CreatePod whose pod has no name)
      open(false, false);
      stages.back().groups.push_back({i});
      continue;
    }
    const bool create = a.has_create_pod();
    const bool same_stage =
        pod_stage && stages.back().creates == create && (!create || a.create_pod().batch() == stage_batch);
    if (!same_stage) open(create, true);
    if (create) stage_batch = a.create_pod().batch();
    auto [it, added] = group_of.try_emplace(pod, stages.back().groups.size());
    if (added) stages.back().groups.emplace_back();
    stages.back().groups[it->second].push_back(i);
  }
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
