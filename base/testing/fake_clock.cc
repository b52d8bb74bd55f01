#include "base/testing/fake_clock.h"

#include <iterator>
#include <utility>
#include <vector>

namespace cloneset::base::testing {

absl::Time FakeClock::Now() const {
  absl::MutexLock l(&mu_);
  return now_;
}

void FakeClock::SleepUntil(absl::Time deadline) const {
  std::pair<const FakeClock*, absl::Time> arg(this, deadline);
  absl::MutexLock l(&mu_);
  ++waiters_;
  auto armed = deadlines_.insert(deadline);
  mu_.Await(absl::Condition(
      +[](std::pair<const FakeClock*, absl::Time>* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->first->now_ >= a->second;
      },
      &arg));
  deadlines_.erase(armed);
  --waiters_;
}

bool FakeClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition, absl::Time deadline) const {
  struct Wait {
    const FakeClock* clock;
    const absl::Condition* condition;
    absl::Time deadline;
  } wait{this, &condition, deadline};
  std::multiset<absl::Time>::iterator armed;
  {
    absl::MutexLock l(&mu_);
    ++waiters_;
    ++waiting_[mu];
    armed = deadlines_.insert(deadline);
  }
  mu->Await(absl::Condition(
      +[](Wait* w) { return w->condition->Eval() || w->clock->Now() >= w->deadline; }, &wait));
  // Leave without holding *mu, so WakeWaiters (which holds wake_mu_ while it locks *mu) cannot deadlock with us.
  mu->Unlock();
  {
    absl::MutexLock wake(&wake_mu_);
    absl::MutexLock l(&mu_);
    --waiters_;
    deadlines_.erase(armed);
    if (--waiting_[mu] == 0) waiting_.erase(mu);
  }
  mu->Lock();
  return condition.Eval();
}

void FakeClock::WakeWaiters() {
  absl::MutexLock wake(&wake_mu_);
  std::vector<absl::Mutex*> mutexes;
  {
    absl::MutexLock l(&mu_);
    for (const auto& [mu, n] : waiting_) mutexes.push_back(mu);
  }
  for (absl::Mutex* mu : mutexes) {
    mu->Lock();
    mu->Unlock();
  }
}

void FakeClock::Advance(absl::Duration d) {
  {
    absl::MutexLock l(&mu_);
    now_ += d;
  }
  WakeWaiters();
}

void FakeClock::Set(absl::Time t) {
  {
    absl::MutexLock l(&mu_);
    now_ = t;
  }
  WakeWaiters();
}

int FakeClock::waiters() const {
  absl::MutexLock l(&mu_);
  return waiters_;
}

void FakeClock::BlockUntilWaiters(int n) const {
  std::pair<const FakeClock*, int> arg(this, n);
  absl::MutexLock l(&mu_);
  mu_.Await(absl::Condition(
      +[](std::pair<const FakeClock*, int>* a) ABSL_NO_THREAD_SAFETY_ANALYSIS { return a->first->waiters_ >= a->second; },
      &arg));
}

bool FakeClock::AwaitWaiters(int n, absl::Duration timeout) const {
  std::pair<const FakeClock*, int> arg(this, n);
  absl::MutexLock l(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](std::pair<const FakeClock*, int>* a) ABSL_NO_THREAD_SAFETY_ANALYSIS { return a->first->waiters_ >= a->second; },
          &arg),
      timeout);
}

std::vector<absl::Time> FakeClock::Deadlines() const {
  absl::MutexLock l(&mu_);
  return {deadlines_.begin(), deadlines_.end()};
}

bool FakeClock::AwaitDeadlineAfter(absl::Time t, absl::Duration timeout, int n) const {
  struct Arg {
    const FakeClock* clock;
    absl::Time t;
    int n;
  } arg{this, t, n};
  absl::MutexLock l(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            const auto& d = a->clock->deadlines_;
            return std::distance(d.upper_bound(a->t), d.end()) >= a->n;
          },
          &arg),
      timeout);
}

}  // namespace cloneset::base::testing
