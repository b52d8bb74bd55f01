// The HTTP endpoints every daemon serves besides its work: Prometheus /metrics and the /healthz and /readyz probes,
// from one server (cpp-httplib), and the address parsing their flags need. cloneset-executor and cloneset-agent
// serve all three (ServeDaemonEndpoints, from --metrics_listen and --health_listen); cloneset-planner serves
// /metrics only (it answers the gRPC health service instead of probes).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/registry.h"

namespace cloneset::base {

// "host:port" or "[v6]:port" -> host (brackets dropped) and port. False when there is no valid port.
bool SplitHostPort(const std::string& addr, std::string* host, int* port);

// A probe's verdict: "" when it passes (200 "ok"), else why not (503 with that text).
using ProbeCheck = std::function<std::string()>;

// The Content-Type of /metrics: Prometheus' text exposition format 0.0.4, the one TextSerializer writes.
inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

struct EndpointOptions {
  // The addresses to listen on, "host:port" (port 0: any free port). One listener per distinct address: the same
  // host and port written twice is one listener (with port 0 too: one free port, not two). Every listener answers
  // every path below.
  std::vector<std::string> listen;
  // GET /metrics: the registry in the text format. Null: /metrics is 404.
  std::shared_ptr<prometheus::Registry> registry;
  // GET /healthz and GET /readyz: 200 "ok" or 503 with the reason. Null: that path is 404.
  ProbeCheck healthz;
  ProbeCheck readyz;
};

// /metrics, /healthz and /readyz over HTTP/1.1 (GET, and HEAD as httplib answers it; another method on those paths
// is 405, any other path 404), answered on threads of their own until Stop. Requests are bounded (headers and URI
// by httplib, bodies by a small payload limit, slow clients by read and write timeouts).
class EndpointServer {
 public:
  // Binds and answers on every address of `options.listen`. InvalidArgument for an address without a valid port or
  // an empty list (before binding any), Unavailable (naming the address) when one cannot be bound, a port in use
  // included; the listeners already bound are then closed again.
  static absl::StatusOr<std::unique_ptr<EndpointServer>> Start(EndpointOptions options);
  ~EndpointServer();  // Stop()
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // The bound port of options.listen[i] (the same port for the same address).
  int port(size_t i) const { return ports_.at(i); }
  // How many sockets it listens on: the distinct addresses of options.listen.
  size_t listeners() const;
  // Stops answering and joins the threads; the checks are not called afterwards. Idempotent.
  void Stop();

 private:
  struct Listener;
  EndpointServer(std::vector<std::unique_ptr<Listener>> listeners, std::vector<int> ports);
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<int> ports_;
};

// The executor's and the agent's endpoints from their two flags. Both flags set: one listener per distinct address,
// each answering /metrics, /healthz and /readyz (so a scrape of the health address gets /metrics too); the same
// address in both is one listener. One flag empty: the other's address serves all three. Both empty is an
// InvalidArgument naming the flags. On success it prints "metrics on http://host:port" (the --metrics_listen
// address, or the one address when it is empty) and then "listening on http://host:port" (likewise for
// --health_listen) on stderr, the lines `./run up`, the tests and the benchmarks read to find the bound ports.
// Errors name both flags and the address that failed.
absl::StatusOr<std::unique_ptr<EndpointServer>> ServeDaemonEndpoints(const std::string& metrics_listen,
                                                                     const std::string& health_listen,
                                                                     std::shared_ptr<prometheus::Registry> registry,
                                                                     ProbeCheck healthz, ProbeCheck readyz = nullptr);

// "http://host:port" for an announce line: a v6 host in brackets.
std::string EndpointUrl(const std::string& host, int port);

}  // namespace cloneset::base
