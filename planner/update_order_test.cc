#include "planner/update_order.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/pod_facts.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::testing::ElementsAreArray;

std::vector<const pb::Pod*> Pointers(const std::vector<pb::Pod>& pods) {
  std::vector<const pb::Pod*> out;
  for (const pb::Pod& p : pods) out.push_back(&p);
  return out;
}

std::vector<int> All(size_t n) {
  std::vector<int> out;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<int>(i));
  return out;
}

// Pods labelled `key` = values[i] ("" = no label).
std::vector<pb::Pod> LabelledPods(const std::string& key, const std::vector<std::string>& values) {
  std::vector<pb::Pod> pods;
  for (size_t i = 0; i < values.size(); ++i) {
    PodBuilder b("cs-p" + std::to_string(i));
    if (!values[i].empty()) b.Label(key, values[i]);
    pods.push_back(b.Build());
  }
  return pods;
}

struct ScatterCase {
  std::string name;
  std::vector<std::string> labels;  // of all pods, key "zone"
  std::vector<int> candidates;
  std::vector<int> want;
};

class ScatterTest : public ::testing::TestWithParam<ScatterCase> {};

TEST_P(ScatterTest, Orders) {
  const ScatterCase& c = GetParam();
  const std::vector<pb::Pod> pods = LabelledPods("zone", c.labels);
  google::protobuf::RepeatedPtrField<pb::UpdateScatterTerm> terms;
  pb::UpdateScatterTerm* term = terms.Add();
  term->set_key("zone");
  term->set_value("A");
  EXPECT_THAT(ScatterCandidates(terms, Pointers(pods), c.candidates), ElementsAreArray(c.want));
}

INSTANTIATE_TEST_SUITE_P(
    Scatter, ScatterTest,
    ::testing::Values(
        ScatterCase{"UpstreamExample", {"", "", "", "", "A", "A"}, {0, 1, 2, 3, 4, 5}, {4, 0, 1, 2, 3, 5}},
        ScatterCase{"OneMatchUnchanged", {"", "", "A", ""}, {0, 1, 2, 3}, {0, 1, 2, 3}},
        ScatterCase{"OneUnmatchedUnchanged", {"A", "A", "A", ""}, {0, 1, 2, 3}, {0, 1, 2, 3}},
        ScatterCase{"EvenSpread", {"A", "A", "A", "A", "", "", "", "", "", ""}, All(10),
                    {0, 4, 5, 1, 6, 7, 2, 8, 9, 3}},
        ScatterCase{"SubsetUsesUpdateDensity", {"A", "A", "A", "", "", "", "", ""}, {0, 1, 2, 3, 4},
                    {0, 3, 1, 4, 2}},
        ScatterCase{"SubsetUsesTotalDensity", {"A", "A", "A", "A", "A", "", "", ""}, {0, 1, 2, 5, 6, 7},
                    {5, 0, 6, 1, 7, 2}},
        ScatterCase{"SingleCandidate", {"A", "A"}, {1}, {1}}),
    [](const auto& info) { return info.param.name; });

TEST(ScatterTest, TermsWithoutMatchesAreSkipped) {
  const std::vector<pb::Pod> pods = LabelledPods("zone", {"", "", "", "", "A", "A"});
  google::protobuf::RepeatedPtrField<pb::UpdateScatterTerm> terms;
  terms.Add()->set_key("rack");
  terms[0].set_value("r1");
  pb::UpdateScatterTerm* zone = terms.Add();
  zone->set_key("zone");
  zone->set_value("A");
  EXPECT_THAT(ScatterCandidates(terms, Pointers(pods), All(6)), ElementsAreArray({4, 0, 1, 2, 3, 5}));
}

