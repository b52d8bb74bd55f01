#include "executor/reconciler.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "planapi/pod_table.h"
#include "snapshot/patch.h"

namespace cloneset::executor {

namespace {

bool DeadlineExceeded(const pb::CloneSet& cs) {
  for (const auto& c : cs.status().conditions()) {
    if (c.type() == "Progressing" && c.reason() == "ProgressDeadlineExceeded") return true;
  }
  return false;
}

// What a validation result is cached under: the CloneSet's uid and generation.
std::string ValidationVersion(const pb::CloneSet& cs) {
  return absl::StrCat(cs.metadata().uid(), "/", cs.metadata().generation());
}

}  // namespace

pb::FeatureGates Reconciler::RequestGates() const {
  pb::FeatureGates gates = d_.feature_gates;
  if (!d_.serves_pod_resize || resize_unsupported_.load()) gates.set_in_place_workload_vertical_scaling(false);
  return gates;
}

RequestWithPods Reconciler::BuildRequest(const std::string& key, const pb::CloneSet& cs, std::vector<pb::Pod> pods) {
  planapi::SnapshotPods shared;
  shared.pods.reserve(pods.size());
  for (pb::Pod& p : pods) shared.pods.push_back(std::make_shared<const pb::Pod>(std::move(p)));
  return BuildRequest(key, cs, std::move(shared));
}

RequestWithPods Reconciler::BuildRequest(const std::string& key, const pb::CloneSet& cs, planapi::SnapshotPods pods) {
  const std::string& ns = cs.metadata().namespace_();
  const std::string& uid = cs.metadata().uid();
  const planapi::RequestOptions options{.pod_table = SendsPodTable(),
                                        .in_place_batches = d_.planner_in_place_batches,
                                        .feature_gates = RequestGates()};
  absl::Status table_error;
  RequestWithPods snapshot = planapi::AssembleRequest(
      cs, std::move(pods), d_.cache->PvcsOwnedBy(ns, uid), d_.cache->RevisionsOwnedBy(ns, uid),
      [this](const std::vector<std::string>& names) { return d_.cache->NodesNamed(names); }, d_.clock->Now(),
      options, &table_error);
  planapi::SetStorageClasses(d_.cache->StorageClasses(), &snapshot.request);
  if (!table_error.ok() && !pod_table_fallback_reported_.exchange(true) && d_.pod_table_fallback) {
    d_.pod_table_fallback(key, table_error);
  }
  return snapshot;
}

absl::StatusOr<std::string> Reconciler::ValidationErrors(const std::string& key, const pb::CloneSet& cs,
                                                         const std::vector<std::shared_ptr<const pb::Pod>>& pods) {
  const std::string version = ValidationVersion(cs);
  {
    absl::MutexLock l(&mu_);
    auto it = validated_.find(key);
    if (it != validated_.end() && it->second.first == version) return it->second.second;
  }
  pb::ValidateRequest req;
  *req.mutable_clone_set() = cs;
  for (const auto& p : pods) *req.add_pods() = *p;
  auto resp = d_.planner->Validate(req);
  if (!resp.ok()) return resp.status();
  std::vector<std::string> errors;
  for (const auto& e : resp->errors()) errors.push_back(absl::StrCat(e.field(), ": ", e.message()));
  std::string message = absl::StrJoin(errors, "; ");
  absl::MutexLock l(&mu_);
  validated_[key] = {version, message};
  return message;
}

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  if (d_.backoff == nullptr) return ReconcileNow(key);
  const std::shared_ptr<const pb::CloneSet> cs = d_.cache->GetCloneSet(key);
  if (cs == nullptr) {
    d_.backoff->Forget(key);
    return ReconcileNow(key);
  }
  // Whatever enqueued the key (often the watch event of our own last failed attempt's writes), a CloneSet backing
  // off waits; a new generation or uid ends the back-off (RetryBackoff::Wait).
  const std::string version = ValidationVersion(*cs);
  if (const auto wait = d_.backoff->Wait(key, version, d_.clock->Now()); wait.has_value()) {
    ReconcileResult r;
    r.requeue_after = *wait;
    r.result = "backoff";
    return r;
  }
  ReconcileResult r = ReconcileNow(key);
  if (!r.error.ok()) {
    r.requeue_after = d_.backoff->Failed(key, version, d_.clock->Now());
  } else {
    d_.backoff->Forget(key);
  }
  return r;
}

