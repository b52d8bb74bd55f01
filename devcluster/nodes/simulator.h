// The embedded cluster's simulated nodes (like kwok): N Node objects, a scheduler, one kubelet simulator per
// node, a PVC binder/provisioner, and a simulated CRI image service per node on a unix socket.
//
// One thread drives everything: it reacts to watch events on pods, nodes, PVCs and StorageClasses, computes
// the next actions with the pure functions in scheduler.h, kubelet.h and pvc_binder.h, writes them through the
// Store, and sleeps until the earliest pending deadline on the injected Clock (a FakeClock makes tests
// deterministic: advance it and the simulator catches up). Per-pod memory is a few dozen bytes plus a small
// progress record while a pod is in transition, so 1 000 nodes and 100 000 pods fit comfortably.
//
// Flags (defined in simulator_flags.cc; SimulatorConfigFromFlags reads them):
//   --nodes=3                       simulated nodes devcluster-node-0..N-1
//   --node-cpu=8 --node-memory=32Gi --node-pods=110   capacity (= allocatable) of each node
//   --pod-start-delay=500ms         image available -> container running
//   --pod-ready-delay=500ms         container running -> ready
//   --pod-max-grace=2s              a deleted pod stays Terminating for min(its grace period, this)
//   --image-pull-time=<regex>=<duration>,...   pull time per image (unanchored regex), first match wins
//   --default-image-pull-time=0s    pull time of other images (0: present at once on first use)
//   --fault-image-pull-failure=<regex>  pulls of matching images fail (ErrImagePull / ImagePullBackOff)
//   --fault-node-not-ready=<regex>  matching nodes go NotReady (also: node annotation
//                                   devcluster.cloneset.io/fault=not-ready)
//   --node-heartbeat-interval=60s   Ready condition heartbeat period (0: never)
//   --cri-socket-nodes=64           only the first N nodes serve a CRI socket (each is a gRPC server)
//   --preloaded-images=<a,b>        images every node has from the start
//   --pod-events=true               write Events like kubelet and the scheduler (see events.h)
//   --max-events=20000              most Event objects kept (the oldest the simulator wrote go first)
//   --default-storage-class=standard  the default StorageClass created at start when missing ("" = none)
// Pod faults by annotation devcluster.cloneset.io/fault: image-pull-failure | crash-loop | never-ready |
// slow-start=5s | resize-deferred | resize-infeasible
// (comma-separated).
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/clock.h"
#include "devcluster/nodes/images.h"
#include "devcluster/nodes/kubelet.h"
#include "devcluster/nodes/node_model.h"
#include "devcluster/store.h"

namespace prometheus {
class Registry;
}

namespace cloneset::devcluster::nodes {

struct SimulatorConfig {
  int nodes = 3;
  NodeShape shape;
  KubeletTiming timing;
  ImagePolicy images;
  std::optional<std::regex> not_ready_nodes;
  Duration heartbeat_interval = std::chrono::seconds(60);
  // CRI sockets live at <run_dir>/nodes/<node>/cri.sock; empty run_dir = no sockets.
  std::string run_dir;
  int cri_socket_nodes = 64;
  std::vector<std::string> preloaded_images;
  // The default StorageClass created at start when missing (pvc_binder.h DefaultStorageClassObject); "" = none,
  // and then a claim that names no class stays Pending, as on a cluster without a default class.
  std::string default_storage_class = "standard";
  bool pod_events = true;     // Events for scheduling and container lifecycle (events.h)
  size_t max_events = 20000;  // bound on the Event objects the simulator keeps
  prometheus::Registry* registry = nullptr;  // devcluster_cri_* and devcluster_sim_* metrics; may be null
  // Upper bound on how long the loop waits before re-reading the clock (a FakeClock does not wake it).
  std::chrono::milliseconds poll_interval{10};
};

// Reads the flags above. Errors name the flag.
absl::StatusOr<SimulatorConfig> SimulatorConfigFromFlags();

struct SimulatorStats {
  uint64_t bindings = 0;
  uint64_t unschedulable = 0;
  uint64_t pod_status_writes = 0;
  uint64_t pod_removals = 0;
  uint64_t volumes_provisioned = 0;
  uint64_t conflicts = 0;  // writes retried after a concurrent change
  uint64_t write_errors = 0;
};

class NodeSimulator {
 public:
  NodeSimulator(Store* store, base::Clock* clock, SimulatorConfig config);
  ~NodeSimulator();
  NodeSimulator(const NodeSimulator&) = delete;
  NodeSimulator& operator=(const NodeSimulator&) = delete;

  // Creates (or adopts) the Node objects, starts the CRI sockets and the simulation thread.
  absl::Status Start();
  // Stops the thread and the CRI servers. Idempotent.
  void Stop();

  // The node's simulated runtime (null for unknown nodes): tests preload images or read pull counters.
  ImageStore* Images(const std::string& node);
  // The CRI socket path of a node, or "" when it has none.
  std::string CriSocket(const std::string& node) const;
  SimulatorStats Stats() const;
  // For tests: blocks (in real time, at most `timeout`) until the simulation thread has run a whole pass that began
  // after this call and found nothing to do (no event, no timer due, no pod or claim to evaluate, no store write).
  // A test that wrote an object or advanced the FakeClock then knows the simulator has acted on it, or did nothing,
  // without sleeping. False on timeout or once stopped.
  bool AwaitIdle(absl::Duration timeout);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Convenience for the devcluster main: builds and starts a simulator.
absl::StatusOr<std::unique_ptr<NodeSimulator>> StartNodeSimulator(Store& store, base::Clock& clock,
                                                                  const SimulatorConfig& config);

}  // namespace cloneset::devcluster::nodes
