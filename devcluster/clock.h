// Injectable time source for the embedded cluster (store timestamps, table ages, node simulator
// delays). Production code takes a Clock*; tests pass a FakeClock and advance it explicitly so
// timing-dependent behaviour is deterministic.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace cloneset::devcluster {

class Clock {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  virtual ~Clock() = default;
  // Wall-clock time: used for creationTimestamp, deletionTimestamp, event times, ages.
  virtual TimePoint Now() const = 0;
  // Blocks until Now() >= deadline (or the clock is advanced past it). Real clock: sleeps.
  virtual void SleepUntil(TimePoint deadline) = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  void SleepUntil(TimePoint deadline) override {
    auto now = Now();
    if (deadline > now) std::this_thread::sleep_for(deadline - now);
  }
  // Shared process-wide instance.
  static RealClock* Get() {
    static RealClock clock;
    return &clock;
  }
};

// Manually advanced clock. Thread-safe; SleepUntil wakes when Advance/Set moves time past the
// deadline, so simulator threads blocked on it proceed deterministically.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1'767'225'600)))  // 2026-01-01T00:00:00Z
      : now_(start) {}
  TimePoint Now() const override {
    std::lock_guard<std::mutex> l(mu_);
    return now_;
  }
  void SleepUntil(TimePoint deadline) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return now_ >= deadline; });
  }
  void Advance(std::chrono::nanoseconds d) {
    {
      std::lock_guard<std::mutex> l(mu_);
      now_ += std::chrono::duration_cast<TimePoint::duration>(d);
    }
    cv_.notify_all();
  }
  void Set(TimePoint t) {
    {
      std::lock_guard<std::mutex> l(mu_);
      now_ = t;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  TimePoint now_;
};

}  // namespace cloneset::devcluster
