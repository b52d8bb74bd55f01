#include "planner/predicates.h"

#include <algorithm>

#include "base/time_format.h"
namespace cloneset::planner {

absl::Time ToTime(const google::protobuf::Timestamp& ts) {
  if (!IsSet(ts)) return absl::InfinitePast();
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

bool IsSet(const google::protobuf::Timestamp& ts) { return ts.seconds() != 0 || ts.nanos() != 0; }

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) {
    out->Clear();
    return;
  }
  // ToUnixSeconds rounds towards the past, so the remainder is always in [0, 1s) as Timestamp requires.
  const int64_t seconds = absl::ToUnixSeconds(t);
  const int64_t nanos = absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds));
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(nanos));
}

const std::string& Rfc3339(absl::Time t) {
  thread_local absl::Time last = absl::InfinitePast();
  thread_local std::string text;
  if (t != last) {
    text = base::FormatTime(t);
    last = t;
  }
  return text;
}

const pb::Condition* FindCondition(const pb::Pod& pod, std::string_view type) {
  for (const pb::Condition& c : pod.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool HasReadinessGate(const pb::Pod& pod, std::string_view condition_type) {
  return std::any_of(pod.readiness_gates().begin(), pod.readiness_gates().end(),
                     [&](const std::string& gate) { return gate == condition_type; });
}

bool IsActive(const pb::Pod& pod) {
  return pod.phase() != "Succeeded" && pod.phase() != "Failed" && !IsSet(pod.metadata().deletion_timestamp());
}

bool IsK8sReady(const pb::Pod& pod) {
  const pb::Condition* ready = FindCondition(pod, "Ready");
  return ready != nullptr && ready->status() == "True";
}

bool IsRunningAvailable(const pb::Pod& pod, int32_t min_ready_seconds, absl::Time now) {
  if (pod.phase() != "Running") return false;
  const pb::Condition* ready = FindCondition(pod, "Ready");  // IsK8sReady, keeping the condition
  if (ready == nullptr || ready->status() != "True") return false;
  if (min_ready_seconds <= 0) return true;
  if (!IsSet(ready->last_transition_time())) return false;
  return ToTime(ready->last_transition_time()) + absl::Seconds(min_ready_seconds) < now;
}

bool IsUpdateReady(const pb::Pod& pod, int32_t min_ready_seconds, absl::Time now) {
  if (!IsRunningAvailable(pod, min_ready_seconds, now)) return false;
  const pb::Condition* in_place = FindCondition(pod, kInPlaceUpdateReadyCondition);
  return in_place == nullptr || in_place->status() == "True";
}

std::string_view LifecycleState(const pb::Pod& pod) { return Label(pod.metadata(), kLifecycleStateLabel); }

bool IsAvailable(const pb::Pod& pod, int32_t min_ready_seconds, absl::Time now) {
  const std::string_view state = LifecycleState(pod);
  if (!state.empty() && state != kStateNormal) return false;
  return IsUpdateReady(pod, min_ready_seconds, now);
}

bool IsControllerReady(const pb::Pod& pod, absl::Time now) { return IsAvailable(pod, 0, now); }

bool IsSpecifiedDelete(const pb::Pod& pod, const ResolvedSpec& spec) {
  if (pod.metadata().labels().contains(kSpecifiedDeleteLabel)) return true;
  return std::find(spec.pods_to_delete.begin(), spec.pods_to_delete.end(), pod.metadata().name()) !=
         spec.pods_to_delete.end();
}

std::string_view ShortHash(std::string_view revision) {
  const size_t dash = revision.rfind('-');
  if (dash == std::string_view::npos) return revision;
  return revision.substr(dash + 1);
}

bool RevisionMatches(const pb::Pod& pod, std::string_view revision) {
  const std::string_view label = Label(pod.metadata(), kRevisionLabel);
  return label == revision || ShortHash(label) == ShortHash(revision);
}

std::string_view InstanceId(const pb::Pod& pod) { return Label(pod.metadata(), kInstanceIdLabel); }
std::string_view InstanceId(const pb::PersistentVolumeClaim& pvc) { return Label(pvc.metadata(), kInstanceIdLabel); }

std::string_view Label(const pb::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels().find(key);
  return it == meta.labels().end() ? std::string_view() : std::string_view(it->second);
}

std::string_view Annotation(const pb::ObjectMeta& meta, std::string_view key) {
  auto it = meta.annotations().find(key);
  return it == meta.annotations().end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace cloneset::planner
