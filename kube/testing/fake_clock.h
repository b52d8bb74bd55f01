#ifndef CLONESET_KUBE_TESTING_FAKE_CLOCK_H_
#define CLONESET_KUBE_TESTING_FAKE_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "kube/clock.h"

namespace cloneset::kube::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock l(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock l(&mu_);
    now_ += d;
  }
  void Set(absl::Time t) {
    absl::MutexLock l(&mu_);
    now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace cloneset::kube::testing

#endif  // CLONESET_KUBE_TESTING_FAKE_CLOCK_H_
