#include "executor/shards.h"

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "kube/leader_lease.h"
#include "kube/workqueue.h"
#include "nlohmann/json.hpp"

namespace cloneset::executor {
namespace {

TEST(ShardsTest, Fnv1a32KnownValues) {
  EXPECT_EQ(Fnv1a32(""), 2166136261u);
  EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
}

TEST(ShardsTest, ShardOfIsStableAndInRange) {
  EXPECT_EQ(ShardOf("default/video-transcoder", 1), 0);
  EXPECT_EQ(ShardOf("a", 4), static_cast<int>(0xe40c292cu % 4));
  for (int n : {2, 3, 7}) {
    for (const char* key : {"ns/a", "ns/b", "other/c"}) {
      const int s = ShardOf(key, n);
      EXPECT_GE(s, 0);
      EXPECT_LT(s, n);
      EXPECT_EQ(s, static_cast<int>(Fnv1a32(key) % n));
    }
  }
}

TEST(ShardsTest, FairShare) {
  struct Case { int shards, live, want; };
  for (const Case& c : std::vector<Case>{{1, 1, 1}, {4, 1, 4}, {4, 2, 2}, {4, 3, 2}, {5, 2, 3}, {3, 0, 3},
                                         {2, 5, 1}}) {
    EXPECT_EQ(FairShare(c.shards, c.live), c.want) << c.shards << "/" << c.live;
  }
}

TEST(ShardsTest, DecideShardsTable) {
  struct Case {
    std::vector<bool> held;
    int quota;
    std::vector<int> renew, release, try_acquire;
  };
  const std::vector<Case> cases = {
      {{false, false, false, false}, 4, {}, {}, {0, 1, 2, 3}},
      {{true, false, true, false}, 2, {0, 2}, {}, {}},
      {{true, true, true, true}, 2, {0, 1}, {3, 2}, {}},
      {{true, false, false, true}, 3, {0, 3}, {}, {1, 2}},
      {{true, true, true}, 1, {0}, {2, 1}, {}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const ShardRound r = DecideShards(cases[i].held, cases[i].quota);
    EXPECT_EQ(r.renew, cases[i].renew) << i;
    EXPECT_EQ(r.release, cases[i].release) << i;
    EXPECT_EQ(r.try_acquire, cases[i].try_acquire) << i;
  }
}

TEST(ShardsTest, ShardsToEnqueueTable) {
  struct Case {
    std::string name;
    std::vector<bool> held, was_held, skipped;
    std::vector<int> want;
  };
  const std::vector<Case> cases = {
      {"first round: every shard gained", {true, true}, {false, false}, {false, false}, {0, 1}},
      {"held all along, nothing skipped", {true, true}, {true, true}, {false, false}, {}},
      {"held all along, a worker skipped a key of shard 1", {true, true}, {true, true}, {false, true}, {1}},
      {"skipped but still not held: wait", {true, false}, {true, false}, {false, true}, {}},
      {"gained and skipped: once", {false, true, true}, {false, false, true}, {true, true, false}, {1}},
      {"lost this round", {false, true}, {true, true}, {false, false}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ShardsToEnqueue(c.held, c.was_held, c.skipped), c.want) << c.name;
  }
}

TEST(ShardsTest, LeaseNames) {
  EXPECT_EQ(ShardLeaseName(3), "cloneset-executor-shard-3");
  EXPECT_EQ(MemberLeaseName("a"), "cloneset-executor-member-e40c292c");
}

TEST(ShardsTest, CountLiveMembers) {
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  const auto lease = [](const std::string& name, const std::string& holder, absl::Time renew) {
    kube::LeaseRecord r;
    r.holder = holder;
    r.lease_duration_seconds = 15;
    r.acquire_time = renew;
    r.renew_time = renew;
    return kube::LeaseJson("cloneset-system", name, r);
  };
  const std::string list = "{\"kind\":\"LeaseList\",\"items\":[" +
                           lease(MemberLeaseName("a"), "a", now - absl::Seconds(3)) + "," +
                           lease(MemberLeaseName("b"), "b", now - absl::Seconds(20)) + "," +  // expired
                           lease(MemberLeaseName("c"), "", now) + "," +                      // released
                           lease(ShardLeaseName(0), "a", now) + "," +                        // not a member
                           lease(MemberLeaseName("d"), "d", now) + "]}";
  EXPECT_EQ(CountLiveMembers(list, now), 2);
  EXPECT_EQ(CountLiveMembers("not json", now), 0);
}

// An in-memory API server for Leases: GET, LIST, POST and PUT with resourceVersion preconditions, and scripted
// faults on writes as the fault suite's API server injects them: a 409 or a 500 before the write is applied, a 500
// after it was, and a 409 after it was (the answer lost although our write went through).
class LeaseApi final : public kube::RestClient {
 public:
  enum class Fault { kConflict, kErrorBeforeCommit, kErrorAfterCommit, kConflictAfterCommit };

  // The next writes of Lease `name` meet these faults, in order; later writes succeed. Replaces what an earlier
  // call left unused (a round that wrote fewer times than it had faults for).
  void FailWrites(const std::string& name, std::vector<Fault> faults) {
    absl::MutexLock l(&mu_);
    faults_[name].assign(faults.begin(), faults.end());
  }
  // Runs inside each GET of Lease `name` (a slow request: the test moves the clock and asks as a worker would).
  void DuringGet(const std::string& name, std::function<void()> hook) {
    absl::MutexLock l(&mu_);
    during_get_[name] = std::move(hook);
  }
  // Another replica's write: sets the holder (renewTime `at`, 15 s) as a successful PUT would.
  void SetHolder(const std::string& name, const std::string& holder, absl::Time at) {
    absl::MutexLock l(&mu_);
    kube::LeaseRecord r;
    if (auto it = leases_.find(name); it != leases_.end()) r = *kube::ParseLease(it->second.dump());
    r.holder = holder;
    r.lease_duration_seconds = 15;
    r.renew_time = at;
    StoreLocked(name, nlohmann::json::parse(kube::LeaseJson("cloneset-system", name, r)));
  }
  std::optional<kube::LeaseRecord> Lease(const std::string& name) {
    absl::MutexLock l(&mu_);
    auto it = leases_.find(name);
    if (it == leases_.end()) return std::nullopt;
    return *kube::ParseLease(it->second.dump());
  }

  absl::StatusOr<kube::HttpResponse> Do(std::string_view method, std::string_view path, std::string_view body,
                                        std::string_view) override {
    std::string p(path.substr(0, path.find('?')));
    constexpr std::string_view kCollection = "/apis/coordination.k8s.io/v1/namespaces/cloneset-system/leases";
    if (!p.starts_with(kCollection)) return Answer(404, "NotFound", "no such path");
    const std::string name = p.size() > kCollection.size() ? p.substr(kCollection.size() + 1) : "";
    if (method == "GET") {
      std::function<void()> hook;
      {
        absl::MutexLock l(&mu_);
        if (auto it = during_get_.find(name); it != during_get_.end()) hook = it->second;
      }
      if (hook) hook();
      absl::MutexLock l(&mu_);
      if (name.empty()) {
        nlohmann::json list = {{"kind", "LeaseList"}, {"items", nlohmann::json::array()}};
        for (const auto& [n, obj] : leases_) list["items"].push_back(obj);
        return kube::HttpResponse{200, list.dump(), {}};
      }
      auto it = leases_.find(name);
      if (it == leases_.end()) return Answer(404, "NotFound", "leases \"" + name + "\" not found");
      return kube::HttpResponse{200, it->second.dump(), {}};
    }
    auto obj = nlohmann::json::parse(body, nullptr, false);
    if (!obj.is_object()) return Answer(400, "BadRequest", "not JSON");
    const std::string target = method == "POST" ? obj["metadata"].value("name", "") : name;
    absl::MutexLock l(&mu_);
    std::optional<Fault> fault;
    if (auto& q = faults_[target]; !q.empty()) {
      fault = q.front();
      q.pop_front();
    }
    if (fault == Fault::kConflict) return Answer(409, "Conflict", "injected conflict");
    if (fault == Fault::kErrorBeforeCommit) return Answer(500, "InternalError", "injected before commit");
    auto it = leases_.find(target);
    if (method == "POST" && it != leases_.end()) return Answer(409, "AlreadyExists", "exists");
    if (method == "PUT") {
      if (it == leases_.end()) return Answer(404, "NotFound", "not found");
      if (obj["metadata"].value("resourceVersion", "") != it->second["metadata"].value("resourceVersion", "")) {
        return Answer(409, "Conflict", "the object has been modified");
      }
    }
    const std::string stored = StoreLocked(target, obj).dump();
    if (fault == Fault::kErrorAfterCommit) return Answer(500, "InternalError", "injected after commit");
    if (fault == Fault::kConflictAfterCommit) return Answer(409, "Conflict", "injected conflict after commit");
    return kube::HttpResponse{method == "POST" ? 201 : 200, stored, {}};
  }
  absl::Status Watch(std::string_view, const std::function<bool(std::string_view)>&, kube::CancelToken*) override {
    return absl::UnimplementedError("LeaseApi serves no watches");
  }

 private:
  static kube::HttpResponse Answer(int code, const std::string& reason, const std::string& message) {
    const nlohmann::json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                                   {"reason", reason}, {"message", message}, {"code", code}};
    return kube::HttpResponse{code, status.dump(), {}};
  }
  nlohmann::json& StoreLocked(const std::string& name, nlohmann::json obj) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    return leases_[name] = std::move(obj);
  }

