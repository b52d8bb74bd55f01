// The imperative shell of `clonesetctl rollout ...` (and `migrate`): reads, watches and writes through the
// kube client; every decision is one of rollout.h's functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "kube/rest_client.h"
#include "nlohmann/json.hpp"

namespace cloneset::clonesetctl {

struct RolloutOptions {
  std::string namespace_ = "default";
  absl::Duration timeout = absl::ZeroDuration();  // status: 0 waits forever
  bool watch = true;                               // status: --watch=false prints once
  bool partition_ok = false;                       // status: a reached partition counts as done
  int64_t revision = 0;                            // history --revision N (0: the table)
  int64_t to_revision = 0;                         // undo --to-revision N (0: the previous one)
  std::optional<int32_t> step;                     // next --step N (unset: one maxUnavailable batch)
  // --feature-gates: the spec is resolved as the planner resolves it for an executor started so.
  ::cloneset::planner::v1::FeatureGates feature_gates;
};

// `rollout status NAME`: prints each new kubectl-style message on `out` and returns the exit code: 0 done (or
// --watch=false), 1 failed (progress deadline, invalid spec, CloneSet deleted or absent, cluster unreachable) or
// timed out ("error: timed out waiting for the condition" on `err`). Watches the CloneSet; re-reads it only
// when a watch ends.
int RolloutStatus(kube::RestClient& client, const std::string& server, const std::string& name,
                  const RolloutOptions& options, std::ostream& out, std::ostream& err);

// `rollout history|undo|pause|resume|restart|next NAME`: exit code 0, 1 on a refused or failed command.
int RolloutCommand(kube::RestClient& client, const std::string& server, const std::string& verb,
                   const std::string& name, const RolloutOptions& options, std::ostream& out, std::ostream& err);

struct MigrateOptions {
  std::string namespace_ = "default";
  bool dry_run = false;
  int32_t max_unavailable = 1;
  absl::Duration step_timeout = absl::Minutes(5);  // each step's wait for the new pods
  absl::Duration poll = absl::Milliseconds(500);   // how often a step's wait reads both objects
};
// `migrate deployment/NAME` (`target` is what follows "deployment/"): prints the plan (migrate.h), then, unless
// dry_run, creates the CloneSet and performs the steps, waiting after each until the CloneSet has that many
// available pods and the Deployment no more than its new replicas. Exit code 0, or 1 with "error: ..." on `err`.
int Migrate(kube::RestClient& client, const std::string& server, const std::string& name,
            const MigrateOptions& options, std::ostream& out, std::ostream& err);

// `migrate from-kruise`: whether the CloneSets of namespace `ns` (every namespace when empty) can be taken over
// from kruise-manager without a write to their pods, claims or revisions (takeover.h), planned with `gates` at
// `now`. Prints the report on `out`; exit code 0 when safe, 1 otherwise (or with "error: ..." on `err`).
int CheckKruiseTakeover(kube::RestClient& client, const std::string& server, const std::string& ns,
                        const ::cloneset::planner::v1::FeatureGates& gates, absl::Time now, std::ostream& out, std::ostream& err);

// GET the CloneSet, apply `mutate` to its JSON, PUT it back (retrying a conflict with a fresh read, 5 times).
// `mutate`'s error is returned as is, with nothing written.
absl::Status UpdateCloneSet(kube::RestClient& client, const std::string& server, const std::string& namespace_,
                            const std::string& name, const std::function<absl::Status(nlohmann::json&)>& mutate);

}  // namespace cloneset::clonesetctl
