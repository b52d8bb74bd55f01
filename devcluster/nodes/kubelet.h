// The kubelet simulator's decisions for one pod on one node: given the pod as stored, the little in-memory
// progress the simulator keeps for pods in transition, the node and the image store, compute the pod status
// the kubelet would report now, whether the pod should be removed, and when to look again. Pure apart from the
// injected image puller (which starts pulls in the node's simulated runtime).
//
// Lifecycle: accepted (startTime, hostIP, podIP, Initialized) -> image pull (fast when present) -> container
// running after start delay -> ready after ready delay -> pod Ready when every container is ready and every
// readiness gate's condition is True (a missing gate condition means not ready, as in Kubernetes).
// A container whose spec image changes is restarted in place: restartCount + 1, lastState terminated, new
// imageID; the other containers are untouched; ContainersReady/Ready go False until it is ready again. A container
// whose spec cpu/memory changes (pods/resize) is resized in place as resize.h says.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devcluster/nodes/images.h"
#include "devcluster/nodes/resize.h"

namespace cloneset::devcluster::nodes {

inline constexpr char kFaultAnnotation[] = "devcluster.cloneset.io/fault";

struct KubeletTiming {
  Duration start_delay = std::chrono::milliseconds(500);  // image available -> container running
  Duration ready_delay = std::chrono::milliseconds(500);  // running -> ready
  Duration max_grace = std::chrono::seconds(2);           // cap on the graceful-deletion wait
  Duration crash_run = std::chrono::seconds(1);           // crash-loop: how long each attempt runs
  Duration crash_backoff = std::chrono::seconds(10);      // crash-loop / pull retry backoff base (doubles)
  Duration crash_backoff_max = std::chrono::seconds(300);
  ResizeTiming resize{};  // in-place resize (resize.h)
};

// Faults from the pod annotation `devcluster.cloneset.io/fault`: comma-separated
// "image-pull-failure", "crash-loop", "never-ready", "slow-start=<duration>", "resize-deferred",
// "resize-infeasible".
struct PodFaults {
  bool image_pull_failure = false;
  bool crash_loop = false;
  bool never_ready = false;  // every container started runs but never passes its readiness probe
  Duration slow_start{};
  ResizeFault resize{};  // an in-place resize is held back: "Deferred" or "Infeasible"
  std::string error;  // unparseable annotation entries (reported as a pod event-like message, ignored)
};
PodFaults ParsePodFaults(const nlohmann::json& pod);

struct ContainerProgress {
  std::string name;
  std::string image;  // the spec image this attempt runs
  std::string image_id;
  TimePoint pull_ready_at{};  // image usable
  TimePoint running_at{};
  TimePoint ready_at{};
  int restarts = 0;
  std::string pull_error;  // non-empty: pull failed; retried at retry_at
  TimePoint retry_at{};
  int pull_attempts = 0;
  bool never_ready = false;  // this attempt runs but never becomes ready (decided when it started)
  nlohmann::json last_state;  // lastState after an in-place restart
  // The container an in-place restart replaces. Until the new one runs, its status still shows the old image and
  // imageID, as a real kubelet's does (the latest container of that name in the runtime is the old one); an
  // empty imageID there would make a controller take the update as done before the new image is even pulled.
  std::string previous_image;
  std::string previous_image_id;
};

// Per-pod memory kept only while the pod is in transition (dropped when it is steady).
struct PodProgress {
  std::vector<ContainerProgress> containers;
  std::optional<TimePoint> terminating_since;
};

struct NodeContext {
  std::string name;
  std::string host_ip;
  bool ready = true;
  ResizeNode resize{};  // the node's allocatable and what its other pods request, for in-place resizes
};

using ImagePuller = std::function<ImageView(const std::string& image)>;
// Asked once for each container the decision starts (a new pod's, or one an image change restarts): true when that
// attempt is to run but never become ready, as a readiness probe that never passes. The pod's "never-ready" fault
// answers true without asking.
using NeverReadyDraw = std::function<bool(const std::string& container)>;

struct KubeletDecision {
  std::optional<nlohmann::json> status;  // the new .status when it differs from the stored one
  bool remove = false;                   // grace period over (or nothing to wait for): delete for real
  std::optional<TimePoint> wake_at;      // earliest future moment the decision may change
  bool keep_progress = false;            // false: the pod is steady, forget its progress
  bool resize_accepted = false;          // the status admits new requests: the node's accounting follows the spec
};

// `pod_ip`: the address the simulator allocated for this pod on the node.
KubeletDecision DecidePod(const nlohmann::json& pod, PodProgress& progress, const NodeContext& node,
                          const std::string& pod_ip, const KubeletTiming& timing, TimePoint now,
                          const ImagePuller& pull, const NeverReadyDraw& never_ready = nullptr);

}  // namespace cloneset::devcluster::nodes
