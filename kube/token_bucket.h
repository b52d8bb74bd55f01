#ifndef CLONESET_KUBE_TOKEN_BUCKET_H_
#define CLONESET_KUBE_TOKEN_BUCKET_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace cloneset::kube {

// A token bucket like golang.org/x/time/rate: `burst` tokens, refilled at
// `qps` per second. Reserve() always takes a token, possibly one that only
// exists in the future, and returns how long the caller must wait for it, so
// callers never spin. qps <= 0 means unlimited (Reserve always returns 0).
// Thread-safe.
class TokenBucket {
 public:
  TokenBucket(double qps, int burst, absl::Time now);

  absl::Duration Reserve(absl::Time now);
  // Takes a token only if one is there at `now` (client-go's TryAccept): false leaves the bucket as it was.
  bool TryTake(absl::Time now);
  bool unlimited() const { return qps_ <= 0; }

 private:
  void Refill(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double qps_;
  const double burst_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_TOKEN_BUCKET_H_
