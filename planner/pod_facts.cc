#include "planner/pod_facts.h"

#include <algorithm>
#include <cstring>

#include "planner/context.h"
#include "planner/pod_source.h"
#include "planner/pod_table.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

// The well-known keys compared by length first: one walk over a pod's labels and annotations instead of a hashed
// find per key (the maps are small, their nodes cold).
template <size_t N>
bool Is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

Lifecycle ParseLifecycle(std::string_view state) {
  if (state.empty()) return Lifecycle::kNone;
  if (Is(state, kStateNormal)) return Lifecycle::kNormal;
  if (Is(state, kStatePreparingNormal)) return Lifecycle::kPreparingNormal;
  if (Is(state, kStatePreparingUpdate)) return Lifecycle::kPreparingUpdate;
  if (Is(state, kStateUpdating)) return Lifecycle::kUpdating;
  if (Is(state, kStateUpdated)) return Lifecycle::kUpdated;
  if (Is(state, kStatePreparingDelete)) return Lifecycle::kPreparingDelete;
  return Lifecycle::kOther;
}

void SetRevisionFlags(std::string_view update_revision, std::string_view current_revision, PodFacts& f) {
  f.on_update_revision = RevisionMatches(f, update_revision);
  f.on_current_revision = RevisionMatches(f, current_revision);
}

// The per-entry steps of a scan, shared by the protobuf pod and the pod table.
struct Scan {
  Scan(PodFacts& facts, const std::vector<std::pair<std::string, std::string>>& labels, size_t* count)
      : f(facts), match_labels(labels), matched(count) {}
  PodFacts& f;
  const std::vector<std::pair<std::string, std::string>>& match_labels;
  size_t* matched;
  std::string_view lifecycle, state, legacy_state, grace, legacy_grace;
  bool has_containers_ready = false;

  void Label(std::string_view key, std::string_view value) {
    for (const auto& [want_key, want_value] : match_labels) {
      if (key == want_key && value == want_value) ++*matched;
    }
    if (Is(key, kRevisionLabel)) {
      f.revision = value;
      f.has_revision_label = true;
    } else if (Is(key, kInstanceIdLabel)) {
      f.instance_id = value;
    } else if (Is(key, kLifecycleStateLabel)) {
      lifecycle = value;
    } else if (Is(key, kSpecifiedDeleteLabel)) {
      f.specified_delete_label = true;
    } else if (Is(key, kPodTemplateHashLabel)) {
      f.has_template_hash_label = true;
    }
  }
  void Annotation(std::string_view key, std::string_view value) {
    if (Is(key, kInPlaceStateAnnotation)) {
      state = value;
    } else if (Is(key, kInPlaceGraceAnnotation)) {
      grace = value;
      f.has_grace_key = true;
    } else if (Is(key, kLegacyInPlaceStateAnnotation)) {
      legacy_state = value;
      f.has_legacy_state = true;
    } else if (Is(key, kLegacyInPlaceGraceAnnotation)) {
      legacy_grace = value;
      f.has_legacy_grace = true;
    }
  }
  void Phase(std::string_view phase) {
    f.running = Is(phase, "Running");
    f.phase_ordinal = f.running ? 2 : Is(phase, "Unknown") ? 1 : 0;
  }
  // First match wins, as in FindCondition.
  void Condition(std::string_view type, std::string_view status, bool no_reason_or_message, absl::Time since) {
    if (!f.has_ready_condition && Is(type, "Ready")) {
      f.has_ready_condition = true;
      f.k8s_ready = Is(status, "True");
      f.ready_false = Is(status, "False");
      f.ready_since = since;
    } else if (!f.has_in_place_condition && Is(type, kInPlaceUpdateReadyCondition)) {
      f.has_in_place_condition = true;
      f.in_place_ready = Is(status, "True");
      f.in_place_settled = f.in_place_ready && no_reason_or_message;
    } else if (!has_containers_ready && Is(type, "ContainersReady")) {
      has_containers_ready = true;
      f.containers_ready = Is(status, "True");
    }
  }
  void Gate(std::string_view gate) {
    if (Is(gate, kInPlaceUpdateReadyCondition)) f.in_place_gate = true;
  }
  void Finish() {
    f.lifecycle = ParseLifecycle(lifecycle);
    f.in_place_state = state.empty() ? legacy_state : state;
    f.in_place_grace = grace.empty() ? legacy_grace : grace;
  }
};

