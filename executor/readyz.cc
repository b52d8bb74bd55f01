#include "executor/readyz.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kube/api_status.h"

namespace cloneset::executor {
namespace {

// Why `c` counts as lost at `now` ("" when it does not).
std::string Lost(std::string_view peer, const Contact& c, absl::Time now, absl::Duration bound) {
  if (!c.failing_since.has_value() || now - *c.failing_since <= bound) return "";
  return absl::StrCat("lost the ", std::string(peer), ": every request failed for ",
                      absl::FormatDuration(absl::Trunc(now - *c.failing_since, absl::Seconds(1))),
                      c.last_error.empty() ? "" : absl::StrCat(" (last error: ", c.last_error, ")"));
}

}  // namespace

std::string ReadinessProblem(const ReadinessInputs& in, absl::Time now, absl::Duration failure_bound) {
  if (in.stopping) return "shutting down";
  if (!in.caches_synced) return "caches not synced";
  if (std::string lost = Lost("API server", in.api_server, now, failure_bound); !lost.empty()) return lost;
  if (!in.planner.last_success.has_value()) {
    return in.planner.last_error.empty() ? "no planner answered yet"
                                         : absl::StrCat("no planner answered yet (", in.planner.last_error, ")");
  }
  return Lost("planner", in.planner, now, failure_bound);
}

void ContactTracker::Success() {
  const absl::Time now = clock_->Now();
  absl::MutexLock l(&mu_);
  contact_.last_success = now;
  contact_.failing_since.reset();
}

void ContactTracker::Failure(std::string_view error) {
  const absl::Time now = clock_->Now();
  absl::MutexLock l(&mu_);
  if (!contact_.failing_since.has_value()) contact_.failing_since = now;
  contact_.last_error = std::string(error);
}

Contact ContactTracker::Get() const {
  absl::MutexLock l(&mu_);
  return contact_;
}

namespace {

// Only transport failures are failures: an HTTP answer of any status shows the API server is there.
void Record(ContactTracker& tracker, const absl::Status& s) {
  if (s.ok() || kube::HttpCode(s).has_value()) {
    tracker.Success();
  } else {
    tracker.Failure(s.ToString());
  }
}

class TrackedRestClient final : public kube::RestClient {
 public:
  TrackedRestClient(std::unique_ptr<kube::RestClient> inner, ContactTracker* tracker)
      : inner_(std::move(inner)), tracker_(tracker) {}

  absl::StatusOr<kube::HttpResponse> Do(std::string_view method, std::string_view path, std::string_view body,
                                        std::string_view content_type) override {
    auto resp = inner_->Do(method, path, body, content_type);
    Record(*tracker_, resp.status());
    return resp;
  }

  absl::Status Watch(std::string_view path, const std::function<bool(std::string_view)>& on_data,
                     kube::CancelToken* cancel) override {
    bool seen = false;
    absl::Status s = inner_->Watch(
        path,
        [&](std::string_view data) {
          if (!seen) {  // once per stream: the bytes that follow come over the same connection
            seen = true;
            tracker_->Success();
          }
          return on_data(data);
        },
        cancel);
    Record(*tracker_, s);
    return s;
  }

 private:
  std::unique_ptr<kube::RestClient> inner_;
  ContactTracker* tracker_;
};

}  // namespace

std::unique_ptr<kube::RestClient> NewTrackedRestClient(std::unique_ptr<kube::RestClient> inner,
                                                       ContactTracker* tracker) {
  return std::make_unique<TrackedRestClient>(std::move(inner), tracker);
}

}  // namespace cloneset::executor
