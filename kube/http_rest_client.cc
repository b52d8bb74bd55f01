// The HTTPS implementation of RestClient over cpp-httplib.
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "httplib.h"
#include "kube/api_status.h"
#include "kube/buffered_tls_client.h"
#include "kube/series_cache.h"
#include "kube/rest_client.h"
#include "kube/token_bucket.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace cloneset::kube {
namespace {

struct Endpoint {
  bool tls = true;
  std::string host;  // without brackets
  int port = 443;
  std::string base_path;  // e.g. "/k8s/clusters/c-1" behind a proxy; usually empty
};

absl::StatusOr<Endpoint> ParseServer(const std::string& server) {
  Endpoint ep;
  absl::string_view rest = server;
  if (absl::ConsumePrefix(&rest, "https://")) {
    ep.tls = true;
    ep.port = 443;
  } else if (absl::ConsumePrefix(&rest, "http://")) {
    ep.tls = false;
    ep.port = 80;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("server \"", server, "\": unsupported scheme"));
  }
  auto slash = rest.find('/');
  if (slash != absl::string_view::npos) {
    ep.base_path = std::string(absl::StripSuffix(rest.substr(slash), "/"));
    rest = rest.substr(0, slash);
  }
  absl::string_view port_str;
  if (absl::ConsumePrefix(&rest, "[")) {
    auto close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("server \"", server, "\": bad IPv6 address"));
    }
    ep.host = std::string(rest.substr(0, close));
    rest = rest.substr(close + 1);
    if (absl::ConsumePrefix(&rest, ":")) port_str = rest;
  } else {
    auto colon = rest.rfind(':');
    ep.host = std::string(rest.substr(0, colon));
    if (colon != absl::string_view::npos) port_str = rest.substr(colon + 1);
  }
  if (!port_str.empty() && (!absl::SimpleAtoi(port_str, &ep.port) || ep.port <= 0 || ep.port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("server \"", server, "\": bad port"));
  }
  if (ep.host.empty()) return absl::InvalidArgumentError(absl::StrCat("server \"", server, "\": no host"));
  return ep;
}

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PKeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr MemBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::vector<std::unique_ptr<X509, X509Deleter>> ParseCerts(const std::string& pem) {
  std::vector<std::unique_ptr<X509, X509Deleter>> out;
  BioPtr bio = MemBio(pem);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(x);
  ERR_clear_error();  // the loop ends on a "no start line" error
  return out;
}

const std::vector<double>& LatencyBuckets() {
  // controller-runtime's rest_client_request_duration_seconds buckets.
  static const std::vector<double> b = {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};
  return b;
}

const std::vector<double>& SizeBuckets() {
  // client-go's rest_client_request_size_bytes and rest_client_response_size_bytes buckets.
  static const std::vector<double> b = {64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};
  return b;
}

bool IsRetriable(std::string_view method, int status, bool has_retry_after) {
  if (status == 429) return true;  // the request was not processed
  if (status < 500) return false;
  // A 5xx write may have been applied. Reads and idempotent writes are safe
  // to repeat; POST/PATCH only when the server asked for it (Retry-After),
  // as client-go does.
  if (method == "GET" || method == "PUT" || method == "DELETE" || method == "HEAD") return true;
  return has_retry_after;
}

