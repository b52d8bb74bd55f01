// The executor's overall write rate: a token bucket in front of every write (POST, PUT, PATCH, DELETE) its
// reconciles and events make, as client-go's client-side rate limiter (and upstream Kruise's client, 30 requests/s)
// bounds a controller's load on the API server whatever its reconciles do. Reads and watches are not limited (the
// caches' watches must keep up). The per-CloneSet back-off (retry_backoff.h) keeps one failing CloneSet slow; this
// bounds all of them together, e.g. every CloneSet of a namespace refused at once.
#pragma once

#include <memory>
#include <string_view>

#include "base/clock.h"
#include "kube/rest_client.h"
#include "kube/token_bucket.h"

namespace cloneset::executor {

// Whether `method` writes ("POST", "PUT", "PATCH", "DELETE").
bool IsWrite(std::string_view method);

// Forwards to `inner` (which must outlive it); a write first takes a token from a bucket of `burst` tokens refilled
// at `qps` per second, waiting on `clock` for it. qps <= 0: no limit.
class WriteRateLimitedRestClient final : public kube::RestClient {
 public:
  WriteRateLimitedRestClient(kube::RestClient& inner, double qps, int burst, const base::Clock& clock)
      : inner_(inner), clock_(clock), bucket_(qps, std::max(1, burst), clock.Now()) {}

  absl::StatusOr<kube::HttpResponse> Do(std::string_view method, std::string_view path, std::string_view body,
                                        std::string_view content_type) override;
  absl::Status Watch(std::string_view path, const std::function<bool(std::string_view)>& on_data,
                     kube::CancelToken* cancel) override {
    return inner_.Watch(path, on_data, cancel);
  }

 private:
  kube::RestClient& inner_;
  const base::Clock& clock_;
  kube::TokenBucket bucket_;
};

}  // namespace cloneset::executor