  absl::Mutex mu_;
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 100;
  std::map<std::string, nlohmann::json> leases_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<Fault>> faults_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::function<void()>> during_get_ ABSL_GUARDED_BY(mu_);
};

using F = LeaseApi::Fault;

// A round meets each fault on both of its writes: a holder's renewal first writes without reading (the optimistic
// renewal) and, when that fails, reads and writes again; an API server that fails a round fails both. (A round past
// the renew deadline writes once: the second fault goes unused.)
std::vector<F> EveryWrite(const std::vector<F>& faults) {
  std::vector<F> out;
  for (F f : faults) out.insert(out.end(), {f, f});
  return out;
}

ShardOptions Options(int shards, const base::Clock* clock) {
  ShardOptions o;
  o.shards = shards;
  o.identity = "me";
  o.lease_duration = absl::Seconds(15);
  o.renew_deadline = absl::Seconds(10);
  o.retry_period = absl::Seconds(2);
  o.clock = clock;
  return o;
}

// One shard, one replica, rounds run by hand on an injected clock (Start() runs one every retry period). A worker
// asks Owns() before a round or in the middle of one (while the shard Lease's GET is slow); every key it was told
// is not ours was skipped, so the shard's keys must be enqueued again (on_acquired) once it is held: else the
// CloneSet waits for an event that may never come (the stall seen with seed 1795628852598324).
TEST(ShardManagerTest, RenewalFaultsTable) {
  struct Step {
    absl::Duration advance;              // clock moves this much before the round
    std::vector<F> faults;               // what the shard Lease's writes in this round meet
    std::optional<bool> worker_before;   // a worker asks before the round; the answer it must get
    absl::Duration slow_get = absl::ZeroDuration();  // the shard Lease GET takes this long...
    std::optional<bool> worker_during;   // ...and a worker asks meanwhile; the answer it must get
    bool want_held = true;               // after the round
    int want_enqueued = 0;               // on_acquired calls of this round
  };
  struct Case {
    std::string name;
    std::vector<Step> steps;
  };
  const absl::Duration s2 = absl::Seconds(2);
  const std::vector<Case> cases = {
      {"409 and 500 for longer than renew_deadline, then a renewal succeeds",
       {{absl::ZeroDuration(), {}, std::nullopt, {}, {}, true, 1},
        {s2, {F::kConflict}, true},
        {s2, {F::kErrorBeforeCommit}, true},
        {s2, {F::kErrorAfterCommit}, true},
        {s2, {F::kConflict}, true},
        {absl::Milliseconds(2500), {}, false, {}, {}, true, 1}}},
      {"the deadline passes during a slow round whose renewal succeeds",
       {{absl::ZeroDuration(), {}, std::nullopt, {}, {}, true, 1},
        {s2, {F::kConflict}, true},
        {s2, {F::kErrorBeforeCommit}, true},
        {s2, {F::kConflict}, true},
        {s2, {F::kErrorAfterCommit}, true},
        {absl::Milliseconds(1500), {}, true, absl::Seconds(1), false, true, 1}}},
      {"a 409 whose write committed: the next renewal reads the newer version and succeeds, no lapse",
       {{absl::ZeroDuration(), {}, std::nullopt, {}, {}, true, 1},
        {s2, {F::kConflictAfterCommit}, true},
        {s2, {F::kConflictAfterCommit}, true},
        {s2, {}, true},
        {absl::Seconds(8), {}, true}}},
      {"409s that committed for longer than renew_deadline: taken back at the first answered renewal",
       {{absl::ZeroDuration(), {}, std::nullopt, {}, {}, true, 1},
        {s2, {F::kConflictAfterCommit}, true},
        {s2, {F::kConflictAfterCommit}, true},
        {s2, {F::kConflictAfterCommit}, true},
        {s2, {F::kConflictAfterCommit}, true},
        {absl::Milliseconds(2500), {F::kConflictAfterCommit}, false, {}, {}, false, 0},
        {s2, {}, false, {}, {}, true, 1}}},
      {"renewals fail past the lease duration: the Lease still names us, renewed without waiting for expiry",
       {{absl::ZeroDuration(), {}, std::nullopt, {}, {}, true, 1},
        {s2, {F::kErrorBeforeCommit}, true},
        {s2, {F::kErrorAfterCommit}, true},
        {s2, {F::kConflict}, true},
        {s2, {F::kErrorBeforeCommit}, true},
        {s2, {F::kErrorBeforeCommit}, false, {}, {}, false, 0},
        {absl::Seconds(10), {F::kConflict}, false, {}, {}, false, 0},
        {s2, {}, false, {}, {}, true, 1}}},
      {"failures shorter than renew_deadline: held throughout, nothing enqueued again",
       {{absl::ZeroDuration(), {}, std::nullopt, {}, {}, true, 1},
        {s2, {F::kErrorBeforeCommit}, true},
        {s2, {F::kConflict}, true},
        {s2, {F::kErrorAfterCommit}, true},
        {s2, {F::kConflictAfterCommit}, true},
        {absl::Milliseconds(1900), {}, true, absl::Milliseconds(50), true, true, 0}}},
  };
  for (const Case& c : cases) {
    base::testing::FakeClock clock;
    LeaseApi api;
    int enqueued = 0;
    ShardManager manager(api, Options(1, &clock), [&](int shard, bool) {
      EXPECT_EQ(shard, 0);
      ++enqueued;
    });
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const Step& s = c.steps[i];
      const std::string at = absl::StrCat(c.name, ", step ", i);
      clock.Advance(s.advance);
      if (s.worker_before) {
        EXPECT_EQ(manager.Owns("ns/app"), *s.worker_before) << at << ": worker before the round";
      }
      api.FailWrites(ShardLeaseName(0), EveryWrite(s.faults));
      std::optional<bool> during;
      api.DuringGet(ShardLeaseName(0), [&, slow = s.slow_get, ask = s.worker_during.has_value()] {
        clock.Advance(slow);
        if (ask) during = manager.Owns("ns/app");
      });
      enqueued = 0;
      manager.RunRound();
      if (s.worker_during) {
        EXPECT_EQ(during, s.worker_during) << at << ": worker during the round";
      }
      EXPECT_EQ(manager.OwnsShard(0), s.want_held) << at;
      EXPECT_EQ(enqueued, s.want_enqueued) << at;
    }
    const auto lease = api.Lease(ShardLeaseName(0));
    ASSERT_TRUE(lease.has_value()) << c.name;
    EXPECT_EQ(lease->holder, "me") << c.name;
  }
}