// Everything but the revision flags, counting the `match_labels` the pod holds exactly in *matched.
PodFacts ScanPod(const pb::Pod& pod, const std::vector<std::pair<std::string, std::string>>& match_labels,
                 size_t* matched) {
  PodFacts f;
  f.pod = &pod;
  f.name = pod.metadata().name();
  f.uid = pod.metadata().uid();
  f.resource_version = pod.metadata().resource_version();
  *matched = 0;
  Scan scan(f, match_labels, matched);
  for (const auto& [key, value] : pod.metadata().labels()) scan.Label(key, value);
  for (const auto& [key, value] : pod.metadata().annotations()) scan.Annotation(key, value);
  f.node_name = pod.node_name();
  f.created = ToTime(pod.metadata().creation_timestamp());
  scan.Phase(pod.phase());
  for (const pb::Condition& c : pod.conditions()) {
    scan.Condition(c.type(), c.status(), c.reason().empty() && c.message().empty(), ToTime(c.last_transition_time()));
  }
  for (const std::string& gate : pod.readiness_gates()) scan.Gate(gate);
  for (const pb::ContainerStatus& status : pod.container_statuses()) {
    f.max_restarts = std::max(f.max_restarts, status.restart_count());
  }
  scan.Finish();
  return f;
}

// ComputePodFacts with the context's revisions (for a context built without ClassifyPods, or edited since).
PodFacts FactsFor(const PlanContext& ctx, const pb::Pod& pod) {
  PodFacts f = ComputePodFacts(pod);
  SetRevisionFlags(ctx.update_revision, ctx.current_revision, f);
  return f;
}

// The same for the i-th active pod, read from the pod table when the request carried one.
PodFacts FactsForIndex(const PlanContext& ctx, size_t i) {
  if (ctx.pods[i] != nullptr || ctx.pod_store == nullptr) return FactsFor(ctx, *ctx.pods[i]);
  static const std::vector<std::pair<std::string, std::string>> kNone;
  size_t matched = 0;
  PodFacts f;
  ComputePodFacts(ctx.pod_store->view(), ctx.pod_facts[i].row, kNone, &matched, ctx.update_revision,
                  ctx.current_revision, f);
  return f;
}

}  // namespace

PodFacts ComputePodFacts(const pb::Pod& pod) {
  static const std::vector<std::pair<std::string, std::string>> kNone;
  size_t matched = 0;
  return ScanPod(pod, kNone, &matched);
}

