// `clonesetctl migrate deployment/NAME`: the CloneSet that takes over a Deployment's workload (same selector and
// pod template), and the steps that move the replicas over within a max-unavailable budget. Pure; migrate_io
// in rollout_io.cc performs them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace cloneset::clonesetctl {

// The annotation the created CloneSet carries, so that a migration interrupted half-way can be run again.
inline constexpr char kMigratedFromAnnotation[] = "clonesetctl.cloneset.io/migrated-from";

// The CloneSet for `deployment` (an apps/v1 Deployment as JSON): same name, namespace, labels, selector, pod
// template, minReadySeconds, revisionHistoryLimit and progressDeadlineSeconds, 0 replicas; a RollingUpdate
// Deployment's maxUnavailable/maxSurge carry over (ReCreate pods, as the Deployment's). INVALID_ARGUMENT naming
// the field when the Deployment has no selector or template.
absl::StatusOr<nlohmann::json> CloneSetForDeployment(const nlohmann::json& deployment);

struct MigrationStep {
  int32_t deployment_replicas = 0;
  int32_t cloneset_replicas = 0;
};
// From (replicas, 0) to (0, replicas): each step moves `max_unavailable` pods (the last one fewer), so at most
// that many are missing while the new pods start. `already_moved` pods are on the CloneSet from an earlier run.
// INVALID_ARGUMENT for max_unavailable < 1.
absl::StatusOr<std::vector<MigrationStep>> MigrationSteps(int32_t replicas, int32_t already_moved,
                                                          int32_t max_unavailable);

// The plan as printed by --dry-run (and before a real run): one numbered line per step.
std::string RenderMigration(const std::string& ns, const std::string& name, int32_t replicas,
                            int32_t already_moved, bool create, const std::vector<MigrationStep>& steps);

}  // namespace cloneset::clonesetctl
