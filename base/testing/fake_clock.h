// A clock that moves only when the test says so. Sleeps and waits with a deadline on it (base/clock.h) wake when
// Advance or Set moves time past their deadline, so code that waits on a timer is tested without sleeping.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace cloneset::base::testing {

class FakeClock final : public Clock {
 public:
  // 2023-11-14T22:13:20Z: any fixed instant; tests that print timestamps pass their own.
  static constexpr absl::Time kDefaultStart = absl::FromUnixSeconds(1'700'000'000);
  // 2026-01-01T00:00:00Z, the embedded cluster tests' start.
  static constexpr absl::Time k2026 = absl::FromUnixSeconds(1'767'225'600);

  explicit FakeClock(absl::Time start = kDefaultStart) : now_(start) {}
  explicit FakeClock(std::chrono::system_clock::time_point start) : FakeClock(absl::FromChrono(start)) {}

  absl::Time Now() const override;
  void SleepUntil(absl::Time deadline) const override;
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition, absl::Time deadline) const override;

  void Advance(absl::Duration d);
  void Advance(std::chrono::nanoseconds d) { Advance(absl::FromChrono(d)); }
  void Set(absl::Time t);
  void Set(std::chrono::system_clock::time_point t) { Set(absl::FromChrono(t)); }

  // Threads now blocked in SleepUntil or AwaitWithDeadline on this clock.
  int waiters() const;
  // Blocks (in real time, without polling) until at least `n` threads wait on this clock: a test advances time
  // once the code under test has armed its timer.
  void BlockUntilWaiters(int n) const;
  // The same with a bound in real time: whether `n` threads wait within `timeout`. A test asserts on it, so code
  // that never arms its timer on this clock (it waits in real time) fails the test instead of hanging it.
  bool AwaitWaiters(int n, absl::Duration timeout) const;
  // The deadlines the threads now waiting on this clock wait for, earliest first: a test reads the timer the code
  // under test armed (a back-off with jitter) instead of guessing it.
  std::vector<absl::Time> Deadlines() const;
  // Blocks (in real time, without polling) until at least `n` threads wait on this clock for deadlines later than
  // `t`, and says whether they did within `timeout`. After an Advance to `t`, it tells that the code under test saw
  // the new time and armed its next timer (a count of waiters cannot: a woken thread is counted until it runs).
  bool AwaitDeadlineAfter(absl::Time t, absl::Duration timeout, int n = 1) const;

 private:
  // Wakes the waiters of AwaitWithDeadline: unlocking their mutex makes absl re-evaluate their conditions, which
  // read Now().
  void WakeWaiters();

  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  mutable int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  // The deadline of each waiting thread.
  mutable std::multiset<absl::Time> deadlines_ ABSL_GUARDED_BY(mu_);
  // The mutexes AwaitWithDeadline waits with, and how many threads wait with each.
  mutable std::map<absl::Mutex*, int> waiting_ ABSL_GUARDED_BY(mu_);
  // Held while WakeWaiters touches the waiters' mutexes, and by a waiter leaving, so no mutex is touched after its
  // waiter returned (its owner may be gone). Order: wake_mu_, then a waiter's mutex, then mu_.
  mutable absl::Mutex wake_mu_;
};

}  // namespace cloneset::base::testing
