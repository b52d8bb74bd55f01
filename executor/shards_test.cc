#include "executor/shards.h"

#include "gtest/gtest.h"
#include "kube/leader_lease.h"

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

}  // namespace
}  // namespace cloneset::executor
