#include "base/clock.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace cloneset::base {
namespace {

using testing::FakeClock;

TEST(FakeClockTest, NowMovesOnlyWhenTold) {
  FakeClock clock;
  EXPECT_EQ(clock.Now(), FakeClock::kDefaultStart);
  clock.Advance(absl::Seconds(3));
  EXPECT_EQ(clock.Now(), FakeClock::kDefaultStart + absl::Seconds(3));
  clock.Advance(std::chrono::milliseconds(250));
  EXPECT_EQ(clock.Now(), FakeClock::kDefaultStart + absl::Milliseconds(3250));
  clock.Set(FakeClock::k2026);
  EXPECT_EQ(clock.ChronoNow(), absl::ToChronoTime(FakeClock::k2026));
  FakeClock from_chrono(absl::ToChronoTime(FakeClock::k2026));
  EXPECT_EQ(from_chrono.Now(), FakeClock::k2026);
}

TEST(FakeClockTest, SleepUntilWakesWhenTimePassesTheDeadline) {
  FakeClock clock;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepFor(absl::Seconds(10));
    woke = true;
  });
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(woke);
  EXPECT_EQ(clock.waiters(), 1);
  clock.Advance(absl::Seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke);
  EXPECT_EQ(clock.waiters(), 0);
}

// AwaitWaiters: true once a thread waits on the clock; false when none does within the bound (a test's assertion
// that code waits on the injected clock fails instead of hanging).
TEST(FakeClockTest, AwaitWaitersTellsWhetherAThreadWaits) {
  FakeClock clock;
  EXPECT_FALSE(clock.AwaitWaiters(1, absl::Milliseconds(10)));
  std::thread sleeper([&] { clock.SleepFor(absl::Seconds(1)); });
  EXPECT_TRUE(clock.AwaitWaiters(1, absl::Seconds(30)));
  clock.Advance(absl::Seconds(1));
  sleeper.join();
  EXPECT_EQ(clock.waiters(), 0);
}

// Deadlines lists what each waiter waits for; AwaitDeadlineAfter(t) holds only once a thread waits past t, so after
// an Advance it tells a re-armed timer from the woken one that has not run yet.
TEST(FakeClockTest, DeadlinesAndAwaitDeadlineAfterSeeTheArmedTimers) {
  FakeClock clock;
  const absl::Time t0 = clock.Now();
  EXPECT_TRUE(clock.Deadlines().empty());
  EXPECT_FALSE(clock.AwaitDeadlineAfter(t0 - absl::Hours(1), absl::Milliseconds(10)));
  absl::Mutex mu;
  bool ready = false;
  std::atomic<int> steps{0};
  // Sleeps in 1 s steps until 3 s have passed, like a handler that re-reads the clock.
  std::thread stepper([&] {
    while (clock.Now() < t0 + absl::Seconds(3)) {
      clock.SleepFor(absl::Seconds(1));
      ++steps;
    }
  });
  std::thread waiter([&] {
    absl::MutexLock l(&mu);
    clock.AwaitWithDeadline(&mu, absl::Condition(&ready), t0 + absl::Seconds(10));
  });
  ASSERT_TRUE(clock.AwaitWaiters(2, absl::Seconds(30)));
  EXPECT_EQ(clock.Deadlines(), (std::vector<absl::Time>{t0 + absl::Seconds(1), t0 + absl::Seconds(10)}));
  for (int i = 1; i <= 2; ++i) {
    clock.Advance(absl::Seconds(1));
    // Two past the new time: the waiter's 10 s and the stepper's next step, armed after it saw the new time.
    ASSERT_TRUE(clock.AwaitDeadlineAfter(t0 + absl::Seconds(i), absl::Seconds(30), 2));
    EXPECT_EQ(steps, i);
    EXPECT_EQ(clock.Deadlines().front(), t0 + absl::Seconds(i + 1));
  }
  clock.Advance(absl::Seconds(1));
  stepper.join();
  EXPECT_EQ(clock.Deadlines(), std::vector<absl::Time>{t0 + absl::Seconds(10)});
  {
    absl::MutexLock l(&mu);
    ready = true;
  }
  waiter.join();
  EXPECT_TRUE(clock.Deadlines().empty());
}

// A wait with a deadline ends when the condition holds (true) or when the clock passes the deadline (false), and
// not before: rows are (advance before the condition is set, set the condition, want).
TEST(FakeClockTest, AwaitWithDeadlineTable) {
  struct Row {
    const char* name;
    absl::Duration advance;
    bool set_condition;
    bool want;
  };
  const Row rows[] = {
      {"condition holds before the deadline", absl::Seconds(4), true, true},
      {"deadline passes", absl::Seconds(5), false, false},
      {"deadline passes by much", absl::Hours(1), false, false},
  };
  for (const Row& row : rows) {
    FakeClock clock;
    absl::Mutex mu;
    bool ready = false;
    std::atomic<int> result{-1};
    std::thread waiter([&] {
      absl::MutexLock l(&mu);
      result = clock.AwaitWithTimeout(&mu, absl::Condition(&ready), absl::Seconds(5)) ? 1 : 0;
    });
    clock.BlockUntilWaiters(1);
    clock.Advance(row.advance);
    if (row.set_condition) {
      absl::MutexLock l(&mu);
      ready = true;
    }
    waiter.join();
    EXPECT_EQ(result, row.want ? 1 : 0) << row.name;
    EXPECT_EQ(clock.waiters(), 0) << row.name;
  }
}

TEST(FakeClockTest, AwaitWithDeadlineInThePastReturnsAtOnce) {
  FakeClock clock;
  absl::Mutex mu;
  bool ready = false;
  absl::MutexLock l(&mu);
  EXPECT_FALSE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), clock.Now() - absl::Seconds(1)));
  ready = true;
  EXPECT_TRUE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), clock.Now()));
}

TEST(RealClockTest, WaitsEndAtTheDeadline) {
  RealClock& clock = RealClock::Get();
  absl::Mutex mu;
  bool ready = false;
  absl::MutexLock l(&mu);
  const absl::Time start = clock.Now();
  EXPECT_FALSE(clock.AwaitWithTimeout(&mu, absl::Condition(&ready), absl::Milliseconds(5)));
  EXPECT_GE(clock.Now() - start, absl::Milliseconds(5));
}

}  // namespace
}  // namespace cloneset::base
