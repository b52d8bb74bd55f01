#include "kube/workqueue.h"

#include <algorithm>
#include <cmath>

#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace cloneset::kube {

absl::Duration ItemExponentialRateLimiter::When(const std::string& item) {
  absl::MutexLock l(&mu_);
  const int exp = failures_[item]++;
  // Avoid overflow: past 2^40 the cap is reached for any sane base.
  if (exp > 40) return max_;
  return std::min(base_ * std::ldexp(1.0, exp), max_);
}

void ItemExponentialRateLimiter::Forget(const std::string& item) {
  absl::MutexLock l(&mu_);
  failures_.erase(item);
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& item) {
  absl::MutexLock l(&mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const base::Clock& clock) {
  return std::make_unique<MaxOfRateLimiter>(
      std::make_unique<ItemExponentialRateLimiter>(absl::Milliseconds(5), absl::Seconds(1000)),
      std::make_unique<BucketRateLimiter>(10, 100, clock));
}

struct WorkQueue::Metrics {
  prometheus::Gauge* depth;
  prometheus::Counter* adds;
  prometheus::Histogram* queue_latency;
  prometheus::Histogram* work_duration;
  prometheus::Gauge* unfinished;
  prometheus::Gauge* longest;
  prometheus::Counter* retries;

  Metrics(prometheus::Registry& r, const std::string& name) {
    const std::map<std::string, std::string> labels = {{"name", name}};
    // client-go's buckets: 10 ns .. 10 s, factor 10.
    const prometheus::Histogram::BucketBoundaries buckets = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4,
                                                             1e-3, 1e-2, 1e-1, 1, 10};
    depth = &prometheus::BuildGauge().Name("workqueue_depth").Help("Current depth of workqueue")
                 .Register(r).Add(labels);
    adds = &prometheus::BuildCounter().Name("workqueue_adds_total")
                .Help("Total number of adds handled by workqueue").Register(r).Add(labels);
    queue_latency = &prometheus::BuildHistogram().Name("workqueue_queue_duration_seconds")
                         .Help("How long in seconds an item stays in workqueue before being requested")
                         .Register(r).Add(labels, buckets);
    work_duration = &prometheus::BuildHistogram().Name("workqueue_work_duration_seconds")
                         .Help("How long in seconds processing an item from workqueue takes.")
                         .Register(r).Add(labels, buckets);
    unfinished = &prometheus::BuildGauge().Name("workqueue_unfinished_work_seconds")
                      .Help("How many seconds of work has been done that is in progress and hasn't "
                            "been observed by work_duration.")
                      .Register(r).Add(labels);
    longest = &prometheus::BuildGauge().Name("workqueue_longest_running_processor_seconds")
                   .Help("How many seconds has the longest running processor for workqueue been running.")
                   .Register(r).Add(labels);
    retries = &prometheus::BuildCounter().Name("workqueue_retries_total")
                   .Help("Total number of retries handled by workqueue").Register(r).Add(labels);
  }
};

WorkQueue::WorkQueue(Options o)
    : name_(o.name),
      clock_(o.clock ? *o.clock : base::RealClock::Get()),
      limiter_(o.limiter ? std::move(o.limiter) : DefaultControllerRateLimiter(clock_)) {
  if (o.registry != nullptr) {
    metrics_ = std::make_unique<Metrics>(*o.registry, name_);
    metrics_thread_ = std::thread([this] {
      absl::MutexLock l(&mu_);
      while (!shutting_down_) {
        clock_.AwaitWithTimeout(&mu_, absl::Condition(&shutting_down_), absl::Milliseconds(500));
        mu_.Unlock();
        UpdateUnfinishedWorkMetrics();
        mu_.Lock();
      }
    });
  }
}

WorkQueue::~WorkQueue() {
  ShutDown();
  if (metrics_thread_.joinable()) metrics_thread_.join();
}

void WorkQueue::AddLocked(const std::string& item) {
  if (shutting_down_ || dirty_.count(item)) return;
  if (metrics_) metrics_->adds->Increment();
  dirty_.insert(item);
  added_at_.emplace(item, clock_.Now());
  if (processing_.count(item)) return;  // re-queued by Done()
  queue_.push_back(item);
  if (metrics_) metrics_->depth->Set(static_cast<double>(queue_.size()));
}

