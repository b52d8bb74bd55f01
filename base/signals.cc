#include "base/signals.h"

#include <pthread.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/log.h"

namespace cloneset::base {

StopSignals StopSignals::Block() {
  StopSignals s;
  sigemptyset(&s.set_);
  sigaddset(&s.set_, SIGTERM);
  sigaddset(&s.set_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &s.set_, nullptr);
  return s;
}

int StopSignals::Wait() const {
  int sig = 0;
  while (sigwait(&set_, &sig) != 0) {
  }
  return sig;
}

ShutdownDeadline::ShutdownDeadline(absl::Duration grace, std::function<void()> on_overrun, const Clock* clock) {
  const Clock* c = clock != nullptr ? clock : &RealClock::Get();
  const absl::Time deadline = c->Now() + grace;
  thread_ = std::thread([this, c, deadline, on_overrun = std::move(on_overrun)] {
    bool disarmed;
    {
      absl::MutexLock l(&mu_);
      disarmed = c->AwaitWithDeadline(&mu_, absl::Condition(&disarmed_), deadline);
    }
    if (!disarmed && on_overrun) on_overrun();
  });
}

ShutdownDeadline::~ShutdownDeadline() {
  Disarm();
  if (thread_.joinable()) thread_.join();
}

void ShutdownDeadline::Disarm() {
  absl::MutexLock l(&mu_);
  disarmed_ = true;
}

std::function<void()> ExitAfterGrace(absl::Duration grace) {
  return [grace] {
    ProcessLogger().Error("shutdown took longer than the grace period; exiting",
                          {{"grace", absl::FormatDuration(grace)}});
    std::_Exit(1);
  };
}

}  // namespace cloneset::base
