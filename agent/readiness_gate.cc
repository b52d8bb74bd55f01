#include "agent/readiness_gate.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "kruise/inplace_completion.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

// The container's status is ready (the first status of that name).
bool ContainerReady(const pb::Pod& pod, std::string_view name) {
  for (const pb::ContainerStatus& status : pod.container_statuses()) {
    if (status.name() == name) return status.ready();
  }
  return false;
}

}  // namespace

ReadinessDecision DecideReadiness(const pb::Pod& pod, absl::Time now) {
  ReadinessDecision d;
  auto no = [&](std::string why) {
    d.why = std::move(why);
    return d;
  };
  const auto& gates = pod.readiness_gates();
  if (std::find(gates.begin(), gates.end(), kruise::kInPlaceUpdateReadyCondition) == gates.end()) {
    return no("no InPlaceUpdateReady readiness gate");
  }
  if (pod.metadata().has_deletion_timestamp()) return no("terminating");
  const pb::Condition* condition = nullptr;  // the last one, as a strategic merge by type leaves one
  for (const pb::Condition& c : pod.conditions()) {
    if (c.type() == kruise::kInPlaceUpdateReadyCondition) condition = &c;
  }
  if (condition != nullptr && condition->status() == "True" && condition->reason().empty() &&
      condition->message().empty()) {
    return no("already reported");
  }
  // The completion rule the planner decides with (kruise/inplace_completion.h). A pod without a state is left to
  // the executor: the agent reports only the end of an update it can see (see below for why).
  const kruise::InPlaceCompletion completion = kruise::CheckInPlaceUpdate(pod);
  if (completion.progress == kruise::InPlaceProgress::kNoUpdate || !completion.Completed()) {
    return no(completion.why);
  }
  // The executor turns the condition False first and writes the new state a moment later; in between, the pod
  // still carries the finished state of its previous update. Reporting that would let the executor take the pod
  // for ready and updated and start the next pod, past maxUnavailable (seen on a real kubelet).
  const absl::StatusOr<absl::Time> parsed = base::ParseTime(completion.state->update_timestamp);
  const absl::Time started = parsed.ok() ? *parsed : absl::InfinitePast();
  if (condition != nullptr && condition->status() == "False" && condition->has_last_transition_time() &&
      started != absl::InfinitePast() &&
      absl::FromUnixSeconds(condition->last_transition_time().seconds()) > started) {
    return no("update started after the state: its state is not written yet");
  }
  for (const auto& [name, last] : completion.state->last_container_statuses) {
    if (!ContainerReady(pod, name)) return no(absl::StrCat("container ", name, " not ready"));
  }
  d.report = true;
  if (started != absl::InfinitePast() && now > started) d.update_duration = now - started;
  return d;
}

std::string ReadinessPatch(const pb::Pod& pod, absl::Time now) {
  Json patch = {{"metadata", {{"resourceVersion", pod.metadata().resource_version()}}},
                {"status",
                 {{"conditions",
                   {{{"type", kruise::kInPlaceUpdateReadyCondition}, {"status", "True"},
                     {"lastTransitionTime", base::FormatTime(now)},
                     // null deletes: the executor's StartInPlaceUpdate reason must not survive the merge
                     {"reason", nullptr},
                     {"message", nullptr}}}}}}};
  return patch.dump();
}

}  // namespace cloneset::agent
