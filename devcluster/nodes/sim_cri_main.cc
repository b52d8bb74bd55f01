// cloneset-sim-cri: the embedded cluster's simulated container runtime (CriServer over an ImageStore, the same
// code each simulated node of cloneset-devcluster serves) on its own, for nodes that have no runtime of ours:
// the kwok nodes of `./run up --cluster real` (tools/run.d/up.sh), so that a cloneset-agent runs per kwok node
// and pre-downloads images through CRI. One process serves one socket per node, <socket_dir>/<node>/cri.sock.
// The runtime only pulls into its image store: kwok, not this runtime, plays the kubelet of those nodes.
#include <sys/un.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/signals.h"
#include "devcluster/nodes/cri_server.h"
#include "devcluster/nodes/images.h"

ABSL_FLAG(std::string, socket_dir, "", "Directory of the sockets: <socket_dir>/<node>/cri.sock (required)");
ABSL_FLAG(std::string, nodes, "", "Comma-separated node names, one CRI socket each (required)");
ABSL_FLAG(std::string, image_pull_time, "",
          "Pull time per image: 'regex=duration,...' (first match wins, unanchored), as cloneset-devcluster's flag");
ABSL_FLAG(absl::Duration, default_image_pull_time, absl::ZeroDuration(),
          "Pull time of images no --image_pull_time rule matches");

namespace {

using cloneset::base::RealClock;
namespace nodes = cloneset::devcluster::nodes;

absl::Status Run(const cloneset::base::StopSignals& signals) {
  const std::string dir = absl::GetFlag(FLAGS_socket_dir);
  if (dir.empty()) return absl::InvalidArgumentError("--socket_dir: required");
  std::vector<std::string> names = absl::StrSplit(absl::GetFlag(FLAGS_nodes), ',', absl::SkipWhitespace());
  if (names.empty()) return absl::InvalidArgumentError("--nodes: required (comma-separated node names)");
  for (const std::string& n : names) {
    if (n.find('/') != std::string::npos || n == "." || n == "..") {
      return absl::InvalidArgumentError(absl::StrCat("--nodes: \"", n, "\" is not a node name"));
    }
    // Checked here too (CriServer::Start refuses it) to name this program's flag.
    const std::string path = absl::StrCat(dir, "/", n, "/cri.sock");
    if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return absl::InvalidArgumentError(absl::StrCat("--socket_dir: the socket path \"", path, "\" is longer than ",
                                                     sizeof(sockaddr_un{}.sun_path) - 1,
                                                     " bytes (unix socket limit); use a shorter directory"));
    }
  }
  absl::Duration default_pull = absl::GetFlag(FLAGS_default_image_pull_time);
  if (default_pull < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--default_image_pull_time: must not be negative");
  }
  nodes::ImagePolicy policy;
  auto rules = nodes::ParsePullTimeRules(absl::GetFlag(FLAGS_image_pull_time), "image_pull_time");
  if (!rules.ok()) return rules.status();
  policy.pull_times = std::move(*rules);
  policy.default_pull_time = absl::ToChronoNanoseconds(default_pull);

  nodes::CriMetrics metrics(nullptr);
  std::vector<std::unique_ptr<nodes::ImageStore>> stores;
  std::vector<std::unique_ptr<nodes::CriServer>> servers;
  for (const std::string& n : names) {
    stores.push_back(std::make_unique<nodes::ImageStore>(n, &policy, &metrics));
    auto server = nodes::CriServer::Start(absl::StrCat(dir, "/", n, "/cri.sock"), stores.back().get(),
                                          &RealClock::Get());
    if (!server.ok()) return server.status();
    std::cout << "node " << n << " CRI on unix://" << (*server)->socket_path() << std::endl;
    servers.push_back(std::move(*server));
  }
  std::cout << "serving " << servers.size() << " CRI sockets" << std::endl;
  signals.Wait();
  for (auto& s : servers) s->Stop();  // removes the socket files
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("cloneset-sim-cri --socket_dir=DIR --nodes=node-a,node-b [--default_image_pull_time=2s]");
  absl::ParseCommandLine(argc, argv);
  // Termination signals are blocked before gRPC starts its threads; Run waits for them.
  const cloneset::base::StopSignals signals = cloneset::base::StopSignals::Block();
  if (absl::Status s = Run(signals); !s.ok()) {
    std::cerr << "cloneset-sim-cri: " << s.message() << std::endl;
    return 2;
  }
  return 0;
}
