// Container resources as Kubernetes reads them: the value of a quantity ("500m", "1Gi", "2e3"), a pod's QoS class
// (Guaranteed, Burstable, BestEffort) and whether an in-place resize has been carried out by the kubelet. The
// planner (what can be resized in place, semantics §5.7, and when a resize completed, §5.9), the node agent (the
// same completion) and the embedded cluster (the pods/resize subresource's validation, its kubelet simulator) all
// decide with these, so they cannot disagree.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json_fwd.hpp"

namespace cloneset::common {

// The value of a quantity times 10^9 (an integer number of nano-units, the finest Kubernetes keeps: a value below
// 1n rounds up to 1n, as resource.ParseQuantity does). Accepts the forms of resource.ParseQuantity: an optional
// sign, digits with an optional fraction, and a decimal suffix (n, u, m, "", k, M, G, T, P, E), a binary one (Ki,
// Mi, Gi, Ti, Pi, Ei) or an exponent (e3, E-2). INVALID_ARGUMENT saying why for anything else, and for a value
// past 10^27 (1000 Ei is about 1.2 * 10^21).
absl::StatusOr<__int128> QuantityNanos(std::string_view text);
// The same for a JSON value: a string, or a number (its literal, as resource.Quantity's UnmarshalJSON reads it).
absl::StatusOr<__int128> JsonQuantityNanos(const nlohmann::json& value);
// Whether two quantities have the same value ("1" and "1000m", "1Gi" and "1073741824"); texts that are not
// quantities are equal only when they are the same text.
bool SameQuantity(std::string_view a, std::string_view b);

// The resources a pods/resize may change, and the only ones a QoS class is computed from.
inline bool ResizableResource(std::string_view name) { return name == "cpu" || name == "memory"; }

enum class QosClass { kBestEffort, kBurstable, kGuaranteed };
const char* QosClassName(QosClass qos);

// Kubernetes' ComputePodQOS over a pod spec (a PodSpec as JSON; a template's `spec`): the cpu and memory requests
// and limits of its containers and init containers, values of zero ignored. BestEffort when none is set;
// Guaranteed when every container limits both cpu and memory and the summed requests equal the summed limits;
// Burstable otherwise. On a template, apply DefaultRequestsFromLimits first to get the class of its pods. A
// quantity that does not parse counts as not set. Pod-level resources (spec.resources) are not read: a pod with
// them cannot be resized (the API server refuses it).
QosClass PodQosClass(const nlohmann::json& pod_spec);

// The API server's defaulting of a pod (SetDefaults_Pod, not applied to templates): a container (or init
// container) with a limit and no request for a resource gets the limit as its request.
void DefaultRequestsFromLimits(nlohmann::json& pod_spec);

// ---- Resize completion: has the kubelet carried out the resources of the pod's spec? ----

// Pod conditions of an in-place resize (Kubernetes 1.33 and later). PodResizePending has reason Deferred (the node
// may fit it later; the kubelet retries) or Infeasible (the node can never fit it); PodResizeInProgress is there
// while the kubelet applies an accepted resize (reason Error, with a message, when applying it failed).
inline constexpr char kPodResizePending[] = "PodResizePending";
inline constexpr char kPodResizeInProgress[] = "PodResizeInProgress";
inline constexpr char kResizeDeferred[] = "Deferred";
inline constexpr char kResizeInfeasible[] = "Infeasible";

enum class ResizeState {
  kDone,        // every container's status resources are its spec's cpu and memory, and no resize condition
  kPending,     // PodResizePending: `reason` Deferred or Infeasible, the kubelet's `message`
  kInProgress,  // PodResizeInProgress (reason Error: applying failed, the kubelet retries)
  kNoStatus,    // a container has no status yet
  kNotApplied,  // a container's status resources differ from its spec (the kubelet has not picked it up yet)
};

struct ResizeProgress {
  ResizeState state = ResizeState::kDone;
  std::string container;  // kNoStatus, kNotApplied: the first such container
  std::string reason;     // kPending, kInProgress: the condition's reason and message
  std::string message;
};

// The pod's resize as its status shows it: the conditions first (a pending resize says why), then every container
// of the spec (cpu and memory of its requests and limits against status.containerStatuses[].resources, compared as
// quantities). Upstream compares whole resource lists; only cpu and memory are compared here, the resources the
// kubelet reports (docs/compatibility.md, "In-place resize").
ResizeProgress PodResizeProgress(const ::cloneset::planner::v1::Pod& pod);

// "resize Infeasible: Node didn't have enough capacity: cpu ...", "container app has no status": how the agent
// and the planner's events say why a resize has not completed.
std::string DescribeResize(const ResizeProgress& progress);

}  // namespace cloneset::common
