// The Nodes in the planner's snapshot (semantics §4.6, §0.6): exactly the nodes of the CloneSet's pods when
// its template has topologySpreadConstraints, none otherwise; and the node cache of InformerCache, including a
// cluster that does not let the executor list nodes.
#include <string>
#include <vector>

#include "base/testing/fake_clock.h"
#include "executor/informer_cache.h"
#include "executor/reconciler.h"
#include "executor/testing/mocks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/testing/fake_apiserver.h"
#include "kube/testing/mock_rest_client.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::ElementsAreArray;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::StrictMock;

constexpr char kKey[] = "ns/cs";
constexpr char kSpreadTemplate[] =
    R"({"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}],)"
    R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}})";
constexpr char kPlainTemplate[] = R"({"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";

struct NeedsNodesCase {
  std::string name;
  std::string template_json;
  bool want;
};

class NeedsNodesTest : public ::testing::TestWithParam<NeedsNodesCase> {};

TEST_P(NeedsNodesTest, MatchesThePlannersSpreadRule) {
  EXPECT_EQ(NeedsNodes(GetParam().template_json), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Templates, NeedsNodesTest,
    ::testing::Values(
        NeedsNodesCase{"spread", kSpreadTemplate, true},
        NeedsNodesCase{"plain", kPlainTemplate, false},
        NeedsNodesCase{"empty", "", false},
        NeedsNodesCase{"empty_list", R"({"spec":{"topologySpreadConstraints":[]}})", false},
        NeedsNodesCase{"no_key", R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1}]}})", false},
        NeedsNodesCase{"key_not_string", R"({"spec":{"topologySpreadConstraints":[{"topologyKey":1}]}})", false},
        NeedsNodesCase{"second_has_key",
                       R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1},{"topologyKey":"zone"}]}})", true},
        NeedsNodesCase{"not_a_list", R"({"spec":{"topologySpreadConstraints":{"topologyKey":"zone"}}})", false},
        NeedsNodesCase{"only_in_an_annotation",
                       R"({"metadata":{"annotations":{"x":"topologySpreadConstraints"}},"spec":{}})", false},
        NeedsNodesCase{"malformed", R"({"spec":{"topologySpreadConstraints":[{"topologyKey":"zone"})", false}),
    [](const auto& info) { return info.param.name; });

pb::Pod PodOn(const std::string& name, const std::string& node) {
  pb::Pod p;
  p.mutable_metadata()->set_name(name);
  p.mutable_metadata()->set_namespace_("ns");
  p.set_node_name(node);
  return p;
}

pb::Node NodeNamed(const std::string& name, const std::string& zone) {
  pb::Node n;
  n.set_name(name);
  (*n.mutable_labels())["zone"] = zone;
  return n;
}

struct SnapshotCase {
  std::string name;
  std::string template_json;
  std::vector<pb::Pod> pods;
  std::vector<std::string> want_lookup;  // names asked of the cache; empty = not asked at all
  std::vector<std::string> want_nodes;   // names in the PlanRequest, in order
};

class SnapshotNodesTest : public ::testing::TestWithParam<SnapshotCase> {};

