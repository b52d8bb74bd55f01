#include "kube/workqueue.h"

#include <functional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace cloneset::kube {
namespace {

using ::testing::HasSubstr;
using base::testing::FakeClock;

// How long a test waits in real time for another thread to reach a wait on the fake clock: a bound for a loaded
// machine, never reached when the code is right.
constexpr absl::Duration kRealTimeBound = absl::Seconds(30);

WorkQueue::Options Opts(const FakeClock& clock, prometheus::Registry* registry = nullptr) {
  WorkQueue::Options o;
  o.name = "cloneset";
  o.clock = &clock;
  o.registry = registry;
  return o;
}

TEST(ItemExponentialRateLimiterTest, DoublesUpToCapAndForgets) {
  ItemExponentialRateLimiter l(absl::Milliseconds(5), absl::Seconds(1000));
  const std::vector<absl::Duration> want = {absl::Milliseconds(5), absl::Milliseconds(10),
                                            absl::Milliseconds(20), absl::Milliseconds(40)};
  for (absl::Duration d : want) EXPECT_EQ(l.When("a"), d);
  EXPECT_EQ(l.NumRequeues("a"), 4);
  EXPECT_EQ(l.When("b"), absl::Milliseconds(5));
  for (int i = 0; i < 30; ++i) l.When("a");
  EXPECT_EQ(l.When("a"), absl::Seconds(1000));
  l.Forget("a");
  EXPECT_EQ(l.NumRequeues("a"), 0);
  EXPECT_EQ(l.When("a"), absl::Milliseconds(5));
}

TEST(DefaultControllerRateLimiterTest, BucketDominatesAfterBurst) {
  FakeClock clock;
  auto l = DefaultControllerRateLimiter(clock);
  // 100 distinct items use the burst; the 101st waits for the 10 qps bucket.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(l->When("item" + std::to_string(i)), absl::Milliseconds(5));
  EXPECT_EQ(l->When("late"), absl::Milliseconds(100));
}

TEST(WorkQueueTest, DedupsAndRequeuesItemAddedWhileProcessing) {
  FakeClock clock;
  WorkQueue q(Opts(clock));
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(q.Get(), "a");
  q.Add("a");  // while processing: not handed out twice
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Get(), "b");
  q.Done("b");
  EXPECT_EQ(q.Len(), 0u);
  q.Done("a");  // now "a" comes back
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, AddAfterWaitsForTheClock) {
  FakeClock clock;
  WorkQueue q(Opts(clock));
  q.AddAfter("late", absl::Seconds(10));
  q.AddAfter("late", absl::Seconds(30));  // the earlier time wins
  q.AddAfter("soon", absl::Seconds(5));
  EXPECT_EQ(q.Len(), 0u);
  std::optional<std::string> got;
  std::thread t([&] { got = q.Get(); });
  // Get waits on the clock for "soon" (it polls nothing in real time): nothing is handed out until time moves.
  ASSERT_TRUE(clock.AwaitWaiters(1, kRealTimeBound)) << "Get does not wait on the injected clock";
  EXPECT_FALSE(got.has_value());
  clock.Advance(absl::Seconds(4));
  EXPECT_EQ(clock.waiters(), 1) << "woke before the item is due";
  clock.Advance(absl::Seconds(1));
  t.join();
  EXPECT_EQ(got, "soon");
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(q.Get(), "late");
  q.Done("late");
  clock.Advance(absl::Seconds(30));
  q.Add("x");
  EXPECT_EQ(q.Get(), "x");  // "late" is not delivered a second time
  EXPECT_EQ(q.Len(), 0u);
}

// A Get waiting on the clock for a delayed item ends when an item is added, when a delayed item added later falls
// due first, or on ShutDown: not only when the clock reaches the item it waited for.
TEST(WorkQueueTest, WaitingGetEndsOnAddEarlierDelayAndShutDown) {
  struct Case {
    std::string name;
    std::function<void(WorkQueue&, FakeClock&)> wake;
    std::optional<std::string> want;
  };
  const std::vector<Case> cases = {
      {"add", [](WorkQueue& q, FakeClock&) { q.Add("now"); }, "now"},
      {"earlier delay", [](WorkQueue& q, FakeClock& clock) {
         q.AddAfter("earlier", absl::Seconds(1));
         clock.Advance(absl::Seconds(1));  // due long before "late"
       }, "earlier"},
      {"shutdown", [](WorkQueue& q, FakeClock&) { q.ShutDown(); }, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    WorkQueue q(Opts(clock));
    q.AddAfter("late", absl::Hours(1));
    absl::Notification done;
    std::optional<std::string> got;
    std::thread t([&] {
      got = q.Get();
      done.Notify();
    });
    ASSERT_TRUE(clock.AwaitWaiters(1, kRealTimeBound));
    c.wake(q, clock);
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(kRealTimeBound)) << "Get still waits for the clock";
    q.ShutDown();  // unblocks a Get that missed the wake-up, so the test fails instead of hanging
    t.join();
    EXPECT_EQ(got, c.want);
  }
}

TEST(WorkQueueTest, RateLimitedBackoffAndForget) {
  FakeClock clock;
  WorkQueue::Options o = Opts(clock);
  o.limiter = std::make_unique<ItemExponentialRateLimiter>(absl::Seconds(1), absl::Seconds(60));
  WorkQueue q(std::move(o));
  q.AddRateLimited("k");  // 1 s
  q.AddRateLimited("k");  // 2 s, but the earlier ready time is kept
  EXPECT_EQ(q.NumRequeues("k"), 2);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(q.Get(), "k");
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
  q.Done("k");
}

TEST(WorkQueueTest, ShutDownWakesWaitersAndRejectsAdds) {
  FakeClock clock;
  WorkQueue q(Opts(clock));
  q.Add("left");
  std::thread t([&] {
    EXPECT_EQ(q.Get(), "left");
    EXPECT_EQ(q.Get(), std::nullopt);
  });
  clock.BlockUntilWaiters(1);  // the second Get waits (no delayed item: only ShutDown or an Add ends it)
  q.ShutDown();
  t.join();
  q.Add("after");
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_TRUE(q.ShuttingDown());
}

TEST(WorkQueueTest, Metrics) {
  FakeClock clock;
  prometheus::Registry registry;
  WorkQueue q(Opts(clock, &registry));
  q.Add("a");
  q.Add("b");
  clock.Advance(absl::Seconds(2));
  ASSERT_EQ(q.Get(), "a");
  clock.Advance(absl::Seconds(3));
  q.UpdateUnfinishedWorkMetrics();
  q.AddRateLimited("c");
  std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr("workqueue_depth{name=\"cloneset\"} 1"));
  EXPECT_THAT(text, HasSubstr("workqueue_adds_total{name=\"cloneset\"} 2"));
  EXPECT_THAT(text, HasSubstr("workqueue_retries_total{name=\"cloneset\"} 1"));
  EXPECT_THAT(text, HasSubstr("workqueue_unfinished_work_seconds{name=\"cloneset\"} 3"));
  EXPECT_THAT(text, HasSubstr("workqueue_longest_running_processor_seconds{name=\"cloneset\"} 3"));
  EXPECT_THAT(text, HasSubstr("workqueue_queue_duration_seconds_sum{name=\"cloneset\"} 2"));
  q.Done("a");
  text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr("workqueue_work_duration_seconds_sum{name=\"cloneset\"} 3"));
  EXPECT_THAT(text, HasSubstr("workqueue_work_duration_seconds_bucket{name=\"cloneset\",le=\"10\"} 1"));
}

}  // namespace
}  // namespace cloneset::kube
