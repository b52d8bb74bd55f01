#include "agent/readiness.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "kruise/inplace_completion.h"
#include "common/resources.h"
#include "imagepull/types.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

constexpr char kStateAnnotation[] = "apps.kruise.io/inplace-update-state";
constexpr char kGraceAnnotation[] = "apps.kruise.io/inplace-update-grace";

const Json& Get(const Json& o, const char* k) {
  static const Json kNull;
  if (!o.is_object()) return kNull;
  auto it = o.find(k);
  return it == o.end() ? kNull : *it;
}
std::string Str(const Json& o, const char* k) {
  const Json& v = Get(o, k);
  return v.is_string() ? v.get<std::string>() : "";
}
// The container's status is ready (the first status of that name).
bool ContainerReady(const pb::Pod& pod, std::string_view name) {
  for (const pb::ContainerStatus& status : pod.container_statuses()) {
    if (status.name() == name) return status.ready();
  }
  return false;
}
bool NonEmptyObject(const Json& o, const char* k) {
  const Json& v = Get(o, k);
  return v.is_object() && !v.empty();
}

}  // namespace

ReadinessDecision DecideReadiness(const pb::Pod& pod, absl::Time now) {
  ReadinessDecision d;
  auto no = [&](std::string why) {
    d.why = std::move(why);
    return d;
  };
  const auto& gates = pod.readiness_gates();
  if (std::find(gates.begin(), gates.end(), kInPlaceUpdateReady) == gates.end()) {
    return no("no InPlaceUpdateReady readiness gate");
  }
  if (pod.metadata().has_deletion_timestamp()) return no("terminating");
  const pb::Condition* condition = nullptr;  // the last one, as a strategic merge by type leaves one
  for (const pb::Condition& c : pod.conditions()) {
    if (c.type() == kInPlaceUpdateReady) condition = &c;
  }
  if (condition != nullptr && condition->status() == "True" && condition->reason().empty() &&
      condition->message().empty()) {
    return no("already reported");
  }
  const auto& annotations = pod.metadata().annotations();
  const auto state_it = annotations.find(kStateAnnotation);
  if (state_it == annotations.end() || state_it->second.empty()) return no("no in-place update state");
  if (annotations.contains(kGraceAnnotation)) return no("grace period pending");
  Json state = Json::parse(state_it->second, nullptr, false);
  if (!state.is_object()) return no("unparsable in-place update state");
  // The executor turns the condition False first and writes the new state a moment later; in between, the pod
  // still carries the finished state of its previous update. Reporting that would let the executor take the pod
  // for ready and updated and start the next pod, past maxUnavailable (seen on a real kubelet).
  const absl::Time started = imagepull::ParseTime(Str(state, "updateTimestamp"));
  if (condition != nullptr && condition->status() == "False" && condition->has_last_transition_time() &&
      started != absl::InfinitePast() &&
      absl::FromUnixSeconds(condition->last_transition_time().seconds()) > started) {
    return no("update started after the state: its state is not written yet");
  }
  if (NonEmptyObject(state, "nextContainerImages") || NonEmptyObject(state, "nextContainerRefMetadata") ||
      NonEmptyObject(state, "nextContainerResources")) {
    return no("later container batch pending");
  }
  if (Get(state, "updateEnvFromMetadata").is_boolean() && Get(state, "updateEnvFromMetadata").get<bool>()) {
    return no("env-from-metadata update: left to the executor");
  }
  if (Get(state, "updateResources").is_boolean() && Get(state, "updateResources").get<bool>()) {
    // The planner's rule (common/resources.h): the kubelet reports the spec's resources, no resize condition.
    const common::ResizeProgress resize = common::PodResizeProgress(pod);
    if (resize.state != common::ResizeState::kDone) return no(common::DescribeResize(resize));
  }
  const Json& last = Get(state, "lastContainerStatuses");
  if (last.is_object()) {
    for (auto it = last.begin(); it != last.end(); ++it) {
      const std::string recorded_image_id = Str(*it, "imageID");
      const std::string recorded_container_id = Str(*it, "containerID");
      const kruise::ContainerUpdate progress = kruise::ContainerUpdateProgress(
          {recorded_image_id, recorded_container_id}, kruise::Observe(pod, it.key()), false);
      if (progress != kruise::ContainerUpdate::kDone) {
        return no(absl::StrCat("container ", it.key(), " ", std::string(kruise::Describe(progress))));
      }
      if (!ContainerReady(pod, it.key())) return no(absl::StrCat("container ", it.key(), " not ready"));
    }
  }
  d.report = true;
  if (started != absl::InfinitePast() && now > started) d.update_duration = now - started;
  return d;
}

std::string ReadinessPatch(const pb::Pod& pod, absl::Time now) {
  Json patch = {{"metadata", {{"resourceVersion", pod.metadata().resource_version()}}},
                {"status",
                 {{"conditions",
                   {{{"type", kInPlaceUpdateReady}, {"status", "True"},
                     {"lastTransitionTime", imagepull::FormatTime(now)},
                     // null deletes: the executor's StartInPlaceUpdate reason must not survive the merge
                     {"reason", nullptr},
                     {"message", nullptr}}}}}}};
  return patch.dump();
}

}  // namespace cloneset::agent
