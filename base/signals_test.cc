#include "base/signals.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace cloneset::base {
namespace {

// A blocked SIGTERM or SIGINT stays pending until Wait takes it: nothing is lost between Block and Wait.
TEST(StopSignalsTest, WaitReturnsThePendingSignal) {
  for (int sig : {SIGTERM, SIGINT}) {
    StopSignals signals = StopSignals::Block();
    ASSERT_EQ(pthread_kill(pthread_self(), sig), 0);
    EXPECT_EQ(signals.Wait(), sig);
  }
}

TEST(ShutdownDeadlineTest, OverrunRunsOnlyOnceTheGracePeriodPassed) {
  testing::FakeClock clock;
  absl::Notification overran;
  ShutdownDeadline deadline(absl::Seconds(30), [&] { overran.Notify(); }, &clock);
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Seconds(29));
  EXPECT_FALSE(overran.HasBeenNotified());
  clock.Advance(absl::Seconds(1));
  overran.WaitForNotification();
}

TEST(ShutdownDeadlineTest, DisarmedInTimeNeverOverruns) {
  testing::FakeClock clock;
  std::atomic<bool> overran{false};
  {
    ShutdownDeadline deadline(absl::Seconds(30), [&] { overran = true; }, &clock);
    clock.BlockUntilWaiters(1);
    clock.Advance(absl::Seconds(29));
    deadline.Disarm();
    clock.Advance(absl::Hours(1));
  }  // joins the waiting thread
  EXPECT_FALSE(overran);
}

}  // namespace
}  // namespace cloneset::base
