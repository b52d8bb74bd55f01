// Time is an input: every process reads the time, sleeps and waits with a deadline through this interface, so a
// test drives all of it with base/testing/fake_clock.h instead of sleeping. One clock for the whole tree (the
// controller's client library, the agent, the embedded cluster and its node simulator).
#pragma once

#include <chrono>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cloneset::base {

class Clock {
 public:
  // The embedded cluster keeps std::chrono time points (its object timestamps and image records).
  using TimePoint = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // Blocks until Now() >= deadline.
  virtual void SleepUntil(absl::Time deadline) const = 0;
  // With *mu held: waits (releasing *mu) until `condition` holds or Now() >= deadline, and returns whether the
  // condition holds. The condition is evaluated with *mu held, as absl::Mutex::Await does.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition, absl::Time deadline) const = 0;

  void SleepFor(absl::Duration d) const { SleepUntil(Now() + d); }
  bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& condition, absl::Duration timeout) const {
    return AwaitWithDeadline(mu, condition, Now() + timeout);
  }
  TimePoint ChronoNow() const { return absl::ToChronoTime(Now()); }
};

// The wall clock; one process-wide instance.
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  void SleepUntil(absl::Time deadline) const override;
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition, absl::Time deadline) const override;
  static RealClock& Get();
};

}  // namespace cloneset::base
