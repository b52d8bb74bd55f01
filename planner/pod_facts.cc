#include "planner/pod_facts.h"

#include <algorithm>

#include "planner/context.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

Lifecycle ParseLifecycle(std::string_view state) {
  if (state.empty()) return Lifecycle::kNone;
  if (state == kStateNormal) return Lifecycle::kNormal;
  if (state == kStatePreparingNormal) return Lifecycle::kPreparingNormal;
  if (state == kStatePreparingUpdate) return Lifecycle::kPreparingUpdate;
  if (state == kStateUpdating) return Lifecycle::kUpdating;
  if (state == kStateUpdated) return Lifecycle::kUpdated;
  if (state == kStatePreparingDelete) return Lifecycle::kPreparingDelete;
  return Lifecycle::kOther;
}

}  // namespace

PodFacts ComputePodFacts(const pb::Pod& pod) {
  PodFacts f;
  f.pod = &pod;
  const auto& labels = pod.metadata().labels();
  f.revision = Label(pod.metadata(), kRevisionLabel);
  f.lifecycle = ParseLifecycle(Label(pod.metadata(), kLifecycleStateLabel));
  f.specified_delete_label = labels.contains(kSpecifiedDeleteLabel);
  f.running = pod.phase() == "Running";
  bool ready_seen = false, in_place_seen = false;
  // First match wins, as in FindCondition.
  for (const pb::Condition& c : pod.conditions()) {
    if (!ready_seen && c.type() == "Ready") {
      ready_seen = true;
      f.k8s_ready = c.status() == "True";
      f.ready_since = ToTime(c.last_transition_time());
    } else if (!in_place_seen && c.type() == kInPlaceUpdateReadyCondition) {
      in_place_seen = true;
      f.in_place_ready = c.status() == "True";
    }
  }
  return f;
}

void ComputePodFacts(PlanContext& ctx) {
  ctx.pod_facts.clear();
  ctx.pod_facts.reserve(ctx.pods.size());
  for (const pb::Pod* pod : ctx.pods) ctx.pod_facts.push_back(ComputePodFacts(*pod));
}

PodFacts FactsAt(const PlanContext& ctx, size_t i) {
  if (i < ctx.pod_facts.size() && ctx.pod_facts[i].pod == ctx.pods[i]) return ctx.pod_facts[i];
  return ComputePodFacts(*ctx.pods[i]);
}

bool IsUpdateReady(const PodFacts& f, int32_t min_ready_seconds, absl::Time now) {
  if (!f.running || !f.k8s_ready) return false;
  if (min_ready_seconds > 0) {
    // An unset transition time (InfinitePast) is never available, as in IsRunningAvailable.
    if (f.ready_since == absl::InfinitePast()) return false;
    if (!(f.ready_since + absl::Seconds(min_ready_seconds) < now)) return false;
  }
  return f.in_place_ready;
}

bool IsAvailable(const PodFacts& f, int32_t min_ready_seconds, absl::Time now) {
  if (f.lifecycle != Lifecycle::kNone && f.lifecycle != Lifecycle::kNormal) return false;
  return IsUpdateReady(f, min_ready_seconds, now);
}

bool RevisionMatches(const PodFacts& f, std::string_view revision) {
  return f.revision == revision || ShortHash(f.revision) == ShortHash(revision);
}

bool IsSpecifiedDelete(const PodFacts& f, const ResolvedSpec& spec) {
  if (f.specified_delete_label) return true;
  if (spec.pods_to_delete.empty()) return false;
  return std::find(spec.pods_to_delete.begin(), spec.pods_to_delete.end(), f.pod->metadata().name()) !=
         spec.pods_to_delete.end();
}

}  // namespace cloneset::planner
