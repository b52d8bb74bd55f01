#include "planapi/applier.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "kube/api_status.h"
#include "planapi/in_place_batches.h"
#include "planapi/plan_schedule.h"

namespace cloneset::planapi {

std::string_view ActionType(const pb::Action& a) {
  switch (a.kind_case()) {
    case pb::Action::kCreateRevision: return "CreateRevision";
    case pb::Action::kUpdateRevision: return "UpdateRevision";
    case pb::Action::kDeleteRevision: return "DeleteRevision";
    case pb::Action::kCreatePod: return "CreatePod";
    case pb::Action::kDeletePod: return "DeletePod";
    case pb::Action::kPatchPod: return "PatchPod";
    case pb::Action::kPatchPodStatus: return "PatchPodStatus";
    case pb::Action::kResizePod: return "ResizePod";
    case pb::Action::kDeletePvc: return "DeletePvc";
    case pb::Action::kCreatePvc: return "CreatePvc";
    case pb::Action::kUpdatePvcOwner: return "UpdatePvcOwner";
    case pb::Action::kExpandPvc: return "ExpandPvc";
    case pb::Action::kPatchCloneSet: return "PatchCloneSet";
    case pb::Action::kCreateImagePullJob: return "CreateImagePullJob";
    case pb::Action::kDeleteImagePullJob: return "DeleteImagePullJob";
    case pb::Action::kStartInPlaceUpdates: return "StartInPlaceUpdates";
    case pb::Action::KIND_NOT_SET: break;
  }
  return "Unknown";
}

const pb::Condition* FindCondition(const pb::CloneSetStatus& st, std::string_view type) {
  for (const auto& c : st.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool WriteRefused(const absl::Status& s) {
  const std::optional<int> code = kube::HttpCode(s);
  return code.has_value() && *code >= 400 && *code < 500 && *code != 404 && *code != 409 && *code != 429;
}

namespace {

// The API server's reason, or the name of the HTTP code when its answer had none.
std::string RefusalReason(const absl::Status& refused) {
  std::string reason = kube::K8sReason(refused);
  if (!reason.empty()) return reason;
  switch (kube::HttpCode(refused).value_or(0)) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 405: return "MethodNotAllowed";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    default: return "WriteRefused";
  }
}

// A condition message ("<action> <object>: <the API server's message>", ApplyFailedCondition) with its object left
// out: the prefix's, and where the API server's message quotes it (`pods "web-abcde" is forbidden: ...`).
std::string RefusalShape(std::string_view message) {
  const size_t space = message.find(' ');
  const size_t colon = message.find(": ");
  if (space == std::string_view::npos || colon == std::string_view::npos || space + 1 >= colon) {
    return std::string(message);
  }
  const std::string_view object = message.substr(space + 1, colon - space - 1);
  std::string quoted;
  quoted.append(1, '"').append(object.data(), object.size()).append(1, '"');
  const std::string_view rest = message.substr(colon);
  std::string shape(message.substr(0, space));
  shape.append(absl::StrReplaceAll(absl::string_view(rest.data(), rest.size()), {{quoted, "\"\""}}));
  return shape;
}

}  // namespace

std::string RefusalCause(const absl::Status& refused) {
  const absl::string_view m = refused.message();
  const int code = kube::HttpCode(refused).value_or(0);
  if (code == 403 && absl::StrContains(m, "because it is being terminated")) return "NamespaceTerminating";
  if (code == 403 && absl::StrContains(m, "exceeded quota:")) return "QuotaExceeded";
  if (code == 403 && absl::StrContains(m, "violates PodSecurity")) return "PodSecurity";
  if ((absl::StrContains(m, "admission webhook") && absl::StrContains(m, "denied the request")) ||
      (absl::StrContains(m, "ValidatingAdmissionPolicy") && absl::StrContains(m, "denied request"))) {
    return "AdmissionDenied";
  }
  if (code == 422) return "Invalid";
  return RefusalReason(refused);
}

bool SameRefusal(const pb::Condition& a, const pb::Condition& b) {
  return a.reason() == b.reason() && RefusalShape(a.message()) == RefusalShape(b.message());
}

pb::Condition ApplyFailedCondition(std::string_view action, std::string_view object, const absl::Status& refused) {
  const int code = kube::HttpCode(refused).value_or(0);
  const std::string reason = RefusalReason(refused);
  pb::Condition c;
  c.set_type(kApplyFailedConditionType);
  c.set_status("True");
  c.set_reason(reason);
  c.set_message(absl::StrCat(std::string(action), object.empty() ? "" : " ", std::string(object), ": ",
                             refused.message(), " (HTTP ", code, ")"));
  return c;
}

bool SetOwnCondition(pb::CloneSetStatus& status, std::string_view type, const pb::Condition* condition,
                     absl::Time now) {
  auto* conds = status.mutable_conditions();
  std::optional<pb::Condition> old;
  for (int i = conds->size() - 1; i >= 0; --i) {
    if (conds->Get(i).type() != type) continue;
    if (!old.has_value()) old = conds->Get(i);
    conds->DeleteSubrange(i, 1);
  }
  if (condition == nullptr) return old.has_value();
  pb::Condition* c = status.add_conditions();
  *c = *condition;
  c->set_type(std::string(type));
  const int64_t seconds = absl::ToUnixSeconds(now);
  c->mutable_last_update_time()->set_seconds(seconds);
  const bool same_status = old.has_value() && old->status() == c->status();
  if (same_status && old->has_last_transition_time()) {
    *c->mutable_last_transition_time() = old->last_transition_time();
  } else {
    c->mutable_last_transition_time()->set_seconds(seconds);
  }
  return !same_status || old->reason() != c->reason() || old->message() != c->message();
}

ApplyResult PlanApplier::Apply(const pb::CloneSet& cs, const pb::PlanResponse& plan, PlanWriter& writer,
                               absl::Time now) const {
  ApplyResult r;
  const bool creates = std::any_of(plan.actions().begin(), plan.actions().end(),
                                   [](const pb::Action& a) { return a.has_create_pod() || a.has_create_pvc(); });
  if (creates) {
    absl::StatusOr<bool> exists = writer.CloneSetExists();
    if (!exists.ok()) {
      r.error = exists.status();
      r.result = "error";
      return r;
    }
    if (!*exists) {
      r.result = "cloneset_gone";  // its DELETED event follows and forgets the key
      return r;
    }
  }
  // The ApplyFailed condition the CloneSet has, and whether `c` is the same refusal reported within the window.
  const pb::Condition* had = FindCondition(cs.status(), kApplyFailedConditionType);
  const auto reported = [&](const pb::Condition& c) {
    return had != nullptr && had->status() == "True" && SameRefusal(*had, c) &&
           now - absl::FromUnixSeconds(had->last_update_time().seconds()) < options_.report_window;
  };
  absl::Mutex mu;  // the outcome below; groups of a stage run concurrently
  absl::Status stop;
  absl::Status batch_error;  // the first failed creation of the batch that ends the plan
  bool lost_shard = false;
  std::set<std::string> failed_pods;  // their events are not emitted: a write of theirs failed or never started
  // The plan's in-place batches are expanded action by action as they are written (PlanStages): the first write
  // does not wait for the whole plan to be built. Indices are the expanded plan's.
  PlanStages stages(plan);
  // The refused write of the lowest action index (the same plan reports the same write however writes overlap).
  int refused_index = stages.size();
  std::optional<pb::Condition> refused;
  bool refused_create = false;  // the refused write of `refused` is a creation
  std::atomic<bool> halt{false};  // no further action starts
  std::atomic<bool> creates_refused{false};  // no further creation starts
  // The actions run() was called for; the others of a stage that stopped the plan never started.
  const std::unique_ptr<std::atomic<bool>[]> started(new std::atomic<bool>[stages.size()]());
  const auto run = [&](int i) {
    started[i] = true;
    pb::Action scratch;
    const pb::Action& action = stages.Action(i, &scratch);
    const bool creation = action.has_create_pod() || action.has_create_pvc();
    if (creation && creates_refused) {
      // The API server refused a creation for a reason the next one shares (quota, terminating namespace,
      // admission, the template): not written, and its pod's events are not emitted.
      absl::MutexLock l(&mu);
      if (const std::string pod = PodOfAction(action); !pod.empty()) failed_pods.insert(pod);
      return;
    }
    if (!writer.MayWrite()) {
      absl::MutexLock l(&mu);
      lost_shard = true;
      halt = true;  // e.g. the Lease is gone: another replica may write now
      return;
    }
    absl::Status s = writer.Write(action);
    writer.Written(ActionType(action), s);
    if (s.ok()) return;
    absl::MutexLock l(&mu);
    const std::string pod = PodOfAction(action);
    if (!pod.empty()) failed_pods.insert(pod);
    const bool is_refused = WriteRefused(s);
    std::optional<pb::Condition> condition;
    if (is_refused) condition = ApplyFailedCondition(ActionType(action), pod, s);
    if (is_refused && i < refused_index) {
      refused_index = i;
      refused = condition;
      refused_create = creation;
    }
    if (is_refused && creation) creates_refused = true;
    // Only a failure the API server answered is an event: a transport error is retried. A refusal already
    // reported on the CloneSet is not raised again within the window.
    const bool answered = kube::HttpCode(s).has_value() && !(condition.has_value() && reported(*condition));
    if (action.has_create_pod()) {
      if (answered) writer.Event("Warning", "FailedCreate", absl::StrCat("failed to create pod: ", s.message()));
      if (batch_error.ok()) batch_error = s;  // finish this batch, then stop
      if (r.error.ok()) r.error = s;
      return;
    }
    if (action.has_delete_pod() && answered) {
      writer.Event("Warning", "FailedDelete",
                   absl::StrCat("failed to delete pod ", action.delete_pod().name(), ": ", s.message()));
    }
    if (action.stop_on_error() || kube::IsConflict(s)) {
      if (stop.ok()) stop = s;
      halt = true;
      return;
    }
    if (r.error.ok()) r.error = s;  // keep going, but retry the CloneSet with back-off
  };
  PlanStage stage;
  bool ended_early = false;
  while (stages.Next(&stage)) {
    RunGroups(stage.groups, options_.parallelism, halt, run);
    absl::MutexLock l(&mu);
    if (lost_shard) {
      r.result = "lost_shard";
      return r;
    }
    if (!stop.ok() || !batch_error.ok()) {  // slow start: nothing after the batch with a failure runs
      ended_early = true;
      break;
    }
  }
  // The pods of the actions that never started (after a stop, in the stages after a failed batch) get no event: a
  // creation's "succeed to create pod" for a pod that was never written would repeat with every retry.
  if (ended_early) {
    pb::Action scratch;
    do {
      for (const std::vector<int>& group : stage.groups) {
        for (int i : group) {
          if (started[i]) continue;
          if (const std::string pod = PodOfAction(stages.Action(i, &scratch)); !pod.empty()) failed_pods.insert(pod);
        }
      }
    } while (stages.Next(&stage));
  }
  const bool batch_failed = !batch_error.ok();
  if (!stop.ok()) r.error = stop;
  r.stopped = !stop.ok() ? stop : batch_error;
  // ApplyFailed: set when a write was refused, removed once a plan's writes all went through, left as it is after
  // transport errors only. `report`: the condition is new or says something new.
  const pb::Condition* want = refused ? &*refused : nullptr;
  const bool clear = !refused && r.error.ok() && had != nullptr;
  bool report = false;
  if (refused) {
    pb::CloneSetStatus probe = cs.status();
    report = SetOwnCondition(probe, kApplyFailedConditionType, want, now) && !reported(*refused);
  }
  // Sets or removes the conditions of a refusal in `status`: ApplyFailed, and FailedScale of a refused creation
  // (removed only when it is ours, reason FailedCreate: the planner's own scale errors stay the planner's).
  const auto set_refusal = [&](pb::CloneSetStatus& status) {
    SetOwnCondition(status, kApplyFailedConditionType, refused ? &*refused : nullptr, now);
    if (refused && refused_create) {
      pb::Condition failed_scale;
      failed_scale.set_status("True");
      failed_scale.set_reason(kFailedCreateReason);
      failed_scale.set_message(refused->message());
      SetOwnCondition(status, kFailedScaleConditionType, &failed_scale, now);
    } else if (!refused) {
      const pb::Condition* fs = FindCondition(status, kFailedScaleConditionType);
      if (fs != nullptr && fs->reason() == kFailedCreateReason) {
        SetOwnCondition(status, kFailedScaleConditionType, nullptr, now);
      }
    }
  };
  bool condition_written = false;
  // Remaining plan parts are skipped after a stop; status and events describe only what happened.
  if (stop.ok() && !batch_failed && plan.write_status() && writer.MayWrite()) {
    pb::CloneSetStatus status = plan.status();  // the planner carries the CloneSet's conditions over
    if (report || clear) set_refusal(status);
    absl::Status s = writer.WriteStatus(status);
    writer.Written("WriteStatus", s);
    if (s.ok()) {
      condition_written = true;
    } else {
      if (r.error.ok()) r.error = s;
      if (WriteRefused(s) && !refused) {
        // The status write itself was refused: another status write would be too, so only the event reports it.
        refused = ApplyFailedCondition("WriteStatus", "", s);
        pb::CloneSetStatus probe = cs.status();
        report = SetOwnCondition(probe, kApplyFailedConditionType, &*refused, now) && !reported(*refused);
        condition_written = true;
      }
    }
  }
  if (report) writer.Event("Warning", kApplyFailedConditionType, refused->message());
  if ((report || clear) && !condition_written && writer.MayWrite()) {
    pb::CloneSetStatus status = cs.status();
    set_refusal(status);
    absl::Status s = writer.WriteStatus(status);
    writer.Written("WriteStatus", s);
    if (!s.ok() && r.error.ok()) r.error = s;
  }
  pb::Event scratch;
  for (const ExpandedRef& ref : ExpandedEventOrder(plan)) {
    const pb::Event& e = ExpandedEvent(plan, ref, &scratch);
    if (!e.involved_pod().empty() && failed_pods.count(e.involved_pod())) continue;
    writer.Event(e.type() == pb::WARNING ? "Warning" : "Normal", e.reason(), e.message());
  }
  if (!r.error.ok()) {
    r.result = "error";
    return r;
  }
  if (plan.has_requeue_after()) {
    r.requeue_after = absl::Seconds(plan.requeue_after().seconds()) + absl::Nanoseconds(plan.requeue_after().nanos());
    if (r.requeue_after > absl::ZeroDuration()) r.result = "requeue_after";
  }
  return r;
}

}  // namespace cloneset::planapi
