// The pull-job coordinator's pure decisions: which nodes an ImagePullJob targets, in which order, which of them
// get a pull request now (never more than `parallelism` nodes pulling at once per job), and the job status.
// The loop that feeds these from the API server lives in coordinator_loop.h.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "imagepull/types.h"

namespace cloneset::imagepull {

namespace pb = ::cloneset::planner::v1;

// The nodes of `pods` (the ones matching a job's podSelector: not yet on the new revision, decoded by
// snapshot::PodFromJson) in the order the planner updates those pods: common/update_order.h under the CloneSet's
// update `strategy` (default order, then priority, then scatter, PreparingUpdate first), first occurrence wins.
// Terminating pods are left out; unscheduled pods take their place in the order but have no node to pull on.
std::vector<std::string> TargetNodes(const pb::UpdateStrategy& strategy, const std::vector<pb::Pod>& pods);

// One node as seen for one job: the request the coordinator wrote (if any) and the agent's report (if any).
struct NodeView {
  std::optional<PullRequest> request;
  std::optional<PullReport> report;
};

// A pull that no agent finishes within this is failed by the coordinator (no agent on the node, or the agent
// died mid-pull): a report's startTime + timeout + grace, or, before any report, assignedAt + 2*timeout + grace
// (the agent may queue the pull behind its per-node cap).
inline constexpr absl::Duration kNoReportGrace = absl::Seconds(30);
absl::Time StaleDeadline(const NodeView& view, int32_t timeout_seconds);

struct JobInputs {
  const PullJob* job = nullptr;
  std::vector<pb::Pod> pods;          // pods in the job's namespace matching its podSelector
  int32_t updated_ready = 0;          // the CloneSet's updatedReadyReplicas for this revision (0 otherwise)
  std::map<std::string, NodeView> nodes;  // node -> view, for every node that has a request or report of this job
  absl::Time now;
  pb::UpdateStrategy strategy;        // the owning CloneSet's, for the node order
};

struct JobEvent {
  std::string type;  // Normal | Warning
  std::string reason;
  std::string message;
  bool operator==(const JobEvent&) const = default;
};

struct JobDecision {
  std::vector<std::string> assign;  // nodes that get a pull request now, in update order
  PullJobStatus status;
  std::vector<JobEvent> events;
};

JobDecision DecideJob(const JobInputs& in);

// What the coordinator reads of the owning CloneSet.
struct OwnerState {
  bool found = false;
  int64_t generation = 0, observed_generation = 0;
  std::string current_revision, update_revision;
  int32_t updated_ready = 0;
  // spec.updateStrategy as the planner reads it (snapshot::CloneSetFromJson); the default strategy when the
  // CloneSet does not decode (the planner then plans nothing for it either).
  pb::UpdateStrategy strategy;
};
absl::StatusOr<OwnerState> ParseOwnerState(std::string_view clone_set_json);
// updatedReadyReplicas, counted only while the owner's status is about the job's revision.
int32_t UpdatedReadyFor(const PullJob& job, const OwnerState& owner);
// The rollout the job was made for is over (the owner settled on the job's revision, or moved to another
// revision, or is gone): the job is deleted (semantics §8 "revisions equal"), which also drops its requests.
bool RolloutOver(const PullJob& job, const OwnerState& owner);

// The request written for `node` when `job` is assigned to it.
PullRequest RequestFor(const PullJob& job, absl::Time now);

// A node's desired spec.pulls: the current requests of jobs that still exist (finished ones stay, so a
// restarted agent sees its report and does not pull again), then the new ones. Job deletion is the cleanup.
std::vector<PullRequest> DesiredRequests(const std::vector<PullRequest>& current, const std::set<std::string>& live_job_uids,
                                         const std::vector<PullRequest>& added);

}  // namespace cloneset::imagepull
