// The HTTP endpoints every binary serves besides its work: Prometheus /metrics, the /healthz and /readyz probes,
// and the address parsing their flags need. /metrics for cloneset-executor, cloneset-agent and cloneset-planner;
// the probes for the executor and the agent (the planner answers the gRPC health service instead).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace cloneset::base {

// "host:port" or "[v6]:port" -> host (brackets dropped) and port. False when there is no valid port.
bool SplitHostPort(const std::string& addr, std::string* host, int* port);

// Serves `registry` on `listen` (port 0 allowed). With `announce`, prints "metrics on http://host:port" on stderr,
// the line `./run up` and the tests read to find the bound port of the executor and the agent (the planner prints
// its own "metrics listening on" line on stdout, which its clients read). Unavailable when it cannot bind.
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(const std::string& listen,
                                                                  std::shared_ptr<prometheus::Registry> registry,
                                                                  bool announce = true);

// A probe's verdict: "" when it passes (200 "ok"), else why not (503 with that text).
using ProbeCheck = std::function<std::string()>;

// /healthz and, when a readyz check is given, /readyz (else 404), answered on a thread of their own until Stop.
class HealthServer {
 public:
  // Binds `listen` (port 0 allowed) and prints "listening on http://host:port" on stderr, the line `./run up`
  // and the tests read. InvalidArgument for an address without a valid port, Unavailable when it cannot bind.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(const std::string& listen, ProbeCheck healthz,
                                                             ProbeCheck readyz = nullptr);
  ~HealthServer();  // Stop()
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return port_; }
  // Stops answering and joins the thread; the checks are not called afterwards. Idempotent.
  void Stop();

 private:
  struct Impl;
  HealthServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace cloneset::base
