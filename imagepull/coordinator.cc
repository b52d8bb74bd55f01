#include "imagepull/coordinator.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/update_order.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"

namespace cloneset::imagepull {
namespace {

using Json = nlohmann::json;

}  // namespace

std::vector<std::string> TargetNodes(const pb::UpdateStrategy& strategy, const std::vector<pb::Pod>& pods) {
  // In name order, as the planner's candidates are: every step of the order is stable, so ties keep it.
  std::vector<const pb::Pod*> live;
  for (const pb::Pod& p : pods) {
    if (!p.metadata().has_deletion_timestamp()) live.push_back(&p);
  }
  std::stable_sort(live.begin(), live.end(),
                   [](const pb::Pod* a, const pb::Pod* b) { return a->metadata().name() < b->metadata().name(); });
  std::vector<int> candidates(live.size());
  for (size_t i = 0; i < live.size(); ++i) candidates[i] = static_cast<int>(i);
  const std::vector<int> order = common::SortUpdateCandidates(
      strategy, live, std::move(candidates), [&](int i) { return common::ActiveKeyOf(*live[i]); },
      [&](int i) { return common::IsPreparingUpdate(*live[i]); });
  std::vector<std::string> nodes;
  std::set<std::string> seen;
  for (int i : order) {
    const std::string& node = live[i]->node_name();
    if (!node.empty() && seen.insert(node).second) nodes.push_back(node);
  }
  return nodes;
}

absl::Time StaleDeadline(const NodeView& view, int32_t timeout_seconds) {
  const absl::Duration timeout = absl::Seconds(timeout_seconds);
  if (view.report.has_value() && view.report->start_time != absl::InfinitePast()) {
    return view.report->start_time + timeout + kNoReportGrace;
  }
  const absl::Time assigned = view.request.has_value() ? view.request->assigned_at : absl::InfinitePast();
  if (assigned == absl::InfinitePast()) return absl::InfiniteFuture();  // unknown: never judged stale
  return assigned + 2 * timeout + kNoReportGrace;
}

absl::StatusOr<OwnerState> ParseOwnerState(std::string_view clone_set_json) {
  Json j = Json::parse(clone_set_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::InvalidArgumentError("CloneSet: not a JSON object");
  OwnerState o;
  o.found = true;
  const Json meta = j.value("metadata", Json::object());
  const Json st = j.value("status", Json::object());
  if (!meta.is_object() || !st.is_object()) return absl::InvalidArgumentError("CloneSet: metadata/status must be objects");
  if (meta.contains("generation") && meta["generation"].is_number_integer()) o.generation = meta["generation"].get<int64_t>();
  if (st.contains("observedGeneration") && st["observedGeneration"].is_number_integer()) {
    o.observed_generation = st["observedGeneration"].get<int64_t>();
  }
  if (st.contains("currentRevision") && st["currentRevision"].is_string()) o.current_revision = st["currentRevision"].get<std::string>();
  if (st.contains("updateRevision") && st["updateRevision"].is_string()) o.update_revision = st["updateRevision"].get<std::string>();
  if (st.contains("updatedReadyReplicas") && st["updatedReadyReplicas"].is_number_integer()) {
    o.updated_ready = st["updatedReadyReplicas"].get<int32_t>();
  }
  if (absl::StatusOr<pb::CloneSet> decoded = snapshot::CloneSetFromJson(clone_set_json); decoded.ok()) {
    o.strategy = decoded->spec().update_strategy();
  }
  return o;
}

namespace {
bool IsJobRevision(const PullJob& job, const std::string& revision) {
  if (job.revision_hash.empty() || revision.empty()) return true;  // cannot tell: assume it is
  return revision == job.revision_hash || revision.ends_with("-" + job.revision_hash);
}
}  // namespace

int32_t UpdatedReadyFor(const PullJob& job, const OwnerState& owner) {
  return owner.found && IsJobRevision(job, owner.update_revision) ? owner.updated_ready : 0;
}

bool RolloutOver(const PullJob& job, const OwnerState& owner) {
  if (!owner.found) return true;
  if (owner.observed_generation < owner.generation || owner.update_revision.empty()) return false;  // status stale
  if (!IsJobRevision(job, owner.update_revision)) return true;  // a newer rollout replaced this one
  return owner.current_revision == owner.update_revision;
}

PullRequest RequestFor(const PullJob& job, absl::Time now) {
  return PullRequest{.job = job.Key(),
                     .job_uid = job.uid,
                     .image = job.image,
                     .secret_namespace = job.namespace_,
                     .pull_secrets = job.pull_secrets,
                     .timeout_seconds = job.timeout_seconds,
                     .assigned_at = now};
}

JobDecision DecideJob(const JobInputs& in) {
  const PullJob& job = *in.job;
  JobDecision out;
  const std::vector<std::string> targets = TargetNodes(in.strategy, in.pods);

  // Effective per-node state from the requests and reports.
  std::map<std::string, NodePullStatus> nodes;
  int in_flight = 0;
  bool any_assigned = false;
  for (const auto& [node, view] : in.nodes) {
    if (!view.request.has_value()) continue;  // a report without a request is stale: ignored
    any_assigned = true;
    NodePullStatus st{.node = node, .phase = PullPhase::kPulling, .start_time = view.request->assigned_at};
    if (view.report.has_value()) {
      const PullReport& r = *view.report;
      st.image_id = r.image_id;
      st.message = r.message;
      if (r.start_time != absl::InfinitePast()) st.start_time = r.start_time;
      if (IsTerminal(r.phase)) {
        st.phase = r.phase;
        st.completion_time = r.completion_time;
      }
    }
    if (!IsTerminal(st.phase) && in.now >= StaleDeadline(view, job.timeout_seconds)) {
      st.phase = PullPhase::kFailed;
      st.message = absl::StrCat("no agent finished the pull within ", job.timeout_seconds,
                                "s (is cloneset-agent running on this node?)");
      st.completion_time = in.now;
      for (const NodePullStatus& p : job.status.nodes) {  // keep the first verdict's time: no status churn
        if (p.node == node && p.phase == PullPhase::kFailed && p.completion_time != absl::InfinitePast()) {
          st.completion_time = p.completion_time;
        }
      }
    }
    if (st.phase == PullPhase::kPulling) ++in_flight;
    nodes[node] = std::move(st);
  }

  const bool waiting = !any_assigned && in.updated_ready < job.min_updated_ready_pods;
  for (const std::string& node : targets) {
    if (nodes.contains(node)) continue;
    if (!waiting && in_flight < job.parallelism) {
      out.assign.push_back(node);
      ++in_flight;
      nodes[node] = NodePullStatus{.node = node, .phase = PullPhase::kPulling, .start_time = in.now};
    } else {
      nodes[node] = NodePullStatus{.node = node, .phase = PullPhase::kPending};
    }
  }

  PullJobStatus& st = out.status;
  for (auto& [node, n] : nodes) {
    switch (n.phase) {
      case PullPhase::kPending: ++st.pending; break;
      case PullPhase::kPulling: ++st.pulling; break;
      case PullPhase::kSucceeded: ++st.succeeded; break;
      case PullPhase::kFailed: ++st.failed; break;
    }
    st.nodes.push_back(std::move(n));
  }
  st.desired = static_cast<int32_t>(st.nodes.size());
  const PullJobStatus& prev = job.status;
  st.start_time = prev.start_time;
  if (st.start_time == absl::InfinitePast() && (any_assigned || !out.assign.empty())) st.start_time = in.now;
  if (waiting) {
    st.phase = "Waiting";
    st.message = absl::StrCat("waiting for ", job.min_updated_ready_pods, " updated ready pods (have ",
                              in.updated_ready, ")");
  } else if (st.pending == 0 && st.pulling == 0) {
    st.phase = "Complete";
    st.completion_time = prev.phase == "Complete" && prev.completion_time != absl::InfinitePast() ? prev.completion_time
                                                                                                  : in.now;
    st.message = absl::StrCat("pulled on ", st.succeeded, " of ", st.desired, " nodes");
  } else {
    st.phase = "Running";
  }

  std::map<std::string, PullPhase> before;
  for (const NodePullStatus& n : prev.nodes) before[n.node] = n.phase;
  for (const NodePullStatus& n : st.nodes) {
    auto it = before.find(n.node);
    if (n.phase == PullPhase::kFailed && (it == before.end() || it->second != PullPhase::kFailed)) {
      out.events.push_back({"Warning", "ImagePullFailed",
                            absl::StrCat("ImagePullJob ", job.name, ": node ", n.node, " failed to pull ", job.image,
                                         ": ", n.message)});
    }
  }
  if (st.phase == "Complete" && prev.phase != "Complete") {
    out.events.push_back({"Normal", "ImagePullJobComplete",
                          absl::StrCat("ImagePullJob ", job.name, ": ", job.image, " pulled on ", st.succeeded, " of ",
                                       st.desired, " nodes (", st.failed, " failed)")});
  }
  return out;
}

std::vector<PullRequest> DesiredRequests(const std::vector<PullRequest>& current, const std::set<std::string>& live_job_uids,
                                         const std::vector<PullRequest>& added) {
  std::vector<PullRequest> out;
  std::set<std::string> have;
  for (const PullRequest& r : current) {
    if (live_job_uids.contains(r.job_uid) && have.insert(r.job_uid).second) out.push_back(r);
  }
  for (const PullRequest& r : added) {
    if (have.insert(r.job_uid).second) out.push_back(r);
  }
  return out;
}

}  // namespace cloneset::imagepull
