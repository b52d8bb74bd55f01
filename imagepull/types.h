// The pre-download data model shared by the coordinator (executor) and the node agent, and its JSON codec.
//
// Two resources carry all state, so either process can restart at any time (docs/architecture.md,
// "Image pre-download"):
//   * ImagePullJob (namespaced, apps.kruise.io/v1alpha1), created by the planner per changed container of an
//     in-place rollout; its status is the coordinator's per-node view (what `kubectl get imagepulljobs` shows).
//   * NodeImage (cluster-scoped, one per node, named after the node): spec.pulls are the pull requests the
//     coordinator assigned to that node, status.pulls are the agent's reports. The agent writes only the
//     status of its own node's object; the coordinator writes only specs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "common/label_selector.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"

namespace cloneset::imagepull {

inline constexpr const char* kGroupVersion = kruise::kV1alpha1;
inline constexpr char kApiPrefix[] = "/apis/apps.kruise.io/v1alpha1";

enum class PullPhase { kPending, kPulling, kSucceeded, kFailed };
std::string_view PhaseName(PullPhase phase);
std::optional<PullPhase> ParsePhase(std::string_view name);
inline bool IsTerminal(PullPhase p) { return p == PullPhase::kSucceeded || p == PullPhase::kFailed; }

// One pull the coordinator asks a node to do (NodeImage spec.pulls[]).
struct PullRequest {
  std::string job;      // "<namespace>/<name>" of the ImagePullJob
  std::string job_uid;  // identity: a re-created job with the same name is a new request
  std::string image;
  std::string secret_namespace;  // the CloneSet's namespace: the only one pull Secrets are read from
  std::vector<std::string> pull_secrets;
  int32_t timeout_seconds = 300;
  absl::Time assigned_at = absl::InfinitePast();
  bool operator==(const PullRequest&) const = default;
};

// The agent's report for one request (NodeImage status.pulls[]), keyed by job_uid.
struct PullReport {
  std::string job;
  std::string job_uid;
  std::string image;
  PullPhase phase = PullPhase::kPending;
  std::string image_id;
  std::string message;
  int32_t attempts = 0;
  absl::Time start_time = absl::InfinitePast();
  absl::Time completion_time = absl::InfinitePast();
  bool operator==(const PullReport&) const = default;
};

struct NodeImage {
  std::string node;
  std::string resource_version;
  std::vector<PullRequest> requests;
  std::vector<PullReport> reports;
  const PullReport* ReportFor(std::string_view job_uid) const;
  const PullRequest* RequestFor(std::string_view job_uid) const;
};

// Per-node line of the job status.
struct NodePullStatus {
  std::string node;
  PullPhase phase = PullPhase::kPending;
  std::string image_id;
  std::string message;
  absl::Time start_time = absl::InfinitePast();
  absl::Time completion_time = absl::InfinitePast();
  bool operator==(const NodePullStatus&) const = default;
};

struct PullJobStatus {
  std::string phase;  // Waiting | Running | Complete
  std::string message;
  int32_t desired = 0;
  int32_t pending = 0;
  int32_t pulling = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::vector<NodePullStatus> nodes;
  absl::Time start_time = absl::InfinitePast();
  absl::Time completion_time = absl::InfinitePast();
  bool operator==(const PullJobStatus&) const = default;
};

struct PullJob {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string image;
  int32_t parallelism = 1;
  int32_t timeout_seconds = 300;
  int32_t min_updated_ready_pods = 0;
  // spec.podSelector, checked; its String() is the labelSelector query the coordinator lists pods with.
  common::LabelSelector pod_selector;
  std::vector<std::string> pull_secrets;
  std::string owner_kind, owner_api_version, owner_name, owner_uid;  // the controlling CloneSet
  std::string revision_hash;  // label controller-revision-hash (planner sets it to the update revision's hash)
  bool deleting = false;
  PullJobStatus status;
  std::string Key() const { return namespace_ + "/" + name; }
};

// Decoders: errors name the field; they never throw.
absl::StatusOr<PullJob> ParsePullJob(std::string_view json);
absl::StatusOr<NodeImage> ParseNodeImage(std::string_view json);

nlohmann::json RequestsJson(const std::vector<PullRequest>& requests);
nlohmann::json ReportsJson(const std::vector<PullReport>& reports);
nlohmann::json JobStatusJson(const PullJobStatus& status);

}  // namespace cloneset::imagepull
