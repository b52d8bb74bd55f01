#include "planner/pod_facts.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "planner/context.h"
#include "planner/predicates.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using testing::CloneSetBuilder;
using testing::MakeContext;
using testing::Now;
using testing::PodBuilder;
using testing::Request;

// Every fact must agree with the predicate it replaces (predicates.h / inplace.h read the protobuf directly).
struct FactsCase {
  std::string name;
  PodBuilder pod;
};

class FactsAgreeWithPredicates : public ::testing::TestWithParam<FactsCase> {};

TEST_P(FactsAgreeWithPredicates, OnePod) {
  const pb::Pod pod = GetParam().pod;
  const PodFacts f = ComputePodFacts(pod);
  EXPECT_EQ(f.name, pod.metadata().name());
  EXPECT_EQ(f.node_name, pod.node_name());
  EXPECT_EQ(f.revision, Label(pod.metadata(), kRevisionLabel));
  EXPECT_EQ(f.instance_id, InstanceId(pod));
  EXPECT_EQ(f.specified_delete_label, pod.metadata().labels().contains(kSpecifiedDeleteLabel));
  EXPECT_EQ(f.has_template_hash_label, pod.metadata().labels().contains(kPodTemplateHashLabel));
  EXPECT_EQ(f.in_place_gate, HasReadinessGate(pod, kInPlaceUpdateReadyCondition));
  EXPECT_EQ(f.uid, pod.metadata().uid());
  EXPECT_EQ(f.resource_version, pod.metadata().resource_version());
  const pb::Condition* ready = FindCondition(pod, "Ready");
  EXPECT_EQ(f.has_ready_condition, ready != nullptr);
  EXPECT_EQ(f.ready_false, ready != nullptr && ready->status() == "False");
  EXPECT_EQ(f.has_in_place_condition, FindCondition(pod, kInPlaceUpdateReadyCondition) != nullptr);
  const pb::Condition* containers_ready = FindCondition(pod, "ContainersReady");
  EXPECT_EQ(f.containers_ready, containers_ready != nullptr && containers_ready->status() == "True");
  EXPECT_EQ(f.k8s_ready, IsK8sReady(pod));
  EXPECT_EQ(f.created, ToTime(pod.metadata().creation_timestamp()));
  for (const int32_t min_ready : {0, 30, 7200}) {
    EXPECT_EQ(IsAvailable(f, min_ready, Now()), IsAvailable(pod, min_ready, Now())) << min_ready;
    EXPECT_EQ(IsUpdateReady(f, min_ready, Now()), IsUpdateReady(pod, min_ready, Now())) << min_ready;
  }
  for (const std::string revision : {"cs-1", "cs-2", "other-1", "1"}) {
    EXPECT_EQ(RevisionMatches(f, revision), RevisionMatches(pod, revision)) << revision;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, FactsAgreeWithPredicates,
    ::testing::Values(
        FactsCase{"plain_ready", PodBuilder("cs-a").Revision("cs-1").Ready(Now() - absl::Seconds(60)).Node("n1")},
        FactsCase{"not_ready_unscheduled", PodBuilder("cs-b").Revision("cs-2").NotReady()},
        FactsCase{"short_hash_label", PodBuilder("cs-c").Revision("2").Ready(Now() - absl::Hours(3))},
        FactsCase{"no_revision", PodBuilder("cs-d").Ready(Now())},
        FactsCase{"specified_delete_preparing", PodBuilder("cs-e")
                                                    .Revision("cs-1")
                                                    .SpecifiedDelete()
                                                    .Lifecycle(kStatePreparingDelete)
                                                    .Ready(Now() - absl::Seconds(5))},
        FactsCase{"gate_false", PodBuilder("cs-f")
                                    .Revision("cs-2")
                                    .Ready(Now() - absl::Seconds(90))
                                    .ReadinessGate(kInPlaceUpdateReadyCondition)
                                    .Condition(kInPlaceUpdateReadyCondition, "False", Now())},
        FactsCase{"pending_phase", PodBuilder("cs-g").Revision("cs-1").Phase("Pending")},
        FactsCase{"template_hash_and_restarts",
                  PodBuilder("cs-h").Revision("cs-1").Label(kPodTemplateHashLabel, "1").Restarts(4).Ready(Now())}));

TEST(PodFactsTest, AnnotationsCurrentKeyWinsUnlessEmpty) {
  const pb::Pod both = PodBuilder("cs-a")
                           .Annotation(kInPlaceStateAnnotation, R"({"revision":"cs-2"})")
                           .Annotation(kLegacyInPlaceStateAnnotation, R"({"revision":"old"})")
                           .Annotation(kLegacyInPlaceGraceAnnotation, "{}");
  PodFacts f = ComputePodFacts(both);
  EXPECT_EQ(f.in_place_state, R"({"revision":"cs-2"})");
  EXPECT_TRUE(f.has_legacy_state);
  EXPECT_EQ(f.in_place_grace, "{}");
  EXPECT_FALSE(f.has_grace_key);
  EXPECT_TRUE(f.has_legacy_grace);

  const pb::Pod empty_current = PodBuilder("cs-b")
                                    .Annotation(kInPlaceGraceAnnotation, "")
                                    .Annotation(kLegacyInPlaceGraceAnnotation, R"({"revision":"cs-1"})");
  f = ComputePodFacts(empty_current);
  EXPECT_EQ(f.in_place_grace, R"({"revision":"cs-1"})");
  EXPECT_TRUE(f.has_grace_key);
}

TEST(PodFactsTest, MaxRestartsAndPhaseOrdinal) {
  pb::Pod pod = PodBuilder("cs-a").Restarts(2).Container("side", "busybox");
  pb::ContainerStatus* side = pod.add_container_statuses();
  side->set_name("side");
  side->set_restart_count(7);
  EXPECT_EQ(ComputePodFacts(pod).max_restarts, 7);
  for (const auto& [phase, ordinal] : std::vector<std::pair<std::string, int>>{
           {"Pending", 0}, {"Unknown", 1}, {"Running", 2}, {"Succeeded", 0}, {"", 0}}) {
    pod.set_phase(phase);
    EXPECT_EQ(ComputePodFacts(pod).phase_ordinal, ordinal) << phase;
  }
}

TEST(PodFactsTest, SelectorLabelsCountedOnlyOnExactMatch) {
  const pb::Pod pod = PodBuilder("cs-a").Label("tier", "web").Label("zone", "a");
  const std::vector<std::pair<std::string, std::string>> want = {{"app", "demo"}, {"tier", "web"}, {"zone", "b"}};
  size_t matched = 99;
  const PodFacts f = ComputePodFacts(pod, want, &matched, "cs-2", "cs-1");
  EXPECT_EQ(matched, 2u);  // app=demo and tier=web; zone differs
  EXPECT_FALSE(f.on_update_revision);
  EXPECT_FALSE(f.on_current_revision);
}

TEST(PodFactsTest, RevisionFlagsFollowTheContext) {
  const pb::PlanRequest request = Request(CloneSetBuilder().Replicas(2),
                                          {PodBuilder("cs-a").Revision("cs-1"), PodBuilder("cs-b").Revision("cs-2")});
  PlanContext ctx = MakeContext(request, ResolvedSpec(), "cs-1", "cs-2");
  ASSERT_EQ(ctx.pod_facts.size(), 2u);
  EXPECT_TRUE(ctx.pod_facts[0].on_current_revision);
  EXPECT_FALSE(ctx.pod_facts[0].on_update_revision);
  EXPECT_TRUE(ctx.pod_facts[1].on_update_revision);
  EXPECT_TRUE(OnRevision(ctx, FactsAt(ctx, 1), "cs-2"));

  // A test (or stage) that moves the update revision afterwards gets facts computed against the new one.
  ctx.update_revision = "cs-1";
  EXPECT_TRUE(FactsAt(ctx, 0).on_update_revision);
  std::vector<PodFacts> scratch;
  const std::vector<PodFacts>& all = AllFacts(ctx, scratch);
  EXPECT_EQ(&all, &scratch);
  EXPECT_TRUE(all[0].on_update_revision);
  EXPECT_FALSE(all[1].on_update_revision);
  EXPECT_TRUE(OnRevision(ctx, all[1], "cs-2"));  // neither of the context's revisions: compares the labels
}

TEST(PodFactsTest, AllFactsRecomputesForEditedPods) {
  const pb::PlanRequest request = Request(CloneSetBuilder().Replicas(2),
                                          {PodBuilder("cs-a").Revision("cs-1"), PodBuilder("cs-b").Revision("cs-2")});
  PlanContext ctx = MakeContext(request, ResolvedSpec(), "cs-1", "cs-2");
  std::vector<PodFacts> scratch;
  EXPECT_EQ(&AllFacts(ctx, scratch), &ctx.pod_facts);
  std::swap(ctx.pods[0], ctx.pods[1]);
  const std::vector<PodFacts>& all = AllFacts(ctx, scratch);
  EXPECT_EQ(&all, &scratch);
  EXPECT_EQ(all[0].name, "cs-b");
  EXPECT_EQ(all[1].name, "cs-a");
  EXPECT_EQ(FactsAt(ctx, 0).name, "cs-b");
}

}  // namespace
}  // namespace cloneset::planner
