#ifndef CLONESET_KUBE_CLOCK_H_
#define CLONESET_KUBE_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cloneset::kube {

// Time is an input: every decision in kube/ reads the clock through this
// interface so tests can drive it (see kube/testing/fake_clock.h).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  static RealClock& Get() {
    static RealClock clock;
    return clock;
  }
};

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_CLOCK_H_