ReconcileResult Reconciler::ReconcileNow(const std::string& key) {
  ReconcileResult r;
  auto cs_ptr = d_.cache->GetCloneSet(key);
  if (cs_ptr == nullptr) {
    d_.expectations->Forget(key);
    {
      absl::MutexLock l(&mu_);
      validated_.erase(key);
    }
    if (d_.metrics) {
      const auto slash = key.find('/');
      d_.metrics->ForgetCloneSet(key.substr(0, slash), key.substr(slash + 1));
    }
    return r;
  }
  const pb::CloneSet& cs = *cs_ptr;
  if (!Owns(key)) {
    r.result = "not_owned";
    return r;
  }
  if (d_.metrics) d_.metrics->ObserveCloneSet(cs, DeadlineExceeded(cs));
  const std::string& ns = cs.metadata().namespace_();

  // Expectations gate: the snapshot must show our previous writes.
  bool fresh = false;
  const GateResult gate = d_.expectations->Check(
      key, [&](ObjectKind k, const std::string& name) { return d_.cache->Lookup(k, ns, name); }, d_.clock->Now());
  if (d_.metrics) d_.metrics->ExpectationsPending(d_.expectations->pending_keys());
  if (gate.state == GateResult::kPending) {
    r.result = "requeue_after";
    r.requeue_after = gate.requeue_after;
    return r;
  }
  if (gate.state == GateResult::kExpired) {
    if (d_.metrics) d_.metrics->ExpectationLeaked();
    fresh = true;
  }

  // The pods shared with the cache, not copied, and their table from the cache's rows (ClusterCache::PodSnapshot);
  // after a leak, a fresh LIST (encoded as a table by the request).
  planapi::SnapshotPods pods;
  if (fresh) {
    auto listed = d_.cache->ListPodsFresh(ns, cs.metadata().uid());
    if (!listed.ok()) return {listed.status(), absl::ZeroDuration(), "error"};
    for (pb::Pod& p : *listed) pods.pods.push_back(std::make_shared<const pb::Pod>(std::move(p)));
  } else {
    pods = d_.cache->PodSnapshot(ns, cs.metadata().uid(), SendsPodTable());
  }

  // Pods only in their table (the cache keeps rows, not pods): validation reads them as objects, so they are
  // materialized, but only when the CloneSet's generation has not been validated yet.
  std::vector<std::shared_ptr<const pb::Pod>> materialized;
  if (pods.pods.empty() && pods.table.has_value() && pods.table->ok() && (*pods.table)->message().name_size() > 0) {
    bool validated = false;
    {
      absl::MutexLock l(&mu_);
      auto it = validated_.find(key);
      validated = it != validated_.end() && it->second.first == ValidationVersion(cs);
    }
    if (!validated) {
      auto view = planapi::PodTableView::Open((*pods.table)->message());
      if (!view.ok()) return {view.status(), absl::ZeroDuration(), "error"};
      materialized = (*view)->MaterializeAll();
    }
  }
  auto invalid = ValidationErrors(key, cs, materialized.empty() ? pods.pods : materialized);
  if (!invalid.ok()) {
    if (d_.metrics) d_.metrics->PlannerError(absl::StatusCodeToString(invalid.status().code()));
    return {invalid.status(), absl::ZeroDuration(), "error"};
  }
  if (!invalid->empty()) return HandleInvalid(key, cs, *invalid);
  if (FindCondition(cs.status(), kInvalidConditionType) != nullptr) {
    // Valid again: drop our condition first (the planner copies old conditions into the new status).
    if (auto s = WriteInvalidCondition(key, cs, nullptr); !s.ok()) return {s, absl::ZeroDuration(), "error"};
    r.result = "requeue";
    return r;
  }

  RequestWithPods snapshot = BuildRequest(key, cs, std::move(pods));
  absl::Status table_unread;
  // In-place batches stay batches: the applier builds each action as it writes it, so the first write of a large
  // rollout does not wait for the whole plan to be expanded (planapi/applier.h).
  auto plan = planapi::RequestPlan(
      snapshot, [this, &snapshot](const pb::PlanRequest&) { return CallPlanner(snapshot); }, &table_unread,
      planapi::Batches::kKeep);
  // A planner older than the pod table saw no pods and planned to create every replica: RequestPlan never returns
  // that plan. Reported by the first reconcile that finds it out; others in flight with a table re-plan quietly.
  if (!table_unread.ok() && !planner_lacks_pod_table_.exchange(true) && d_.pod_table_fallback) {
    d_.pod_table_fallback(key, absl::FailedPreconditionError(
                                   absl::StrCat(table_unread.message(), "; sending pods from now on")));
  }
  if (!plan.ok()) {
    if (d_.metrics) d_.metrics->PlannerError(absl::StatusCodeToString(plan.status().code()));
    if (absl::IsInvalidArgument(plan.status())) return HandleInvalid(key, cs, std::string(plan.status().message()));
    // Planner down or failing: no write at all, retry with back-off.
    return {plan.status(), absl::ZeroDuration(), "error"};
  }
  return Apply(key, cs, snapshot, *plan);
}

