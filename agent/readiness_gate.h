// Readiness-gate progress on this node (semantics §5.9): when an in-place update of a pod here is complete,
// the agent sets InPlaceUpdateReady to exactly the value the executor would write ({True, no reason, no
// message}), so the two never fight: whoever comes second sees the value and writes nothing. Pods are decoded by
// the executor's decoder (snapshot::PodFromJson) and judged by the planner's completion rule
// (kruise/inplace_completion.h), so the agent never reports a pod the planner still counts as updating
// (agent/completion_agreement_test.cc runs every kind of state through both).
#pragma once

#include <string>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::agent {

namespace pb = ::cloneset::planner::v1;

struct ReadinessDecision {
  bool report = false;     // patch the condition now
  std::string why;         // when not: the reason (for logs and tests)
  absl::Duration update_duration = absl::ZeroDuration();  // now - state.updateTimestamp
};

// report == true only if: the pod has the gate and is not terminating; the condition is not already
// {True,"",""}; the pod's in-place update is complete by the planner's rule (kruise::CheckInPlaceUpdate: a state
// that parses, no grace period or later batch pending, every container of lastContainerStatuses restarted on its
// new spec, a resize carried out); the state is not older than a False condition (the state of the previous
// update, the new one not written yet); and every recorded container's status is ready. A pod without a state is
// left to the executor (its condition may have turned False for an update whose state is not written yet).
ReadinessDecision DecideReadiness(const pb::Pod& pod, absl::Time now);

// Strategic merge patch for pods/status, guarded by the pod's resourceVersion.
std::string ReadinessPatch(const pb::Pod& pod, absl::Time now);

}  // namespace cloneset::agent
