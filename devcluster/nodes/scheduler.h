// The simulated kube-scheduler's decisions: which Ready node a pending pod goes to. Pure functions over a
// compact node view the simulator keeps up to date from watch events (no listing per decision).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cloneset::devcluster::nodes {

// What a pod asks for, summed over its containers (init containers: the max, as Kubernetes does).
struct PodRequest {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  // Scoring uses Kubernetes' non-zero defaults (100m, 200Mi) so pods without requests still spread.
  int64_t score_cpu_milli = 0;
  int64_t score_memory_bytes = 0;
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::vector<std::string> claims;  // spec.volumes[].persistentVolumeClaim.claimName, in volume order
};
// Unparseable quantities count as zero: the API server validates them; the scheduler must not crash on them.
PodRequest RequestOf(const nlohmann::json& pod);

struct NodeSlot {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by key
  int64_t alloc_cpu_milli = 0;
  int64_t alloc_memory_bytes = 0;
  int64_t alloc_pods = 0;
  int64_t req_cpu_milli = 0;
  int64_t req_memory_bytes = 0;
  int64_t score_cpu_milli = 0;
  int64_t score_memory_bytes = 0;
  int64_t pods = 0;
  bool ready = true;
  bool unschedulable = false;

  void Add(const PodRequest& r, int sign) {
    req_cpu_milli += sign * r.cpu_milli;
    req_memory_bytes += sign * r.memory_bytes;
    score_cpu_milli += sign * r.score_cpu_milli;
    score_memory_bytes += sign * r.score_memory_bytes;
    pods += sign;
  }
};

struct Placement {
  std::optional<size_t> node;  // index into the slots
  std::string message;         // why not, in kube-scheduler's words ("0/3 nodes are available: ...")
};

// Least allocated after placement (mean of cpu and memory fractions), then fewest pods, then name.
Placement PickNode(const PodRequest& request, const std::vector<NodeSlot>& nodes);

// kube-scheduler's VolumeBinding plugin over the claims a pod mounts, in volume order (`claim` returns the stored
// claim by name, nullopt when there is none; `classes` are the StorageClasses):
//  - a claim that does not exist or is being deleted makes the pod unschedulable on every node
//    ("0/3 nodes are available: persistentvolumeclaim \"data-web-0\" not found. not found");
//  - an unbound claim of an Immediate class (or of no class) too: its pod stays Pending until it is Bound
//    ("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found");
//  - an unbound WaitForFirstConsumer claim that nothing provisions finds no volume on any node
//    ("0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. no new claims to
//    deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
//  The messages are kube-scheduler 1.34's, word for word.
//  - an unbound WaitForFirstConsumer claim that a provisioner serves is listed in `awaiting_node`: the scheduler
//    picks the pod's node, records it on the claim (kSelectedNodeAnnotation) and binds the pod once the claim is
//    Bound.
struct ClaimsVerdict {
  std::optional<std::string> unschedulable;  // the first failing claim's message
  std::vector<std::string> awaiting_node;
};
ClaimsVerdict CheckClaims(const std::vector<std::string>& claims, size_t nodes,
                          const std::function<std::optional<nlohmann::json>(const std::string&)>& claim,
                          const std::vector<nlohmann::json>& classes);

// Writes the binding into `pod` (spec.nodeName + PodScheduled True). Returns false when nothing changed.
bool ApplyBinding(nlohmann::json& pod, const std::string& node, const std::string& now_rfc3339);
// Records PodScheduled False/Unschedulable with `message`. Returns false when nothing changed.
bool ApplyUnschedulable(nlohmann::json& pod, const std::string& message, const std::string& now_rfc3339);

// Sets (or replaces) a pod condition; lastTransitionTime changes only when status changes. Returns changed.
bool SetPodCondition(nlohmann::json& status, const std::string& type, const std::string& value,
                     const std::string& reason, const std::string& message, const std::string& now_rfc3339);

}  // namespace cloneset::devcluster::nodes