void ComputePodFacts(const PodTableView& table, uint32_t row,
                     const std::vector<std::pair<std::string, std::string>>& match_labels, size_t* matched,
                     std::string_view update_revision, std::string_view current_revision, PodFacts& f) {
  const pb::PodTable& t = table.table();
  f = PodFacts();
  f.row = row;
  f.name = table.name(row);
  f.uid = table.Column(t.uid(), row);
  f.resource_version = table.Column(t.resource_version(), row);
  *matched = 0;
  Scan scan(f, match_labels, matched);
  for (auto r = table.labels(row); r.begin < r.end; ++r.begin) {
    scan.Label(table.Entry(t.labels(), 2, r.begin, 0), table.Entry(t.labels(), 2, r.begin, 1));
  }
  for (auto r = table.annotations(row); r.begin < r.end; ++r.begin) {
    scan.Annotation(table.Entry(t.annotations(), 2, r.begin, 0), table.Entry(t.annotations(), 2, r.begin, 1));
  }
  f.node_name = table.Column(t.node_name(), row);
  f.created = PodTableView::Time(PodTableView::Value(t.creation_timestamp(), row));
  scan.Phase(table.Column(t.phase(), row));
  for (auto r = table.conditions(row); r.begin < r.end; ++r.begin) {
    const int64_t since = PodTableView::Value(t.condition_last_transition_time(), r.begin);
    scan.Condition(table.Entry(t.conditions(), 4, r.begin, 0), table.Entry(t.conditions(), 4, r.begin, 1),
                   table.Entry(t.conditions(), 4, r.begin, 2).empty() && table.Entry(t.conditions(), 4, r.begin, 3).empty(),
                   PodTableView::Time(since));
  }
  for (auto r = table.readiness_gates(row); r.begin < r.end; ++r.begin) {
    scan.Gate(table.Entry(t.readiness_gates(), 1, r.begin, 0));
  }
  if (!t.container_status_restart_count().empty()) {
    for (auto r = table.container_statuses(row); r.begin < r.end; ++r.begin) {
      f.max_restarts = std::max(f.max_restarts, t.container_status_restart_count(r.begin));
    }
  }
  scan.Finish();
  SetRevisionFlags(update_revision, current_revision, f);
}

PodFacts ComputePodFacts(const pb::Pod& pod, const std::vector<std::pair<std::string, std::string>>& match_labels,
                         size_t* matched, std::string_view update_revision, std::string_view current_revision) {
  PodFacts f = ScanPod(pod, match_labels, matched);
  SetRevisionFlags(update_revision, current_revision, f);
  return f;
}

void ComputePodFacts(PlanContext& ctx) {
  ctx.facts_update_revision = ctx.update_revision;
  ctx.facts_current_revision = ctx.current_revision;
  std::vector<PodFacts> facts;
  facts.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) facts.push_back(FactsForIndex(ctx, i));
  ctx.pod_facts = std::move(facts);
}

PodFacts FactsAt(const PlanContext& ctx, size_t i) {
  if (i < ctx.pod_facts.size() && ctx.pod_facts[i].pod == ctx.pods[i] &&
      ctx.facts_update_revision == ctx.update_revision && ctx.facts_current_revision == ctx.current_revision) {
    return ctx.pod_facts[i];
  }
  return FactsForIndex(ctx, i);
}

namespace {

// ctx.pod_facts.data() when it is parallel to ctx.pods and current, else nullptr.
const PodFacts* CurrentFacts(const PlanContext& ctx) {
  if (ctx.pod_facts.size() != ctx.pods.size() || ctx.facts_update_revision != ctx.update_revision ||
      ctx.facts_current_revision != ctx.current_revision) {
    return nullptr;
  }
  // A context built from a pod table has no pod objects to edit: its facts stay current.
  if (ctx.pod_store != nullptr) return ctx.pod_facts.data();
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    if (ctx.pod_facts[i].pod != ctx.pods[i]) return nullptr;
  }
  return ctx.pod_facts.data();
}

}  // namespace

const std::vector<PodFacts>& AllFacts(const PlanContext& ctx, std::vector<PodFacts>& scratch) {
  if (CurrentFacts(ctx) != nullptr) return ctx.pod_facts;
  scratch.clear();
  scratch.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) scratch.push_back(FactsAt(ctx, i));
  return scratch;
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

bool OnRevision(const PlanContext& ctx, const PodFacts& f, const std::string& revision) {
  // FactsAt and AllFacts hand out flags computed against the context's revisions as they are now.
  if (revision == ctx.update_revision) return f.on_update_revision;
  if (revision == ctx.current_revision) return f.on_current_revision;
  return RevisionMatches(f, revision);
}

bool IsSpecifiedDelete(const PodFacts& f, const ResolvedSpec& spec) {
  if (f.specified_delete_label) return true;
  if (spec.pods_to_delete.empty()) return false;
  return std::find(spec.pods_to_delete.begin(), spec.pods_to_delete.end(), f.name) != spec.pods_to_delete.end();
}

}  // namespace cloneset::planner
