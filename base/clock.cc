#include "base/clock.h"

namespace cloneset::base {

void RealClock::SleepUntil(absl::Time deadline) const {
  const absl::Duration left = deadline - absl::Now();
  if (left > absl::ZeroDuration()) absl::SleepFor(left);
}

bool RealClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition, absl::Time deadline) const {
  return mu->AwaitWithDeadline(condition, deadline);
}

RealClock& RealClock::Get() {
  static RealClock clock;
  return clock;
}

}  // namespace cloneset::base
