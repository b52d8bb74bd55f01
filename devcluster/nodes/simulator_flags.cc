// Command-line flags of the node simulator; the devcluster binary links them and calls
// SimulatorConfigFromFlags(). Documented in simulator.h and by --help.
#include <regex>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "devcluster/nodes/simulator.h"

ABSL_FLAG(int, nodes, 3, "Number of simulated nodes (devcluster-node-0..N-1)");
ABSL_FLAG(std::string, node_cpu, "8", "CPU capacity (= allocatable) of each simulated node, a quantity");
ABSL_FLAG(std::string, node_memory, "32Gi", "Memory capacity (= allocatable) of each simulated node, a quantity");
ABSL_FLAG(std::string, node_pods, "110", "Pod capacity of each simulated node");
ABSL_FLAG(absl::Duration, pod_start_delay, absl::Milliseconds(500),
          "Simulated time from image available to container running");
ABSL_FLAG(absl::Duration, pod_ready_delay, absl::Milliseconds(500),
          "Simulated time from container running to container ready");
ABSL_FLAG(absl::Duration, pod_max_grace, absl::Seconds(2),
          "A deleted pod stays Terminating for min(its grace period, this) before it is removed");
ABSL_FLAG(std::string, image_pull_time, "",
          "Pull time per image: comma-separated <regex>=<duration> (regex unanchored, first match wins), "
          "e.g. 'nginx:1\\.2[56]=2s,big-model=1m'");
ABSL_FLAG(absl::Duration, default_image_pull_time, absl::ZeroDuration(),
          "Pull time of images no --image-pull-time rule matches");
ABSL_FLAG(std::string, fault_image_pull_failure, "",
          "Regex (unanchored): pulls of matching images fail (pods show ErrImagePull / ImagePullBackOff)");
ABSL_FLAG(std::string, fault_node_not_ready, "",
          "Regex (full match on the node name): matching nodes go NotReady. Also per node with the annotation "
          "devcluster.cloneset.io/fault=not-ready");
ABSL_FLAG(absl::Duration, node_heartbeat_interval, absl::Seconds(60),
          "How often simulated kubelets refresh their Ready condition (0 = never)");
ABSL_FLAG(int, cri_socket_nodes, 64,
          "Only the first N simulated nodes serve a CRI socket at <run-dir>/nodes/<node>/cri.sock "
          "(each socket is a gRPC server)");
ABSL_FLAG(std::string, preloaded_images, "", "Comma-separated images every simulated node has from the start");
ABSL_FLAG(bool, pod_events, true,
          "Write Kubernetes Events for what the simulated scheduler and kubelets do (Scheduled, Pulling, Pulled, "
          "Created, Started, Killing, BackOff, Failed, FailedScheduling); repeats are aggregated by count");
ABSL_FLAG(int, max_events, 20000,
          "Most Event objects the simulator keeps; beyond it the oldest it wrote are deleted");
ABSL_FLAG(std::string, default_storage_class, "standard",
          "Name of the default StorageClass (WaitForFirstConsumer, simulated provisioner) created at start when "
          "missing, so that claims naming no class get bound; empty: none (such claims and their pods stay Pending)");

namespace cloneset::devcluster::nodes {

absl::StatusOr<SimulatorConfig> SimulatorConfigFromFlags() {
  SimulatorConfig c;
  c.nodes = absl::GetFlag(FLAGS_nodes);
  if (c.nodes < 0) return absl::InvalidArgumentError("--nodes must not be negative");
  c.shape.cpu = absl::GetFlag(FLAGS_node_cpu);
  c.shape.memory = absl::GetFlag(FLAGS_node_memory);
  c.shape.pods = absl::GetFlag(FLAGS_node_pods);
  struct D {
    const char* flag;
    absl::Duration value;
    Duration* out;
  };
  for (const D& d : {D{"pod-start-delay", absl::GetFlag(FLAGS_pod_start_delay), &c.timing.start_delay},
                     D{"pod-ready-delay", absl::GetFlag(FLAGS_pod_ready_delay), &c.timing.ready_delay},
                     D{"pod-max-grace", absl::GetFlag(FLAGS_pod_max_grace), &c.timing.max_grace},
                     D{"default-image-pull-time", absl::GetFlag(FLAGS_default_image_pull_time),
                       &c.images.default_pull_time},
                     D{"node-heartbeat-interval", absl::GetFlag(FLAGS_node_heartbeat_interval),
                       &c.heartbeat_interval}}) {
    if (d.value < absl::ZeroDuration()) return absl::InvalidArgumentError(absl::StrCat("--", d.flag, " must not be negative"));
    *d.out = absl::ToChronoNanoseconds(d.value);
  }
  auto rules = ParsePullTimeRules(absl::GetFlag(FLAGS_image_pull_time), "image-pull-time");
  if (!rules.ok()) return rules.status();
  c.images.pull_times = std::move(*rules);
  try {
    if (std::string f = absl::GetFlag(FLAGS_fault_image_pull_failure); !f.empty()) {
      c.images.fail_pulls = std::regex(f);
      c.images.fail_pattern = f;
    }
    if (std::string f = absl::GetFlag(FLAGS_fault_node_not_ready); !f.empty()) c.not_ready_nodes = std::regex(f);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("--fault-image-pull-failure / --fault-node-not-ready: bad regex: ",
                                                   e.what()));
  }
  c.cri_socket_nodes = absl::GetFlag(FLAGS_cri_socket_nodes);
  c.pod_events = absl::GetFlag(FLAGS_pod_events);
  c.default_storage_class = absl::GetFlag(FLAGS_default_storage_class);
  if (absl::GetFlag(FLAGS_max_events) < 1) return absl::InvalidArgumentError("--max-events must be at least 1");
  c.max_events = static_cast<size_t>(absl::GetFlag(FLAGS_max_events));
  for (absl::string_view image : absl::StrSplit(absl::GetFlag(FLAGS_preloaded_images), ',', absl::SkipWhitespace())) {
    c.preloaded_images.emplace_back(absl::StripAsciiWhitespace(image));
  }
  return c;
}

}  // namespace cloneset::devcluster::nodes