TEST(ScatterTest, MostMatchedTermFirst) {
  // rack=r1 matches 3 candidates, zone=A 2: rack is applied first, then zone on its output.
  std::vector<pb::Pod> pods;
  const std::vector<std::pair<std::string, std::string>> labels = {
      {"r1", ""}, {"r1", ""}, {"r1", "A"}, {"", ""}, {"", "A"}, {"", ""}};
  for (size_t i = 0; i < labels.size(); ++i) {
    PodBuilder b("cs-p" + std::to_string(i));
    if (!labels[i].first.empty()) b.Label("rack", labels[i].first);
    if (!labels[i].second.empty()) b.Label("zone", labels[i].second);
    pods.push_back(b.Build());
  }
  google::protobuf::RepeatedPtrField<pb::UpdateScatterTerm> terms;
  pb::UpdateScatterTerm* zone = terms.Add();
  zone->set_key("zone");
  zone->set_value("A");
  pb::UpdateScatterTerm* rack = terms.Add();
  rack->set_key("rack");
  rack->set_value("r1");
  // rack: M=[0,1,2] N=[3,4,5]; last 2; M=[0,1] tM=2 tN=3: 1.5 >= 1.5 -> groups 2 sizes 1,2 -> [0,3,4,1,5,2].
  // zone on that: M=[4,2] N=[0,3,1,5]; last 2; M=[4] tM=1 tN=4 -> groups 1 sizes 1,4 -> [4,0,3,1,5,2].
  EXPECT_THAT(ScatterCandidates(terms, Pointers(pods), All(6)), ElementsAreArray({4, 0, 3, 1, 5, 2}));
}

struct OrderCase {
  std::string name;
  std::vector<pb::Pod> pods;
  std::vector<int> want;
};

class ActiveOrderTest : public ::testing::TestWithParam<OrderCase> {};

