#include "kube/leader_lease.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/testing/fake_apiserver.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace cloneset::kube {
namespace {

using ::testing::HasSubstr;
using testing::FakeApiServer;
using base::testing::FakeClock;

const absl::Time T0 = absl::FromUnixSeconds(1700000000);

LeaseRecord Rec(std::string holder, int dur, absl::Time renew, int transitions) {
  return LeaseRecord{std::move(holder), dur, T0, renew, transitions, "7"};
}

TEST(DecideLeaseTest, Table) {
  struct Case {
    std::string name;
    std::optional<LeaseRecord> lease;
    absl::Duration observed_ago;  // observed_at = now - this
    LeaseAction want;
    std::string want_holder;
    int want_transitions;
  };
  const absl::Time now = T0 + absl::Seconds(100);
  const std::vector<Case> cases = {
      {"no lease: create", std::nullopt, absl::ZeroDuration(), LeaseAction::kAcquire, "me", 0},
      {"mine: renew", Rec("me", 15, now - absl::Seconds(3), 2), absl::Seconds(3), LeaseAction::kRenew, "me", 2},
      {"mine even if expired: renew", Rec("me", 15, now - absl::Seconds(60), 2), absl::Seconds(60),
       LeaseAction::kRenew, "me", 2},
      {"other, fresh: wait", Rec("other", 15, now - absl::Seconds(14), 2), absl::Seconds(14), LeaseAction::kWait,
       "other", 2},
      {"other, expired: take over", Rec("other", 15, now - absl::Seconds(15), 2), absl::Seconds(15),
       LeaseAction::kAcquire, "me", 3},
      // The holder's renewTime is far in the past (skewed clock), but we saw
      // the record change 1 s ago: still live.
      {"skewed renewTime, recently observed: wait", Rec("other", 15, now - absl::Hours(1), 2), absl::Seconds(1),
       LeaseAction::kWait, "other", 2},
      {"released: acquire at once", Rec("", 1, now, 4), absl::ZeroDuration(), LeaseAction::kAcquire, "me", 5},
  };
  for (const auto& c : cases) {
    LeaseDecision d = DecideLease(c.lease, now - c.observed_ago, "me", absl::Seconds(15), now);
    EXPECT_EQ(d.action, c.want) << c.name;
    EXPECT_EQ(d.next.holder, c.want_holder) << c.name;
    EXPECT_EQ(d.next.transitions, c.want_transitions) << c.name;
    if (c.want != LeaseAction::kWait) {
      EXPECT_EQ(d.next.renew_time, now) << c.name;
      EXPECT_EQ(d.next.lease_duration_seconds, 15) << c.name;
    }
    const absl::Time want_acquire = c.want == LeaseAction::kAcquire ? now : T0;
    EXPECT_EQ(d.next.acquire_time, want_acquire) << c.name;
  }
}

TEST(LeaseJsonTest, RoundTripsWithMicroseconds) {
  LeaseRecord r{"pod-a", 15, T0 + absl::Microseconds(123456), T0 + absl::Seconds(2), 3, "42"};
  const std::string json = LeaseJson("kruise-system", "shard-0", r);
  auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["spec"]["acquireTime"], "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(j["spec"]["renewTime"], "2023-11-14T22:13:22.000000Z");
  EXPECT_EQ(j["metadata"]["resourceVersion"], "42");
  auto back = ParseLease(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  auto bad = ParseLease(R"({"spec":{"renewTime":"yesterday"}})");
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("spec.renewTime"));
  EXPECT_FALSE(ParseLease(R"({"spec":{"leaseDurationSeconds":"x"}})").ok());
}

struct Fixture {
  Fixture() {
    EXPECT_TRUE(server.Start().ok());
    client = *NewHttpRestClient(ClientConfig{.server = server.url()});
  }
  LeaderElectionConfig Config(const std::string& id, prometheus::Registry* registry = nullptr) {
    LeaderElectionConfig c;
    c.lease_namespace = "kruise-system";
    c.lease_name = "cloneset-shard-0";
    c.identity = id;
    c.clock = &clock;
    c.registry = registry;
    c.retry_period = absl::Milliseconds(10);
    return c;
  }
  LeaseRecord Stored() {
    return *ParseLease(server.GetObject("/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases",
                                        "cloneset-shard-0"));
  }
  FakeApiServer server;
  std::unique_ptr<RestClient> client;
  FakeClock clock{T0};
};

TEST(LeaderElectorTest, AcquireRenewTakeoverAndRelease) {
  Fixture f;
  prometheus::Registry registry;
  LeaderElector a(*f.client, f.Config("a", &registry));
  LeaderElector b(*f.client, f.Config("b"));

  EXPECT_EQ(*a.TryAcquireOrRenew(), true);
  EXPECT_EQ(f.Stored().holder, "a");
  EXPECT_EQ(*b.TryAcquireOrRenew(), false);
  EXPECT_TRUE(a.IsLeader());
  EXPECT_FALSE(b.IsLeader());
  EXPECT_THAT(prometheus::TextSerializer().Serialize(registry.Collect()),
              HasSubstr("leader_election_master_status{name=\"cloneset-shard-0\"} 1"));

  f.clock.Advance(absl::Seconds(5));
  EXPECT_EQ(*a.TryAcquireOrRenew(), true);
  EXPECT_EQ(f.Stored().renew_time, T0 + absl::Seconds(5));
  f.clock.Advance(absl::Seconds(14));
  EXPECT_EQ(*b.TryAcquireOrRenew(), false);  // b sees the renewal now (T0+19)
  f.clock.Advance(absl::Seconds(14));
  EXPECT_EQ(*b.TryAcquireOrRenew(), false);  // unchanged for 14 s < 15 s

  // a stopped renewing; 15 s after b last saw the record change it takes over.
  f.clock.Advance(absl::Seconds(1));
  EXPECT_FALSE(a.IsLeader());  // its renew deadline (10 s) passed long ago
  EXPECT_EQ(*b.TryAcquireOrRenew(), true);
  LeaseRecord stored = f.Stored();
  EXPECT_EQ(stored.holder, "b");
  EXPECT_EQ(stored.transitions, 1);
  EXPECT_EQ(stored.acquire_time, T0 + absl::Seconds(34));
  EXPECT_EQ(*a.TryAcquireOrRenew(), false);
  EXPECT_THAT(prometheus::TextSerializer().Serialize(registry.Collect()),
              HasSubstr("leader_election_master_status{name=\"cloneset-shard-0\"} 0"));

  // b hands over without making a wait for expiry.
  ASSERT_TRUE(b.Release().ok());
  EXPECT_EQ(f.Stored().holder, "");
  EXPECT_EQ(*a.TryAcquireOrRenew(), true);
  EXPECT_EQ(f.Stored().transitions, 2);
}

// A leader renews with one write and no read, on the record its last write returned (as client-go does). A 409
// there only says the Lease changed since: the read that follows decides. Still ours: renewed. Another holder's:
// not ours. Both writes refused: not ours this round. A read that fails is the error.
TEST(LeaderElectorTest, ALeaderRenewsWithOneWriteAndAConflictReadsAgain) {
  Fixture f;
  LeaderElector a(*f.client, f.Config("a"));
  ASSERT_EQ(*a.TryAcquireOrRenew(), true);
  const auto methods = [&] {
    std::vector<std::string> out;
    for (const std::string& r : f.server.requests()) out.push_back(r.substr(0, r.find(' ')));
    f.server.clear_requests();
    return out;
  };
  methods();
  f.clock.Advance(absl::Seconds(2));
  EXPECT_EQ(*a.TryAcquireOrRenew(), true);
  EXPECT_EQ(methods(), (std::vector<std::string>{"PUT"}));
  EXPECT_EQ(f.Stored().renew_time, T0 + absl::Seconds(2));

  f.server.InjectFault({"PUT", "/apis/coordination.k8s.io", "", 409, "Conflict", "", 1});
  EXPECT_EQ(*a.TryAcquireOrRenew(), true);
  EXPECT_EQ(methods(), (std::vector<std::string>{"PUT", "GET", "PUT"}));

  f.server.InjectFault({"PUT", "/apis/coordination.k8s.io", "", 409, "Conflict", "", 2});
  EXPECT_EQ(*a.TryAcquireOrRenew(), false);
  methods();

  f.server.InjectFault({"PUT", "/apis/coordination.k8s.io", "", 409, "Conflict", "", 1});
  f.server.InjectFault({"GET", "/apis/coordination.k8s.io", "", 403, "Forbidden", "", 1});
  EXPECT_EQ(a.TryAcquireOrRenew().status().code(), absl::StatusCode::kPermissionDenied);

  // Another replica's record (written behind a's back): the optimistic write meets a 409, the read names the other.
  LeaseRecord other = f.Stored();
  other.holder = "b";
  other.renew_time = f.clock.Now();
  other.resource_version.clear();
  f.server.Upsert("/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases",
                  LeaseJson("kruise-system", "cloneset-shard-0", other));
  EXPECT_EQ(*a.TryAcquireOrRenew(), false);
  EXPECT_EQ(f.Stored().holder, "b");
}

TEST(LeaderElectorTest, LoopCallsBackAndReleasesOnStop) {
  Fixture f;
  LeaderElector a(*f.client, f.Config("a"));
  absl::Mutex mu;
  std::vector<std::string> calls;
  a.Start([&] { absl::MutexLock l(&mu); calls.push_back("started"); },
          [&] { absl::MutexLock l(&mu); calls.push_back("stopped"); });
  // The first round is done once the loop waits for its retry period on the clock.
  ASSERT_TRUE(f.clock.AwaitDeadlineAfter(T0, absl::Seconds(60)));
  EXPECT_TRUE(a.IsLeader());
  a.Stop();
  EXPECT_EQ(calls, (std::vector<std::string>{"started", "stopped"}));
  EXPECT_EQ(f.Stored().holder, "");
}

// The loop's retry period is on the injected clock: one round (read, renew) per period of the clock and none in
// between, and Stop ends the wait at once, without the clock moving.
TEST(LeaderElectorTest, RetryPeriodIsOnTheClockAndStopEndsTheWait) {
  Fixture f;
  LeaderElectionConfig c = f.Config("a");
  c.retry_period = absl::Seconds(2);
  LeaderElector a(*f.client, c);
  a.Start(nullptr, nullptr);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const absl::Time now = T0 + round * absl::Seconds(2);
    ASSERT_TRUE(f.clock.AwaitDeadlineAfter(now, absl::Seconds(60))) << "no retry wait on the clock";
    EXPECT_EQ(f.clock.Deadlines(), std::vector<absl::Time>{now + absl::Seconds(2)});
    EXPECT_EQ(f.Stored().renew_time, now);  // this round renewed
    EXPECT_TRUE(a.IsLeader());
    f.clock.Advance(absl::Milliseconds(1999));
    EXPECT_EQ(f.clock.Deadlines(), std::vector<absl::Time>{now + absl::Seconds(2)}) << "woke before the period";
    EXPECT_EQ(f.Stored().renew_time, now);
    f.clock.Advance(absl::Milliseconds(1));
  }
  ASSERT_TRUE(f.clock.AwaitDeadlineAfter(T0 + absl::Seconds(6), absl::Seconds(60)));
  absl::Notification stopped;
  std::thread stopper([&] {
    a.Stop();
    stopped.Notify();
  });
  const bool prompt = stopped.WaitForNotificationWithTimeout(absl::Seconds(60));
  if (!prompt) f.clock.Advance(absl::Hours(1));  // release the wait so the thread can be joined
  stopper.join();
  EXPECT_TRUE(prompt) << "Stop waited for the retry period";
  EXPECT_EQ(f.Stored().holder, "");
}

}  // namespace
}  // namespace cloneset::kube
