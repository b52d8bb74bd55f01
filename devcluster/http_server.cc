#include "devcluster/http_server.h"

#include <httplib.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "devcluster/object_meta.h"
#include "devcluster/watch_fanout.h"

namespace cloneset::devcluster {

struct HttpServer::Impl {
  ApiServer* api;
  Store* store;
  std::shared_ptr<prometheus::Registry> registry;
  HttpServerOptions options;
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  prometheus::Family<prometheus::Counter>* requests;
  prometheus::Family<prometheus::Histogram>* durations;
  prometheus::Family<prometheus::Gauge>* watchers;
  prometheus::Family<prometheus::Gauge>* objects;
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<WatchFanout> fanout;  // created by Start, shut down by Stop

  // The metric children of one (verb, resource, code, client), looked up once: prometheus-cpp's Family::Add
  // builds and hashes a label map per call, which showed in the per-write CPU profile.
  struct RequestMetrics {
    prometheus::Counter* count;
    prometheus::Histogram* latency;  // null for watches
  };
  std::mutex metrics_mu;
  absl::flat_hash_map<std::string, RequestMetrics> metrics_cache;

  RequestMetrics& MetricsFor(const std::string& verb, const std::string& resource, int code, const std::string& ua) {
    std::string key = absl::StrCat(verb, "\n", resource, "\n", code, "\n", ua);
    std::lock_guard<std::mutex> l(metrics_mu);
    auto it = metrics_cache.find(key);
    if (it != metrics_cache.end()) return it->second;
    RequestMetrics m;
    m.count = &requests->Add({{"verb", verb}, {"resource", resource}, {"code", std::to_string(code)}, {"user_agent", ua}});
    m.latency = verb == "watch" ? nullptr
                                : &durations->Add({{"verb", verb}, {"resource", resource}},
                                                  prometheus::Histogram::BucketBoundaries{
                                                      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                      1, 2.5, 5});
    return metrics_cache.emplace(std::move(key), m).first->second;
  }

