// `clonesetctl rollout ...`: kubectl's rollout commands for CloneSets. The decisions (is the rollout done, what
// does undo write, where does the partition go next, what differs between two revisions) are pure functions of
// the objects read from the cluster; rollout_io.cc does the reads, watches and writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"

namespace cloneset::clonesetctl {

namespace pb = ::cloneset::planner::v1;

// The condition the executor writes when the planner refuses the spec (executor/reconciler.h
// kInvalidConditionType; the executor is not linked into the CLI, so the name is repeated here).
inline constexpr char kInvalidCondition[] = "Invalid";
inline constexpr char kProgressDeadlineExceeded[] = "ProgressDeadlineExceeded";
// kubectl's annotations: the reason of a change (copied onto the ControllerRevision it creates) and the restart
// stamp `kubectl rollout restart` puts on the pod template.
inline constexpr char kChangeCauseAnnotation[] = "kubernetes.io/change-cause";
inline constexpr char kRestartedAtAnnotation[] = "kubectl.kubernetes.io/restartedAt";

// ---- rollout status ----

enum class RolloutState {
  kWaiting,  // keep watching
  kDone,     // exit 0
  kFailed,   // exit 1: progress deadline exceeded, invalid spec
};

struct RolloutVerdict {
  RolloutState state = RolloutState::kWaiting;
  std::string message;  // one line, no newline; for kFailed the error text (printed after "error: ")
  int exit_code() const { return state == RolloutState::kFailed ? 1 : 0; }
};

// kubectl's Deployment status rules read for a CloneSet (kubectl's polymorphichelpers rollout status viewer):
// spec not observed yet -> waiting; Progressing condition ProgressDeadlineExceeded or an Invalid spec (the
// executor's Invalid condition, or a spec the planner cannot resolve) -> failed; fewer updated than
// replicas - partition, more old pods than the partition keeps, or updated pods not available -> waiting;
// otherwise done, except that a rollout held by a partition is only done with `partition_ok` (a canary pipeline
// step), else it waits for the partition to be lowered.
// `gates` are the executor's (--feature-gates): the spec is resolved as the planner resolves it.
RolloutVerdict RolloutStatusMessage(const pb::CloneSet& cloneset, bool partition_ok, const pb::FeatureGates& gates);

// ---- rollout history / undo ----

struct RevisionEntry {
  int64_t number = 0;
  std::string name;
  std::string change_cause;   // "" when the revision has none
  std::string template_json;  // spec.template of the revision ("" when its data is unusable)
};

// The revisions sorted by revision number (then name); the template read with planner::TemplateFromRevisionData.
std::vector<RevisionEntry> RevisionHistory(const std::vector<pb::ControllerRevision>& revisions);

// kubectl's table: "REVISION  CHANGE-CAUSE" then one row per revision ("<none>" without a cause).
std::string RenderHistory(const std::string& name, const std::vector<RevisionEntry>& history);
// One revision: its template (YAML-like) and what changed from the revision before it (TemplateDiff).
// NOT_FOUND "unable to find the specified revision N in history" (kubectl's words) when there is none.
absl::StatusOr<std::string> RenderRevision(const std::string& name, const std::vector<RevisionEntry>& history,
                                           int64_t revision);

// The leaf-by-leaf difference of two JSON documents, one line each: "~ path: old -> new", "+ path: value",
// "- path: value". Lists of objects with a "name" are matched by name (containers[name=main].image), other
// lists by index. Empty when equal.
std::vector<std::string> TemplateDiff(const nlohmann::json& before, const nlohmann::json& after);

struct UndoDecision {
  int64_t revision = 0;       // the revision rolled back to
  std::string template_json;  // what spec.template becomes
  bool skip = false;          // the current template already is that revision's
};
// kubectl's undo: to_revision 0 is the revision before the newest one. NOT_FOUND "unable to find specified
// revision N in history", FAILED_PRECONDITION "no rollout history found" / "no previous revision to roll back to".
absl::StatusOr<UndoDecision> UndoTo(const std::vector<RevisionEntry>& history,
                                    const std::string& current_template_json, int64_t to_revision);

// ---- pause, resume, restart, next ----

// The CloneSet object (its JSON as the API server returns it) after each command, or an error in kubectl's
// words (FAILED_PRECONDITION 'clonesets.apps.kruise.io "x" is already paused', ...).
absl::Status SetPaused(nlohmann::json& cloneset, bool paused);
absl::Status SetRestartedAt(nlohmann::json& cloneset, absl::Time now);

struct NextPartition {
  int32_t from = 0;  // the resolved partition now
  int32_t to = 0;
};
// `rollout next --step N`: the partition lowered by `step` pods, or by one batch (the resolved maxUnavailable,
// at least 1) when `step` is unset; never below 0. FAILED_PRECONDITION when the partition is already 0; the
// field's error when the spec cannot be resolved; INVALID_ARGUMENT for a step below 1.
absl::StatusOr<NextPartition> NextPartitionFor(const pb::CloneSet& cloneset, std::optional<int32_t> step,
                                               const pb::FeatureGates& gates);

// ---- status ----

// Every condition of the CloneSet, one line each: "Condition Progressing=False (ProgressDeadlineExceeded): CloneSet
// revision web-1 has timed out progressing" (reason and message left out when empty).
std::string RenderConditions(const pb::CloneSetStatus& status);

// ---- plan ----

// What holds a rollout that is not moving by itself, one reason a line: a partition that is reached, paused, the
// maxUnavailable budget spent on unavailable pods, pods waiting in a lifecycle hook. Empty when nothing holds it.
std::vector<std::string> HoldReasons(const pb::CloneSet& cloneset, const std::vector<pb::Pod>& pods, absl::Time now,
                                     const pb::FeatureGates& gates);

}  // namespace cloneset::clonesetctl
