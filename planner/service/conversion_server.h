// The CloneSet CRD's conversion webhook, served by the planner over HTTPS (docs/deployment.md, "The conversion
// webhook"): POST /convert takes an apiextensions.k8s.io ConversionReview and answers it with
// conversion/review.h. The API server calls it for every CloneSet it reads or writes in a version other than the one
// stored; it presents no client certificate, so the endpoint authenticates nobody and converts only (it reads and
// writes nothing else).
//
// The serving certificate is read from PEM files at every TLS handshake that comes at least `reload_every` after the
// last read, so a certificate renewed in its Secret (cert-manager, or the chart's) is served without a restart; a
// pair that does not load (half-written, key not matching) keeps the previous one and is logged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/log.h"
#include "prometheus/registry.h"

namespace cloneset::planner::service {

struct ConversionServerOptions {
  std::string listen;     // host:port, port 0 picks a free one
  std::string tls_cert;   // PEM certificate chain (leaf first)
  std::string tls_key;    // PEM private key of the leaf
  int64_t max_body_bytes = 64 << 20;
  absl::Duration reload_every = absl::Seconds(30);
  base::Clock* clock = nullptr;  // null: the real clock
};

class ConversionServer {
 public:
  // Loads the certificate (InvalidArgument naming the flag when it cannot), binds (Unavailable when it cannot) and
  // serves on a thread of its own until Stop. Metrics go to `registry`, failed reviews to `log`.
  static absl::StatusOr<std::unique_ptr<ConversionServer>> Start(const ConversionServerOptions& options,
                                                                 prometheus::Registry& registry, base::JsonLogger* log);
  ~ConversionServer();  // Stop()
  ConversionServer(const ConversionServer&) = delete;
  ConversionServer& operator=(const ConversionServer&) = delete;

  int port() const;
  // Stops accepting, lets the requests in flight finish and joins the thread. Idempotent.
  void Stop();

  struct Impl;

 private:
  explicit ConversionServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloneset::planner::service