// Start runs a round, then waits for the retry period on the injected clock; Stop ends that wait at once.
TEST(ShardManagerTest, StartWaitsOnTheClockAndStopEndsTheWaitAtOnce) {
  base::testing::FakeClock clock;
  LeaseApi api;
  ShardManager manager(api, Options(1, &clock), [](int, bool) {});
  manager.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1, absl::Seconds(30))) << "the rounds do not wait on the injected clock";
  EXPECT_TRUE(manager.OwnsShard(0));
  absl::Notification stopped;
  std::thread stopper([&] {
    manager.Stop();
    stopped.Notify();
  });
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(30))) << "Stop waited for the clock";
  clock.Advance(absl::Hours(1));  // releases the wait if Stop did not, so the test ends
  stopper.join();
  EXPECT_EQ(api.Lease(ShardLeaseName(0))->holder, "") << "Stop gives the Lease up";
}

// Keys of a lost shard that a worker skipped while it was not held: once it is held again, every CloneSet of that
// shard is back in the work queue, and none of the shards held all along.
TEST(ShardManagerTest, LostShardRegainedEnqueuesAllItsCloneSets) {
  struct Case {
    std::string name;
    // Makes shard 2 not ours for a while (clock at the last round: t = 0), then gives it back.
    std::function<void(LeaseApi&, base::testing::FakeClock&, ShardManager&)> lose;
  };
  const std::vector<Case> cases = {
      {"renewals of its Lease answered 500 and 409 until renew_deadline passed between two rounds",
       [](LeaseApi& api, base::testing::FakeClock& clock, ShardManager& m) {
         for (int i = 0; i < 4; ++i) {
           clock.Advance(absl::Milliseconds(2100));
           api.FailWrites(ShardLeaseName(2), EveryWrite({i % 2 ? F::kConflict : F::kErrorBeforeCommit}));
           m.RunRound();
           EXPECT_TRUE(m.OwnsShard(2)) << "round " << i;
         }
         clock.Advance(absl::Milliseconds(1700));  // t = 10.1 s: past renew_deadline, the next round not yet run
       }},
      {"renewals of its Lease answered 500 and 409 for two rounds past renew_deadline",
       [](LeaseApi& api, base::testing::FakeClock& clock, ShardManager& m) {
         for (int i = 0; i < 6; ++i) {
           clock.Advance(absl::Milliseconds(2100));
           api.FailWrites(ShardLeaseName(2), EveryWrite({i % 2 ? F::kConflict : F::kErrorAfterCommit}));
           m.RunRound();
         }
         EXPECT_FALSE(m.OwnsShard(2));
       }},
      {"another replica took its Lease over and released it",
       [](LeaseApi& api, base::testing::FakeClock& clock, ShardManager& m) {
         api.SetHolder(ShardLeaseName(2), "other", clock.Now());
         clock.Advance(absl::Seconds(2));
         m.RunRound();
         EXPECT_FALSE(m.OwnsShard(2));
         api.SetHolder(ShardLeaseName(2), "", clock.Now());
       }},
  };
  for (const Case& c : cases) {
    base::testing::FakeClock clock;
    LeaseApi api;
    std::vector<std::string> keys;
    for (int i = 0; i < 24; ++i) keys.push_back(absl::StrCat("ns-", i % 3, "/app-", i));
    kube::WorkQueue queue({.name = "test", .clock = &clock});
    const auto drain = [&] {
      std::set<std::string> out;
      while (queue.Len() > 0) {
        auto k = queue.Get();
        out.insert(*k);
        queue.Done(*k);
      }
      return out;
    };
    ShardManager manager(api, Options(4, &clock), [&](int shard, bool) {
      for (const auto& k : keys) {
        if (ShardOf(k, 4) == shard) queue.Add(k);
      }
    });
    manager.RunRound();
    ASSERT_EQ(manager.owned(), 4) << c.name;
    EXPECT_EQ(drain().size(), keys.size()) << c.name;
    std::set<std::string> of_shard_2;
    for (const auto& k : keys) {
      if (ShardOf(k, 4) == 2) of_shard_2.insert(k);
    }
    ASSERT_FALSE(of_shard_2.empty());
    c.lose(api, clock, manager);
    // An event for one of its CloneSets arrives; the worker finds the shard not ours and drops the key.
    queue.Add(*of_shard_2.begin());
    auto k = queue.Get();
    EXPECT_FALSE(manager.Owns(*k)) << c.name;
    queue.Done(*k);
    EXPECT_EQ(queue.Len(), 0u);
    api.FailWrites(ShardLeaseName(2), {});  // the API server answers again
    clock.Advance(absl::Seconds(2));
    manager.RunRound();
    EXPECT_EQ(manager.owned(), 4) << c.name;
    EXPECT_EQ(drain(), of_shard_2) << c.name;
  }
}

}  // namespace
}  // namespace cloneset::executor
