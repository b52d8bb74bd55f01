// Termination signals for every binary: SIGTERM and SIGINT are taken synchronously by main (sigwait), never by a
// handler, so shutdown runs as ordinary code; and a deadline bounds the shutdown so a stuck stop cannot outlast the
// grace period the platform gives (Kubernetes sends SIGKILL after terminationGracePeriodSeconds).
#pragma once

#include <signal.h>

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace cloneset::base {

class StopSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread. Call it first in main, before any thread starts: threads
  // inherit the mask, so the signal stays pending for Wait instead of killing the process in another thread.
  static StopSignals Block();
  // Waits for SIGTERM or SIGINT and returns its number.
  int Wait() const;

 private:
  StopSignals() = default;
  sigset_t set_;
};

// Started when the stop begins: unless Disarm() is called within `grace` (measured on `clock`), `on_overrun` runs
// once on a thread of its own. The binaries pass one that logs and exits with status 1, so a shutdown stuck on a
// peer (an API server or planner that stopped answering) ends within the grace period with a reason in the log.
class ShutdownDeadline {
 public:
  ShutdownDeadline(absl::Duration grace, std::function<void()> on_overrun, const Clock* clock = nullptr);
  ~ShutdownDeadline();  // Disarm()
  ShutdownDeadline(const ShutdownDeadline&) = delete;
  ShutdownDeadline& operator=(const ShutdownDeadline&) = delete;

  // The stop finished: on_overrun will not run (it may already have). Idempotent.
  void Disarm();

 private:
  absl::Mutex mu_;
  bool disarmed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// What the binaries pass as on_overrun: logs an error naming the grace period and exits with status 1.
std::function<void()> ExitAfterGrace(absl::Duration grace);

}  // namespace cloneset::base
