// The bounds on one plan's work and size, so that no CloneSet can crash or wedge the shared planner
// (docs/planner-api.md "Limits", docs/compatibility.md "Scale").
#pragma once

#include <cstdint>
#include <functional>

namespace cloneset::planner {

// Pods created by one plan at most. Upstream creates every missing pod in one reconcile (in slow-start batches);
// a CloneSet scaled from 0 to millions would make a plan of gigabytes that no gRPC message can carry. The rest
// follows in the next plans: the plan asks for a requeue after kScaleOutRequeue, and the new pods' events
// trigger a reconcile sooner anyway.
inline constexpr int32_t kMaxCreationsPerPlan = 10000;
// Bytes of pod and PVC documents the creations of one plan carry at most (at least one pod is always created):
// a large template reaches this before kMaxCreationsPerPlan. A quarter of the 256 MiB the executor accepts, so
// the rest of the plan (status, events, other actions) always fits.
inline constexpr int64_t kMaxCreationBytesPerPlan = int64_t{64} << 20;
inline constexpr int kScaleOutRequeueSeconds = 1;

// Asked between the stages of a plan and inside its long loops; true abandons the plan (CANCELLED). The service
// answers true once the call is cancelled, its deadline has passed or the server is stopping. The pure core has
// no clock: this predicate is its only view of time running out. An empty function never cancels.
using CancelCheck = std::function<bool()>;

}  // namespace cloneset::planner
