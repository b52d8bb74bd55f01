#include "base/endpoints.h"

#include <exception>
#include <iostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "httplib.h"

namespace cloneset::base {

bool SplitHostPort(const std::string& addr, std::string* host, int* port) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos) return false;
  *host = addr.substr(0, colon);
  if (host->size() > 1 && host->front() == '[') *host = host->substr(1, host->size() - 2);
  return absl::SimpleAtoi(addr.substr(colon + 1), port);
}

absl::StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(const std::string& listen,
                                                                  std::shared_ptr<prometheus::Registry> registry,
                                                                  bool announce) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {  // civetweb reports a bind failure by throwing
    exposer = std::make_unique<prometheus::Exposer>(listen);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
  }
  exposer->RegisterCollectable(registry);
  if (announce) {
    std::string host;
    int port = 0;
    SplitHostPort(listen, &host, &port);
    const auto ports = exposer->GetListeningPorts();
    std::cerr << "metrics on http://" << host << ":" << (ports.empty() ? 0 : ports.front()) << std::endl;
  }
  return exposer;
}

struct HealthServer::Impl {
  httplib::Server server;
  std::thread thread;
};

namespace {
httplib::Server::Handler Probe(ProbeCheck check) {
  return [check = std::move(check)](const httplib::Request&, httplib::Response& res) {
    const std::string why = check();
    res.status = why.empty() ? 200 : 503;
    res.set_content(why.empty() ? "ok" : why, "text/plain");
  };
}
}  // namespace

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& listen, ProbeCheck healthz,
                                                                  ProbeCheck readyz) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(listen, &host, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("health address '", listen, "' is not host:port"));
  }
  auto impl = std::make_unique<Impl>();
  impl->server.Get("/healthz", Probe(std::move(healthz)));
  if (readyz) impl->server.Get("/readyz", Probe(std::move(readyz)));
  if (port == 0) {
    port = impl->server.bind_to_any_port(host);
  } else if (!impl->server.bind_to_port(host, port)) {
    port = -1;
  }
  if (port < 0) return absl::UnavailableError(absl::StrCat("cannot serve health probes on ", listen));
  impl->thread = std::thread([server = &impl->server] { server->listen_after_bind(); });
  // httplib ignores a stop() that comes before its accept loop runs: return only once it runs.
  for (int i = 0; i < 5000 && !impl->server.is_running(); ++i) absl::SleepFor(absl::Milliseconds(1));
  std::cerr << "listening on http://" << host << ":" << port << std::endl;
  return std::unique_ptr<HealthServer>(new HealthServer(std::move(impl), port));
}

HealthServer::HealthServer(std::unique_ptr<Impl> impl, int port) : impl_(std::move(impl)), port_(port) {}

HealthServer::~HealthServer() { Stop(); }

void HealthServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace cloneset::base
