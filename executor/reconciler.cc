#include "executor/reconciler.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "planapi/in_place_batches.h"
#include "planapi/pod_table.h"
#include "snapshot/patch.h"

namespace cloneset::executor {

std::string PodsPath(std::string_view ns) { return "/api/v1/namespaces/" + std::string(ns) + "/pods"; }
std::string PvcsPath(std::string_view ns) {
  return "/api/v1/namespaces/" + std::string(ns) + "/persistentvolumeclaims";
}
std::string RevisionsPath(std::string_view ns) {
  return "/apis/apps/v1/namespaces/" + std::string(ns) + "/controllerrevisions";
}

bool NeedsNodes(std::string_view template_json) {
  if (template_json.find("topologySpreadConstraints") == std::string_view::npos) return false;
  const nlohmann::json t = nlohmann::json::parse(template_json, nullptr, /*allow_exceptions=*/false);
  if (!t.is_object()) return false;
  const auto spec = t.find("spec");
  if (spec == t.end() || !spec->is_object()) return false;
  const auto constraints = spec->find("topologySpreadConstraints");
  if (constraints == spec->end() || !constraints->is_array()) return false;
  return std::any_of(constraints->begin(), constraints->end(), [](const nlohmann::json& c) {
    return c.is_object() && c.contains("topologyKey") && c["topologyKey"].is_string();
  });
}

namespace {

bool DeadlineExceeded(const pb::CloneSet& cs) {
  for (const auto& c : cs.status().conditions()) {
    if (c.type() == "Progressing" && c.reason() == "ProgressDeadlineExceeded") return true;
  }
  return false;
}

// A stable, per-state seed: the same snapshot always gets the same instance ids, a changed one new ids.
uint64_t Seed(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  mix(cs.metadata().uid());
  mix(cs.metadata().resource_version());
  for (const auto& p : pods) mix(p.metadata().resource_version());
  return h;
}

}  // namespace

std::vector<const pb::Pod*> PlanSnapshot::Pods() const {
  std::vector<const pb::Pod*> out;
  if (request.pods_size() > 0) {
    out.reserve(request.pods_size());
    for (const pb::Pod& p : request.pods()) out.push_back(&p);
  } else {
    out.reserve(table_pods.size());
    for (const pb::Pod& p : table_pods) out.push_back(&p);
  }
  return out;
}

void PlanSnapshot::SendPodsAsObjects() {
  request.clear_pod_table();
  request.mutable_pods()->Reserve(static_cast<int>(table_pods.size()));
  for (pb::Pod& p : table_pods) *request.add_pods() = std::move(p);
  table_pods.clear();
}

PlanSnapshot Reconciler::BuildRequest(const std::string& key, const pb::CloneSet& cs, std::vector<pb::Pod> pods) {
  PlanSnapshot snapshot;
  pb::PlanRequest& req = snapshot.request;
  *req.mutable_clone_set() = cs;
  const std::string& ns = cs.metadata().namespace_();
  const std::string& uid = cs.metadata().uid();
  std::sort(pods.begin(), pods.end(),
            [](const pb::Pod& a, const pb::Pod& b) { return a.metadata().name() < b.metadata().name(); });
  req.set_random_seed(Seed(cs, pods));
  req.set_accept_in_place_batches(d_.planner_in_place_batches);
  std::vector<std::string> node_names;
  if (NeedsNodes(cs.spec().template_json())) {
    for (const auto& p : pods) {
      if (!p.node_name().empty()) node_names.push_back(p.node_name());
    }
  }
  snapshot.table_pods = std::move(pods);
  bool as_table = d_.planner_pod_table && !planner_lacks_pod_table_.load();
  if (as_table) {
    absl::StatusOr<pb::PodTable> table = planapi::EncodePodTable(snapshot.Pods());
    if (table.ok()) {
      *req.mutable_pod_table() = *std::move(table);
    } else {
      as_table = false;
      if (!pod_table_fallback_reported_.exchange(true) && d_.pod_table_fallback) {
        d_.pod_table_fallback(key, table.status());
      }
    }
  }
  if (!as_table) snapshot.SendPodsAsObjects();
  if (!node_names.empty()) {
    std::sort(node_names.begin(), node_names.end());
    node_names.erase(std::unique(node_names.begin(), node_names.end()), node_names.end());
    for (auto& n : d_.cache->NodesNamed(node_names)) *req.add_nodes() = std::move(n);
  }
  for (auto& pvc : d_.cache->PvcsOwnedBy(ns, uid)) {
    if (pvc.metadata().has_deletion_timestamp()) continue;  // §0.5 step 4
    *req.add_pvcs() = std::move(pvc);
  }
  for (auto& rev : d_.cache->RevisionsOwnedBy(ns, uid)) *req.add_revisions() = std::move(rev);
  const absl::Time now = d_.clock->Now();
  req.mutable_now()->set_seconds(absl::ToUnixSeconds(now));
  req.mutable_now()->set_nanos(static_cast<int32_t>((now - absl::FromUnixSeconds(absl::ToUnixSeconds(now))) /
                                                    absl::Nanoseconds(1)));
  return snapshot;
}

absl::StatusOr<std::string> Reconciler::ValidationErrors(const std::string& key, const pb::CloneSet& cs,
                                                         const std::vector<pb::Pod>& pods) {
  const std::string version = absl::StrCat(cs.metadata().uid(), "/", cs.metadata().generation());
  {
    absl::MutexLock l(&mu_);
    auto it = validated_.find(key);
    if (it != validated_.end() && it->second.first == version) return it->second.second;
  }
  pb::ValidateRequest req;
  *req.mutable_clone_set() = cs;
  for (const auto& p : pods) *req.add_pods() = p;
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

  std::vector<pb::Pod> pods;
  if (fresh) {
    auto listed = d_.cache->ListPodsFresh(ns, cs.metadata().uid());
    if (!listed.ok()) return {listed.status(), absl::ZeroDuration(), "error"};
    pods = *std::move(listed);
  } else {
    pods = d_.cache->PodsOwnedBy(ns, cs.metadata().uid());
  }

  auto invalid = ValidationErrors(key, cs, pods);
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

  PlanSnapshot snapshot = BuildRequest(key, cs, std::move(pods));
  auto plan = CallPlanner(snapshot.request);
  if (plan.ok() && snapshot.request.has_pod_table() &&
      plan->pods_read() != planapi::PodsInRequest(snapshot.request)) {
    // A planner older than the pod table saw no pods and planned to create every replica: never apply that.
    // Reported by the first reconcile that finds it out; others in flight with a table re-plan quietly.
    if (!planner_lacks_pod_table_.exchange(true) && d_.pod_table_fallback) {
      d_.pod_table_fallback(key, absl::FailedPreconditionError(absl::StrCat(
                                     "the planner read ", plan->pods_read(), " of the ",
                                     planapi::PodsInRequest(snapshot.request),
                                     " pods sent as pod_table (a planner older than the table?); sending pods "
                                     "from now on")));
    }
    snapshot.SendPodsAsObjects();
    plan = CallPlanner(snapshot.request);
  }
  if (!plan.ok()) {
    if (d_.metrics) d_.metrics->PlannerError(absl::StatusCodeToString(plan.status().code()));
    if (absl::IsInvalidArgument(plan.status())) return HandleInvalid(key, cs, std::string(plan.status().message()));
    // Planner down or failing: no write at all, retry with back-off.
    return {plan.status(), absl::ZeroDuration(), "error"};
  }
  return Apply(key, cs, snapshot, *plan);
}

absl::StatusOr<pb::PlanResponse> Reconciler::CallPlanner(const pb::PlanRequest& request) {
  const absl::Time start = absl::Now();
  auto plan = d_.planner->Plan(request);
  if (d_.metrics) d_.metrics->PlannerCall(absl::ToDoubleSeconds(absl::Now() - start));
  // Before anything reads the plan: applying, write accounting and metrics see per-pod actions only.
  if (plan.ok()) planapi::ExpandInPlaceBatches(&*plan);
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

pb::Condition ApplyFailedCondition(std::string_view action, std::string_view object, const absl::Status& refused) {
  const int code = kube::HttpCode(refused).value_or(0);
  std::string reason = kube::K8sReason(refused);
  if (reason.empty()) {
    switch (code) {
      case 400: reason = "BadRequest"; break;
      case 401: reason = "Unauthorized"; break;
      case 403: reason = "Forbidden"; break;
      case 405: reason = "MethodNotAllowed"; break;
      case 413: reason = "RequestEntityTooLarge"; break;
      case 415: reason = "UnsupportedMediaType"; break;
      case 422: reason = "Invalid"; break;
      default: reason = "WriteRefused"; break;
    }
  }
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
  const auto req = snapshot::CloneSetStatusRequest(cs.metadata().namespace_(), cs.metadata().name(),
                                                   cs.api_version(), status);
  auto resp = d_.client->Patch(req.path, kube::PatchType::kMerge, req.body);
  CountAction("WriteStatus", resp.status());
  if (!resp.ok()) return resp.status();
  ExpectFromResponse(key, ObjectKind::kCloneSet, cs.metadata().name(), Want::kAtLeastVersion, *resp);
  return absl::OkStatus();
}

void Reconciler::Expect(const std::string& key, ObjectKind kind, const std::string& name, Want want,
                        const std::string& rv) {
  d_.expectations->Expect(key, {kind, name, want, rv}, d_.clock->Now());
}

void Reconciler::CountAction(std::string_view type, const absl::Status& s) {
  if (d_.metrics) d_.metrics->Action(type, s.ok() ? "success" : "error");
}

}  // namespace cloneset::executor
