// The simulation applies a plan as the executor does (planapi/applier.h over the simulation's writer): the same
// order of writes, the same stop rules, the same reading of "already there" and "already gone".
#include "clonesetctl/sim_cluster.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::clonesetctl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kCloneSet[] = R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet",
  "metadata":{"name":"web","namespace":"default"},
  "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
          "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}}})";

constexpr char kLifecycle[] = "lifecycle.apps.kruise.io/state";

pb::Action CreatePod(const std::string& name, int batch) {
  pb::Action a;
  a.mutable_create_pod()->set_pod_json(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
      R"(","namespace":"default","labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}})");
  a.mutable_create_pod()->set_batch(batch);
  return a;
}

pb::Action SetLifecycle(const std::string& pod, const std::string& state, const std::string& rv = "") {
  pb::Action a;
  a.mutable_patch_pod()->set_name(pod);
  a.mutable_patch_pod()->set_resource_version(rv);
  (*a.mutable_patch_pod()->mutable_set_labels())[kLifecycle] = state;
  return a;
}

pb::PlanResponse Plan(std::vector<pb::Action> actions, int status_replicas) {
  pb::PlanResponse plan;
  for (auto& a : actions) *plan.add_actions() = std::move(a);
  plan.set_write_status(true);
  plan.mutable_status()->set_replicas(status_replicas);
  return plan;
}

class SimApplyTest : public ::testing::Test {
 protected:
  SimApplyTest() : cluster_(SimOptions{}, kNow) {
    EXPECT_TRUE(cluster_.ApplyCloneSet(kCloneSet, kNow).ok());
    const AppliedPlan first = cluster_.Apply(Plan({CreatePod("web-a", 0)}, 1), kNow);
    EXPECT_THAT(first.created, ElementsAre("web-a"));
  }
  static constexpr absl::Time kNow = absl::FromUnixSeconds(1767225600);
  SimCluster cluster_;
};

TEST_F(SimApplyTest, APodThatExistsAlreadyIsReusedAndTheNextBatchStarts) {
  // The executor counts AlreadyExists on a create as done (the pod is left over from an earlier attempt).
  const AppliedPlan applied = cluster_.Apply(Plan({CreatePod("web-a", 0), CreatePod("web-b", 1)}, 2), kNow);
  EXPECT_THAT(applied.created, ElementsAre("web-b"));
  EXPECT_EQ(applied.stopped, "");
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 2);
}

TEST_F(SimApplyTest, APodsActionsRunTogetherInPlanOrder) {
  cluster_.Apply(Plan({CreatePod("web-b", 0)}, 2), kNow);
  // The executor's stages: one group per pod, each in plan order, groups ordered by their first action.
  const AppliedPlan applied = cluster_.Apply(
      Plan({SetLifecycle("web-a", "PreparingUpdate"), SetLifecycle("web-b", "PreparingUpdate"),
            SetLifecycle("web-a", "Updating")},
           2),
      kNow);
  EXPECT_THAT(applied.lifecycle, ElementsAre("web-a: - -> PreparingUpdate", "web-a: PreparingUpdate -> Updating",
                                             "web-b: - -> PreparingUpdate"));
}

TEST_F(SimApplyTest, AConflictStopsThePlanAndKeepsTheStatus) {
  cluster_.Apply(Plan({CreatePod("web-b", 0)}, 2), kNow);
  const AppliedPlan applied =
      cluster_.Apply(Plan({SetLifecycle("web-a", "PreparingUpdate", "1"), SetLifecycle("web-b", "PreparingUpdate")},
                          5),
                     kNow);
  EXPECT_THAT(applied.lifecycle, IsEmpty());
  EXPECT_THAT(applied.stopped, ::testing::HasSubstr("modified"));
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 2);
}

TEST_F(SimApplyTest, DeletingAPodThatIsGoneIsDone) {
  pb::Action del;
  del.mutable_delete_pod()->set_name("web-zz");
  const AppliedPlan applied = cluster_.Apply(Plan({del}, 3), kNow);
  EXPECT_EQ(applied.stopped, "");
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 3);
}

TEST(SimSnapshotTest, IsTheExecutorsRequest) {
  const absl::Time now = absl::FromUnixSeconds(1767225600);
  SimCluster cluster(SimOptions{}, now);
  ASSERT_TRUE(cluster.ApplyCloneSet(kCloneSet, now).ok());
  cluster.Apply(Plan({CreatePod("web-b", 0), CreatePod("web-a", 0)}, 2), now);
  const planapi::RequestWithPods a = cluster.Snapshot(now);
  const planapi::RequestWithPods b = cluster.Snapshot(now);
  // The seed is the state's (the same state, the same instance ids), the pods go as a table, sorted by name, and
  // no Nodes without a topology spread.
  EXPECT_EQ(a.request.random_seed(), b.request.random_seed());
  std::vector<pb::Pod> pods;
  for (const pb::Pod* p : a.Pods()) pods.push_back(*p);
  EXPECT_EQ(a.request.random_seed(), planapi::PlanSeed(cluster.clone_set(), pods));
  EXPECT_TRUE(a.request.has_pod_table());
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].metadata().name(), "web-a");
  EXPECT_EQ(a.request.nodes_size(), 0);
  EXPECT_TRUE(a.request.accept_in_place_batches());
}

}  // namespace
}  // namespace cloneset::clonesetctl
