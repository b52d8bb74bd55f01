#include "kube/token_bucket.h"

#include <algorithm>

namespace cloneset::kube {

TokenBucket::TokenBucket(double qps, int burst, absl::Time now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(now) {}

void TokenBucket::Refill(absl::Time now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
}

bool TokenBucket::TryTake(absl::Time now) {
  if (unlimited()) return true;
  absl::MutexLock l(&mu_);
  Refill(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

absl::Duration TokenBucket::Reserve(absl::Time now) {
  if (unlimited()) return absl::ZeroDuration();
  absl::MutexLock l(&mu_);
  Refill(now);
  tokens_ -= 1;
  if (tokens_ >= 0) return absl::ZeroDuration();
  // Debt is paid back at qps; the caller waits for its share.
  return absl::Seconds(-tokens_ / qps_) + (last_ - now);
}

}  // namespace cloneset::kube