TEST_P(ActiveOrderTest, Orders) {
  std::vector<int> candidates = All(GetParam().pods.size());
  SortByActivePodsOrder(Pointers(GetParam().pods), candidates);
  EXPECT_THAT(candidates, ElementsAreArray(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Default, ActiveOrderTest,
    ::testing::Values(
        OrderCase{"UnscheduledFirst",
                  {PodBuilder("cs-a").Node("n1").Ready(Now() - absl::Hours(1)), PodBuilder("cs-b")},
                  {1, 0}},
        OrderCase{"PhaseOrder",
                  {PodBuilder("cs-a").Node("n").Phase("Running"), PodBuilder("cs-b").Node("n").Phase("Unknown"),
                   PodBuilder("cs-c").Node("n").Phase("Pending")},
                  {2, 1, 0}},
        OrderCase{"NotReadyFirst",
                  {PodBuilder("cs-a").Node("n").Ready(Now() - absl::Hours(1)), PodBuilder("cs-b").Node("n")},
                  {1, 0}},
        OrderCase{"RecentlyReadyFirst",
                  {PodBuilder("cs-a").Node("n").Ready(Now() - absl::Hours(2)),
                   PodBuilder("cs-b").Node("n").Ready(Now() - absl::Minutes(1))},
                  {1, 0}},
        OrderCase{"MoreRestartsFirst",
                  {PodBuilder("cs-a").Node("n").Restarts(1), PodBuilder("cs-b").Node("n").Restarts(5)},
                  {1, 0}},
        OrderCase{"NewerFirst",
                  {PodBuilder("cs-a").Node("n").Created(Now() - absl::Hours(3)),
                   PodBuilder("cs-b").Node("n").Created(Now() - absl::Hours(1))},
                  {1, 0}},
        OrderCase{"TiesKeepInputOrder", {PodBuilder("cs-a").Node("n"), PodBuilder("cs-b").Node("n")}, {0, 1}}),
    [](const auto& info) { return info.param.name; });

// The k8s controller.ActivePods order, read from the pods themselves: the reference SortByActivePodsOrder's
// packed keys must agree with.
absl::Time ReferenceTime(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return absl::InfinitePast();
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

// afterOrZero: an unset time counts as the latest.
bool ReferenceAfterOrZero(absl::Time a, absl::Time b) {
  if (a == absl::InfinitePast() || b == absl::InfinitePast()) return a == absl::InfinitePast();
  return a > b;
}

bool ReferenceActiveLess(const pb::Pod& a, const pb::Pod& b) {
  if (a.node_name() != b.node_name() && (a.node_name().empty() || b.node_name().empty())) {
    return a.node_name().empty();
  }
  const auto phase = [](const pb::Pod& p) { return p.phase() == "Running" ? 2 : p.phase() == "Unknown" ? 1 : 0; };
  if (phase(a) != phase(b)) return phase(a) < phase(b);
  const auto ready = [](const pb::Pod& p) -> const pb::Condition* {
    for (const pb::Condition& c : p.conditions()) {
      if (c.type() == "Ready") return c.status() == "True" ? &c : nullptr;
    }
    return nullptr;
  };
  const pb::Condition* ra = ready(a);
  const pb::Condition* rb = ready(b);
  if ((ra != nullptr) != (rb != nullptr)) return ra == nullptr;
  if (ra != nullptr && ReferenceTime(ra->last_transition_time()) != ReferenceTime(rb->last_transition_time())) {
    return ReferenceAfterOrZero(ReferenceTime(ra->last_transition_time()), ReferenceTime(rb->last_transition_time()));
  }
  const auto restarts = [](const pb::Pod& p) {
    int32_t most = 0;
    for (const pb::ContainerStatus& s : p.container_statuses()) most = std::max(most, s.restart_count());
    return most;
  };
  if (restarts(a) != restarts(b)) return restarts(a) > restarts(b);
  const absl::Time ca = ReferenceTime(a.metadata().creation_timestamp());
  const absl::Time cb = ReferenceTime(b.metadata().creation_timestamp());
  if (ca != cb) return ReferenceAfterOrZero(ca, cb);
  return false;
}

// Random pods drawn from few values of each field, so that every step of the order decides some pairs and many
// pairs tie to the end. `far_future` adds a creation time past 2262, which int64 nanoseconds cannot hold (the
// comparator path).
std::vector<pb::Pod> RandomActivePods(int n, uint32_t seed, bool far_future) {
  std::mt19937 random(seed);
  const auto pick = [&](int options) { return static_cast<int>(random() % static_cast<uint32_t>(options)); };
  std::vector<pb::Pod> pods;
  for (int i = 0; i < n; ++i) {
    PodBuilder b(absl::StrCat("cs-", i));
    if (pick(8) != 0) b.Node(absl::StrCat("n", pick(3)));
    b.Phase(std::vector<std::string>{"Running", "Running", "Unknown", "Pending", "Succeeded"}[pick(5)]);
    const absl::Time since = Now() - absl::Seconds(pick(3)) - absl::Nanoseconds(pick(2));
    if (pick(4) != 0) {
      b.Ready(since);
    } else {
      b.NotReady(since);
    }
    b.Restarts(pick(3));
    b.Created(Now() - absl::Hours(pick(3)) - absl::Nanoseconds(pick(2)));
    pb::Pod pod = b.Build();
    if (pick(10) == 0) pod.mutable_metadata()->clear_creation_timestamp();
    if (pick(10) == 0) {
      for (pb::Condition& c : *pod.mutable_conditions()) c.clear_last_transition_time();
    }
    if (far_future && i % 7 == 3) pod.mutable_metadata()->mutable_creation_timestamp()->set_seconds(40000000000);
    pods.push_back(std::move(pod));
  }
  return pods;
}

TEST(ActiveOrderTest, AgreesWithTheReferenceOrder) {
  for (const bool far_future : {false, true}) {
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      const std::vector<pb::Pod> pods = RandomActivePods(300, seed, far_future);
      std::vector<int> want = All(pods.size());
      std::stable_sort(want.begin(), want.end(),
                       [&](int a, int b) { return ReferenceActiveLess(pods[a], pods[b]); });
      std::vector<int> got = All(pods.size());
      SortByActivePodsOrder(Pointers(pods), got);
      ASSERT_EQ(got, want) << "seed " << seed << (far_future ? " with a far-future time" : "");
      // A subset in a shuffled order: the position in `candidates` breaks ties, not the pod index.
      std::vector<int> subset;
      for (int i = static_cast<int>(pods.size()) - 1; i >= 0; i -= 2) subset.push_back(i);
      std::vector<int> subset_want = subset;
      std::stable_sort(subset_want.begin(), subset_want.end(),
                       [&](int a, int b) { return ReferenceActiveLess(pods[a], pods[b]); });
      SortByActivePodsOrder(Pointers(pods), subset);
      ASSERT_EQ(subset, subset_want) << "seed " << seed;
    }
  }
}

pb::UpdatePriorityWeightTerm WeightTerm(int32_t weight, const std::string& key, const std::string& value) {
  pb::UpdatePriorityWeightTerm term;
  term.set_weight(weight);
  (*term.mutable_match_selector()->mutable_match_labels())[key] = value;
  return term;
}

TEST(PriorityTest, WeightHigherScoreFirstTiesStable) {
  std::vector<pb::Pod> pods = {PodBuilder("cs-a"), PodBuilder("cs-b").Label("tier", "web"),
                               PodBuilder("cs-c").Label("tier", "web").Label("zone", "z1"),
                               PodBuilder("cs-d").Label("zone", "z1")};
  pb::UpdatePriorityStrategy priority;
  *priority.add_weight_priority() = WeightTerm(50, "tier", "web");
  *priority.add_weight_priority() = WeightTerm(30, "zone", "z1");
  std::vector<int> candidates = All(4);
  SortByPriority(priority, Pointers(pods), candidates);
  EXPECT_THAT(candidates, ElementsAreArray({2, 1, 3, 0}));  // 80, 50, 30, 0
}

TEST(PriorityTest, WeightInvalidSelectorIsSkipped) {
  std::vector<pb::Pod> pods = {PodBuilder("cs-a"), PodBuilder("cs-b").Label("tier", "web")};
  pb::UpdatePriorityStrategy priority;
  pb::UpdatePriorityWeightTerm* bad = priority.add_weight_priority();
  bad->set_weight(100);
  pb::LabelSelectorRequirement* req = bad->mutable_match_selector()->add_match_expressions();
  req->set_key("tier");
  req->set_operator_("Bogus");
  *priority.add_weight_priority() = WeightTerm(1, "tier", "web");
  std::vector<int> candidates = {0, 1};
  SortByPriority(priority, Pointers(pods), candidates);
  EXPECT_THAT(candidates, ElementsAreArray({1, 0}));
}

TEST(PriorityTest, OrderLackingKeysFirstThenLevelThenHigherValue) {
  std::vector<pb::Pod> pods = {PodBuilder("cs-a").Label("b", "5"), PodBuilder("cs-b").Label("a", "o-1"),
                               PodBuilder("cs-c"), PodBuilder("cs-d").Label("a", "sts-10"),
                               PodBuilder("cs-e").Label("a", "x").Label("b", "99")};
  pb::UpdatePriorityStrategy priority;
  priority.add_order_priority()->set_ordered_key("a");
  priority.add_order_priority()->set_ordered_key("b");
  std::vector<int> candidates = All(5);
  SortByPriority(priority, Pointers(pods), candidates);
  // c: none (level -1) first; level 0: d(10) > b(1) > e(0); level 1: a(5).
  EXPECT_THAT(candidates, ElementsAreArray({2, 3, 1, 4, 0}));
}

TEST(PriorityTest, WeightWinsOverOrder) {
  std::vector<pb::Pod> pods = {PodBuilder("cs-a").Label("a", "9"), PodBuilder("cs-b").Label("tier", "web")};
  pb::UpdatePriorityStrategy priority;
  priority.add_order_priority()->set_ordered_key("a");
  *priority.add_weight_priority() = WeightTerm(1, "tier", "web");
  std::vector<int> candidates = {0, 1};
  SortByPriority(priority, Pointers(pods), candidates);
  EXPECT_THAT(candidates, ElementsAreArray({1, 0}));
}

struct TrailingCase {
  std::string value;
  int64_t want;
};
class TrailingNumberTest : public ::testing::TestWithParam<TrailingCase> {};
TEST_P(TrailingNumberTest, Parses) { EXPECT_EQ(TrailingNumber(GetParam().value), GetParam().want); }
INSTANTIATE_TEST_SUITE_P(Values, TrailingNumberTest,
                         ::testing::Values(TrailingCase{"o-10", 10}, TrailingCase{"sts-10", 10},
                                           TrailingCase{"abc", 0}, TrailingCase{"", 0}, TrailingCase{"42", 42},
                                           TrailingCase{"v1.2", 2}));

// The planner reads the ActivePods key from its facts, the pre-download coordinator from the pod message: the
// same key either way, so both order alike.
TEST(ActiveKeyTest, FactsAndMessageAgree) {
  const absl::Time t = Now();
  for (const pb::Pod& pod : std::vector<pb::Pod>{
           PodBuilder("cs-a"), PodBuilder("cs-b").Node("n1").Phase("Running").Ready(t - absl::Seconds(5)),
           PodBuilder("cs-c").Node("n2").Phase("Unknown").NotReady(t).Restarts(4).Created(t - absl::Hours(1)),
           PodBuilder("cs-d").Phase("Pending").Condition("Ready", "True", t).Condition("Ready", "False", t),
           PodBuilder("cs-e").Node("n3").Phase("Failed").Restarts(2)}) {
    SCOPED_TRACE(pod.metadata().name());
    const common::ActiveKey from_facts = ActiveKeyOf(ComputePodFacts(pod));
    const common::ActiveKey from_pod = common::ActiveKeyOf(pod);
    EXPECT_EQ(from_facts.node_name, from_pod.node_name);
    EXPECT_EQ(from_facts.phase, from_pod.phase);
    EXPECT_EQ(from_facts.ready, from_pod.ready);
    if (from_facts.ready) {
      EXPECT_EQ(from_facts.ready_time, from_pod.ready_time);  // read only when ready
    }
    EXPECT_EQ(from_facts.restarts, from_pod.restarts);
    EXPECT_EQ(from_facts.created, from_pod.created);
  }
}

TEST(SortUpdateCandidatesTest, PreparingUpdateFirstAfterPriority) {
  std::vector<pb::Pod> pods = {PodBuilder("cs-a").Node("n").Label("tier", "web"),
                               PodBuilder("cs-b").Node("n").Lifecycle(kStatePreparingUpdate),
                               PodBuilder("cs-c").Node("n")};
  pb::UpdateStrategy strategy;
  *strategy.mutable_priority_strategy()->add_weight_priority() = WeightTerm(10, "tier", "web");
  EXPECT_THAT(SortUpdateCandidates(strategy, Pointers(pods), All(3)), ElementsAreArray({1, 0, 2}));
}

TEST(SortUpdateCandidatesTest, DeterministicForSameInput) {
  std::vector<pb::Pod> pods = LabelledPods("zone", {"A", "", "A", "", "A", "", "", ""});
  pb::UpdateStrategy strategy;
  pb::UpdateScatterTerm* term = strategy.add_scatter_strategy();
  term->set_key("zone");
  term->set_value("A");
  const auto first = SortUpdateCandidates(strategy, Pointers(pods), All(8));
  EXPECT_EQ(first, SortUpdateCandidates(strategy, Pointers(pods), All(8)));
  EXPECT_EQ(first.size(), 8u);
}

}  // namespace
}  // namespace cloneset::planner
