// cloneset-planner: the stateless planning service (gRPC) with Prometheus /metrics on its own port.
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/daemon_main.h"
#include "base/endpoints.h"
#include "base/log.h"
#include "base/signals.h"
#include "planner/service/conversion_server.h"
#include "planner/service/default_functions.h"
#include "planner/service/idle_memory.h"
#include "planner/service/metrics.h"
#include "planner/service/planner_service.h"
#include "planner/service/server.h"
#include "prometheus/registry.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "gRPC listen address host:port; port 0 picks a free port. The bound address is printed on stdout as "
          "\"listening on <addr>\".");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics listen address host:port; port 0 picks a free port (printed as \"metrics listening "
          "on <addr>\"). Empty disables the metrics endpoint.");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (chain); enables TLS together with --tls_key.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle; when set, clients must present a certificate signed by it (mutual TLS).");
ABSL_FLAG(std::string, conversion_listen, "",
          "HTTPS listen address host:port of the CloneSet CRD's conversion webhook (POST /convert, a "
          "ConversionReview); port 0 picks a free port (printed as \"conversion webhook listening on "
          "https://<addr>\"). Empty disables it. Needs --conversion_tls_cert and --conversion_tls_key.");
ABSL_FLAG(std::string, conversion_tls_cert, "",
          "PEM serving certificate (chain) of the conversion webhook, re-read when it changes.");
ABSL_FLAG(std::string, conversion_tls_key, "", "PEM private key of --conversion_tls_cert.");
ABSL_FLAG(int64_t, max_request_bytes, 64 << 20,
          "Largest accepted request in bytes; bigger requests fail with RESOURCE_EXHAUSTED.");
// The planner's spelling before --shutdown_grace (base/daemon_main.h), kept for existing command lines.
ABSL_FLAG(std::optional<int32_t>, shutdown_grace_seconds, std::nullopt,
          "Deprecated: use --shutdown_grace (a duration: 5s). Whole seconds of the grace period; when given with "
          "--shutdown_grace, both must agree.");
ABSL_FLAG(int32_t, release_memory_idle_seconds, 30,
          "Give freed memory back to the OS after this many seconds without a call (0: never). Between calls the "
          "allocator keeps it, so large plans do not fault their pages in again.");

// jemalloc's options, read at start-up (MALLOC_CONF in the environment overrides them): no time-based page
// purging, because re-faulting the pages of a 10^5-pod plan on every call doubled its cost; the idle release
// below returns the memory instead (docs/performance.md "The pod table").
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}