void WorkQueue::Add(const std::string& item) {
  absl::MutexLock l(&mu_);
  AddLocked(item);
}

void WorkQueue::AddAfter(const std::string& item, absl::Duration delay) {
  absl::MutexLock l(&mu_);
  if (shutting_down_) return;
  if (delay <= absl::ZeroDuration()) return AddLocked(item);
  const absl::Time ready = clock_.Now() + delay;
  // Keep only the earliest pending time per item, like client-go.
  auto it = waiting_ready_at_.find(item);
  if (it != waiting_ready_at_.end()) {
    if (it->second <= ready) return;
    auto range = waiting_.equal_range(it->second);
    for (auto w = range.first; w != range.second; ++w) {
      if (w->second == item) {
        waiting_.erase(w);
        break;
      }
    }
  }
  waiting_ready_at_[item] = ready;
  waiting_.emplace(ready, item);
}

void WorkQueue::AddRateLimited(const std::string& item) {
  if (metrics_) metrics_->retries->Increment();
  AddAfter(item, limiter_->When(item));
}

void WorkQueue::Forget(const std::string& item) { limiter_->Forget(item); }
int WorkQueue::NumRequeues(const std::string& item) { return limiter_->NumRequeues(item); }

void WorkQueue::PromoteDueLocked(absl::Time now) {
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    std::string item = waiting_.begin()->second;
    waiting_.erase(waiting_.begin());
    waiting_ready_at_.erase(item);
    AddLocked(item);
  }
}

bool WorkQueue::GetWakesLocked(absl::Time deadline) const {
  return !queue_.empty() || shutting_down_ || (!waiting_.empty() && waiting_.begin()->first < deadline);
}

std::optional<std::string> WorkQueue::Get() {
  absl::MutexLock l(&mu_);
  for (;;) {
    PromoteDueLocked(clock_.Now());
    if (!queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    // Until the earliest delayed item is due on the clock; an Add, an earlier AddAfter or ShutDown ends it sooner
    // (the mutex re-evaluates the condition whenever they release it).
    const absl::Time deadline = waiting_.empty() ? absl::InfiniteFuture() : waiting_.begin()->first;
    const auto wakes = [this, deadline]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return GetWakesLocked(deadline); };
    clock_.AwaitWithDeadline(&mu_, absl::Condition(&wakes), deadline);
  }
  std::string item = std::move(queue_.front());
  queue_.pop_front();
  const absl::Time now = clock_.Now();
  processing_[item] = now;
  dirty_.erase(item);
  if (metrics_) {
    metrics_->depth->Set(static_cast<double>(queue_.size()));
    auto it = added_at_.find(item);
    if (it != added_at_.end()) metrics_->queue_latency->Observe(absl::ToDoubleSeconds(now - it->second));
  }
  added_at_.erase(item);
  return item;
}

void WorkQueue::Done(const std::string& item) {
  absl::MutexLock l(&mu_);
  auto it = processing_.find(item);
  if (it == processing_.end()) return;
  if (metrics_) metrics_->work_duration->Observe(absl::ToDoubleSeconds(clock_.Now() - it->second));
  processing_.erase(it);
  if (dirty_.count(item)) {
    queue_.push_back(item);
    if (metrics_) metrics_->depth->Set(static_cast<double>(queue_.size()));
  }
}

void WorkQueue::ShutDown() {
  absl::MutexLock l(&mu_);
  shutting_down_ = true;
}

bool WorkQueue::ShuttingDown() const {
  absl::MutexLock l(&mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  absl::MutexLock l(&mu_);
  return queue_.size();
}

void WorkQueue::UpdateUnfinishedWorkMetrics() {
  if (!metrics_) return;
  absl::MutexLock l(&mu_);
  const absl::Time now = clock_.Now();
  double total = 0, longest = 0;
  for (const auto& [item, start] : processing_) {
    const double s = absl::ToDoubleSeconds(now - start);
    total += s;
    longest = std::max(longest, s);
  }
  metrics_->unfinished->Set(total);
  metrics_->longest->Set(longest);
}

}  // namespace cloneset::kube
