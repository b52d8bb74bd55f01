#include "tests/fault_proxy/fault_proxy.h"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/log.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace cloneset::testing {
namespace {

using Clock = std::chrono::steady_clock;
using devcluster::WriteFault;
using json = nlohmann::json;

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

std::vector<X509Ptr> ParseCerts(const std::string& pem) {
  std::vector<X509Ptr> out;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) out.emplace_back(x);
  BIO_free(bio);
  return out;
}

// The proxy's lines go through the process logger (base/log.h, stderr), fields beside msg as the embedded
// cluster writes them: tests/executor_fault counts {"msg":"fault injected","fault":...} lines.
base::JsonLogger& Log() { return base::ProcessLogger(); }

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
              {"message", message}, {"reason", reason}, {"code", code}}
      .dump();
}

// The values Go's strconv.ParseBool takes as true, as kube-apiserver reads ?watch=.
bool IsWatch(const httplib::Request& req) {
  if (!req.has_param("watch")) return false;
  const std::string v = req.get_param_value("watch");
  return v == "1" || v == "t" || v == "T" || v == "true" || v == "True" || v == "TRUE";
}

// Hop-by-hop and framing headers are the proxy's own on each side; Accept-Encoding is dropped so the API server
// answers uncompressed and a watch stream is passed on event by event. httplib adds the peer addresses as
// pseudo-headers.
bool Forwarded(const std::string& name) {
  const std::string n = absl::AsciiStrToLower(name);
  for (const char* h : {"host", "connection", "keep-alive", "content-length", "transfer-encoding", "accept-encoding",
                        "content-encoding", "content-type", "remote_addr", "remote_port", "local_addr",
                        "local_port", "proxy-connection", "te", "upgrade"}) {
    if (n == h) return false;
  }
  return true;
}

httplib::Headers ForwardedHeaders(const httplib::Headers& in) {
  httplib::Headers out;
  for (const auto& [k, v] : in) {
    if (Forwarded(k)) out.emplace(k, v);
  }
  return out;
}

// httplib gzips exactly "application/json" when the client accepts it, and a compressor holds watch events back;
// the parameter keeps the body as the API server sent it.
std::string ContentType(const httplib::Headers& h) {
  auto it = h.find("Content-Type");
  std::string t = it == h.end() ? "application/json" : it->second;
  if (t == "application/json") t = "application/json;charset=utf-8";
  return t;
}

// One upstream watch, read by its own thread into `chunks`; the client's connection thread passes them on.
struct WatchState {
  std::mutex mu;
  std::condition_variable cv;
  bool headers_ready = false;
  int status = 0;  // 0: no response (error says why)
  httplib::Headers headers;
  std::deque<std::string> chunks;
  bool done = false;
  std::string error;
  std::atomic<bool> cancel{false};
  std::unique_ptr<httplib::ClientImpl> cli;
};

}  // namespace

struct FaultProxy::Impl {
  FaultProxyOptions options;
  bool tls = true;
  std::string host;
  int upstream_port = 443;
  std::vector<X509Ptr> ca;
  std::unique_ptr<devcluster::FaultInjector> faults;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> stopping{false};
  // Kept-alive upstream connections for plain requests: a TLS handshake per request adds latency the executor's
  // lease renewals feel under load. One idle longer than kMaxIdle is dropped (kube-apiserver closes idle ones).
  static constexpr std::chrono::seconds kMaxIdle{20};
  std::mutex pool_mu;
  std::vector<std::pair<std::unique_ptr<httplib::ClientImpl>, Clock::time_point>> pool;

  std::unique_ptr<httplib::ClientImpl> Acquire() {
    std::unique_ptr<httplib::ClientImpl> cli;
    {
      std::lock_guard<std::mutex> l(pool_mu);
      while (!pool.empty() && !cli) {
        auto [c, since] = std::move(pool.back());
        pool.pop_back();
        if (Clock::now() - since < kMaxIdle) cli = std::move(c);
      }
    }
    if (cli) return cli;
    cli = NewClient(std::chrono::seconds(120));
    cli->set_keep_alive(true);
    return cli;
  }
  void Release(std::unique_ptr<httplib::ClientImpl> cli) {
    std::lock_guard<std::mutex> l(pool_mu);
    if (pool.size() < 32) pool.emplace_back(std::move(cli), Clock::now());
  }

