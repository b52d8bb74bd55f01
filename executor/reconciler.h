// Reconcile one CloneSet: snapshot from the caches -> expectations gate -> validation -> Plan (planner over gRPC)
// -> apply the plan's actions to the API server in order -> status, events, requeue.
//
// Rules the executor (not the planner) guarantees:
//  * read-after-write: every write records an expectation (expectations.h); the planner is not called for a
//    CloneSet until the cache shows all of them (or they time out: leak counter + fresh LIST of its pods);
//  * never write from a stale cache: pod/PVC/revision/CloneSet mutations are patches guarded by the
//    resourceVersion of the snapshot (or of our own write earlier in the same plan); a 409 stops the plan, the
//    object is re-read with a GET and the CloneSet waits until the cache shows at least that version;
//  * the planner unreachable => no write at all, the key is retried with back-off;
//  * before every write the shard must still be held (`owns`), so a lost Lease stops writes at once;
//  * the actions of a plan run in stages (planapi/plan_schedule.h): revisions before pods, one slow-start batch at
//    a time, a pod's actions in plan order; different pods of a stage concurrently (`apply_parallelism`). After a
//    failure that stops the plan no further action starts (those in flight finish, each under its own
//    precondition); the CloneSet status is written last, and only when nothing stopped the plan. These rules, the
//    events and the ApplyFailed condition below are the plan applier's (planapi/applier.h), which `clonesetctl
//    simulate` applies its plans with too; the executor gives it a writer to the API server (apply.cc);
//  * pod status patches that set only the controller's own conditions are guarded by the pod's uid instead of
//    its resourceVersion (snapshot/patch.h), so they do not lose to the kubelet's status writes; the version
//    such a write returns is used for the pod's spec patch only when metadata and spec are still the snapshot's;
//  * a write answered with an error that leaves its outcome open (5xx, a lost connection: the API server may have
//    committed it) is resolved with a GET: a create whose object exists, or a delete whose object is gone or
//    terminating, counts as done and records its expectation, so the next snapshot cannot miss a pod we created
//    (whose claim the planner would then take for orphaned) or show one we deleted;
//  * a pod is POSTed only after each of its claims (CreatePod.claim_names) is known to exist: created or
//    AlreadyExists in the same action, or present and not terminating in the cache; else the action fails before
//    the pod is written (FailedCreate event);
//  * an invalid CloneSet gets a Warning event `InvalidSpec` and a status condition type `Invalid`
//    (status True, reason `InvalidSpec`, message "<field>: <message>; ...") and no pod is touched; the
//    condition is removed again once the spec is valid;
//  * an in-place resize (ResizePod) is a strategic merge patch of pods/<name>/resize under the snapshot's
//    resourceVersion, retried at a fresh version when only the pod's status moved on; the PatchPod that follows it
//    in the plan is applied to the version the resize returned, and checked against the pod the resize returned.
//    An API server without the subresource (404 for a pod that exists, or not listed by discovery at startup)
//    turns the InPlaceWorkloadVerticalScaling gate off for every later request (resources changes then recreate
//    the pods) and says so once with a Warning event PodResizeUnsupported;
//  * a write the API server refuses (an HTTP 4xx a retry of the same write cannot change: 403, 413, 422, ...;
//    not 404, 409 or 429, which the reconcile handles) is reported on the CloneSet: a status condition type
//    `ApplyFailed` (status True, reason the API server's reason, e.g. `Forbidden`, `RequestEntityTooLarge`,
//    message "<action> <object>: <the API server's message> (HTTP <code>)" of the plan's first refused write) and
//    one Warning event `ApplyFailed` when the condition appears or says something new (the same refusal under
//    another pod name is nothing new for 10 minutes, planapi::SameRefusal), not one per attempt; a refused creation
//    also sets `FailedScale` (reason `FailedCreate`) and stops the plan's later creations;
//  * a CloneSet whose reconcile failed backs off (ReconcilerDeps::backoff, retry_backoff.h): until the back-off has
//    passed, a reconcile of it, whatever enqueued the key, asks no planner and writes nothing.
//    The condition goes once a plan applies without a failed write. A write that failed without an answer (a
//    transport error: connection reset, timeout) is retried with back-off and is no Warning event; FailedCreate
//    and FailedDelete events are for answered failures only.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "executor/expectations.h"
#include "executor/interfaces.h"
#include "executor/metrics.h"
#include "executor/retry_backoff.h"
#include "kube/rest_client.h"
#include "planapi/applier.h"
#include "planapi/request.h"
#include "snapshot/patch.h"