class HttpRestClient final : public RestClient {
 public:
  HttpRestClient(Endpoint ep, ClientConfig cfg, RestClientOptions opts)
      : ep_(std::move(ep)),
        cfg_(std::move(cfg)),
        opts_(std::move(opts)),
        clock_(opts_.clock ? opts_.clock : &base::RealClock::Get()),
        tokens_(cfg_.token, cfg_.token_file),
        bucket_(opts_.qps, opts_.burst, clock_->Now()) {
    if (!opts_.sleep) opts_.sleep = [](absl::Duration d) { absl::SleepFor(d); };
    host_label_ = ep_.port == (ep_.tls ? 443 : 80) ? ep_.host : absl::StrCat(ep_.host, ":", ep_.port);
    if (opts_.registry != nullptr) {
      requests_ = &prometheus::BuildCounter()
                       .Name("rest_client_requests_total")
                       .Help("Number of HTTP requests, partitioned by status code, method, and host.")
                       .Register(*opts_.registry);
      latency_ = &prometheus::BuildHistogram()
                      .Name("rest_client_request_duration_seconds")
                      .Help("Request latency in seconds. Broken down by verb, and host.")
                      .Register(*opts_.registry);
      request_size_ = &prometheus::BuildHistogram()
                           .Name("rest_client_request_size_bytes")
                           .Help("Request size in bytes. Broken down by verb and host.")
                           .Register(*opts_.registry);
      response_size_ = &prometheus::BuildHistogram()
                            .Name("rest_client_response_size_bytes")
                            .Help("Response size in bytes. Broken down by verb and host.")
                            .Register(*opts_.registry);
      // Not a client-go metric: client-go does not count a watch stream's bytes, and they are most of what a
      // controller reads (every change of every watched object).
      watch_bytes_ = &prometheus::BuildCounter()
                          .Name("cloneset_rest_client_watch_received_bytes_total")
                          .Help("Bytes of watch response bodies received, by host.")
                          .Register(*opts_.registry)
                          .Add({{"host", host_label_}});
    }
  }

