// The CloneSet spec with its defaults resolved: what every stage and the pod predicates read of the spec. Apart
// from the context so that the predicates need not include the context (see keys.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cloneset::planner {

enum class PodUpdatePolicy { kReCreate, kInPlaceIfPossible, kInPlaceOnly };

// The CloneSet spec in the controller's (v1beta1) terms, with every default applied and every int-or-percent
// resolved against spec.replicas (semantics §1.1, §0.4, §4.1 "Parameters").
struct ResolvedSpec {
  int32_t replicas = 1;
  bool rolling_update = true;       // false for OnDelete (rollingUpdate == nil upstream)
  PodUpdatePolicy policy = PodUpdatePolicy::kReCreate;
  int32_t partition = 0;            // R-partition, clamped to [0, replicas]
  int32_t max_surge = 0;            // 0 while paused
  int32_t max_unavailable = 0;      // rounded up iff max_surge == 0 (down when !rolling_update)
  int32_t scale_max_unavailable = INT32_MAX;  // scaleStrategy.maxUnavailable, rounded up
  bool paused = false;
  int32_t min_ready_seconds = 0;
  int32_t grace_period_seconds = 0;
  int32_t revision_history_limit = 10;
  bool pvc_reuse = true;            // enablePVCReuse (version-dependent default)
  bool retain_pvcs = false;         // pvcRetentionPolicy == Retain
  bool exclude_preparing_delete = false;
  std::vector<std::string> pods_to_delete;
  bool has_progress_deadline = false;
  int32_t progress_deadline_seconds = 0;
  int32_t expected_updated_replicas = 0;  // replicas - partition (rolling), else replicas
};

}  // namespace cloneset::planner