namespace cloneset::executor {

inline constexpr char kInvalidConditionType[] = "Invalid";
inline constexpr char kInvalidReason[] = "InvalidSpec";
// The executor's own conditions and the refused-write rule are the plan applier's (planapi/applier.h).
using planapi::ApplyFailedCondition;
using planapi::FindCondition;
using planapi::kApplyFailedConditionType;
using planapi::SetOwnCondition;
using planapi::WriteRefused;

struct ReconcileResult {
  absl::Status error;                                    // non-OK: retry with back-off
  absl::Duration requeue_after = absl::ZeroDuration();  // zero: no timed requeue
  std::string result = "success";                        // metric label
};

struct ReconcilerDeps {
  ClusterCache* cache;
  PlannerClient* planner;
  kube::RestClient* client;
  EventSink* events;
  Expectations* expectations;
  const base::Clock* clock;
  ExecutorMetrics* metrics = nullptr;               // optional
  std::function<bool(const std::string& key)> owns;  // shard check; empty = own everything
  // Writes of one plan in flight at once: independent pods of one stage (planapi/plan_schedule.h).
  int apply_parallelism = 1;
  // Send the pods as PlanRequest.pod_table (the compact encoding, parsed ~30x faster by the planner); false sends
  // PlanRequest.pods, for a planner older than the table.
  bool planner_pod_table = true;
  // Set PlanRequest.accept_in_place_batches: the planner may start runs of in-place updates as one
  // StartInPlaceUpdates action (a seventh of the bytes); the plan applier writes a batch as the per-pod actions it
  // expands to, building each as it is written (planapi/applier.h), so the writes are the same either way. A
  // planner that predates batches ignores it.
  bool planner_in_place_batches = true;
  // PlanRequest.feature_gates of every request (upstream's gates the executor runs with). With
  // in_place_workload_vertical_scaling the planner resizes pods in place through pods/resize; the reconciler turns
  // it off for every later request once the API server is known not to serve that subresource (`serves_pod_resize`
  // false, or a resize answered 404 for a pod that exists), and resources changes then recreate.
  pb::FeatureGates feature_gates;
  // Whether the API server serves pods/resize (Kubernetes 1.32 and later), as discovery said at startup.
  bool serves_pod_resize = true;
  // Called once per Reconciler, the first time a snapshot's pods cannot be encoded as a table (a timestamp outside
  // the years 1678-2262): that request, and every such one after it, carries `pods` instead; and when a planner
  // answers a table without reading it (PlanResponse.pods_read, a planner older than the table): the plan is
  // dropped, made again from `pods`, and every later request carries `pods`. Optional.
  std::function<void(const std::string& key, const absl::Status& error)> pod_table_fallback;
  // The back-off of CloneSets whose reconciles fail (retry_backoff.h); null: none beyond the work queue's.
  RetryBackoff* backoff = nullptr;
};

// The request sent to the planner and the snapshot's pods that Apply checks its writes against; assembled by the
// plan contract's rules (planapi/request.h).
using planapi::RequestWithPods;

class Reconciler {
 public:
  explicit Reconciler(ReconcilerDeps deps) : d_(std::move(deps)) {}
  // One reconcile of `key`; while the CloneSet backs off after failed reconciles (ReconcilerDeps::backoff), none:
  // result "backoff", requeue_after the time left. A failed reconcile's requeue_after is its back-off delay.
  ReconcileResult Reconcile(const std::string& key);

  // The snapshot sent to the planner (exposed for tests): planapi::AssembleRequest over the cache's objects. `key`
  // names the CloneSet in the fallback report.
  RequestWithPods BuildRequest(const std::string& key, const pb::CloneSet& cs, std::vector<pb::Pod> pods);
  // The same from pods shared with the cache, with their table when the cache keeps it (ClusterCache::PodSnapshot).
  RequestWithPods BuildRequest(const std::string& key, const pb::CloneSet& cs, planapi::SnapshotPods pods);
  // Whether the next request carries the pods as a table (the planner reads tables, as far as we know).
  bool SendsPodTable() const { return d_.planner_pod_table && !planner_lacks_pod_table_.load(); }

