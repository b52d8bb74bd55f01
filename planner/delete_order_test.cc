#include "planner/delete_order.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using ::testing::ElementsAre;
using namespace ::cloneset::planner::testing;  // NOLINT

std::vector<std::string> Names(const std::vector<const pb::Pod*>& pods) {
  std::vector<std::string> out;
  for (const auto* p : pods) out.push_back(p->metadata().name());
  return out;
}

struct DeletionCostCase {
  std::string text;
  int32_t want;
};

TEST(DeletionCost, Parsing) {
  const DeletionCostCase cases[] = {{"", 0},          {"0", 0},           {"15", 15},          {"-20", -20},
                                    {"+5", 0},        {"007", 0},         {"-0", 0},           {"1.5", 0},
                                    {"abc", 0},       {"2147483647", 2147483647}, {"2147483648", 0},
                                    {"-2147483648", INT32_MIN}, {"-2147483649", 0}, {"-", 0}};
  for (const auto& c : cases) {
    pb::Pod pod = PodBuilder("cs-a");
    if (!c.text.empty()) pod = PodBuilder("cs-a").DeletionCost(c.text);
    EXPECT_EQ(DeletionCost(pod), c.want) << "'" << c.text << "'";
  }
}

// Two pods that differ in exactly one criterion: `first` must be deleted before `second` whatever the input order.
struct PairCase {
  std::string name;
  pb::Pod first;
  pb::Pod second;
};

class ComparatorTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(ComparatorTest, FirstIsDeletedFirst) {
  pb::PlanRequest req = Request(CloneSetBuilder(), {GetParam().second, GetParam().first});
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  std::vector<const pb::Pod*> input = {&req.pods(0), &req.pods(1)};
  EXPECT_THAT(Names(SortForDeletion(ctx, input)), ElementsAre(GetParam().first.metadata().name(),
                                                              GetParam().second.metadata().name()));
  std::vector<const pb::Pod*> reversed = {&req.pods(1), &req.pods(0)};
  EXPECT_THAT(Names(SortForDeletion(ctx, reversed)), ElementsAre(GetParam().first.metadata().name(),
                                                                 GetParam().second.metadata().name()));
}

const absl::Time kHourAgo = Now() - absl::Hours(1);

INSTANTIATE_TEST_SUITE_P(
    Criteria, ComparatorTest,
    ::testing::Values(
        PairCase{"UnscheduledFirst", PodBuilder("cs-b").Ready(kHourAgo), PodBuilder("cs-a").Ready(kHourAgo).Node("n1")},
        PairCase{"PendingBeforeRunning", PodBuilder("cs-b").Node("n1").Phase("Pending"),
                 PodBuilder("cs-a").Node("n2").Phase("Running")},
        PairCase{"UnknownBeforeRunning", PodBuilder("cs-b").Node("n1").Phase("Unknown"),
                 PodBuilder("cs-a").Node("n2").Phase("Running")},
        PairCase{"PendingBeforeUnknown", PodBuilder("cs-b").Node("n1").Phase("Pending"),
                 PodBuilder("cs-a").Node("n2").Phase("Unknown")},
        // Ready but lifecycle PreparingUpdate = unavailable.
        PairCase{"UnavailableBeforeAvailable",
                 PodBuilder("cs-b").Node("n1").Ready(kHourAgo).Lifecycle(kStatePreparingUpdate),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo)},
        // Both unavailable (Updating): the not-ready one first.
        PairCase{"NotReadyBeforeReady", PodBuilder("cs-b").Node("n1").NotReady(kHourAgo).Lifecycle(kStateUpdating),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo).Lifecycle(kStateUpdating)},
        PairCase{"LowerCostFirst", PodBuilder("cs-b").Node("n1").Ready(kHourAgo).DeletionCost("-5"),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo).DeletionCost("10")},
        PairCase{"InvalidCostIsZero", PodBuilder("cs-b").Node("n1").Ready(kHourAgo).DeletionCost("+50"),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo).DeletionCost("1")},
        PairCase{"MoreRecentlyReadyFirst", PodBuilder("cs-b").Node("n1").Ready(kHourAgo + absl::Minutes(5)),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo)},
        PairCase{"MoreRestartsFirst", PodBuilder("cs-b").Node("n1").Ready(kHourAgo).Restarts(3),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo).Restarts(1)},
        PairCase{"NewerFirst", PodBuilder("cs-b").Node("n1").Ready(kHourAgo).Created(Now() - absl::Minutes(70)),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo).Created(Now() - absl::Minutes(90))},
        PairCase{"ZeroCreationCountsNewest",
                 [] {
                   pb::Pod p = PodBuilder("cs-b").Node("n1").Ready(kHourAgo);
                   p.mutable_metadata()->clear_creation_timestamp();
                   return p;
                 }(),
                 PodBuilder("cs-a").Node("n2").Ready(kHourAgo)}),
    [](const auto& info) { return info.param.name; });

TEST(SameNodeRanker, RanksAllButTheBestPodPerNode) {
  pb::PlanRequest req = Request(
      CloneSetBuilder(),
      {PodBuilder("cs-a").Node("n1").Ready(kHourAgo - absl::Minutes(3)), PodBuilder("cs-b").Node("n1").Ready(kHourAgo - absl::Minutes(2)),
       PodBuilder("cs-c").Node("n1").Ready(kHourAgo - absl::Minutes(1)), PodBuilder("cs-d").Node("n2").Ready(kHourAgo),
       PodBuilder("cs-e").Ready(kHourAgo)});
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  // n1 sorted: c (most recently ready), b, a -> ranks c 2, b 1, a 0 (best, kept).
  EXPECT_THAT(RankPods(ctx, ctx.pods, {}), ElementsAre(0, 1, 2, 0, 0));
}