  void Record(const ApiResponse& r, const httplib::Request& req, std::chrono::steady_clock::time_point start) {
    std::string verb = r.verb.empty() ? absl::AsciiStrToLower(req.method) : r.verb;
    std::string resource = r.resource.empty() ? "other" : r.resource;
    RequestMetrics& m = MetricsFor(verb, resource, r.status, UserAgentLabel(req.get_header_value("User-Agent")));
    m.count->Increment();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (m.latency) m.latency->Observe(secs);
    if (options.log_requests || r.status >= 500)
      base::ProcessLogger().Log(r.status >= 500 ? base::LogLevel::kError : base::LogLevel::kInfo, "request",
                                {{"method", req.method}, {"path", req.path}, {"code", int64_t{r.status}},
                                 {"verb", verb}, {"user_agent", req.get_header_value("User-Agent")},
                                 {"seconds", secs}});
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    if (req.path == "/metrics" && req.method == "GET") {
      for (const auto& t : store->Types()) {
        watchers->Add({{"resource", t.Id()}}).Set(static_cast<double>(store->WatcherCount(t.Id())));
        objects->Add({{"resource", t.Id()}}).Set(static_cast<double>(store->ObjectCount(t.Id())));
      }
      res.set_content(prometheus::TextSerializer().Serialize(registry->Collect()), "text/plain; version=0.0.4");
      return;
    }
    ApiRequest ar;
    ar.method = req.method;
    ar.path = req.path;
    for (const auto& [k, v] : req.params) ar.query.emplace(k, v);
    for (const auto& [k, v] : req.headers) ar.headers[absl::AsciiStrToLower(k)] = v;
    ar.body = req.body;
    const std::string client = UserAgentLabel(req.get_header_value("User-Agent"));
    const WriteFault fault = faults->ForRequest(req.method, client);
    ApiResponse r;
    const FaultStatus fs = FaultStatusOf(fault);
    if (fault == WriteFault::kConflict || fault == WriteFault::kErrorBeforeCommit) {
      r = StatusError(fs.code, fs.reason, fs.message);
    } else {
      r = api->Handle(ar);
    }
    if (fault == WriteFault::kErrorAfterCommit) {
      ApiResponse err = StatusError(fs.code, fs.reason, fs.message);
      err.verb = r.verb;
      err.resource = r.resource;
      r = std::move(err);
    }
    if (fault != WriteFault::kNone) {
      base::ProcessLogger().Info("fault injected", {{"fault", std::string(WriteFaultName(fault))},
                                                    {"method", req.method}, {"path", req.path},
                                                    {"user_agent", client}});
    }
    Record(r, req, start);
    res.status = r.status;
    // RFC 7234 warn-code 299 as kube-apiserver sends them; clients (kubectl, client-go, Python) print the text.
    for (const auto& w : r.warnings) res.headers.emplace("Warning", absl::StrCat("299 - ", nlohmann::json(w).dump()));
    // httplib gzips exactly "application/json" when the client accepts it (Go clients always do); a
    // compressor buffers watch events, and compressing on loopback only costs CPU, so add a parameter.
    if (r.content_type == "application/json") r.content_type = "application/json;charset=utf-8";
    if (!r.watch) {
      res.set_content(std::move(r.body), r.content_type.c_str());
      return;
    }
    std::shared_ptr<WatchStream> stream(std::move(r.watch));
    // The connection thread parks in the fan-out while its one writer thread sends the events (watch_fanout.h);
    // it needs the connection's socket to know when a send cannot block.
    const int fd = FindConnectionSocket(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
    WatchFanout* fan = fanout.get();
    const bool raw = options.cert_path.empty();  // plain TCP: the fan-out writes chunks on the socket itself
    // An injected watch drop closes the connection mid-stream (no final chunk), as a broken network would.
    std::optional<std::chrono::steady_clock::time_point> cut_at;
    if (auto d = faults->WatchDropAfter(client)) cut_at = std::chrono::steady_clock::now() + *d;
    res.set_chunked_content_provider(
        "application/json;charset=utf-8",
        [stream, fan, fd, raw, cut_at, path = req.path, client](size_t, httplib::DataSink& sink) {
          const WatchFanout::Write write = [&sink](std::string_view d) { return sink.write(d.data(), d.size()); };
          switch (fan->Serve(*stream, write, fd, raw, cut_at)) {
            case WatchEnd::kDone:
              sink.done();
              return true;
            case WatchEnd::kCut:
              base::ProcessLogger().Info("fault injected", {{"fault", std::string("watch_drop")}, {"path", path},
                                                            {"user_agent", client}});
              return false;
            case WatchEnd::kBroken:
            case WatchEnd::kShutdown:
              return false;
          }
          return false;
        },
        [stream](bool) { stream->watcher->Stop(); });
  }
};

HttpServer::HttpServer(ApiServer* api, Store* store, std::shared_ptr<prometheus::Registry> registry,
                       HttpServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->api = api;
  impl_->store = store;
  impl_->registry = registry ? registry : std::make_shared<prometheus::Registry>();
  impl_->options = std::move(options);
  impl_->faults = std::make_unique<FaultInjector>(impl_->options.faults);
  auto& reg = *impl_->registry;
  impl_->requests = &prometheus::BuildCounter()
                         .Name("apiserver_request_total")
                         .Help("API requests by verb, resource, HTTP code and client (first User-Agent token)")
                         .Register(reg);
  impl_->durations = &prometheus::BuildHistogram()
                          .Name("apiserver_request_duration_seconds")
                          .Help("API request latency (watches excluded)")
                          .Register(reg);
  impl_->watchers =
      &prometheus::BuildGauge().Name("apiserver_registered_watchers").Help("Open watches by resource").Register(reg);
  impl_->objects =
      &prometheus::BuildGauge().Name("apiserver_storage_objects").Help("Stored objects by resource").Register(reg);
}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start() {
  auto& o = impl_->options;
  if (o.cert_path.empty()) {
    impl_->server = std::make_unique<httplib::Server>();
  } else {
    auto ssl = std::make_unique<httplib::SSLServer>(o.cert_path.c_str(), o.key_path.c_str());
    if (!ssl->is_valid()) return absl::InternalError("TLS server setup failed (certificate or key unusable)");
    impl_->server = std::move(ssl);
  }
  auto& svr = *impl_->server;
  impl_->fanout = std::make_unique<WatchFanout>(impl_->api, impl_->store);
  int threads = o.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_payload_max_length(64 * 1024 * 1024);  // the API layer answers 413 above 3 MiB itself
  svr.set_tcp_nodelay(true);  // headers and body go out as separate writes: avoid Nagle + delayed-ACK stalls
  // cpp-httplib listens with a backlog of 5 (compiled into the library). A burst of connects (200 informers
  // starting their watches at once) overflows it; the kernel then drops the handshakes' last ACKs and the clients'
  // requests sit unanswered until SYN-ACK retries run out. Remember the listening socket so it can listen again
  // with the system's maximum backlog once bound (Linux applies a new backlog to a listening socket).
  auto listen_fd = std::make_shared<std::atomic<int>>(-1);
  svr.set_socket_options([listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd->store(sock);
  });
  svr.set_keep_alive_max_count(100000);
  svr.set_keep_alive_timeout(30);
  svr.set_read_timeout(30, 0);
  svr.set_write_timeout(30, 0);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { impl_->Handle(req, res); };
  svr.Get(".*", handler);
  svr.Post(".*", handler);
  svr.Put(".*", handler);
  svr.Patch(".*", handler);
  svr.Delete(".*", handler);
  svr.Options(".*", handler);
  if (o.port == 0) {
    port_ = svr.bind_to_any_port(o.host.c_str());
    if (port_ <= 0) return absl::UnavailableError(absl::StrCat("cannot bind ", o.host));
  } else {
    if (!svr.bind_to_port(o.host.c_str(), o.port))
      return absl::UnavailableError(absl::StrCat("cannot bind ", o.host, ":", o.port));
    port_ = o.port;
  }
  if (int fd = listen_fd->load(); fd >= 0 && ::listen(fd, SOMAXCONN) != 0)
    return absl::InternalError(absl::StrCat("listen(", o.host, ":", port_, ") with backlog ", SOMAXCONN, " failed"));
  impl_->thread = std::thread([this] { impl_->server->listen_after_bind(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  // Streams first: their connection threads are parked in the fan-out, and httplib's stop() joins them.
  if (impl_->fanout) impl_->fanout->Shutdown();
  if (impl_->server) impl_->server->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string HttpServer::url() const {
  return absl::StrCat(impl_->options.cert_path.empty() ? "http" : "https", "://", impl_->options.host, ":", port_);
}

}  // namespace cloneset::devcluster
