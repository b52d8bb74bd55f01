// Readiness-gate progress on this node (semantics §5.9): when an in-place update of a pod here is complete,
// the agent sets InPlaceUpdateReady to exactly the value the executor would write ({True, no reason, no
// message}), so the two never fight: whoever comes second sees the value and writes nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cloneset::agent {

inline constexpr char kInPlaceUpdateReady[] = "InPlaceUpdateReady";

// The fields of a pod the decision needs (decoded from the watch; the rest of the pod is not kept).
struct PodView {
  std::string namespace_, name, uid, resource_version;
  bool has_gate = false;
  // The InPlaceUpdateReady condition as stored, if any.
  std::optional<std::string> condition_status;
  std::string condition_reason, condition_message;
  std::string state_json;   // apps.kruise.io/inplace-update-state ("" = none)
  bool has_grace = false;   // apps.kruise.io/inplace-update-grace present
  bool deleting = false;
  std::map<std::string, std::string> spec_images;  // container -> image
  struct ContainerStatus {
    std::string image, image_id;
    bool ready = false;
  };
  std::map<std::string, ContainerStatus> statuses;
};
absl::StatusOr<PodView> DecodePodView(std::string_view json);

struct ReadinessDecision {
  bool report = false;     // patch the condition now
  std::string why;         // when not: the reason (for logs and tests)
  absl::Duration update_duration = absl::ZeroDuration();  // now - state.updateTimestamp
};

// report == true only if: the pod has the gate; a state annotation exists and parses; no grace period or
// later batch is pending; the condition is not already {True,"",""}; and every container in
// lastContainerStatuses has a status that is ready and runs the new image (imageID changed, or, when the
// imageID did not change, the status image equals the spec image — ":latest" appended when it has no ':').
// updateEnvFromMetadata / resource updates are left to the executor (they need runtime metadata).
ReadinessDecision DecideReadiness(const PodView& pod, absl::Time now);

// Strategic merge patch for pods/status, guarded by the pod's resourceVersion.
std::string ReadinessPatch(const PodView& pod, absl::Time now);

}  // namespace cloneset::agent
