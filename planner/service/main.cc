// cloneset-planner: the stateless planning service (gRPC) with Prometheus /metrics on its own port.
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/endpoints.h"
#include "base/log.h"
#include "base/signals.h"
#include "planner/service/conversion_server.h"
#include "planner/service/default_functions.h"
#include "planner/service/idle_memory.h"
#include "planner/service/metrics.h"
#include "planner/service/planner_service.h"
#include "planner/service/server.h"
#include "tools/cli/help.h"
#include "prometheus/exposer.h"
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
ABSL_FLAG(int32_t, shutdown_grace_seconds, 5,
          "On SIGTERM/SIGINT, how long in-flight calls may run before they are cancelled.");
ABSL_FLAG(std::string, log_level, "info", "Minimum log level: debug (one line per plan), info, warn or error.");
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

int Run() {
  LogLevel level = LogLevel::kInfo;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::cerr << "--log_level: \"" << absl::GetFlag(FLAGS_log_level) << "\" is not debug, info, warn or error\n";
    return 2;
  }
  JsonLogger log(PlannerLogOptions(&std::cerr, level));
  base::SetProcessLogger(&log);

  // Signals are taken synchronously by this thread (Wait below), so every thread gRPC and civetweb start must
  // inherit the blocked mask: block before creating any of them.
  const base::StopSignals signals = base::StopSignals::Block();

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
    log.Error("cannot start gRPC server", {{"error", std::string(running.status().message())}});
    return 1;
  }
  std::cout << "listening on " << running->address << std::endl;
  log.Info("listening", {{"address", running->address},
                         {"tls", !options.tls_cert.empty()},
                         {"mtls", !options.tls_client_ca.empty()},
                         {"max_request_bytes", options.max_request_bytes}});

  std::unique_ptr<prometheus::Exposer> exposer;
  const std::string metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  if (!metrics_listen.empty()) {
    // Announced below on stdout in the planner's own words, which its clients read.
    auto served = base::ServeMetrics(metrics_listen, registry, /*announce=*/false);
    if (!served.ok()) {
      log.Error("cannot serve metrics", {{"flag", "metrics_listen"}, {"address", metrics_listen},
                                         {"error", std::string(served.status().message())}});
      running->server->Shutdown();
      return 1;
    }
    exposer = *std::move(served);
    const auto ports = exposer->GetListeningPorts();
    const std::string bound = WithPort(metrics_listen, ports.empty() ? 0 : ports.front());
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
      log.Error("cannot serve the conversion webhook", {{"error", std::string(started.status().message())}});
      running->server->Shutdown();
      return 1;
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

  const int signal_number = signals.Wait();
  // The drain below gives calls in flight the grace period; cancelling them and stopping the endpoints takes
  // moments more. A stop stuck beyond that ends the process with a reason in the log.
  const absl::Duration hard_stop = absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)) + absl::Seconds(10);
  base::ShutdownDeadline deadline(hard_stop, base::ExitAfterGrace(hard_stop));
  stopping.Notify();
  if (release_memory.joinable()) release_memory.join();
  log.Info("shutting down", {{"signal", static_cast<int64_t>(signal_number)}});
  const auto shutdown_start = std::chrono::steady_clock::now();
  running->server->GetHealthCheckService()->Shutdown();
  // civetweb takes a second or two to stop; do it (and the conversion webhook) while the gRPC calls drain.
  std::thread stop_metrics([&exposer, &conversion] {
    if (conversion != nullptr) conversion->Stop();
    exposer.reset();
  });
  // Drain: let calls in flight finish (up to the grace period), then shut down with an immediate deadline. gRPC's
  // own Shutdown(deadline) also waits out the whole deadline while idle clients stay connected, which would
  // make every restart slow.
  const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds));
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
  deadline.Disarm();
  log.Info("stopped",
           {{"grpc_seconds", grpc_seconds},
            {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - shutdown_start).count()}});
  return 0;
}

}  // namespace
}  // namespace cloneset::planner::service

int main(int argc, char** argv) {
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) { return absl::StrContains(file, "planner/service"); };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(
      "the CloneSet planning service (gRPC cloneset.planner.v1.Planner: Plan, Validate, "
      "ComputeRevision), with the gRPC health service, reflection and Prometheus /metrics.\n"
      "It also serves the CloneSet CRD's conversion webhook (HTTPS) when --conversion_listen is set.\n"
      "Usage: cloneset-planner [--listen=127.0.0.1:7070] [--metrics_listen=127.0.0.1:9464] "
      "[--tls_cert=F --tls_key=F [--tls_client_ca=F]] "
      "[--conversion_listen=0.0.0.0:9443 --conversion_tls_cert=F --conversion_tls_key=F]");
  if (cloneset::cli::PrintHelpIfAsked(argc, argv, absl::ProgramUsageMessage())) return 0;
  absl::ParseCommandLine(argc, argv);
  return cloneset::planner::service::Run();
}