namespace cloneset::planner::service {
namespace {

// The planner's default --shutdown_grace: how long calls in flight may run before they are cancelled.
constexpr absl::Duration kShutdownGrace = absl::Seconds(5);

absl::Status Run(const base::Daemon& daemon) {
  JsonLogger& log = daemon.log();

  auto registry = std::make_shared<prometheus::Registry>();
  ServiceMetrics metrics(*registry);
  PlannerService service(DefaultPlannerFunctions(), &metrics, &log);
  ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  auto running = StartServer(options, &service);
  if (!running.ok()) {
    return absl::Status(running.status().code(),
                        absl::StrCat("cannot start gRPC server: ", running.status().message()));
  }
  std::cout << "listening on " << running->address << std::endl;
  log.Info("listening", {{"address", running->address},
                         {"tls", !options.tls_cert.empty()},
                         {"mtls", !options.tls_client_ca.empty()},
                         {"max_request_bytes", options.max_request_bytes}});

  std::unique_ptr<base::EndpointServer> metrics_server;
  const std::string metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  if (!metrics_listen.empty()) {
    // /metrics only: the planner answers the gRPC health service instead of /healthz and /readyz.
    auto served = base::EndpointServer::Start(
        {.listen = {metrics_listen}, .registry = registry, .healthz = nullptr, .readyz = nullptr});
    if (!served.ok()) {
      running->server->Shutdown();
      return absl::Status(served.status().code(), absl::StrCat("cannot serve metrics (--metrics_listen=",
                                                               metrics_listen, "): ", served.status().message()));
    }
    metrics_server = *std::move(served);
    // Announced on stdout in the planner's own words, which its clients read.
    const std::string bound = WithPort(metrics_listen, metrics_server->port(0));
    std::cout << "metrics listening on " << bound << std::endl;
    log.Info("metrics listening", {{"address", bound}});
  }

  std::unique_ptr<ConversionServer> conversion;
  if (const std::string listen = absl::GetFlag(FLAGS_conversion_listen); !listen.empty()) {
    ConversionServerOptions copts;
    copts.listen = listen;
    copts.tls_cert = absl::GetFlag(FLAGS_conversion_tls_cert);
    copts.tls_key = absl::GetFlag(FLAGS_conversion_tls_key);
    copts.max_body_bytes = options.max_request_bytes;
    auto started = ConversionServer::Start(copts, *registry, &log);
    if (!started.ok()) {
      running->server->Shutdown();
      return absl::Status(started.status().code(),
                          absl::StrCat("cannot serve the conversion webhook: ", started.status().message()));
    }
    conversion = *std::move(started);
    const std::string bound = WithPort(listen, conversion->port());
    std::cout << "conversion webhook listening on https://" << bound << std::endl;
    log.Info("conversion webhook listening", {{"address", bound}, {"path", std::string("/convert")}});
  }

  absl::Notification stopping;
  std::thread release_memory;
  if (const int32_t idle = absl::GetFlag(FLAGS_release_memory_idle_seconds); idle > 0) {
    release_memory = std::thread([&service, &stopping, &log, idle] {
      IdleMemoryRelease release([&log] {
        if (!PurgeAllocator()) log.Warn("cannot release memory: the allocator is not jemalloc", {});
      });
      while (!stopping.WaitForNotificationWithTimeout(absl::Seconds(idle))) {
        release.Check(service.calls_started(), service.in_flight());
      }
    });
  }

  // The drain below gives calls in flight the grace period; cancelling them and stopping the endpoints takes
  // moments more. A stop stuck beyond that ends the process with a reason in the log.
  const std::unique_ptr<base::ShutdownDeadline> deadline = daemon.WaitForStop(/*slack=*/absl::Seconds(10));
  stopping.Notify();
  if (release_memory.joinable()) release_memory.join();
  const auto shutdown_start = std::chrono::steady_clock::now();
  running->server->GetHealthCheckService()->Shutdown();
  // The HTTP servers stop their threads (a kept-alive connection ends at its next poll) while the gRPC calls drain.
  std::thread stop_metrics([&metrics_server, &conversion] {
    if (conversion != nullptr) conversion->Stop();
    if (metrics_server != nullptr) metrics_server->Stop();
  });
  // Drain: let calls in flight finish (up to the grace period), then shut down with an immediate deadline. gRPC's
  // own Shutdown(deadline) also waits out the whole deadline while idle clients stay connected, which would
  // make every restart slow.
  const auto grace = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(daemon.shutdown_grace());
  while (service.in_flight() > 0 && std::chrono::steady_clock::now() < grace) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Plans still running stop at their next check (within milliseconds): Wait() below returns only once every
  // handler has, so without this a long plan would hold the process past its grace period.
  service.CancelInFlight();
  running->server->Shutdown(std::chrono::system_clock::now());
  running->server->Wait();
  const double grpc_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - shutdown_start).count();
  stop_metrics.join();
  deadline->Disarm();
  log.Info("stopped",
           {{"grpc_seconds", grpc_seconds},
            {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - shutdown_start).count()}});
  return absl::OkStatus();
}

}  // namespace
}  // namespace cloneset::planner::service

int main(int argc, char** argv) {
  namespace service = cloneset::planner::service;
  cloneset::base::DaemonSpec spec;
  spec.usage =
      "the CloneSet planning service (gRPC cloneset.planner.v1.Planner: Plan, Validate, "
      "ComputeRevision), with the gRPC health service, reflection and Prometheus /metrics.\n"
      "It also serves the CloneSet CRD's conversion webhook (HTTPS) when --conversion_listen is set.\n"
      "Usage: cloneset-planner [--listen=127.0.0.1:7070] [--metrics_listen=127.0.0.1:9464] "
      "[--tls_cert=F --tls_key=F [--tls_client_ca=F]] "
      "[--conversion_listen=0.0.0.0:9443 --conversion_tls_cert=F --conversion_tls_key=F]";
  spec.flag_dirs = {"planner/service"};
  spec.log = service::PlannerLogOptions(&std::cerr, cloneset::base::LogLevel::kInfo);
  spec.shutdown_grace = service::kShutdownGrace;
  spec.shutdown_grace_seconds = &FLAGS_shutdown_grace_seconds;
  return cloneset::base::DaemonMain(argc, argv, spec, service::Run);
}