TEST_P(SnapshotNodesTest, PlanRequestCarriesTheNodesOfThePods) {
  const SnapshotCase& tc = GetParam();
  auto cs = std::make_shared<pb::CloneSet>();
  cs->mutable_metadata()->set_name("cs");
  cs->mutable_metadata()->set_namespace_("ns");
  cs->mutable_metadata()->set_uid("uid-1");
  cs->mutable_metadata()->set_generation(1);
  cs->mutable_spec()->set_template_json(tc.template_json);

  NiceMock<testing::MockClusterCache> cache;
  StrictMock<testing::MockPlannerClient> planner;
  StrictMock<kube::testing::MockRestClient> client;
  NiceMock<testing::MockEventSink> events;
  base::testing::FakeClock clock;
  Expectations expectations(absl::Minutes(5));
  ON_CALL(cache, GetCloneSet(kKey)).WillByDefault(Return(cs));
  ON_CALL(cache, Lookup(_, _, _)).WillByDefault(Return(Observed{}));
  EXPECT_CALL(cache, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(tc.pods));
  // The node cache knows n1 and n2 only (n3 stands for a node that cannot be read).
  const std::vector<pb::Node> known = {NodeNamed("n1", "a"), NodeNamed("n2", "b")};
  if (tc.want_lookup.empty()) {
    EXPECT_CALL(cache, NodesNamed(_)).Times(0);
  } else {
    EXPECT_CALL(cache, NodesNamed(ElementsAreArray(tc.want_lookup)))
        .WillOnce([known](const std::vector<std::string>& names) {
          std::vector<pb::Node> out;
          for (const auto& name : names) {
            for (const auto& n : known) {
              if (n.name() == name) out.push_back(n);
            }
          }
          return out;
        });
  }
  EXPECT_CALL(planner, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  std::vector<std::string> sent;
  EXPECT_CALL(planner, Plan(_)).WillOnce([&sent](const pb::PlanRequest& req) {
    for (const auto& n : req.nodes()) {
      sent.push_back(n.name());
      EXPECT_EQ(n.labels().at("zone"), n.name() == "n1" ? "a" : "b");
    }
    return testing::AnswerLikeAPlanner(pb::PlanResponse())(req);
  });

  Reconciler r({.cache = &cache, .planner = &planner, .client = &client, .events = &events,
                .expectations = &expectations, .clock = &clock});
  const ReconcileResult result = r.Reconcile(kKey);
  EXPECT_TRUE(result.error.ok()) << result.error;
  EXPECT_THAT(sent, ElementsAreArray(tc.want_nodes));
}

INSTANTIATE_TEST_SUITE_P(
    Snapshots, SnapshotNodesTest,
    ::testing::Values(
        // Distinct scheduled nodes, sorted; unscheduled pods add none; an unreadable node is left out.
        SnapshotCase{"spread",
                     kSpreadTemplate,
                     {PodOn("cs-e", "n2"), PodOn("cs-a", "n1"), PodOn("cs-b", ""), PodOn("cs-c", "n1"),
                      PodOn("cs-d", "n3")},
                     {"n1", "n2", "n3"},
                     {"n1", "n2"}},
        SnapshotCase{"spread_one_node", kSpreadTemplate, {PodOn("cs-a", "n2"), PodOn("cs-b", "n2")}, {"n2"}, {"n2"}},
        SnapshotCase{"spread_all_unscheduled", kSpreadTemplate, {PodOn("cs-a", ""), PodOn("cs-b", "")}, {}, {}},
        SnapshotCase{"plain", kPlainTemplate, {PodOn("cs-a", "n1"), PodOn("cs-b", "n2")}, {}, {}},
        SnapshotCase{"constraints_without_key",
                     R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1}]}})",
                     {PodOn("cs-a", "n1")},
                     {},
                     {}}),
    [](const auto& info) { return info.param.name; });

// --- InformerCache against a fake API server.

bool WaitFor(const std::function<bool()>& cond) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return cond();
}

struct CacheFixture {
  CacheFixture() {
    EXPECT_TRUE(server.Start().ok());
    auto c = kube::NewHttpRestClient(kube::ClientConfig{.server = server.url()});
    EXPECT_TRUE(c.ok()) << c.status();
    client = *std::move(c);
  }
  ~CacheFixture() { server.Stop(); }
  kube::testing::FakeApiServer server;
  std::unique_ptr<kube::RestClient> client;
};

TEST(InformerCacheNodes, CachesNameAndLabelsOfNodes) {
  CacheFixture f;
  f.server.Upsert("/api/v1/nodes",
                  R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"zone":"a","rack":"r1"}},)"
                  R"("status":{"capacity":{"cpu":"4"}}})");
  f.server.Upsert("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n2","labels":{"zone":"b"}}})");
  InformerCache cache(*f.client, [](const std::string&) {});
  cache.Start();
  ASSERT_TRUE(WaitFor([&] { return cache.HasSynced(); }));
  EXPECT_TRUE(cache.NodesError().ok());
  const auto nodes = cache.NodesNamed({"n2", "n9", "n1"});
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name(), "n2");
  EXPECT_THAT(nodes[0].labels(), ::testing::UnorderedElementsAre(::testing::Pair("zone", "b")));
  EXPECT_EQ(nodes[1].name(), "n1");
  EXPECT_THAT(nodes[1].labels(), ::testing::UnorderedElementsAre(::testing::Pair("zone", "a"),
                                                                 ::testing::Pair("rack", "r1")));
  // A node added later shows up through the watch.
  f.server.Upsert("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n9"}})");
  ASSERT_TRUE(WaitFor([&] { return cache.NodesNamed({"n9"}).size() == 1; }));
  cache.Stop();
}

TEST(InformerCacheNodes, ForbiddenNodesDoNotBlockSyncAndGiveNoNodes) {
  CacheFixture f;
  f.server.Upsert("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})");
  f.server.InjectFault({.path_prefix = "/api/v1/nodes", .status = 403, .reason = "Forbidden", .count = 1000000});
  InformerCache cache(*f.client, [](const std::string&) {});
  cache.Start();
  ASSERT_TRUE(WaitFor([&] { return cache.HasSynced(); }));
  EXPECT_EQ(cache.NodesError().code(), absl::StatusCode::kPermissionDenied) << cache.NodesError();
  EXPECT_TRUE(cache.NodesNamed({"n1"}).empty());
  cache.Stop();
}

}  // namespace
}  // namespace cloneset::executor
