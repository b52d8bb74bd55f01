#include "executor/write_limit.h"

namespace cloneset::executor {

bool IsWrite(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

absl::StatusOr<kube::HttpResponse> WriteRateLimitedRestClient::Do(std::string_view method, std::string_view path,
                                                                  std::string_view body,
                                                                  std::string_view content_type) {
  if (IsWrite(method) && !bucket_.unlimited()) {
    const absl::Duration wait = bucket_.Reserve(clock_.Now());
    if (wait > absl::ZeroDuration()) clock_.SleepFor(wait);
  }
  return inner_.Do(method, path, body, content_type);
}

}  // namespace cloneset::executor