absl::StatusOr<pb::PlanResponse> Reconciler::CallPlanner(RequestWithPods& snapshot) {
  const absl::Time start = absl::Now();
  auto plan = d_.planner->PlanBytes(snapshot.request, snapshot.Serialize());
  if (d_.metrics) d_.metrics->PlannerCall(absl::ToDoubleSeconds(absl::Now() - start));
  return plan;
}

ReconcileResult Reconciler::HandleInvalid(const std::string& key, const pb::CloneSet& cs,
                                          const std::string& message) {
  const pb::Condition* existing = FindCondition(cs.status(), kInvalidConditionType);
  if (existing != nullptr && existing->message() == message) return {};  // already reported
  d_.events->Event(cs, "Warning", kInvalidReason, message);
  if (auto s = WriteInvalidCondition(key, cs, &message); !s.ok()) return {s, absl::ZeroDuration(), "error"};
  return {};
}

absl::Status Reconciler::WriteInvalidCondition(const std::string& key, const pb::CloneSet& cs,
                                               const std::string* message) {
  pb::Condition c;
  c.set_status("True");
  c.set_reason(kInvalidReason);
  if (message != nullptr) c.set_message(*message);
  return WriteOwnCondition(key, cs, kInvalidConditionType, message != nullptr ? &c : nullptr);
}

absl::Status Reconciler::WriteOwnCondition(const std::string& key, const pb::CloneSet& cs, std::string_view type,
                                           const pb::Condition* condition) {
  if (!Owns(key)) return absl::OkStatus();
  pb::CloneSetStatus status = cs.status();
  SetOwnCondition(status, type, condition, d_.clock->Now());
  absl::Status s = PatchStatus(key, cs, status);
  CountAction("WriteStatus", s);
  return s;
}

absl::Status Reconciler::PatchStatus(const std::string& key, const pb::CloneSet& cs,
                                     const pb::CloneSetStatus& status) {
  const auto req = snapshot::CloneSetStatusRequest(cs.metadata().namespace_(), cs.metadata().name(),
                                                   cs.api_version(), status);
  auto resp = d_.client->Patch(req.path, kube::PatchType::kMerge, req.body);
  if (!resp.ok()) return resp.status();
  ExpectFromResponse(key, ObjectKind::kCloneSet, cs.metadata().name(), Want::kAtLeastVersion, *resp);
  return absl::OkStatus();
}

void Reconciler::Expect(const std::string& key, ObjectKind kind, const std::string& name, Want want,
                        const std::string& rv) {
  d_.expectations->Expect(key, {kind, name, want, rv}, d_.clock->Now());
}

namespace {

// The API request behind a write of the plan applier's `type` (planapi::ActionType, or "WriteStatus"): verb and
// resource as the API server's metrics name them.
std::pair<std::string_view, std::string_view> VerbAndResource(std::string_view type) {
  static const std::map<std::string_view, std::pair<std::string_view, std::string_view>> kRequests = {
      {"CreatePod", {"create", "pods"}},
      {"DeletePod", {"delete", "pods"}},
      {"PatchPod", {"patch", "pods"}},
      {"PatchPodStatus", {"patch", "pods/status"}},
      {"ResizePod", {"patch", "pods/resize"}},
      {"CreatePvc", {"create", "persistentvolumeclaims"}},
      {"DeletePvc", {"delete", "persistentvolumeclaims"}},
      {"UpdatePvcOwner", {"patch", "persistentvolumeclaims"}},
      {"CreateRevision", {"create", "controllerrevisions"}},
      {"UpdateRevision", {"patch", "controllerrevisions"}},
      {"DeleteRevision", {"delete", "controllerrevisions"}},
      {"PatchCloneSet", {"patch", "clonesets"}},
      {"WriteStatus", {"patch", "clonesets/status"}},
      {"CreateImagePullJob", {"create", "imagepulljobs"}},
      {"DeleteImagePullJob", {"delete", "imagepulljobs"}},
  };
  auto it = kRequests.find(type);
  return it == kRequests.end() ? std::pair<std::string_view, std::string_view>{"unknown", "unknown"} : it->second;
}

}  // namespace

void Reconciler::CountAction(std::string_view type, const absl::Status& s) {
  if (!d_.metrics) return;
  d_.metrics->Action(type, s.ok() ? "success" : "error");
  if (WriteRefused(s)) {
    const auto [verb, resource] = VerbAndResource(type);
    d_.metrics->RefusedWrite(verb, resource, planapi::RefusalCause(s));
  }
}

}  // namespace cloneset::executor