  absl::Status Init() {
    if (!cfg_.ca_pem.empty() && ParseCerts(cfg_.ca_pem).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(cfg_.source, ": certificate-authority holds no PEM certificate"));
    }
    if (!cfg_.client_cert_pem.empty()) {
      auto certs = ParseCerts(cfg_.client_cert_pem);
      if (certs.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(cfg_.source, ": client-certificate holds no PEM certificate"));
      }
      client_cert_ = std::move(certs.front());
      BioPtr bio = MemBio(cfg_.client_key_pem);
      client_key_.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
      if (!client_key_) {
        ERR_clear_error();
        return absl::InvalidArgumentError(
            absl::StrCat(cfg_.source, ": client-key holds no PEM private key"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<HttpResponse> Do(std::string_view method, std::string_view path,
                                  std::string_view body, std::string_view content_type) override {
    for (int attempt = 0;; ++attempt) {
      Throttle();
      auto resp = DoOnce(method, path, body, content_type);
      const bool can_retry = attempt < opts_.max_retries;
      if (!resp.ok()) {
        // Connection failures: only a read is certainly safe to repeat.
        if (!can_retry || method != "GET") return resp.status();
        opts_.sleep(Backoff(attempt));
        continue;
      }
      const std::string retry_after = resp->Header("retry-after");
      if (!can_retry || !IsRetriable(method, resp->status, !retry_after.empty())) return resp;
      int seconds = 0;
      absl::Duration wait = Backoff(attempt);
      if (absl::SimpleAtoi(retry_after, &seconds) && seconds >= 0) {
        wait = std::min(absl::Seconds(seconds), opts_.max_retry_after);
      }
      opts_.sleep(wait);
    }
  }

  absl::Status Watch(std::string_view path, const std::function<bool(std::string_view)>& on_data,
                     CancelToken* cancel) override {
    Throttle();
    auto cli = NewClient();
    auto read_timeout = absl::ToChronoSeconds(opts_.watch_read_timeout);
    cli->set_read_timeout(read_timeout);
    auto token = tokens_.Token();
    if (!token.ok()) return token.status();
    httplib::Request req;
    req.method = "GET";
    req.path = ep_.base_path + std::string(path);
    req.headers = BaseHeaders(*token);
    int status = 0;
    std::string error_body;
    req.response_handler = [&](const httplib::Response& r) {
      status = r.status;
      return !(cancel && cancel->cancelled());
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (cancel && cancel->cancelled()) return false;
      if (status < 200 || status >= 300) {
        if (error_body.size() < 64 * 1024) error_body.append(data, n);
        return true;
      }
      if (watch_bytes_ != nullptr) watch_bytes_->Increment(static_cast<double>(n));
      return on_data(std::string_view(data, n));
    };
    if (cancel && !cancel->OnCancel([c = cli.get()] { c->stop(); })) return absl::OkStatus();
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    cli->send(req, res, err);
    if (cancel) cancel->ClearOnCancel();
    // Counted, but kept out of the latency histogram: a watch lasts minutes.
    Record("GET", status, std::nullopt);
    if (cancel && cancel->cancelled()) return absl::OkStatus();
    if (status != 0 && (status < 200 || status >= 300)) return StatusFromHttp(status, error_body);
    if (err == httplib::Error::Success || err == httplib::Error::Canceled) return absl::OkStatus();
    return absl::UnavailableError(
        absl::StrCat("watch ", std::string(path), ": ", httplib::to_string(err)));
  }

 private:
  void Throttle() {
    if (bucket_.unlimited()) return;
    absl::Duration wait = bucket_.Reserve(clock_->Now());
    if (wait > absl::ZeroDuration()) opts_.sleep(wait);
  }

  static absl::Duration Backoff(int attempt) {
    return std::min(absl::Milliseconds(100) * (1 << std::min(attempt, 6)), absl::Seconds(5));
  }

  httplib::Headers BaseHeaders(const std::string& token) const {
    httplib::Headers h = {{"Accept", "application/json"}, {"User-Agent", opts_.user_agent}};
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return h;
  }

  std::unique_ptr<httplib::ClientImpl> NewClient() {
    // With tls-server-name we dial the real host but verify (and send SNI
    // for) the configured name, via httplib's hostname->address map.
    const std::string& name = cfg_.tls_server_name.empty() ? ep_.host : cfg_.tls_server_name;
    std::unique_ptr<httplib::ClientImpl> cli;
    if (!ep_.tls) {
      cli = std::make_unique<httplib::ClientImpl>(ep_.host, ep_.port);
    } else {
      // BufferedSslClient: httplib's TLS client without its one SSL_read per header byte (buffered_tls_client.h).
      std::unique_ptr<httplib::SSLClient> ssl =
          client_cert_ ? std::make_unique<BufferedSslClient>(name, ep_.port, client_cert_.get(), client_key_.get())
                       : std::make_unique<BufferedSslClient>(name, ep_.port);
      if (!cfg_.ca_pem.empty()) {
        X509_STORE* store = X509_STORE_new();  // owned by the SSL_CTX afterwards
        for (auto& c : ParseCerts(cfg_.ca_pem)) X509_STORE_add_cert(store, c.get());
        ssl->set_ca_cert_store(store);
      }
      ssl->enable_server_certificate_verification(!cfg_.insecure_skip_tls_verify);
      if (name != ep_.host) ssl->set_hostname_addr_map({{name, ep_.host}});
      cli = std::move(ssl);
    }
    auto timeout = absl::ToChronoSeconds(opts_.request_timeout);
    cli->set_connection_timeout(std::min<std::chrono::seconds>(timeout, std::chrono::seconds(10)));
    cli->set_read_timeout(timeout);
    cli->set_write_timeout(timeout);
    cli->set_keep_alive(true);
    // httplib writes a request's headers and body separately: with Nagle on, a PATCH/POST body waits for the
    // server's delayed ACK of the headers (~40 ms on Linux), which capped writes at ~22/s per connection.
    cli->set_tcp_nodelay(true);
    return cli;
  }

  // The most recently released connection that has not been idle longer than max_idle (older ones are closed:
  // the server may have closed them already, and a request written to such a connection fails), else a new one.
  std::unique_ptr<httplib::ClientImpl> Acquire() {
    std::vector<PooledClient> stale;  // closed outside the lock
    {
      absl::MutexLock l(&pool_mu_);
      const absl::Time now = clock_->Now();
      while (!idle_.empty()) {
        PooledClient p = std::move(idle_.back());
        idle_.pop_back();
        if (now - p.released_at <= opts_.max_idle) return std::move(p.client);
        stale.push_back(std::move(p));
      }
    }
    return NewClient();
  }

  void Release(std::unique_ptr<httplib::ClientImpl> c) {
    absl::MutexLock l(&pool_mu_);
    if (idle_.size() < 16) idle_.push_back({std::move(c), clock_->Now()});
  }

  absl::StatusOr<HttpResponse> DoOnce(std::string_view method, std::string_view path,
                                      std::string_view body, std::string_view content_type) {
    auto token = tokens_.Token();
    if (!token.ok()) return token.status();
    httplib::Request req;
    req.method = std::string(method);
    req.path = ep_.base_path + std::string(path);
    req.headers = BaseHeaders(*token);
    if (!body.empty()) {
      req.body = std::string(body);
      req.headers.emplace("Content-Type", std::string(content_type));
    }
    auto cli = Acquire();
    const absl::Time start = clock_->Now();
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool ok = cli->send(req, res, err);
    Record(method, ok ? res.status : 0, start);
    if (ok) RecordSizes(method, req.body.size(), res.body.size());
    if (!ok) {
      return absl::UnavailableError(absl::StrCat(std::string(method), " ", cfg_.server, std::string(path), ": ",
                                                 httplib::to_string(err)));
    }
    Release(std::move(cli));
    HttpResponse out;
    out.status = res.status;
    out.body = std::move(res.body);
    for (auto& [k, v] : res.headers) out.headers.emplace(absl::AsciiStrToLower(k), std::move(v));
    return out;
  }

  // `code` 0: no HTTP answer (transport error). The counter of (method, code) and the histogram of a method are
  // looked up in the families once each and kept: prometheus-cpp's Family::Add builds and hashes a label map per
  // call. Looked up per request, the metrics cost this client +0.1 to +1.2 us per request; kept, -0.7 to +0.4 us
  // (noise), of the 17.5-19.4 us a loopback request costs (kube_rest_client_bench, BM_LoopbackPatch/1 against /0;
  // docs/performance.md "Requests and threads per pod").
  void Record(std::string_view method, int code, std::optional<absl::Time> start) {
    if (requests_ == nullptr) return;
    std::string key(method);
    key += ' ';
    absl::StrAppend(&key, code);
    counters_
        .Get(key,
             [&] {
               return &requests_->Add({{"code", code != 0 ? absl::StrCat(code) : "<error>"},
                                       {"method", std::string(method)},
                                       {"host", host_label_}});
             })
        ->Increment();
    if (!start) return;  // a watch: counted, not timed
    prometheus::Histogram* histogram = histograms_.Get(method, [&] {
      return &latency_->Add({{"verb", std::string(method)}, {"host", host_label_}}, LatencyBuckets());
    });
    histogram->Observe(absl::ToDoubleSeconds(clock_->Now() - *start));
  }

  // Body sizes of an answered request (not of a watch: its bytes go to watch_bytes_ as they arrive).
  void RecordSizes(std::string_view method, size_t request_bytes, size_t response_bytes) {
    if (request_size_ == nullptr) return;
    auto [request, response] = size_histograms_.Get(method, [&] {
      const prometheus::Labels labels = {{"verb", std::string(method)}, {"host", host_label_}};
      return std::pair{&request_size_->Add(labels, SizeBuckets()), &response_size_->Add(labels, SizeBuckets())};
    });
    request->Observe(static_cast<double>(request_bytes));
    response->Observe(static_cast<double>(response_bytes));
  }

  const Endpoint ep_;
  const ClientConfig cfg_;
  RestClientOptions opts_;
  base::Clock* clock_;
  TokenSource tokens_;
  TokenBucket bucket_;
  std::unique_ptr<X509, X509Deleter> client_cert_;
  std::unique_ptr<EVP_PKEY, PKeyDeleter> client_key_;
  std::string host_label_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* latency_ = nullptr;
  prometheus::Family<prometheus::Histogram>* request_size_ = nullptr;
  prometheus::Family<prometheus::Histogram>* response_size_ = nullptr;
  prometheus::Counter* watch_bytes_ = nullptr;
  // Series of the families above (which own them and never remove them): "METHOD code" -> counter, and
  // method -> histogram.
  SeriesCache<prometheus::Counter*> counters_;
  SeriesCache<prometheus::Histogram*> histograms_;
  SeriesCache<std::pair<prometheus::Histogram*, prometheus::Histogram*>> size_histograms_;  // request, response
  absl::Mutex pool_mu_;
  struct PooledClient {
    std::unique_ptr<httplib::ClientImpl> client;
    absl::Time released_at;
  };
  std::vector<PooledClient> idle_ ABSL_GUARDED_BY(pool_mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<RestClient>> NewHttpRestClient(const ClientConfig& config,
                                                              RestClientOptions options) {
  auto ep = ParseServer(config.server);
  if (!ep.ok()) return absl::InvalidArgumentError(absl::StrCat(config.source, ": ", ep.status().message()));
  auto client = std::make_unique<HttpRestClient>(*std::move(ep), config, std::move(options));
  if (auto s = client->Init(); !s.ok()) return s;
  return client;
}

}  // namespace cloneset::kube
