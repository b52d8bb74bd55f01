// The back-off of one CloneSet whose reconciles fail, kept by the executor itself rather than by the work queue.
//
// The queue's AddRateLimited delays the key after a failed reconcile, but any watch event adds the key again at
// once (queue.Add), and a failed attempt causes such events itself: it writes the CloneSet's ApplyFailed
// condition, its pods' statuses, its events. Under a refusal that lasts (quota exhausted, namespace terminating)
// every attempt's own writes re-enqueued the key immediately: a new plan, a new pod name, a refused POST, and a
// status write about it, ~120 times a second. This back-off is checked at the start of every reconcile, whatever
// enqueued the key: while it runs the reconcile asks no planner and writes nothing, and puts the key back for
// when it ends. It is forgotten on a successful reconcile, when the CloneSet's spec changes (a new generation: the
// user may have fixed what failed) and when the CloneSet is gone.
//
// The delay after n consecutive failures is min(cap, base * 2^(n-1)), less up to `jitter` of it at random so that
// CloneSets refused together (one quota for a namespace) do not retry in lockstep: client-go's per-item limiter
// (5 ms doubling) with a cap and jitter. The random source is injected: tests are deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace cloneset::executor {

struct RetryBackoffOptions {
  absl::Duration base = absl::Milliseconds(5);  // the delay after the first failure
  absl::Duration cap = absl::Minutes(5);        // no delay is longer
  double jitter = 0.2;                          // up to this fraction of the delay is taken off at random
};

// The delay after `failures` (>= 1) consecutive failures, `random` in [0, 1): pure.
absl::Duration BackoffDelay(const RetryBackoffOptions& options, int failures, double random);

// Whether `options` make sense; the error names the field.
absl::Status ValidateBackoff(const RetryBackoffOptions& options);

// The per-CloneSet state, shared by the workers. `version` is what resets the back-off when it changes: the
// CloneSet's uid and generation (a recreated CloneSet or a new spec starts afresh).
class RetryBackoff {
 public:
  // `random` returns a number in [0, 1) for the jitter.
  RetryBackoff(RetryBackoffOptions options, std::function<double()> random)
      : options_(options), random_(std::move(random)) {}

  // How long `key` at `version` must still wait at `now` (nullopt: it may be reconciled). A back-off recorded for
  // another version is forgotten.
  std::optional<absl::Duration> Wait(const std::string& key, const std::string& version, absl::Time now);
  // Records a failed reconcile of `key` at `version` ending at `now`; returns the delay before the next attempt.
  absl::Duration Failed(const std::string& key, const std::string& version, absl::Time now);
  // A successful reconcile, or the CloneSet is gone: the back-off starts afresh.
  void Forget(const std::string& key);
  // Consecutive failures recorded for `key` (0: none).
  int Failures(const std::string& key) const;

 private:
  struct State {
    std::string version;
    int failures = 0;
    absl::Time until;
  };
  const RetryBackoffOptions options_;
  const std::function<double()> random_;
  mutable absl::Mutex mu_;
  std::map<std::string, State> states_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cloneset::executor
