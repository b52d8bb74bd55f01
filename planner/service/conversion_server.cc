#include "planner/service/conversion_server.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/endpoints.h"
#include "conversion/review.h"
#include "httplib.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"

namespace cloneset::planner::service {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

// A certificate chain and its key, parsed once and shared by the handshakes that use it.
struct CertBundle {
  std::string cert_pem, key_pem;
  std::vector<X509Ptr> chain;  // leaf first
  KeyPtr key;
};

absl::StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError("--" + flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no detail";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

absl::StatusOr<std::shared_ptr<const CertBundle>> ParseBundle(std::string cert_pem, std::string key_pem,
                                                              const std::string& cert_path,
                                                              const std::string& key_path) {
  auto b = std::make_shared<CertBundle>();
  BioPtr cert_bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  while (X509* x = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) b->chain.emplace_back(x);
  ERR_clear_error();  // the end of the PEM stream reads as an error
  if (b->chain.empty()) {
    return absl::InvalidArgumentError("--conversion_tls_cert: " + cert_path + " holds no PEM certificate");
  }
  BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  b->key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (b->key == nullptr) {
    return absl::InvalidArgumentError("--conversion_tls_key: " + key_path + " holds no PEM private key (" +
                                      OpenSslError() + ")");
  }
  if (X509_check_private_key(b->chain.front().get(), b->key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("--conversion_tls_key: " + key_path + " is not the key of the certificate in " +
                                      cert_path);
  }
  b->cert_pem = std::move(cert_pem);
  b->key_pem = std::move(key_pem);
  return std::shared_ptr<const CertBundle>(std::move(b));
}

// The serving certificate, re-read from its files when a handshake comes `every` after the last read.
class CertSource {
 public:
  CertSource(std::string cert_path, std::string key_path, absl::Duration every, base::Clock* clock,
             base::JsonLogger* log)
      : cert_path_(std::move(cert_path)), key_path_(std::move(key_path)), every_(every), clock_(clock), log_(log) {}

  absl::Status Load() {
    absl::StatusOr<std::shared_ptr<const CertBundle>> b = Read();
    if (!b.ok()) return b.status();
    absl::MutexLock lock(&mu_);
    current_ = *std::move(b);
    last_read_ = clock_->Now();
    return absl::OkStatus();
  }

  std::shared_ptr<const CertBundle> Current() {
    {
      absl::MutexLock lock(&mu_);
      if (clock_->Now() - last_read_ < every_) return current_;
      last_read_ = clock_->Now();
    }
    absl::StatusOr<std::shared_ptr<const CertBundle>> b = Read();
    absl::MutexLock lock(&mu_);
    if (!b.ok()) {
      if (log_ != nullptr) {
        log_->Warn("conversion webhook certificate not reloaded; serving the previous one",
                   {{"error", std::string(b.status().message())}});
      }
      return current_;
    }
    if ((*b)->cert_pem != current_->cert_pem || (*b)->key_pem != current_->key_pem) {
      current_ = *std::move(b);
      if (log_ != nullptr) log_->Info("conversion webhook certificate reloaded", {{"cert", cert_path_}});
    }
    return current_;
  }

 private:
  absl::StatusOr<std::shared_ptr<const CertBundle>> Read() const {
    absl::StatusOr<std::string> cert = ReadFile("conversion_tls_cert", cert_path_);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile("conversion_tls_key", key_path_);
    if (!key.ok()) return key.status();
    return ParseBundle(*std::move(cert), *std::move(key), cert_path_, key_path_);
  }

  const std::string cert_path_, key_path_;
  const absl::Duration every_;
  base::Clock* const clock_;
  base::JsonLogger* const log_;
  absl::Mutex mu_;
  std::shared_ptr<const CertBundle> current_;
  absl::Time last_read_;
};

// OpenSSL's certificate callback: puts the current certificate and key on each connection as it handshakes.
int UseCurrentCertificate(SSL* ssl, void* arg) {
  std::shared_ptr<const CertBundle> b = static_cast<CertSource*>(arg)->Current();
  if (b == nullptr || SSL_use_certificate(ssl, b->chain.front().get()) != 1 ||
      SSL_use_PrivateKey(ssl, b->key.get()) != 1) {
    return 0;
  }
  for (size_t i = 1; i < b->chain.size(); ++i) {
    if (SSL_add1_chain_cert(ssl, b->chain[i].get()) != 1) return 0;
  }
  return 1;
}

}  // namespace

struct ConversionServer::Impl {
  std::unique_ptr<CertSource> certs;
  std::unique_ptr<httplib::SSLServer> server;
  std::thread thread;
  int port = 0;
  base::JsonLogger* log = nullptr;
  prometheus::Family<prometheus::Counter>* reviews = nullptr;
  prometheus::Family<prometheus::Counter>* objects = nullptr;
  prometheus::Histogram* duration = nullptr;
};

absl::StatusOr<std::unique_ptr<ConversionServer>> ConversionServer::Start(const ConversionServerOptions& options,
                                                                          prometheus::Registry& registry,
                                                                          base::JsonLogger* log) {
  std::string host;
  int port = 0;
  if (!base::SplitHostPort(options.listen, &host, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError("--conversion_listen: \"" + options.listen + "\" is not host:port");
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return absl::InvalidArgumentError(std::string("--") +
                                      (options.tls_cert.empty() ? "conversion_tls_cert" : "conversion_tls_key") +
                                      ": required with --conversion_listen (the API server calls webhooks over "
                                      "HTTPS only)");
  }
  if (options.max_body_bytes <= 0) return absl::InvalidArgumentError("--max_request_bytes: must be positive");
  auto impl = std::make_unique<Impl>();
  impl->log = log;
  base::Clock* clock = options.clock != nullptr ? options.clock : &base::RealClock::Get();
  impl->certs = std::make_unique<CertSource>(options.tls_cert, options.tls_key, options.reload_every, clock, log);
  if (absl::Status s = impl->certs->Load(); !s.ok()) return s;
  CertSource* certs = impl->certs.get();
  impl->server = std::make_unique<httplib::SSLServer>([certs](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    SSL_CTX_set_cert_cb(&ctx, UseCurrentCertificate, certs);
    return true;
  });
  if (!impl->server->is_valid()) return absl::InternalError("the conversion webhook's TLS setup failed");

  impl->reviews = &prometheus::BuildCounter()
                       .Name("cloneset_planner_conversion_reviews_total")
                       .Help("ConversionReviews answered by the CRD conversion webhook, by result (success, failure: "
                             "an object could not be converted, bad_request: not a ConversionReview).")
                       .Register(registry);
  impl->objects = &prometheus::BuildCounter()
                       .Name("cloneset_planner_conversion_objects_total")
                       .Help("CloneSets converted by the conversion webhook, by the version converted to.")
                       .Register(registry);
  impl->duration = &prometheus::BuildHistogram()
                        .Name("cloneset_planner_conversion_duration_seconds")
                        .Help("Time to answer one ConversionReview, excluding transport.")
                        .Register(registry)
                        .Add({}, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                                         0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1});
  for (const char* r : {"success", "failure", "bad_request"}) impl->reviews->Add({{"result", r}});
  for (const char* v : {"v1alpha1", "v1beta1"}) impl->objects->Add({{"to_version", v}});

  Impl* self = impl.get();
  impl->server->set_payload_max_length(static_cast<size_t>(options.max_body_bytes));
  impl->server->set_read_timeout(30, 0);
  impl->server->set_write_timeout(30, 0);
  impl->server->Post("/convert", [self](const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    const conversion::ReviewOutcome out = conversion::HandleConversionReview(req.body);
    self->duration->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    const char* result = out.success ? "success" : out.http_status == 200 ? "failure" : "bad_request";
    self->reviews->Add({{"result", result}}).Increment();
    if (out.success) {
      const std::string& v = out.desired_api_version;
      self->objects->Add({{"to_version", v.substr(v.find('/') + 1)}}).Increment(out.objects);
    } else if (self->log != nullptr) {
      self->log->Warn("conversion review failed", {{"error", out.message}, {"result", std::string(result)}});
    }
    res.status = out.http_status;
    res.set_content(out.body, "application/json");
  });
  if (port == 0) {
    port = impl->server->bind_to_any_port(host);
  } else if (!impl->server->bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) return absl::UnavailableError("--conversion_listen: cannot listen on " + options.listen);
  impl->port = port;
  impl->thread = std::thread([server = impl->server.get()] { server->listen_after_bind(); });
  // httplib ignores a stop() that comes before its accept loop runs: return only once it runs.
  for (int i = 0; i < 5000 && !impl->server->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<ConversionServer>(new ConversionServer(std::move(impl)));
}

ConversionServer::ConversionServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ConversionServer::~ConversionServer() { Stop(); }

int ConversionServer::port() const { return impl_->port; }

void ConversionServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server->stop();
  impl_->thread.join();
}

}  // namespace cloneset::planner::service
