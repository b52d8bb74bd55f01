// `clonesetctl simulate`: replays a whole rollout offline with the real planner (in-process), a simulated clock
// and the simulated cluster of sim_cluster.h. Starts from the steady state of the manifest as written (every pod
// ready at its revision), then applies the --set changes as the new spec and records every plan that touched pods
// until nothing moves any more. Without --set changes it simulates the creation from zero pods.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clonesetctl/sim_cluster.h"

namespace cloneset::clonesetctl {

struct SimulateInput {
  std::string manifest_yaml;      // one or more YAML documents; the first CloneSet is used
  std::vector<std::string> sets;  // "key=value": image, image.<container>, replicas, partition, maxUnavailable,
                                  // maxSurge, paused, type, minReadySeconds
  SimOptions options;
  absl::Duration max_duration = absl::Hours(24);  // simulated time limit
};

struct TimelineStep {
  absl::Duration at;  // since the rollout started
  std::string phase;  // the plan's summary phase
  std::vector<std::string> created;
  std::vector<std::string> deleted;
  std::vector<std::string> updated_in_place;
  std::vector<std::string> lifecycle;
  PodCounts counts;  // right after the plan was applied
};

struct SimulateResult {
  std::string name;
  std::string namespace_;
  std::vector<std::string> changes;  // the --set changes as applied, "image: a -> b"
  std::string from_revision;
  std::string to_revision;
  std::vector<TimelineStep> steps;
  std::string outcome;  // "complete", "partition" (stopped where the partition says), "stalled"
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;  // Warning events the planner emitted (unique)
  absl::Duration duration;            // until the last change
  int peak_unavailable = 0;
  int peak_surge = 0;
  std::string strategy;  // "InPlaceIfPossible, maxUnavailable 1, maxSurge 0, partition 0" of the new spec
  int writes = 0;           // API writes an executor would make
  PodCounts final_counts;
  bool finished() const { return outcome == "complete"; }
};

// INVALID_ARGUMENT for an unusable manifest or --set (naming the field), and for a spec the planner's Validate
// rejects ("spec.updateStrategy.partition: ...").
absl::StatusOr<SimulateResult> Simulate(const SimulateInput& input);

// Applies "key=value" changes to a CloneSet JSON document; `changes` receives "key: old -> new" lines.
absl::StatusOr<std::string> ApplySets(const std::string& clone_set_json, const std::vector<std::string>& sets,
                                      std::vector<std::string>* changes);

}  // namespace cloneset::clonesetctl
