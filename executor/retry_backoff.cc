#include "executor/retry_backoff.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"

namespace cloneset::executor {

absl::Duration BackoffDelay(const RetryBackoffOptions& o, int failures, double random) {
  if (failures < 1) return absl::ZeroDuration();
  // Doubling stops at the cap: 2^62 of anything overflows, the cap is reached long before.
  absl::Duration d = o.base;
  for (int i = 1; i < failures && d < o.cap; ++i) d *= 2;
  d = std::min(d, o.cap);
  const double r = std::clamp(random, 0.0, 1.0);
  return d - d * (std::clamp(o.jitter, 0.0, 1.0) * r);
}

absl::Status ValidateBackoff(const RetryBackoffOptions& o) {
  if (o.base <= absl::ZeroDuration()) return absl::InvalidArgumentError("retry_backoff_base: must be > 0");
  if (o.cap < o.base) return absl::InvalidArgumentError("retry_backoff_max: must be >= retry_backoff_base");
  if (!(o.jitter >= 0 && o.jitter < 1)) return absl::InvalidArgumentError("retry_backoff_jitter: must be in [0, 1)");
  return absl::OkStatus();
}

std::optional<absl::Duration> RetryBackoff::Wait(const std::string& key, const std::string& version,
                                                  absl::Time now) {
  absl::MutexLock l(&mu_);
  auto it = states_.find(key);
  if (it == states_.end()) return std::nullopt;
  if (it->second.version != version) {
    states_.erase(it);  // a new spec (or a new CloneSet): what failed may be fixed
    return std::nullopt;
  }
  if (now >= it->second.until) return std::nullopt;
  return it->second.until - now;
}

absl::Duration RetryBackoff::Failed(const std::string& key, const std::string& version, absl::Time now) {
  absl::MutexLock l(&mu_);
  State& s = states_[key];
  if (s.version != version) s = State{.version = version};
  ++s.failures;
  const absl::Duration delay = BackoffDelay(options_, s.failures, random_ ? random_() : 0.0);
  s.until = now + delay;
  return delay;
}

void RetryBackoff::Forget(const std::string& key) {
  absl::MutexLock l(&mu_);
  states_.erase(key);
}

int RetryBackoff::Failures(const std::string& key) const {
  absl::MutexLock l(&mu_);
  auto it = states_.find(key);
  return it == states_.end() ? 0 : it->second.failures;
}

}  // namespace cloneset::executor
