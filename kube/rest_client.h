#ifndef CLONESET_KUBE_REST_CLIENT_H_
#define CLONESET_KUBE_REST_CLIENT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "kube/config.h"

namespace prometheus {
class Registry;
}

namespace cloneset::kube {

enum class PatchType { kJson, kMerge, kStrategicMerge, kApply };
std::string_view PatchContentType(PatchType type);

struct HttpResponse {
  int status = 0;
  std::string body;
  std::multimap<std::string, std::string> headers;  // lower-case names
  std::string Header(std::string_view lower_name) const;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  std::string continue_token;
  int limit = 0;  // 0: no paging
};
// `path` plus the options as a URL query (values percent-encoded).
std::string WithListOptions(std::string_view path, const ListOptions& opts);

// Cancels a watch from another thread. The stream's owner registers how to
// abort the blocking read (closing the socket); Cancel() runs it.
class CancelToken {
 public:
  void Cancel();
  bool cancelled() const;
  // Returns false (and does not register) when already cancelled.
  bool OnCancel(std::function<void()> abort);
  void ClearOnCancel();

 private:
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> abort_ ABSL_GUARDED_BY(mu_);
};

// The API server as seen by controllers. Paths are absolute API paths with
// their query ("/api/v1/namespaces/ns/pods?labelSelector=a%3Db").
// Implementations must be safe to call from many threads at once.
class RestClient {
 public:
  virtual ~RestClient() = default;

  // Any HTTP status is a response; only transport failures are errors.
  virtual absl::StatusOr<HttpResponse> Do(std::string_view method, std::string_view path,
                                          std::string_view body = "",
                                          std::string_view content_type = "application/json") = 0;

  // GETs `path` (which should carry watch=1) and hands the body bytes to
  // `on_data` as they arrive; it returns false to stop. Returns OK when the
  // server ended the stream, `on_data` stopped it or `cancel` fired; the
  // mapped Status for a non-2xx answer; kUnavailable for transport errors.
  virtual absl::Status Watch(std::string_view path,
                             const std::function<bool(std::string_view)>& on_data,
                             CancelToken* cancel) = 0;

  // Typed helpers: the body on 2xx, else the Status mapped by api_status.h.
  // Virtual so tests can stub them with kube/testing/mock_rest_client.h.
  virtual absl::StatusOr<std::string> Get(std::string_view path);
  virtual absl::StatusOr<std::string> List(std::string_view path, const ListOptions& opts);
  virtual absl::StatusOr<std::string> Create(std::string_view collection_path, std::string_view body);
  virtual absl::StatusOr<std::string> Update(std::string_view path, std::string_view body);
  virtual absl::StatusOr<std::string> Patch(std::string_view path, PatchType type,
                                            std::string_view body);
  virtual absl::StatusOr<std::string> Delete(std::string_view path, std::string_view body = "");

 private:
  absl::StatusOr<std::string> Call(std::string_view method, std::string_view path,
                                   std::string_view body, std::string_view content_type);
};

// Whether the API server lists `resource` ("pods/resize") in its discovery document of `group_version_path`
// ("/api/v1", "/apis/apps/v1"): one GET of that APIResourceList. An answer without the resource is false; a
// failed GET or an unreadable document is the error.
absl::StatusOr<bool> ServesResource(RestClient& client, std::string_view group_version_path,
                                    std::string_view resource);

struct RestClientOptions {
  // Client-side rate limit; qps <= 0 disables it (the default, relying on
  // the server's priority and fairness like controller-runtime >= 0.21).
  double qps = -1;
  int burst = 10;
  // Retries of 429 and 5xx answers (see rest_client.cc for which verbs).
  int max_retries = 5;
  absl::Duration max_retry_after = absl::Seconds(10);
  absl::Duration request_timeout = absl::Seconds(30);
  // Read timeout of watch streams; must exceed the watch's timeoutSeconds.
  absl::Duration watch_read_timeout = absl::Minutes(11);
  std::string user_agent = "cloneset-controller";
  prometheus::Registry* registry = nullptr;  // metrics off when null
  base::Clock* clock = nullptr;              // RealClock when null
  std::function<void(absl::Duration)> sleep;  // absl::SleepFor when empty
  // A pooled keep-alive connection idle for longer is closed instead of reused: servers close idle connections
  // (kube-apiserver after 90 s, the embedded cluster after 30 s) and a request written to one fails.
  absl::Duration max_idle = absl::Seconds(20);
};

// Creates the HTTP(S) client for `config`. httplib clients are not
// thread-safe, so requests take a client from a small pool (creating one if
// none is idle) and return it afterwards; each watch gets its own
// connection. Fails early on unreadable CA, certificate or key PEM.
absl::StatusOr<std::unique_ptr<RestClient>> NewHttpRestClient(const ClientConfig& config,
                                                              RestClientOptions options = {});

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_REST_CLIENT_H_
