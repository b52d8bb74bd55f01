// The executor's /readyz decision. A process whose caches once synced and whose planner once answered is not
// ready when it has lost either since: the API server (every request fails at the transport: no answer at all)
// or the planner (health checks and Plan calls fail). A single failed request is not enough, a retry fixes most of
// them; the loss counts once the contact has failed without a success for longer than a bound.
//
// ReadinessProblem is the pure decision (time is an input); ContactTracker records outcomes from the threads that
// make the calls; TrackedRestClient records every API request's outcome, PlannerContact every outcome the planner
// client reports.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "kube/rest_client.h"
#include "planner/client/planner_client.h"

namespace cloneset::executor {

// What is known about the contact with one peer.
struct Contact {
  std::optional<absl::Time> last_success;
  // The first failure after the last success (unset while the last outcome was a success, or before any failure).
  std::optional<absl::Time> failing_since;
  std::string last_error;
};

struct ReadinessInputs {
  bool stopping = false;
  bool caches_synced = false;
  Contact api_server;
  Contact planner;
};

// "" when ready, else why not (the /readyz body). A peer that was never reached is not ready; one that failed for
// at most `failure_bound` since its last success still is.
std::string ReadinessProblem(const ReadinessInputs& in, absl::Time now, absl::Duration failure_bound);

// Thread-safe record of one peer's outcomes.
class ContactTracker {
 public:
  explicit ContactTracker(const base::Clock* clock) : clock_(clock) {}
  void Success();
  void Failure(std::string_view error);
  Contact Get() const;

 private:
  const base::Clock* clock_;
  mutable absl::Mutex mu_;
  Contact contact_ ABSL_GUARDED_BY(mu_);
};

// The planner client's outcomes recorded in `tracker` (the planner's side of /readyz): Reached is a success,
// Unreachable a failure with its reason.
class PlannerContact final : public planner::client::ContactObserver {
 public:
  explicit PlannerContact(ContactTracker* tracker) : tracker_(tracker) {}
  void Reached() override { tracker_->Success(); }
  void Unreachable(std::string_view why) override { tracker_->Failure(why); }

 private:
  ContactTracker* tracker_;
};

// A RestClient that forwards to `inner` and records each request's outcome in `tracker`: any HTTP answer is
// contact (even an error status: the server is there), a transport error is a failure. Watches count when they
// deliver data or end without a transport error.
std::unique_ptr<kube::RestClient> NewTrackedRestClient(std::unique_ptr<kube::RestClient> inner,
                                                       ContactTracker* tracker);

}  // namespace cloneset::executor
