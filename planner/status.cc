#include "planner/status.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "planner/context_facts.h"
#include "planner/inplace.h"
#include "planner/pod_facts.h"
#include "planner/predicates.h"
#include "planner/volume_expansion.h"

namespace cloneset::planner {
namespace {

inline constexpr char kProgressing[] = "Progressing";
inline constexpr char kFailedScale[] = "FailedScale";
inline constexpr char kFailedUpdate[] = "FailedUpdate";
inline constexpr char kReasonAvailable[] = "CloneSetAvailable";
inline constexpr char kReasonPaused[] = "CloneSetPaused";
inline constexpr char kReasonPartitionAvailable[] = "ProgressPartitionAvailable";
inline constexpr char kReasonDeadlineExceeded[] = "ProgressDeadlineExceeded";
inline constexpr char kReasonUpdated[] = "CloneSetUpdated";

pb::Condition* Find(pb::CloneSetStatus& status, std::string_view type) {
  for (pb::Condition& c : *status.mutable_conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

const pb::Condition* Find(const pb::CloneSetStatus& status, std::string_view type) {
  for (const pb::Condition& c : status.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

void Remove(pb::CloneSetStatus& status, std::string_view type) {
  auto* conditions = status.mutable_conditions();
  for (int i = conditions->size() - 1; i >= 0; --i) {
    if (conditions->Get(i).type() == type) conditions->DeleteSubrange(i, 1);
  }
}

// The generic SetCondition rule (§7.4, "set"): same status and reason -> untouched; same status, other reason
// -> replaced keeping lastTransitionTime; otherwise replaced. As upstream, a replaced condition moves to the end
// of the list.
void Set(pb::CloneSetStatus& status, std::string_view type, std::string_view cond_status, std::string_view reason,
         std::string_view message, absl::Time now) {
  pb::Condition* existing = Find(status, type);
  if (existing != nullptr && existing->status() == cond_status && existing->reason() == reason) return;
  pb::Condition next;
  next.set_type(std::string(type));
  next.set_status(std::string(cond_status));
  next.set_reason(std::string(reason));
  next.set_message(std::string(message));
  SetTimestamp(now, next.mutable_last_update_time());
  if (existing != nullptr && existing->status() == cond_status) {
    *next.mutable_last_transition_time() = existing->last_transition_time();
  } else {
    SetTimestamp(now, next.mutable_last_transition_time());
  }
  Remove(status, type);
  *status.add_conditions() = std::move(next);
}

// FailedScale/FailedUpdate: set with the current message while the stage fails. Unlike upstream (never refreshed,
// never removed) the message follows the latest error and the condition goes away once a plan succeeds.
void SetFailure(pb::CloneSetStatus& status, std::string_view type, const absl::Status& error, absl::Time now) {
  const std::string message(error.message().data(), error.message().size());
  pb::Condition* existing = Find(status, type);
  if (existing != nullptr && existing->status() == "True") {
    if (existing->message() != message) {
      existing->set_message(message);
      SetTimestamp(now, existing->mutable_last_update_time());
    }
    return;
  }
  Remove(status, type);
  pb::Condition* c = status.add_conditions();
  c->set_type(std::string(type));
  c->set_status("True");
  c->set_message(message);
  SetTimestamp(now, c->mutable_last_transition_time());
  SetTimestamp(now, c->mutable_last_update_time());
}

void ComputeCounters(const PlanContext& ctx, pb::CloneSetStatus& s) {
  const int32_t m = ctx.spec.min_ready_seconds;
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  int32_t replicas = s.replicas(), ready_replicas = s.ready_replicas(), available_replicas = s.available_replicas();
  int32_t updated_replicas = s.updated_replicas(), updated_ready_replicas = s.updated_ready_replicas();
  int32_t updated_available_replicas = s.updated_available_replicas();
  for (size_t i = 0; i < facts.size(); ++i) {
    const PodHotFacts& pod = facts[i];
    const bool ready = IsUpdateReady(pod, 0, ctx.now);
    const bool available = IsAvailable(pod, m, ctx.now);
    const bool updated = OnRevision(ctx, pod, cold[i], ctx.update_revision);
    // Counted in locals and set once: six message setters per pod were a visible share of the walk.
    ++replicas;
    ready_replicas += ready;
    available_replicas += available;
    updated_replicas += updated;
    updated_ready_replicas += updated && ready;
    updated_available_replicas += updated && available;
  }
  s.set_replicas(replicas);
  s.set_ready_replicas(ready_replicas);
  s.set_available_replicas(available_replicas);
  s.set_updated_replicas(updated_replicas);
  s.set_updated_ready_replicas(updated_ready_replicas);
  s.set_updated_available_replicas(updated_available_replicas);
}

// §7.4, with one deliberate difference (docs/compatibility.md): the deadline runs from the start of the current
// rollout. Upstream carries the old condition into the new status, so a CloneSet that was Available or Paused for
// longer than the deadline turns the next rollout straight into ProgressDeadlineExceeded; here a previous
// Available/Paused/PartitionAvailable condition, or a change of update revision, starts a fresh deadline.
void ComputeProgressing(const PlanContext& ctx, pb::CloneSetStatus& s, PlanBuilder& plan) {
  if (!ctx.spec.has_progress_deadline) {
    Remove(s, kProgressing);
    return;
  }
  const int32_t spec_replicas = ctx.spec.replicas;
  if (s.current_revision() == s.update_revision() && s.replicas() == spec_replicas &&
      s.updated_replicas() == spec_replicas && s.updated_available_replicas() == spec_replicas) {
    Set(s, kProgressing, "True", kReasonAvailable, "CloneSet is available", ctx.now);
    return;
  }
  if (ctx.spec.rolling_update && ctx.spec.paused) {
    Set(s, kProgressing, "True", kReasonPaused, "CloneSet is paused", ctx.now);
    return;
  }
  if (s.expected_updated_replicas() < spec_replicas &&
      s.expected_updated_replicas() <= s.updated_available_replicas()) {
    Set(s, kProgressing, "True", kReasonPartitionAvailable, "CloneSet has been paused due to partition ready",
        ctx.now);
    return;
  }

  const std::string& previous_revision = ctx.clone_set->status().update_revision();
  const bool new_rollout = !previous_revision.empty() && previous_revision != ctx.update_revision;
  const absl::Duration deadline = absl::Seconds(ctx.spec.progress_deadline_seconds);
  pb::Condition* existing = Find(s, kProgressing);
  if (existing != nullptr && new_rollout) {
    // The previous rollout's clock does not apply to this one.
    Remove(s, kProgressing);
    existing = nullptr;
  }
  bool exceeded = false;
  if (existing != nullptr) {
    if (existing->reason() == kReasonDeadlineExceeded) {
      exceeded = true;
    } else if (existing->reason() == kReasonUpdated) {
      exceeded = ToTime(existing->last_update_time()) + deadline < ctx.now;
    }
  }
  if (exceeded) {
    Set(s, kProgressing, "False", kReasonDeadlineExceeded,
        absl::StrCat("CloneSet revision ", ctx.update_revision, " has timed out progressing"), ctx.now);
    return;
  }
  Set(s, kProgressing, "True", kReasonUpdated, "CloneSet is progressing", ctx.now);
  const pb::Condition* cond = Find(s, kProgressing);
  // Plan again one second after the deadline, when "deadline before now" holds. Upstream adds the second only
  // when at least a second is left; with less it plans again at the deadline itself, where the deadline has not
  // yet passed and nothing is left to wait for, so the condition would wait for some other event to turn False.
  const absl::Duration d = ToTime(cond->last_update_time()) + deadline - ctx.now;
  plan.PushRequeue(d + absl::Seconds(1));
}

// §7.5 minReadySeconds requeue. Upstream requeues after the full minReadySeconds whenever available != ready;
// we requeue at the moment the first ready pod becomes available (one second after its minReadySeconds elapse,
// because availability needs lastTransitionTime + minReadySeconds strictly before now).
void PushMinReadyRequeue(const PlanContext& ctx, const pb::CloneSetStatus& s, PlanBuilder& plan) {
  const int32_t m = ctx.spec.min_ready_seconds;
  if (m <= 0 || s.available_replicas() == s.ready_replicas()) return;
  bool waiting_on_time = false;
  std::vector<PodHotFacts> scratch;
  for (const PodHotFacts& pod : AllFacts(ctx, scratch)) {
    if (pod.lifecycle != Lifecycle::kNone && pod.lifecycle != Lifecycle::kNormal) continue;
    if (!IsUpdateReady(pod, 0, ctx.now) || IsAvailable(pod, m, ctx.now)) continue;
    // Without a Ready condition ready_since is unset (not InfinitePast); with one, InfinitePast means no
    // lastTransitionTime.
    if (!pod.has_ready_condition || pod.ready_since == absl::InfinitePast()) continue;
    waiting_on_time = true;
    plan.PushRequeue(pod.ready_since + absl::Seconds(m) + absl::Seconds(1) - ctx.now);
  }
  if (!waiting_on_time) plan.PushRequeue(absl::Seconds(m));
}

// ResizePending (ours, §5.9 "Pending resizes"): True while pods wait for a resize the kubelet holds back, reason
// Infeasible when any of them is (the node can never fit it; the rollout stays blocked until the template changes),
// else the kubelet's reason (Deferred: it retries); removed once none waits. Each change is one Warning event and a
// blocked reason of the plan.
void SetResizePending(const PlanContext& ctx, pb::CloneSetStatus& s, PlanBuilder& plan) {
  const std::vector<PendingResize> pending = PendingResizes(ctx);
  const pb::Condition* old = Find(ctx.clone_set->status(), kResizePendingCondition);
  if (pending.empty()) {
    Remove(s, kResizePendingCondition);
    return;
  }
  std::string reason;
  for (const PendingResize& p : pending) {
    if (reason.empty() || p.reason == common::kResizeInfeasible) reason = p.reason;
  }
  if (reason.empty()) reason = "Pending";
  constexpr size_t kNamed = 5;
  std::string message = absl::StrCat(pending.size(), pending.size() == 1 ? " pod waits" : " pods wait",
                                     " for an in-place resize the kubelet holds back: ");
  for (size_t i = 0; i < pending.size() && i < kNamed; ++i) {
    const PendingResize& p = pending[i];
    absl::StrAppend(&message, i == 0 ? "" : "; ", p.pod, " (", p.reason, p.message.empty() ? "" : ": ", p.message,
                    ")");
    plan.summary()->add_blocked_reasons(
        absl::StrCat("pod ", p.pod, ": resize ", p.reason, p.message.empty() ? "" : ": ", p.message));
  }
  if (pending.size() > kNamed) absl::StrAppend(&message, "; and ", pending.size() - kNamed, " more");
  if (old == nullptr || old->status() != "True" || old->reason() != reason || old->message() != message) {
    plan.AddEvent(pb::WARNING, absl::StrCat("PodResize", reason), message);
  }
  pb::Condition* c = Find(s, kResizePendingCondition);  // replaced where it is: conditions keep their order
  if (c == nullptr) c = s.add_conditions();
  c->Clear();
  c->set_type(kResizePendingCondition);
  c->set_status("True");
  c->set_reason(reason);
  c->set_message(std::move(message));
  SetTimestamp(ctx.now, c->mutable_last_update_time());
  if (old != nullptr && old->status() == "True") {
    *c->mutable_last_transition_time() = old->last_transition_time();
    if (old->reason() == c->reason() && old->message() == c->message()) {
      *c->mutable_last_update_time() = old->last_update_time();
    }
  } else {
    SetTimestamp(ctx.now, c->mutable_last_transition_time());
  }
}

bool SameFailure(const pb::Condition* a, const pb::Condition* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->status() == b->status() && a->reason() == b->reason() && a->message() == b->message();
}

}  // namespace

pb::CloneSetStatus ComputeStatus(const PlanContext& ctx, const absl::Status& scale_error,
                                 const absl::Status& update_error, PlanBuilder& plan) {
  const pb::CloneSetStatus& old = ctx.clone_set->status();
  pb::CloneSetStatus s;
  s.set_observed_generation(ctx.clone_set->metadata().generation());
  ComputeCounters(ctx, s);
  s.set_update_revision(ctx.update_revision);
  s.set_current_revision(ctx.current_revision);
  // Promotion needs every pod on the update revision, not every pod ready (§7.1).
  if (s.updated_replicas() == s.replicas() && s.replicas() == ctx.spec.replicas) {
    s.set_current_revision(ctx.update_revision);
  }
  s.set_collision_count(ctx.collision_count);
  s.set_expected_updated_replicas(ctx.spec.expected_updated_replicas);
  s.set_label_selector(ctx.selector_string);
  *s.mutable_conditions() = old.conditions();

  if (scale_error.ok() && update_error.ok()) {
    Remove(s, kFailedScale);
    Remove(s, kFailedUpdate);
  } else {
    if (!scale_error.ok()) SetFailure(s, kFailedScale, scale_error, ctx.now);
    if (!update_error.ok()) SetFailure(s, kFailedUpdate, update_error, ctx.now);
  }
  ComputeProgressing(ctx, s, plan);
  SetResizePending(ctx, s, plan);
  SetVolumeExpansionHeld(ctx, s, plan);
  if (scale_error.ok() && update_error.ok()) PushMinReadyRequeue(ctx, s, plan);
  return s;
}

bool StatusNeedsWrite(const pb::CloneSetStatus& previous, const pb::CloneSetStatus& next) {
  if (next.observed_generation() != previous.observed_generation() || next.replicas() != previous.replicas() ||
      next.ready_replicas() != previous.ready_replicas() ||
      next.available_replicas() != previous.available_replicas() ||
      next.updated_replicas() != previous.updated_replicas() ||
      next.updated_ready_replicas() != previous.updated_ready_replicas() ||
      next.updated_available_replicas() != previous.updated_available_replicas() ||
      next.expected_updated_replicas() != previous.expected_updated_replicas() ||
      next.update_revision() != previous.update_revision() ||
      next.current_revision() != previous.current_revision() ||
      next.collision_count() != previous.collision_count() || next.label_selector() != previous.label_selector()) {
    return true;
  }
  const pb::Condition* old_progress = Find(previous, kProgressing);
  const pb::Condition* new_progress = Find(next, kProgressing);
  if ((old_progress == nullptr) != (new_progress == nullptr)) return true;
  if (old_progress != nullptr &&
      (old_progress->status() != new_progress->status() || old_progress->reason() != new_progress->reason() ||
       old_progress->last_update_time().SerializeAsString() !=
           new_progress->last_update_time().SerializeAsString())) {
    return true;
  }
  return !SameFailure(Find(previous, kFailedScale), Find(next, kFailedScale)) ||
         !SameFailure(Find(previous, kFailedUpdate), Find(next, kFailedUpdate)) ||
         !SameFailure(Find(previous, kResizePendingCondition), Find(next, kResizePendingCondition)) ||
         !SameFailure(Find(previous, kVolumeExpansionHeldCondition), Find(next, kVolumeExpansionHeldCondition));
}

}  // namespace cloneset::planner
