#ifndef CLONESET_KUBE_WORKQUEUE_H_
#define CLONESET_KUBE_WORKQUEUE_H_

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "kube/token_bucket.h"

namespace prometheus {
class Registry;
}

namespace cloneset::kube {

// How long an item waits before its next retry (client-go semantics).
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  virtual absl::Duration When(const std::string& item) = 0;
  virtual void Forget(const std::string& item) = 0;
  virtual int NumRequeues(const std::string& item) = 0;
};

// base * 2^failures, capped at max_delay.
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(absl::Duration base, absl::Duration max_delay)
      : base_(base), max_(max_delay) {}
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const absl::Duration base_, max_;
  absl::Mutex mu_;
  std::map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
};

// An overall token bucket: the delay until a token is available.
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, const base::Clock& clock)
      : clock_(clock), bucket_(qps, burst, clock.Now()) {}
  absl::Duration When(const std::string&) override { return bucket_.Reserve(clock_.Now()); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  const base::Clock& clock_;
  TokenBucket bucket_;
};

// client-go's DefaultControllerRateLimiter: the max of per-item exponential
// backoff (5 ms .. 1000 s) and an overall 10 qps / 100 burst bucket.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  MaxOfRateLimiter(std::unique_ptr<RateLimiter> a, std::unique_ptr<RateLimiter> b)
      : a_(std::move(a)), b_(std::move(b)) {}
  absl::Duration When(const std::string& item) override {
    return std::max(a_->When(item), b_->When(item));
  }
  void Forget(const std::string& item) override {
    a_->Forget(item);
    b_->Forget(item);
  }
  int NumRequeues(const std::string& item) override {
    return std::max(a_->NumRequeues(item), b_->NumRequeues(item));
  }

 private:
  std::unique_ptr<RateLimiter> a_, b_;
};
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const base::Clock& clock);

// A rate-limited work queue of string keys, like client-go's:
//  * an item is in the queue at most once; an item added while it is being
//    processed is queued again only after Done() (so one key is never
//    processed by two workers at once);
//  * AddAfter / AddRateLimited delay an item; Forget resets its backoff;
//  * Get blocks until an item is ready or the queue shuts down.
// Delays are measured on the injected clock, and Get waits for a delayed
// item on it (base::Clock::AwaitWithDeadline), so a test drives the delays
// with a fake clock and nothing waits in real time.
class WorkQueue {
 public:
  struct Options {
    std::string name;                        // the `name` label of the metrics
    const base::Clock* clock = nullptr;      // RealClock when null
    std::unique_ptr<RateLimiter> limiter;    // DefaultControllerRateLimiter when null
    prometheus::Registry* registry = nullptr;
  };
  explicit WorkQueue(Options options);
  ~WorkQueue();

  void Add(const std::string& item);
  void AddAfter(const std::string& item, absl::Duration delay);
  void AddRateLimited(const std::string& item);
  void Forget(const std::string& item);
  int NumRequeues(const std::string& item);

  std::optional<std::string> Get();  // nullopt once shut down and drained of ready work
  void Done(const std::string& item);
  void ShutDown();
  bool ShuttingDown() const;
  size_t Len() const;  // ready items (the workqueue_depth gauge)

  // Refreshes workqueue_unfinished_work_seconds and
  // workqueue_longest_running_processor_seconds (a background thread calls
  // it every 500 ms of the clock when metrics are on).
  void UpdateUnfinishedWorkMetrics();

 private:
  struct Metrics;
  void AddLocked(const std::string& item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PromoteDueLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What ends Get's wait besides its deadline: ready work, a shutdown, or a delayed item due before `deadline`.
  bool GetWakesLocked(absl::Time deadline) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const base::Clock& clock_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<Metrics> metrics_;

  mutable absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> processing_ ABSL_GUARDED_BY(mu_);  // item -> start
  std::map<std::string, absl::Time> added_at_ ABSL_GUARDED_BY(mu_);
  std::multimap<absl::Time, std::string> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> waiting_ready_at_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  std::thread metrics_thread_;
};

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_WORKQUEUE_H_