TEST(SameNodeRanker, RankBeatsReadyTime) {
  // d is the most recently ready but alone on its node; a/b share n1 so the worse of them (b) goes first.
  pb::PlanRequest req = Request(CloneSetBuilder(), {PodBuilder("cs-a").Node("n1").Ready(kHourAgo - absl::Minutes(5)),
                                                    PodBuilder("cs-b").Node("n1").Ready(kHourAgo - absl::Minutes(4)),
                                                    PodBuilder("cs-d").Node("n2").Ready(kHourAgo)});
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  EXPECT_THAT(Names(SortForDeletion(ctx, ctx.pods)), ElementsAre("cs-b", "cs-d", "cs-a"));
}

std::string SpreadTemplate(const std::string& key) {
  return R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"x"}],)"
         R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":")" +
         key + R"(","whenUnsatisfiable":"DoNotSchedule"}]}})";
}

TEST(TopologySpreadKeys, ReadsKeys) {
  EXPECT_THAT(TopologySpreadKeys(SpreadTemplate("zone")), ElementsAre("zone"));
  EXPECT_TRUE(TopologySpreadKeys(TemplateJson()).empty());
  EXPECT_TRUE(TopologySpreadKeys("not json").empty());
}

pb::Node MakeNode(const std::string& name, const std::string& zone) {
  pb::Node n;
  n.set_name(name);
  if (!zone.empty()) (*n.mutable_labels())["zone"] = zone;
  (*n.mutable_labels())["kubernetes.io/hostname"] = name;
  return n;
}

TEST(SpreadRanker, CrowdedZoneRanksHigher) {
  pb::PlanRequest req = Request(CloneSetBuilder(), {PodBuilder("cs-p1").Node("n1").Ready(kHourAgo),
                                                    PodBuilder("cs-p2").Node("n2").Ready(kHourAgo),
                                                    PodBuilder("cs-p3").Node("n3").Ready(kHourAgo),
                                                    PodBuilder("cs-p4").Node("n4").Ready(kHourAgo)});
  *req.add_nodes() = MakeNode("n1", "a");
  *req.add_nodes() = MakeNode("n2", "a");
  *req.add_nodes() = MakeNode("n3", "b");
  *req.add_nodes() = MakeNode("n4", "");  // no zone label: ignored for that key
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  const double w = std::log(2.0 + 2.0);  // two topologies
  const std::vector<double> ranks = RankPods(ctx, ctx.pods, {"zone"});
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_DOUBLE_EQ(ranks[0], 2 * w);
  EXPECT_DOUBLE_EQ(ranks[1], 1 * w);
  EXPECT_DOUBLE_EQ(ranks[2], 1 * w);
  EXPECT_DOUBLE_EQ(ranks[3], 0);
  ctx.update_template_json = SpreadTemplate("zone");
  EXPECT_THAT(Names(SortForDeletion(ctx, ctx.pods)), ElementsAre("cs-p1", "cs-p2", "cs-p3", "cs-p4"));
}

TEST(SpreadRanker, RanksAddUpOverKeysAndHostnameSkipsNodeRanker) {
  pb::PlanRequest req = Request(CloneSetBuilder(), {PodBuilder("cs-p1").Node("n1").Ready(kHourAgo),
                                                    PodBuilder("cs-p2").Node("n1").Ready(kHourAgo),
                                                    PodBuilder("cs-p3").Node("n2").Ready(kHourAgo)});
  *req.add_nodes() = MakeNode("n1", "a");
  *req.add_nodes() = MakeNode("n2", "b");
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  const double w = std::log(4.0);
  // zone: a=[p1,p2] (node ranker: p1 rank 1, p2 0 -> p1 first): p1 2w, p2 w; b=[p3]: w.
  // hostname: n1=[p1,p2] (no node ranker; tie keeps order): p1 2w, p2 w; n2=[p3]: w.
  const std::vector<double> ranks = RankPods(ctx, ctx.pods, {"zone", "kubernetes.io/hostname"});
  EXPECT_DOUBLE_EQ(ranks[0], 4 * w);
  EXPECT_DOUBLE_EQ(ranks[1], 2 * w);
  EXPECT_DOUBLE_EQ(ranks[2], 2 * w);
}

TEST(ChoosePodsToDelete, SplitsBetweenRevisions) {
  pb::PlanRequest req = Request(CloneSetBuilder(), {PodBuilder("cs-o1").Node("n1").Ready(kHourAgo),
                                                    PodBuilder("cs-o2").Node("n2").Phase("Pending"),
                                                    PodBuilder("cs-u1").Node("n3").Ready(kHourAgo),
                                                    PodBuilder("cs-u2").Node("n4")});
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-2");
  std::vector<const pb::Pod*> old_pods = {ctx.pods[0], ctx.pods[1]};
  std::vector<const pb::Pod*> new_pods = {ctx.pods[2], ctx.pods[3]};
  EXPECT_THAT(Names(ChoosePodsToDelete(ctx, 1, 1, old_pods, new_pods)), ElementsAre("cs-o2"));
  EXPECT_THAT(Names(ChoosePodsToDelete(ctx, 3, 1, old_pods, new_pods)), ElementsAre("cs-o2", "cs-u1", "cs-u2"));
  EXPECT_THAT(Names(ChoosePodsToDelete(ctx, 1, 0, old_pods, new_pods)), ElementsAre("cs-u2"));
  EXPECT_THAT(Names(ChoosePodsToDelete(ctx, 2, 5, old_pods, new_pods)), ElementsAre("cs-o1", "cs-o2"));
  EXPECT_THAT(Names(ChoosePodsToDelete(ctx, 5, 5, old_pods, new_pods)), ElementsAre("cs-o1", "cs-o2"));
}

}  // namespace
}  // namespace cloneset::planner