  absl::Status ParseUpstream() {
    absl::string_view s = options.upstream.server;
    if (absl::ConsumePrefix(&s, "https://")) {
      tls = true;
    } else if (absl::ConsumePrefix(&s, "http://")) {
      tls = false;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("upstream server must start with https:// or http://, got '", options.upstream.server, "'"));
    }
    s = s.substr(0, s.find('/'));
    const auto colon = s.rfind(':');
    absl::string_view h = s.substr(0, colon);
    upstream_port = tls ? 443 : 80;
    if (colon != absl::string_view::npos && !absl::SimpleAtoi(s.substr(colon + 1), &upstream_port)) {
      return absl::InvalidArgumentError(absl::StrCat("upstream server port in '", options.upstream.server, "'"));
    }
    absl::ConsumePrefix(&h, "[");
    absl::ConsumeSuffix(&h, "]");
    host = std::string(h);
    if (host.empty()) return absl::InvalidArgumentError("upstream server has no host: " + options.upstream.server);
    ca = ParseCerts(options.upstream.ca_pem);
    if (tls && !options.upstream.ca_pem.empty() && ca.empty()) {
      return absl::InvalidArgumentError("upstream certificate-authority: no PEM certificate in it");
    }
    return absl::OkStatus();
  }

  std::unique_ptr<httplib::ClientImpl> NewClient(std::chrono::seconds read_timeout) const {
    std::unique_ptr<httplib::ClientImpl> cli;
    if (!tls) {
      cli = std::make_unique<httplib::ClientImpl>(host, upstream_port);
    } else {
      auto ssl = std::make_unique<httplib::SSLClient>(host, upstream_port);
      if (!ca.empty()) {
        X509_STORE* store = X509_STORE_new();  // owned by the SSL_CTX afterwards
        for (const auto& c : ca) X509_STORE_add_cert(store, c.get());
        ssl->set_ca_cert_store(store);
      }
      ssl->enable_server_certificate_verification(!options.upstream.insecure_skip_tls_verify);
      cli = std::move(ssl);
    }
    cli->set_connection_timeout(std::chrono::seconds(10));
    cli->set_read_timeout(read_timeout);
    cli->set_write_timeout(std::chrono::seconds(60));
    cli->set_tcp_nodelay(true);
    cli->set_decompress(true);
    return cli;
  }

  httplib::Request Upstream(const httplib::Request& req) const {
    httplib::Request up;
    up.method = req.method;
    up.path = req.target;
    up.headers = ForwardedHeaders(req.headers);
    up.headers.emplace("Accept-Encoding", "identity");  // else httplib asks for gzip, and a gzipped watch is held back
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
      up.body = req.body;
      up.headers.emplace("Content-Type", req.get_header_value("Content-Type"));
    }
    return up;
  }

  void Reply(httplib::Response& res, int status, const httplib::Headers& headers, std::string body) const {
    res.status = status;
    for (const auto& [k, v] : headers) {
      if (Forwarded(k)) res.headers.emplace(k, v);
    }
    res.set_content(std::move(body), ContentType(headers).c_str());
  }

  void ReplyStatus(httplib::Response& res, int code, const std::string& reason, const std::string& message) const {
    Reply(res, code, {{"Content-Type", "application/json"}}, StatusBody(code, reason, message));
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    const std::string client = devcluster::UserAgentLabel(req.get_header_value("User-Agent"));
    if (auto d = faults->DelayFor(client)) std::this_thread::sleep_for(*d);
    const WriteFault fault = faults->ForRequest(req.method, client);
    if (fault != WriteFault::kNone) {
      Log().Info("fault injected", {{"fault", std::string(devcluster::WriteFaultName(fault))},
                                    {"method", req.method},
                                    {"path", req.path},
                                    {"user_agent", client}});
    }
    if (fault == WriteFault::kConflict || fault == WriteFault::kErrorBeforeCommit) {
      const devcluster::FaultStatus fs = devcluster::FaultStatusOf(fault);
      ReplyStatus(res, fs.code, fs.reason, fs.message);
    } else if (req.method == "GET" && IsWatch(req)) {
      Watch(req, res, client);
    } else {
      Forward(req, res);
      if (fault == WriteFault::kErrorAfterCommit) {
        const devcluster::FaultStatus fs = devcluster::FaultStatusOf(fault);
        res = httplib::Response();
        ReplyStatus(res, fs.code, fs.reason, fs.message);
      }
    }
    if (options.log_requests) {
      Log().Info("request", {{"method", req.method},
                             {"path", req.path},
                             {"code", int64_t{res.status}},
                             {"user_agent", req.get_header_value("User-Agent")}});
    }
  }

  void Forward(const httplib::Request& req, httplib::Response& res) {
    auto cli = Acquire();
    httplib::Request up = Upstream(req);
    httplib::Response ur;
    httplib::Error err = httplib::Error::Success;
    if (!cli->send(up, ur, err)) {
      ReplyStatus(res, 503, "ServiceUnavailable", absl::StrCat("fault proxy: API server: ", httplib::to_string(err)));
      return;  // the connection is dropped, not pooled
    }
    Release(std::move(cli));
    Reply(res, ur.status, ur.headers, std::move(ur.body));
  }

  void Watch(const httplib::Request& req, httplib::Response& res, const std::string& client) {
    auto st = std::make_shared<WatchState>();
    st->cli = NewClient(std::chrono::hours(1));  // the API server ends the watch (timeoutSeconds)
    httplib::Request up = Upstream(req);
    up.response_handler = [st](const httplib::Response& r) {
      std::lock_guard<std::mutex> l(st->mu);
      st->status = r.status;
      st->headers = r.headers;
      st->headers_ready = true;
      st->cv.notify_all();
      return !st->cancel;
    };
    up.content_receiver = [st](const char* data, size_t n, uint64_t, uint64_t) {
      if (st->cancel) return false;
      std::lock_guard<std::mutex> l(st->mu);
      st->chunks.emplace_back(data, n);
      st->cv.notify_all();
      return true;
    };
    std::thread([st, up = std::move(up)]() mutable {
      httplib::Response r;
      httplib::Error err = httplib::Error::Success;
      st->cli->send(up, r, err);
      std::lock_guard<std::mutex> l(st->mu);
      if (!st->headers_ready) st->error = httplib::to_string(err);
      st->headers_ready = st->done = true;
      st->cv.notify_all();
    }).detach();

    std::unique_lock<std::mutex> l(st->mu);
    while (!st->headers_ready && !stopping) st->cv.wait_for(l, std::chrono::milliseconds(500));
    if (st->status != 200) {
      // Not a stream: an error Status (403, 410, ...) or no answer; wait for its whole body and pass it on.
      while (!st->done && !stopping) st->cv.wait_for(l, std::chrono::milliseconds(500));
      if (st->status == 0) {
        l.unlock();
        ReplyStatus(res, 503, "ServiceUnavailable", "fault proxy: API server: " + st->error);
        return;
      }
      std::string body;
      for (const auto& c : st->chunks) body += c;
      Reply(res, st->status, st->headers, std::move(body));
      return;
    }
    res.status = 200;
    for (const auto& [k, v] : st->headers) {
      if (Forwarded(k)) res.headers.emplace(k, v);
    }
    const std::string content_type = ContentType(st->headers);
    l.unlock();
    std::optional<Clock::time_point> cut_at;
    if (auto d = faults->WatchDropAfter(client)) cut_at = Clock::now() + *d;
    res.set_chunked_content_provider(
        content_type,
        [this, st, cut_at, path = req.path, client](size_t, httplib::DataSink& sink) {
          std::unique_lock<std::mutex> l(st->mu);
          while (true) {
            while (!st->chunks.empty()) {
              std::string c = std::move(st->chunks.front());
              st->chunks.pop_front();
              l.unlock();
              if (!sink.write(c.data(), c.size())) return false;
              l.lock();
            }
            if (st->done) {
              l.unlock();
              sink.done();
              return true;
            }
            const auto now = Clock::now();
            if (cut_at && now >= *cut_at) {
              // Closed without the final chunk, as a broken network would (the embedded cluster does the same).
              Log().Info("fault injected",
                         {{"fault", std::string("watch_drop")}, {"path", path}, {"user_agent", client}});
              return false;
            }
            if (stopping || !sink.is_writable()) return false;
            auto until = now + std::chrono::milliseconds(500);
            if (cut_at) until = std::min(until, *cut_at);
            st->cv.wait_until(l, until);
          }
        },
        [st](bool) {
          st->cancel = true;
          st->cli->stop();  // ends the upstream read now rather than at the next event
        });
  }
};

