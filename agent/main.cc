// cloneset-agent: the per-node daemon. Serves this node's image pre-download requests through the CRI socket
// and reports finished in-place updates of this node's pods. Flags and metrics: notes/contract (docs/deployment.md).
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/daemon_main.h"
#include "base/endpoints.h"
#include "base/log.h"
#include "base/signals.h"
#include "agent/cri_client.h"
#include "agent/node_api.h"
#include "agent/pull_manager.h"
#include "agent/readiness_gate_reporter.h"
#include "imagepull/types.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/rest_client.h"
#include "prometheus/registry.h"

ABSL_FLAG(std::string, node_name, "", "This node's name (required; downward API spec.nodeName)");
ABSL_FLAG(std::string, cri_socket, "unix:///run/containerd/containerd.sock", "CRI endpoint of the node's runtime");
ABSL_FLAG(std::string, kubeconfig, "", "kubeconfig file; empty: $KUBECONFIG, ~/.kube/config, then in-cluster");
ABSL_FLAG(int32_t, max_concurrent_pulls, 2, "Pulls running at once on this node, over all jobs (>= 1)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9465",
          "Prometheus /metrics address (port 0 = any); it answers /healthz too. Empty: the --health_listen address "
          "serves /metrics");
ABSL_FLAG(std::string, health_listen, "127.0.0.1:9466",
          "/healthz address (port 0 = any); it answers /metrics too, and the same address as --metrics_listen is "
          "one listener. Empty: the --metrics_listen address serves /healthz");
ABSL_FLAG(bool, report_readiness, true, "Report finished in-place updates of this node's pods (InPlaceUpdateReady); false also turns off "
          "--restart_env_containers (both follow the same watch of this node's pods)");
ABSL_FLAG(bool, restart_env_containers, true,
          "Restart (stop through CRI; the kubelet starts it again) a container whose env reads pod metadata that an "
          "in-place update changed: a kubelet restarts nothing for a metadata change");
ABSL_FLAG(absl::Duration, restart_stop_timeout, absl::Seconds(30),
          "SIGTERM to SIGKILL when stopping such a container (the pods' terminationGracePeriodSeconds)");
ABSL_FLAG(absl::Duration, restart_env_delay, absl::Seconds(2),
          "How long after seeing the new pod metadata such a container is stopped: the kubelet must have it too, "
          "or it starts the container again with the old values");

namespace cloneset::agent {
namespace {

absl::Status Run(const base::Daemon& daemon) {
  base::JsonLogger& log = daemon.log();
  const std::string node = absl::GetFlag(FLAGS_node_name);
  if (node.empty()) return absl::InvalidArgumentError("--node_name is required");
  const int max_pulls = absl::GetFlag(FLAGS_max_concurrent_pulls);
  if (max_pulls < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max_concurrent_pulls must be at least 1, got ", max_pulls));
  }

  auto registry = std::make_shared<prometheus::Registry>();
  auto config = kube::LoadClientConfig(kube::ConfigSources::FromEnvironment(absl::GetFlag(FLAGS_kubeconfig)));
  if (!config.ok()) return base::StartupError("no cluster configuration (--kubeconfig)", config.status());
  kube::RestClientOptions rest_opts;
  rest_opts.registry = registry.get();
  rest_opts.user_agent = "cloneset-agent/" + node;
  auto client = kube::NewHttpRestClient(*config, rest_opts);
  if (!client.ok()) return base::StartupError("cannot create API client", client.status());

  std::atomic<bool> stopping{false};
  auto endpoints = base::ServeDaemonEndpoints(absl::GetFlag(FLAGS_metrics_listen), absl::GetFlag(FLAGS_health_listen),
                                              registry, [&] { return stopping ? std::string("shutting down") : ""; });
  if (!endpoints.ok()) return endpoints.status();

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
  std::unique_ptr<ContainerRuntime> runtime;
  if (absl::GetFlag(FLAGS_restart_env_containers)) runtime = NewCriRuntimeService(absl::GetFlag(FLAGS_cri_socket));
  if (absl::GetFlag(FLAGS_restart_stop_timeout) < absl::ZeroDuration() ||
      absl::GetFlag(FLAGS_restart_env_delay) < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--restart_stop_timeout and --restart_env_delay must not be negative");
  }
  ReadinessReporter readiness(**client, {.node = node,
                                         .events = &recorder,
                                         .registry = registry.get(),
                                         .runtime = runtime.get(),
                                         .stop_timeout = absl::GetFlag(FLAGS_restart_stop_timeout),
                                         .restart_delay = absl::GetFlag(FLAGS_restart_env_delay)});

  pulls.Start();
  pulls.Notify();
  node_images.Start();
  if (absl::GetFlag(FLAGS_report_readiness)) readiness.Start();
  log.Info("started", {{"node", node}, {"cri_socket", absl::GetFlag(FLAGS_cri_socket)},
                       {"max_concurrent_pulls", int64_t{max_pulls}}});

  const std::unique_ptr<base::ShutdownDeadline> deadline = daemon.WaitForStop();
  stopping = true;
  readiness.Stop();
  node_images.Stop();
  pulls.Stop();  // running pulls are abandoned unreported; a restarted agent re-runs them (ImageStatus first)
  (*endpoints)->Stop();
  deadline->Disarm();
  log.Info("stopped");
  return absl::OkStatus();
}

}  // namespace
}  // namespace cloneset::agent

int main(int argc, char** argv) {
  cloneset::base::DaemonSpec spec;
  spec.usage = "cloneset-agent --node_name=<node> [--cri_socket=unix:///...] [--kubeconfig=...]";
  spec.flag_dirs = {"agent/"};
  spec.log.component = "cloneset-agent";
  // The DaemonSet's terminationGracePeriodSeconds.
  spec.shutdown_grace = absl::Seconds(30);
  return cloneset::base::DaemonMain(argc, argv, spec, cloneset::agent::Run);
}
