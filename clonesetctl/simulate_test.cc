#include "clonesetctl/simulate.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "clonesetctl/render.h"

namespace cloneset::clonesetctl {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// A CloneSet with one container; `strategy` is the updateStrategy body (YAML, indented by 4).
std::string Manifest(int replicas, const std::string& strategy, const std::string& extra_spec = "",
                     const std::string& extra_labels = "") {
  return absl::StrCat(R"(apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
spec:
  replicas: )", replicas, R"(
  selector:
    matchLabels:
      app: web
  updateStrategy:
)", strategy, extra_spec, R"(
  template:
    metadata:
      labels:
        app: web
)", extra_labels, R"(    spec:
      containers:
      - name: main
        image: nginx:1.25
)");
}

SimOptions Model() {
  SimOptions o;
  o.start_delay = absl::Seconds(1);
  o.ready_after = absl::Seconds(4);
  return o;
}

// The number of pods each step started moving to the new revision (created at it or updated in place).
std::vector<int> UpdateBatches(const SimulateResult& r) {
  std::vector<int> batches;
  for (const TimelineStep& s : r.steps) {
    const int n = static_cast<int>(s.updated_in_place.size() + s.created.size());
    if (n > 0) batches.push_back(n);
  }
  return batches;
}

struct RolloutCase {
  std::string name;
  int replicas;
  std::string strategy;
  std::vector<std::string> sets;
  std::vector<int> batches;
  int peak_unavailable;
  int peak_surge;
  std::string outcome;
  int final_updated;
};

class RolloutTest : public ::testing::TestWithParam<RolloutCase> {};

TEST_P(RolloutTest, BatchesPeaksAndOutcome) {
  const RolloutCase& c = GetParam();
  SimulateInput in{Manifest(c.replicas, c.strategy), c.sets, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(UpdateBatches(*r), ElementsAreArray(c.batches)) << SimulationTable(*r, in.options);
  EXPECT_EQ(r->peak_unavailable, c.peak_unavailable);
  EXPECT_EQ(r->peak_surge, c.peak_surge);
  EXPECT_EQ(r->outcome, c.outcome) << absl::StrJoin(r->reasons, "; ");
  EXPECT_EQ(r->final_counts.updated, c.final_updated);
  EXPECT_EQ(r->final_counts.available, c.replicas);
  EXPECT_NE(r->from_revision, r->to_revision);
}

INSTANTIATE_TEST_SUITE_P(
    Simulate, RolloutTest,
    ::testing::Values(
        RolloutCase{"InPlaceOneAtATime", 3, "    type: InPlaceIfPossible\n    maxUnavailable: 1\n",
                    {"image=nginx:1.26"}, {1, 1, 1}, 1, 0, "complete", 3},
        RolloutCase{"InPlaceTwoAtATime", 5, "    type: InPlaceIfPossible\n    maxUnavailable: 2\n",
                    {"image=nginx:1.26"}, {2, 2, 1}, 2, 0, "complete", 5},
        RolloutCase{"InPlacePercent", 10, "    type: InPlaceIfPossible\n    maxUnavailable: 50%\n",
                    {"image=nginx:1.26"}, {5, 5}, 5, 0, "complete", 10},
        RolloutCase{"CanaryByPartition", 5, "    type: InPlaceIfPossible\n    maxUnavailable: 1\n",
                    {"image=nginx:1.26", "partition=3"}, {1, 1}, 1, 0, "partition", 2},
        RolloutCase{"ReCreateWithSurgeKeepsEveryPodAvailable", 3,
                    "    type: ReCreate\n    maxUnavailable: 0\n    maxSurge: 1\n", {"image=nginx:1.26"},
                    {1, 1, 1}, 0, 1, "complete", 3}),
    [](const auto& info) { return info.param.name; });

TEST(SimulateTest, InPlaceKeepsPodsAndDurationFollowsTheModel) {
  SimulateInput in{Manifest(3, "    type: InPlaceIfPossible\n    maxUnavailable: 1\n"), {"image=nginx:1.26"}, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const TimelineStep& s : r->steps) {
    EXPECT_TRUE(s.created.empty());
    EXPECT_TRUE(s.deleted.empty());
  }
  // Three sequential batches, each a restart (start delay) and the readiness wait.
  EXPECT_EQ(r->duration, 3 * (in.options.start_delay + in.options.ready_after));
  EXPECT_THAT(r->changes, ElementsAreArray({"image: nginx:1.25 -> nginx:1.26"}));
}

TEST(SimulateTest, NoChangesSimulatesCreationWithSlowStart) {
  SimulateInput in{Manifest(7, "    type: ReCreate\n"), {}, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->steps.empty());
  EXPECT_EQ(r->steps[0].created.size(), 7u);  // slow-start batches of one plan: 1 + 2 + 4
  EXPECT_EQ(r->peak_unavailable, 7);
  EXPECT_EQ(r->outcome, "complete");
  EXPECT_EQ(r->duration, in.options.start_delay + in.options.ready_after);
}

TEST(SimulateTest, ScaleOutCreatesTheMissingPods) {
  SimulateInput in{Manifest(3, "    type: InPlaceIfPossible\n"), {"replicas=5"}, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(UpdateBatches(*r), ElementsAreArray({2}));
  EXPECT_EQ(r->final_counts.pods, 5);
  EXPECT_EQ(r->outcome, "complete");
}

TEST(SimulateTest, PausedStalls) {
  SimulateInput in{Manifest(3, "    type: InPlaceIfPossible\n"), {"image=nginx:1.26", "paused=true"}, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, "stalled");
  EXPECT_TRUE(r->steps.empty());
  EXPECT_THAT(r->reasons, Contains(HasSubstr("paused")));
}

TEST(SimulateTest, LifecycleHookStallsInPreparingUpdate) {
  const std::string hook = "  lifecycle:\n    inPlaceUpdate:\n      labelsHandler:\n        example.io/block: \"true\"\n";
  SimulateInput in{Manifest(2, "    type: InPlaceIfPossible\n    maxUnavailable: 1\n", hook,
                            "        example.io/block: \"true\"\n"),
                   {"image=nginx:1.26"}, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, "stalled");
  EXPECT_EQ(r->final_counts.updated, 0);
  EXPECT_THAT(r->reasons, Contains(HasSubstr("inPlaceUpdate hook")));
  ASSERT_FALSE(r->steps.empty());
  EXPECT_THAT(r->steps[0].lifecycle, Contains(HasSubstr("-> PreparingUpdate")));
}

TEST(SimulateTest, StartFailuresStallWithTheReason) {
  SimOptions o = Model();
  o.fail_rate = 1;
  SimulateInput in{Manifest(3, "    type: InPlaceIfPossible\n    maxUnavailable: 1\n"), {"image=nginx:1.26"}, o};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, "stalled");
  EXPECT_THAT(UpdateBatches(*r), ElementsAreArray({1}));  // the budget of 1 is spent on the failing pod
  EXPECT_EQ(r->peak_unavailable, 1);
  EXPECT_THAT(r->reasons, Contains(HasSubstr("never became ready")));
}

TEST(SimulateTest, SameSeedSameTimeline) {
  SimOptions o = Model();
  o.fail_rate = 0.3;
  o.seed = 42;
  SimulateInput in{Manifest(6, "    type: InPlaceIfPossible\n    maxUnavailable: 2\n"), {"image=nginx:1.26"}, o};
  auto a = Simulate(in);
  auto b = Simulate(in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(SimulationJson(*a).dump(), SimulationJson(*b).dump());
}

struct ErrorCase {
  std::string name;
  std::string manifest;
  std::vector<std::string> sets;
  absl::StatusCode code;
  std::string message;
};

class SimulateErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(SimulateErrorTest, ClearError) {
  const ErrorCase& c = GetParam();
  auto r = Simulate(SimulateInput{c.manifest, c.sets, Model()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), c.code) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr(c.message));
}

INSTANTIATE_TEST_SUITE_P(
    Simulate, SimulateErrorTest,
    ::testing::Values(
        ErrorCase{"NoCloneSet", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", {},
                  absl::StatusCode::kInvalidArgument, "no document of kind CloneSet"},
        ErrorCase{"BadYaml", "kind: [CloneSet\n", {}, absl::StatusCode::kInvalidArgument, "manifest"},
        ErrorCase{"NegativeReplicas", Manifest(-1, "    type: InPlaceIfPossible\n"), {},
                  absl::StatusCode::kInvalidArgument, "spec.replicas"},
        ErrorCase{"BadPartitionType", Manifest(3, "    partition: [1]\n"), {}, absl::StatusCode::kInvalidArgument,
                  "spec.updateStrategy.partition"},
        ErrorCase{"UnknownSetKey", Manifest(3, "    type: ReCreate\n"), {"color=blue"},
                  absl::StatusCode::kInvalidArgument, "--set color: unknown key"},
        ErrorCase{"SetWithoutValue", Manifest(3, "    type: ReCreate\n"), {"image"},
                  absl::StatusCode::kInvalidArgument, "expected key=value"},
        ErrorCase{"SetBadReplicas", Manifest(3, "    type: ReCreate\n"), {"replicas=many"},
                  absl::StatusCode::kInvalidArgument, "--set replicas: expected a non-negative integer"},
        ErrorCase{"SetBadPercent", Manifest(3, "    type: ReCreate\n"), {"maxUnavailable=abc"},
                  absl::StatusCode::kInvalidArgument, "spec.updateStrategy.maxUnavailable: \"abc\" is not a valid"},
        ErrorCase{"SetUnknownType", Manifest(3, "    type: ReCreate\n"), {"type=Bogus"},
                  absl::StatusCode::kInvalidArgument, "spec.updateStrategy.type"},
        ErrorCase{"SetNegativePartition", Manifest(3, "    type: ReCreate\n"), {"partition=-1"},
                  absl::StatusCode::kInvalidArgument, "spec.updateStrategy.partition: -1 must not be negative"}),
    [](const auto& info) { return info.param.name; });

TEST(SimulateTest, SeedManifestInPlaceUpgrade) {
  std::ifstream f(std::string(CLONESET_TEST_DATA_DIR) + "/seed000/cloneset.yaml");
  std::stringstream text;
  text << f.rdbuf();
  SimulateInput in{text.str(), {"image=my-registry/video-transcoder:v1.2.1"}, Model()};
  auto r = Simulate(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, "complete");
  EXPECT_THAT(UpdateBatches(*r), ElementsAreArray({1, 1, 1}));
  EXPECT_EQ(r->peak_unavailable, 1);
  const std::string table = SimulationTable(*r, in.options);
  EXPECT_THAT(table, AllOf(HasSubstr("Result:   complete in 15s"), HasSubstr("Peak:     1 unavailable, 0 surge")));
}

}  // namespace
}  // namespace cloneset::clonesetctl