FaultProxy::FaultProxy(FaultProxyOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->faults = std::make_unique<devcluster::FaultInjector>(impl_->options.faults);
}

FaultProxy::~FaultProxy() { Stop(); }

absl::Status FaultProxy::Start() {
  if (absl::Status s = impl_->ParseUpstream(); !s.ok()) return s;
  Impl* impl = impl_.get();
  impl->server.new_task_queue = [n = impl->options.threads] { return new httplib::ThreadPool(n); };
  auto handler = [impl](const httplib::Request& req, httplib::Response& res) { impl->Handle(req, res); };
  impl->server.Get(".*", handler);
  impl->server.Post(".*", handler);
  impl->server.Put(".*", handler);
  impl->server.Patch(".*", handler);
  impl->server.Delete(".*", handler);
  port_ = impl->options.port == 0 ? impl->server.bind_to_any_port(impl->options.host)
                                  : (impl->server.bind_to_port(impl->options.host, impl->options.port)
                                         ? impl->options.port
                                         : -1);
  if (port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", impl->options.host, ":", impl->options.port));
  }
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  return absl::OkStatus();
}

void FaultProxy::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping = true;
  impl_->server.stop();
  impl_->thread.join();
}

absl::StatusOr<std::string> KubeconfigThroughProxy(const std::string& kubeconfig_yaml, const std::string& proxy_url) {
  try {
    YAML::Node root = YAML::Load(kubeconfig_yaml);
    if (!root["clusters"] || !root["clusters"].IsSequence() || root["clusters"].size() == 0) {
      return absl::InvalidArgumentError("kubeconfig: no clusters");
    }
    for (YAML::Node c : root["clusters"]) {
      YAML::Node cluster = c["cluster"];
      if (!cluster.IsMap()) return absl::InvalidArgumentError("kubeconfig: clusters[].cluster is not a map");
      cluster["server"] = proxy_url;
      for (const char* k : {"certificate-authority", "certificate-authority-data", "tls-server-name",
                            "insecure-skip-tls-verify"}) {
        cluster.remove(k);
      }
    }
    YAML::Emitter out;
    out << root;
    return std::string(out.c_str()) + "\n";
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig: ", e.what()));
  }
}

}  // namespace cloneset::testing
