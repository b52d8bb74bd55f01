// The simulated kubelet's in-place resize (Kubernetes 1.34's allocation manager, much simplified): when a running
// container's spec cpu/memory differs from what it runs with (status.containerStatuses[].resources), the resize is
// checked against the node: a pod that would request more than the node's allocatable is Infeasible, one that does
// not fit beside the node's other pods is Deferred (both a PodResizePending condition with the kubelet's message;
// a Deferred resize is tried again every `retry`); otherwise it is accepted: allocatedResources take the new
// requests and PodResizeInProgress is set, and `actuate` later status.resources take the spec's values and the
// condition goes. The pod annotation devcluster.cloneset.io/fault forces an outcome: "resize-deferred",
// "resize-infeasible". Containers keep running (a RestartContainer resize policy does not restart them here).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace cloneset::devcluster::nodes {

using ResizeClock = std::chrono::system_clock;

struct ResizeTiming {
  ResizeClock::duration actuate = std::chrono::milliseconds(200);  // accepted -> applied
  ResizeClock::duration retry = std::chrono::seconds(2);           // Deferred -> tried again
};

// The node as a resize sees it; zero capacity: unknown, every resize fits.
struct ResizeNode {
  int64_t cpu_milli_capacity = 0;
  int64_t memory_capacity = 0;
  int64_t cpu_milli_used = 0;  // requests of the node's other pods
  int64_t memory_used = 0;
};

// The forced outcome of the fault annotation: "" (none), "Deferred" or "Infeasible".
struct ResizeFault {
  std::string outcome;
};

struct ContainerResources {
  nlohmann::json allocated;  // allocatedResources: the requests the kubelet admitted (cpu, memory)
  nlohmann::json resources;  // resources: {requests, limits} the container runs with (cpu, memory)
};

struct ResizeDecision {
  std::map<std::string, ContainerResources> containers;  // by container name
  // The resize conditions the status must carry (absent: none): each {type, status, reason, message}.
  std::optional<nlohmann::json> pending;
  bool in_progress = false;
  bool accepted = false;  // this decision admitted new requests (the node's accounting follows them)
  std::optional<ResizeClock::time_point> wake_at;
};

// Decides from the stored pod (spec and status) at `now`. `in_progress_since`: the PodResizeInProgress condition's
// lastTransitionTime when it is set.
ResizeDecision DecideResize(const nlohmann::json& pod, const ResizeNode& node, const ResizeFault& fault,
                            const ResizeTiming& timing, ResizeClock::time_point now);

// Writes the decision into `status` (a pod's new status, whose containerStatuses are built): every container
// status gets its allocatedResources and resources, the conditions PodResizePending / PodResizeInProgress are set
// or removed (observedGeneration the pod's generation).
void ApplyResize(const ResizeDecision& decision, int64_t generation, const std::string& now_rfc3339,
                 nlohmann::json& status);

}  // namespace cloneset::devcluster::nodes