 private:
  struct ApplyState;
  class RestPlanWriter;  // the plan applier's writer: the API server (apply.cc)
  bool Owns(const std::string& key) const { return !d_.owns || d_.owns(key); }
  ReconcileResult ReconcileNow(const std::string& key);
  // Validation on generation change; returns the joined field errors ("" = valid).
  absl::StatusOr<std::string> ValidationErrors(const std::string& key, const pb::CloneSet& cs,
                                               const std::vector<std::shared_ptr<const pb::Pod>>& pods);
  // Plan, timed into the planner-call histogram.
  // Plans `snapshot`'s request as it is now, sent as its bytes (a kept pod table as it is kept).
  absl::StatusOr<pb::PlanResponse> CallPlanner(RequestWithPods& snapshot);
  ReconcileResult HandleInvalid(const std::string& key, const pb::CloneSet& cs, const std::string& message);
  absl::Status WriteInvalidCondition(const std::string& key, const pb::CloneSet& cs, const std::string* message);
  // Patches the CloneSet status (a merge patch of the whole status); records the expectation on the new version.
  absl::Status PatchStatus(const std::string& key, const pb::CloneSet& cs, const pb::CloneSetStatus& status);
  // Patches the CloneSet status with `condition` of `type` set (non-null) or removed (null).
  absl::Status WriteOwnCondition(const std::string& key, const pb::CloneSet& cs, std::string_view type,
                                 const pb::Condition* condition);
  ReconcileResult Apply(const std::string& key, const pb::CloneSet& cs, const RequestWithPods& snapshot,
                        const pb::PlanResponse& plan);
  absl::Status ApplyAction(ApplyState& st, const pb::Action& action);
  absl::Status CreatePod(ApplyState& st, const pb::CreatePod& create);
  // POSTs `body` to `collection`. OK when the object exists afterwards: created, AlreadyExists, or found by a GET
  // after an error that leaves the outcome open; records the kPresent expectation then.
  absl::Status CreateObject(const std::string& key, ObjectKind kind, const std::string& collection,
                            const std::string& body);
  // DELETEs `collection`/`name` (uid precondition when not empty). OK when it is gone or terminating afterwards
  // (404 included, or per a GET after an error that leaves the outcome open); records the kAbsent expectation then.
  absl::Status DeleteObject(const std::string& key, ObjectKind kind, const std::string& collection,
                            const std::string& name, const std::string& uid);
  absl::Status PatchFromAction(ApplyState& st, const pb::Action& action);
  void Expect(const std::string& key, ObjectKind kind, const std::string& name, Want want,
              const std::string& rv = "");
  void ExpectFromResponse(const std::string& key, ObjectKind kind, const std::string& name, Want want,
                          const std::string& body);
  void ReReadAfterConflict(const std::string& key, ObjectKind kind, const std::string& path,
                           const std::string& name);
  void CountAction(std::string_view type, const absl::Status& s);

  ReconcilerDeps d_;
  absl::Mutex mu_;
  // key -> "uid/generation" validated OK, or the error message.
  std::map<std::string, std::pair<std::string, std::string>> validated_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> pod_table_fallback_reported_{false};
  // Set once a planner answered a pod-table request without reading its pods (a planner older than the table):
  // every request after that carries `pods`.
  std::atomic<bool> planner_lacks_pod_table_{false};
  // Set when the API server does not serve pods/resize (ReconcilerDeps::serves_pod_resize, or a resize answered
  // 404 while its pod exists): requests then carry in_place_workload_vertical_scaling off.
  std::atomic<bool> resize_unsupported_{false};
  // The feature gates of the next request.
  pb::FeatureGates RequestGates() const;
  // A ResizePod answered 404: when its pod exists, the API server lacks the subresource; says so (a Warning event
  // PodResizeUnsupported on the CloneSet, once per executor) and turns resizes off. Returns the action's error.
  absl::Status ResizeNotServed(ApplyState& st, const pb::ResizePod& resize, const absl::Status& error);
};

// Whether the snapshot carries the Nodes of the pods (planapi/request.h).
using planapi::NeedsNodes;

// API paths and bodies of the executor's writes: one translation of plan actions into API requests
// (snapshot/patch.h).
using snapshot::DeleteBody;
using snapshot::PodsPath;
using snapshot::PvcsPath;
using snapshot::RevisionsPath;

}  // namespace cloneset::executor
