#include "base/endpoints.h"

#include <sys/socket.h>

#include <iostream>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "httplib.h"
#include "prometheus/text_serializer.h"

namespace cloneset::base {

bool SplitHostPort(const std::string& addr, std::string* host, int* port) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos) return false;
  *host = addr.substr(0, colon);
  if (host->size() > 1 && host->front() == '[') *host = host->substr(1, host->size() - 2);
  return absl::SimpleAtoi(addr.substr(colon + 1), port);
}

std::string EndpointUrl(const std::string& host, int port) {
  return host.find(':') == std::string::npos ? absl::StrCat("http://", host, ":", port)
                                             : absl::StrCat("http://[", host, "]:", port);
}

namespace {

// "host:port" with a port in [0, 65535], or InvalidArgument saying it is not.
absl::StatusOr<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(listen, &host, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("address '", listen, "' is not host:port"));
  }
  return std::pair<std::string, int>(std::move(host), port);
}

// Worker threads per listener. Scrapes and probes are rare and short; a few threads keep a kept-alive scrape
// connection (held for httplib's keep-alive timeout) from delaying a probe, without a thread per core.
constexpr size_t kThreadsPerListener = 3;
// No endpoint reads a body: a request with a larger one is answered 413 before it is routed.
constexpr size_t kMaxPayloadBytes = 16 << 10;

httplib::Server::Handler Probe(ProbeCheck check) {
  return [check = std::move(check)](const httplib::Request&, httplib::Response& res) {
    const std::string why = check();
    res.status = why.empty() ? 200 : 503;
    res.set_content(why.empty() ? "ok" : why, "text/plain");
  };
}

void MethodNotAllowed(const httplib::Request&, httplib::Response& res) {
  res.status = 405;
  res.set_header("Allow", "GET, HEAD");
  res.set_content("method not allowed", "text/plain");
}

// Routes one server: GET (and so HEAD) for each path that has something to answer, 405 for the other methods on
// those paths; httplib answers 404 for every other path.
void Route(httplib::Server& server, const EndpointOptions& options) {
  std::vector<std::string> paths;
  if (options.registry != nullptr) {
    server.Get("/metrics", [registry = options.registry](const httplib::Request&, httplib::Response& res) {
      res.set_content(prometheus::TextSerializer().Serialize(registry->Collect()), kMetricsContentType);
    });
    paths.push_back("/metrics");
  }
  if (options.healthz) {
    server.Get("/healthz", Probe(options.healthz));
    paths.push_back("/healthz");
  }
  if (options.readyz) {
    server.Get("/readyz", Probe(options.readyz));
    paths.push_back("/readyz");
  }
  for (const std::string& path : paths) {
    server.Post(path, MethodNotAllowed);
    server.Put(path, MethodNotAllowed);
    server.Patch(path, MethodNotAllowed);
    server.Delete(path, MethodNotAllowed);
    server.Options(path, MethodNotAllowed);
  }
}

}  // namespace

struct EndpointServer::Listener {
  std::string host;
  int requested_port = 0;
  int port = 0;
  httplib::Server server;
  std::thread thread;
};

absl::StatusOr<std::unique_ptr<EndpointServer>> EndpointServer::Start(EndpointOptions options) {
  if (options.listen.empty()) return absl::InvalidArgumentError("no address to serve the HTTP endpoints on");
  std::vector<std::pair<std::string, int>> addresses;
  for (const std::string& listen : options.listen) {
    absl::StatusOr<std::pair<std::string, int>> address = ParseListen(listen);
    if (!address.ok()) return address.status();
    addresses.push_back(*std::move(address));
  }
  // Each listener answers as soon as it is bound; when a later one cannot bind, the server's destructor stops the
  // ones before it (httplib closes a bound socket only in stop(), which counts only once its accept loop runs).
  std::unique_ptr<EndpointServer> server(new EndpointServer({}, {}));
  for (size_t i = 0; i < addresses.size(); ++i) {
    const auto& [host, port] = addresses[i];
    Listener* same = nullptr;
    for (const auto& l : server->listeners_) {
      if (l->host == host && l->requested_port == port) same = l.get();
    }
    if (same == nullptr) {
      auto l = std::make_unique<Listener>();
      l->host = host;
      l->requested_port = port;
      httplib::Server& http = l->server;
      http.new_task_queue = [] { return new httplib::ThreadPool(kThreadsPerListener); };
      http.set_payload_max_length(kMaxPayloadBytes);
      // httplib's default also sets SO_REUSEPORT, under which a second process binds a port in use and the kernel
      // splits the connections between the two: a port in use must fail instead.
      http.set_socket_options([](auto sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      });
      Route(http, options);
      l->port = port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
      if (l->port < 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen[i]));
      l->thread = std::thread([&http] { http.listen_after_bind(); });
      // httplib ignores a stop() that comes before its accept loop runs: go on only once it runs.
      for (int n = 0; n < 5000 && !http.is_running(); ++n) absl::SleepFor(absl::Milliseconds(1));
      same = l.get();
      server->listeners_.push_back(std::move(l));
    }
    server->ports_.push_back(same->port);
  }
  return server;
}

EndpointServer::EndpointServer(std::vector<std::unique_ptr<Listener>> listeners, std::vector<int> ports)
    : listeners_(std::move(listeners)), ports_(std::move(ports)) {}

EndpointServer::~EndpointServer() { Stop(); }

size_t EndpointServer::listeners() const { return listeners_.size(); }

void EndpointServer::Stop() {
  for (auto& l : listeners_) {
    if (l->thread.joinable()) l->server.stop();
  }
  for (auto& l : listeners_) {
    if (l->thread.joinable()) l->thread.join();
  }
}

absl::StatusOr<std::unique_ptr<EndpointServer>> ServeDaemonEndpoints(const std::string& metrics_listen,
                                                                     const std::string& health_listen,
                                                                     std::shared_ptr<prometheus::Registry> registry,
                                                                     ProbeCheck healthz, ProbeCheck readyz) {
  if (metrics_listen.empty() && health_listen.empty()) {
    return absl::InvalidArgumentError(
        "--metrics_listen and --health_listen are both empty; give at least one address for /metrics, /healthz "
        "and /readyz");
  }
  // One flag empty: the other's address stands for both.
  const std::string& metrics = metrics_listen.empty() ? health_listen : metrics_listen;
  const std::string& health = health_listen.empty() ? metrics_listen : health_listen;
  // Checked one by one so that an error names its flag; the hosts are those of the announce lines.
  absl::StatusOr<std::pair<std::string, int>> metrics_address = ParseListen(metrics);
  if (!metrics_address.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics_listen: ", metrics_address.status().message()));
  }
  absl::StatusOr<std::pair<std::string, int>> health_address = ParseListen(health);
  if (!health_address.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--health_listen: ", health_address.status().message()));
  }
  auto server = EndpointServer::Start(
      {.listen = {metrics, health}, .registry = std::move(registry), .healthz = healthz, .readyz = readyz});
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("cannot serve /metrics and the probes (--metrics_listen=", metrics_listen,
                                     " --health_listen=", health_listen, "): ", server.status().message()));
  }
  std::cerr << "metrics on " << EndpointUrl(metrics_address->first, (*server)->port(0)) << std::endl;
  std::cerr << "listening on " << EndpointUrl(health_address->first, (*server)->port(1)) << std::endl;
  return server;
}

}  // namespace cloneset::base
