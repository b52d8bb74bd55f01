// Applying a plan: the one implementation of the rules every applier of a plan follows, over a small writer
// interface. The executor gives it a writer that talks to the API server (executor/apply.cc), `clonesetctl
// simulate` one that changes its in-memory cluster (clonesetctl/sim_cluster.cc), so the simulation cannot
// drift from what the executor does with the same plan.
//
// The rules:
//  * the actions run in stages (plan_schedule.h): revisions before pods, one slow-start batch of creations at a
//    time, a pod's actions in plan order; different pods of one stage concurrently (ApplyOptions::parallelism);
//  * before every write the writer must still be allowed to write (PlanWriter::MayWrite, the executor's shard
//    lease): once it is not, nothing more is written and the result is "lost_shard";
//  * a plan that creates pods or PVCs first asks whether the CloneSet still exists with the snapshot's uid: a
//    reconcile can race the garbage collector, and creations are the writes that outlive the CloneSet;
//  * a failed CreatePod ends the plan after its batch (slow start: the next batch must not start); a failed action
//    with stop_on_error, or any write that hit a conflict (HTTP 409: the snapshot is stale), stops the plan: no
//    further action starts, those in flight finish; any other failure is noted and the plan goes on;
//  * the CloneSet status is written last, and only when nothing stopped the plan;
//  * a refused creation (WriteRefused: quota exhausted, namespace terminating, an admission denial, an invalid pod
//    template) is refused for the creations after it too: no further CreatePod or CreatePvc of the plan starts;
//  * a write the API server refused (WriteRefused) is reported as the CloneSet condition ApplyFailed (the plan's
//    first refused write by action index) and one Warning event ApplyFailed when the condition appears or says
//    something new; a refused creation also sets FailedScale (reason FailedCreate), as upstream's CloneSet reports
//    failed creations. The same refusal under another object name (a new pod name per plan) is nothing new for
//    ApplyOptions::report_window after it was last reported: neither condition is rewritten and neither the
//    ApplyFailed nor the FailedCreate event is raised again, so a refusal that lasts costs one event and one
//    condition write per window. The conditions go once a plan applies without a failed write;
//  * FailedCreate / FailedDelete Warning events for answered failures only (a transport error is retried and is
//    no event); the plan's events are emitted last, except those about a pod whose write failed or never started.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

inline constexpr char kApplyFailedConditionType[] = "ApplyFailed";
// Upstream's condition for a failed scale; set by the applier with this reason when a creation is refused (the
// planner sets it without a reason for its own scale errors, and removes it once it finds none).
inline constexpr char kFailedScaleConditionType[] = "FailedScale";
inline constexpr char kFailedCreateReason[] = "FailedCreate";
// client-go's event correlator window: the same refusal is reported again at most this often.
inline constexpr absl::Duration kRefusalReportWindow = absl::Minutes(10);

// What one plan's writes go through; one writer per plan (it may keep what the plan's earlier writes returned).
// Errors are the API server's (kube/api_status.h): an answered failure carries its HTTP code, a conflict is a 409.
class PlanWriter {
 public:
  virtual ~PlanWriter() = default;
  // Whether this process may still write for the CloneSet. Asked before every write.
  virtual bool MayWrite() = 0;
  // Whether the CloneSet still exists with the snapshot's uid; asked once before a plan that creates pods or PVCs.
  virtual absl::StatusOr<bool> CloneSetExists() = 0;
  // One action (never StartInPlaceUpdates: the applier writes a batch as the actions it expands to,
  // in_place_batches.h). Actions of different pods of one stage may be written concurrently.
  virtual absl::Status Write(const pb::Action& action) = 0;
  // The CloneSet's status: the plan's, or the CloneSet's own with the ApplyFailed condition set or removed.
  virtual absl::Status WriteStatus(const pb::CloneSetStatus& status) = 0;
  // An event about the CloneSet.
  virtual void Event(std::string_view type, std::string_view reason, std::string_view message) = 0;
  // The outcome of every write, by action type ("CreatePod", ..., "WriteStatus"), for metrics.
  virtual void Written(std::string_view type, const absl::Status& outcome) {}
};

struct ApplyOptions {
  // Writes of one plan in flight at once: independent pods of one stage.
  int parallelism = 1;
  // The same refusal is not reported again (condition rewrite, events) until this long after its last report.
  absl::Duration report_window = kRefusalReportWindow;
};

struct ApplyResult {
  absl::Status error;    // non-OK: retry with back-off
  absl::Status stopped;  // what ended the plan early (a stop, or the failure of a slow-start batch); OK otherwise
  absl::Duration requeue_after = absl::ZeroDuration();  // zero: no timed requeue
  // "success", "requeue_after", "error", "lost_shard" (MayWrite said no) or "cloneset_gone".
  std::string result = "success";
};

class PlanApplier {
 public:
  explicit PlanApplier(ApplyOptions options = {}) : options_(options) {}
  // Applies `plan`, made from a snapshot of `cs`, through `writer`; `now` stamps the conditions it writes. A plan
  // with in-place batches is applied as its expansion (ExpandInPlaceBatches), each action built only when it is
  // written: the same writes and events in the same order, without building the whole plan before the first.
  ApplyResult Apply(const pb::CloneSet& cs, const pb::PlanResponse& plan, PlanWriter& writer, absl::Time now) const;

 private:
  ApplyOptions options_;
};

// The action's type as metrics and conditions name it ("CreatePod", "PatchPodStatus", ...).
std::string_view ActionType(const pb::Action& action);

// Whether the API server refused a write in a way a retry of the same write cannot change: an HTTP 4xx other than
// 404, 409 and 429, which the reconcile handles (403, 413, 422, ...).
bool WriteRefused(const absl::Status& s);

// What a refusal is, by the API server's wording: "NamespaceTerminating" (403 "... because it is being
// terminated"), "QuotaExceeded" (403 "exceeded quota: ..."), "PodSecurity" (403 "violates PodSecurity ...": the
// namespace's pod-security.kubernetes.io/enforce level), "AdmissionDenied" (an admission webhook or a
// ValidatingAdmissionPolicy denied the request), "Invalid" (422), else the API server's reason or the HTTP code's
// name ("Forbidden" for RBAC, "RequestEntityTooLarge", ...). The metrics' `reason` label.
std::string RefusalCause(const absl::Status& refused);

// Whether two ApplyFailed conditions report the same refusal: the same reason, and the same message once the
// object each names is left out (a plan names a new pod per attempt; the API server's message repeats the name).
bool SameRefusal(const pb::Condition& a, const pb::Condition& b);

// The condition reporting a refused write: reason from the API server's Status (or the HTTP code's name), message
// "<action> <object>: <message> (HTTP <code>)". `object` may be empty.
pb::Condition ApplyFailedCondition(std::string_view action, std::string_view object, const absl::Status& refused);

// The condition of `type` in `status` (null: none).
const pb::Condition* FindCondition(const pb::CloneSetStatus& status, std::string_view type);

// Sets (`condition` non-null) or removes (null) the condition of `condition->type()` / `type` in `status`, keeping
// lastTransitionTime when the condition was already there with the same status; `now` stamps the rest. Returns
// whether `status` changed other than in its timestamps.
bool SetOwnCondition(pb::CloneSetStatus& status, std::string_view type, const pb::Condition* condition,
                     absl::Time now);

}  // namespace cloneset::planapi
