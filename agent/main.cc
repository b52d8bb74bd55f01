// cloneset-agent: the per-node daemon. Serves this node's image pre-download requests through the CRI socket
// and reports finished in-place updates of this node's pods. Flags and metrics: notes/contract (docs/deployment.md).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/cri_client.h"
#include "agent/node_api.h"
#include "agent/pull_manager.h"
#include "agent/readiness_reporter.h"
#include "imagepull/types.h"
#include "kube/endpoints.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/rest_client.h"
#include "nlohmann/json.hpp"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "tools/cli/help.h"

ABSL_FLAG(std::string, node_name, "", "This node's name (required; downward API spec.nodeName)");
ABSL_FLAG(std::string, cri_socket, "unix:///run/containerd/containerd.sock", "CRI endpoint of the node's runtime");
ABSL_FLAG(std::string, kubeconfig, "", "kubeconfig file; empty: $KUBECONFIG, ~/.kube/config, then in-cluster");
ABSL_FLAG(int32_t, max_concurrent_pulls, 2, "Pulls running at once on this node, over all jobs (>= 1)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9465", "Prometheus /metrics address (port 0 = any)");
ABSL_FLAG(std::string, health_listen, "127.0.0.1:9466", "/healthz address (port 0 = any)");
ABSL_FLAG(bool, report_readiness, true, "Report finished in-place updates of this node's pods (InPlaceUpdateReady)");

namespace cloneset::agent {
namespace {

void Log(const std::string& level, const std::string& msg, nlohmann::json fields = nlohmann::json::object()) {
  fields["ts"] = absl::FormatTime(absl::RFC3339_full, absl::Now(), absl::UTCTimeZone());
  fields["level"] = level;
  fields["msg"] = msg;
  fields["component"] = "cloneset-agent";
  std::cerr << fields.dump() << std::endl;
}

int Run() {
  const std::string node = absl::GetFlag(FLAGS_node_name);
  if (node.empty()) {
    Log("error", "--node_name is required");
    return 2;
  }
  const int max_pulls = absl::GetFlag(FLAGS_max_concurrent_pulls);
  if (max_pulls < 1) {
    Log("error", "--max_concurrent_pulls must be at least 1", {{"value", max_pulls}});
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto registry = std::make_shared<prometheus::Registry>();
  auto config = kube::LoadClientConfig(kube::ConfigSources::FromEnvironment(absl::GetFlag(FLAGS_kubeconfig)));
  if (!config.ok()) {
    Log("error", "kubeconfig", {{"error", config.status().ToString()}});
    return 1;
  }
  kube::RestClientOptions rest_opts;
  rest_opts.registry = registry.get();
  rest_opts.user_agent = "cloneset-agent/" + node;
  auto client = kube::NewHttpRestClient(*config, rest_opts);
  if (!client.ok()) {
    Log("error", "API client", {{"error", client.status().ToString()}});
    return 1;
  }

  auto exposer = kube::ServeMetrics(absl::GetFlag(FLAGS_metrics_listen), registry);
  if (!exposer.ok()) {
    Log("error", "cannot serve metrics", {{"flag", "metrics_listen"}, {"error", exposer.status().ToString()}});
    return 1;
  }

  std::atomic<bool> stopping{false};
  auto health = kube::HealthServer::Start(absl::GetFlag(FLAGS_health_listen),
                                          [&] { return stopping ? std::string("shutting down") : ""; });
  if (!health.ok()) {
    Log("error", "cannot serve /healthz", {{"flag", "health_listen"}, {"error", health.status().ToString()}});
    return absl::IsInvalidArgument(health.status()) ? 2 : 1;
  }

  kube::EventRecorder recorder(**client, {.component = "cloneset-agent", .host = node});
  std::unique_ptr<ImageService> cri = NewCriImageService(absl::GetFlag(FLAGS_cri_socket));
  RestNodeImageApi node_api(**client, node);
  PullManager pulls(node_api, *cri, {.max_concurrent = max_pulls, .registry = registry.get()});
  // Our own NodeImage only (fieldSelector metadata.name): a change wakes the pull manager at once.
  kube::Informer<imagepull::NodeImage> node_images(
      **client,
      {.path = absl::StrCat(imagepull::kApiPrefix, "/nodeimages"), .field_selector = "metadata.name=" + node,
       .backoff_max = absl::Seconds(10)},
      imagepull::ParseNodeImage,
      {.on_add = [&](const auto&) { pulls.Notify(); }, .on_update = [&](const auto&, const auto&) { pulls.Notify(); },
       .on_delete = nullptr});
  ReadinessReporter readiness(**client, {.node = node, .events = &recorder, .registry = registry.get()});

  pulls.Start();
  pulls.Notify();
  node_images.Start();
  if (absl::GetFlag(FLAGS_report_readiness)) readiness.Start();
  Log("info", "started", {{"node", node}, {"cri_socket", absl::GetFlag(FLAGS_cri_socket)}, {"max_concurrent_pulls", max_pulls}});

  int sig = 0;
  sigwait(&signals, &sig);
  Log("info", "shutting down", {{"signal", sig}});
  stopping = true;
  readiness.Stop();
  node_images.Stop();
  pulls.Stop();  // running pulls are abandoned unreported; a restarted agent re-runs them (ImageStatus first)
  (*health)->Stop();
  Log("info", "stopped");
  return 0;
}

}  // namespace
}  // namespace cloneset::agent

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("cloneset-agent --node_name=<node> [--cri_socket=unix:///...] [--kubeconfig=...]");
  if (cloneset::cli::PrintHelpIfAsked(argc, argv, absl::ProgramUsageMessage())) return 0;
  absl::ParseCommandLine(argc, argv);
  return cloneset::agent::Run();
}
