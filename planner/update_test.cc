// Size: the table tests of PlanRefresh and PlanUpdate (semantics §5), one section per step over the fixtures of
// update_test_util.h; the flow across several plans is in update_flow_test.cc.
#include "planner/update.h"
#include "base/time_format.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planapi/in_place_batches.h"
#include "planner/inplace.h"
#include "planner/predicates.h"
#include "planner/refresh.h"
#include "nlohmann/json.hpp"
#include "planner/testing/deterministic_bytes.h"
#include "planner/update_test_util.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::CloneSetBuilder;
using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::cloneset::planner::testing::PvcBuilder;
using ::cloneset::planner::testing::RevisionBuilder;
using ::cloneset::planner::testing::TemplateJson;
using ::cloneset::planner::update_testing::Describe;
using ::cloneset::planner::update_testing::Events;
using ::cloneset::planner::update_testing::MakeScenario;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

PodBuilder ReadyPod(const std::string& name, const std::string& revision) {
  PodBuilder b(name);
  b.Revision(revision)
      .Label(kPodTemplateHashLabel, std::string(ShortHash(revision)))
      .Lifecycle(kStateNormal)
      .Node("n1")
      .Ready(Now() - absl::Hours(1))
      .Condition("ContainersReady", "True", Now() - absl::Hours(1))
      .ReadinessGate(kInPlaceUpdateReadyCondition)
      .Condition(kInPlaceUpdateReadyCondition, "True", Now() - absl::Hours(1))
      .ResourceVersion("5");
  return b;
}

pb::Pod WithStatusIds(pb::Pod pod, const std::string& image, const std::string& image_id,
                      const std::string& container_id) {
  pod.mutable_containers(0)->set_image(image);
  pod.mutable_container_statuses(0)->set_image(image);
  pod.mutable_container_statuses(0)->set_image_id(image_id);
  pod.mutable_container_statuses(0)->set_container_id(container_id);
  return pod;
}

ResolvedSpec Spec(int32_t replicas, PodUpdatePolicy policy, int32_t max_unavailable) {
  ResolvedSpec spec;
  spec.replicas = replicas;
  spec.policy = policy;
  spec.max_unavailable = max_unavailable;
  spec.expected_updated_replicas = replicas;
  return spec;
}

CloneSetBuilder UpdatedCloneSet() { return CloneSetBuilder().Template(TemplateJson("nginx:1.26")); }

pb::LifecycleHook Hook(const std::string& label, bool mark = false) {
  pb::LifecycleHook hook;
  (*hook.mutable_labels_handler())[label] = "true";
  hook.set_mark_pod_not_ready(mark);
  return hook;
}

// PlanUpdate into `plan` (per pod), checked against the same update planned with in-place batches and expanded:
// every scenario below also tests the batched form.
absl::Status PlanUpdateBothForms(const PlanContext& ctx, PlanBuilder& plan) {
  const absl::Status status = PlanUpdate(ctx, plan);
  PlanBuilder batched;
  batched.set_in_place_batches(true);
  EXPECT_EQ(PlanUpdate(ctx, batched), status);
  EXPECT_EQ(batched.requeue(), plan.requeue());
  planapi::ExpandInPlaceBatches(batched.response());
  EXPECT_EQ(testing::DeterministicBytes(*batched.response()), testing::DeterministicBytes(*plan.response()))
      << "per pod:\n" << plan.response()->DebugString() << "\nbatched, expanded:\n"
      << batched.response()->DebugString();
  return status;
}

std::string StateAnnotation(PlanBuilder& plan, int action) {
  return plan.response()->actions(action).patch_pod().set_annotations().at(kInPlaceStateAnnotation);
}

// ================================================================================================
// PlanUpdate: in-place path

TEST(PlanUpdateTest, InPlaceImageUpdateIsStatusFalseThenOnePatch) {
  auto s = MakeScenario(UpdatedCloneSet(),
                        {WithStatusIds(ReadyPod("cs-a", "cs-1"), "nginx:1.25", "id-25", "cid-a")},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("status cs-a start-in-place-update InPlaceUpdateReady=False/StartInPlaceUpdate "
                          "Ready=False/ReadinessGatesNotReady",
                          "patch cs-a in-place-update labels=controller-revision-hash=cs-2,pod-template-hash=2 "
                          "images=main=nginx:1.26 ann=apps.kruise.io/inplace-update-state"));
  EXPECT_EQ(StateAnnotation(s->plan, 1),
            absl::StrCat(R"({"revision":"cs-2","updateTimestamp":")", base::FormatTime(Now()),
                         R"(","lastContainerStatuses":{"main":{"imageID":"id-25","containerID":"cid-a"}},)",
                         R"("updateImages":true,"containerBatchesRecord":[{"timestamp":")", base::FormatTime(Now()),
                         R"(","containers":["main"]}]})"));
  EXPECT_EQ(s->plan.response()->actions(1).patch_pod().resource_version(), "5");
  EXPECT_THAT(Events(s->plan), ElementsAre("Normal SuccessfulUpdatePodInPlace: successfully update pod cs-a "
                                           "in-place(revision cs-2)"));
  EXPECT_EQ(s->plan.summary()->updated_now(), 1);
  EXPECT_EQ(s->plan.summary()->update_num(), 1);
  EXPECT_EQ(s->plan.requeue(), absl::ZeroDuration());
}

TEST(PlanUpdateTest, LifecycleConfiguredWritesUpdating) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_pre_delete() = Hook("pd");
  auto s = MakeScenario(cs, {ReadyPod("cs-a", "cs-1")}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  ASSERT_EQ(s->plan.response()->actions_size(), 2);
  EXPECT_THAT(Describe(s->plan.response()->actions(1)),
              HasSubstr("labels=controller-revision-hash=cs-2,lifecycle.apps.kruise.io/state=Updating,"
                        "pod-template-hash=2"));
}

TEST(PlanUpdateTest, GracePeriodDefersImagesAndRequeues) {
  ResolvedSpec spec = Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1);
  spec.grace_period_seconds = 30;
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, spec);
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("status cs-a start-in-place-update InPlaceUpdateReady=False/StartInPlaceUpdate "
                          "Ready=False/ReadinessGatesNotReady",
                          "patch cs-a in-place-update labels=controller-revision-hash=cs-2,pod-template-hash=2 "
                          "ann=apps.kruise.io/inplace-update-grace,apps.kruise.io/inplace-update-state"));
  EXPECT_EQ(s->plan.response()->actions(1).patch_pod().set_annotations().at(kInPlaceGraceAnnotation),
            R"({"revision":"cs-2","containerImages":{"main":"nginx:1.26"},"graceSeconds":30,"oldRevision":"cs-1"})");
  EXPECT_EQ(s->plan.requeue(), absl::Seconds(30));
}

TEST(PlanUpdateTest, ShortHashGateWritesHashOnly) {
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  s->ctx.gates.set_clone_set_short_hash(true);
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan.response()->actions(1)), HasSubstr("labels=controller-revision-hash=2,"));
}

TEST(PlanUpdateTest, HookedPodGoesToPreparingUpdateFirst) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_in_place_update() = Hook("iu");
  auto s = MakeScenario(cs, {ReadyPod("cs-a", "cs-1").Label("iu", "true")},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("patch cs-a lifecycle labels=lifecycle.apps.kruise.io/state=PreparingUpdate "
                                             "ann=lifecycle.apps.kruise.io/timestamp"));
  EXPECT_THAT(Events(s->plan), IsEmpty());
}

TEST(PlanUpdateTest, UpdatedPodReAddsHookWithPreparingUpdate) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_in_place_update() = Hook("iu");
  auto s = MakeScenario(cs, {ReadyPod("cs-a", "cs-1").Lifecycle(kStateUpdated)},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("patch cs-a lifecycle labels=iu=true,lifecycle.apps.kruise.io/state=PreparingUpdate "
                          "ann=lifecycle.apps.kruise.io/timestamp"));
}

TEST(PlanUpdateTest, PreparingUpdateStillHookedWaits) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_in_place_update() = Hook("iu");
  auto s = MakeScenario(cs, {ReadyPod("cs-a", "cs-1").Lifecycle(kStatePreparingUpdate).Label("iu", "true")},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), IsEmpty());
  EXPECT_THAT(s->plan.summary()->blocked_reasons(),
              ElementsAre("pod cs-a waits for its inPlaceUpdate hook to be removed"));
}

TEST(PlanUpdateTest, PreparingUpdateUnhookedIsUpdated) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_in_place_update() = Hook("iu");
  auto s = MakeScenario(cs, {ReadyPod("cs-a", "cs-1").Lifecycle(kStatePreparingUpdate)},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  ASSERT_EQ(s->plan.response()->actions_size(), 2);
  EXPECT_THAT(Describe(s->plan.response()->actions(1)), HasSubstr("lifecycle.apps.kruise.io/state=Updating"));
}

// ================================================================================================
// PlanUpdate: not in place

std::vector<pb::ControllerRevision> EnvChangeRevisions() {
  nlohmann::json changed = nlohmann::json::parse(TemplateJson("nginx:1.25"));
  changed["spec"]["containers"][0]["env"] = nlohmann::json::array({{{"name", "A"}, {"value", "1"}}});
  return {RevisionBuilder("cs-1", 1).Template(TemplateJson("nginx:1.25")),
          RevisionBuilder("cs-2", 2).Template(changed.dump())};
}

TEST(PlanUpdateTest, InPlaceOnlyNonInPlaceTouchesNothing) {
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, Spec(1, PodUpdatePolicy::kInPlaceOnly, 1),
                        {}, EnvChangeRevisions());
  const absl::Status status = PlanUpdateBothForms(s->ctx, s->plan);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message =
      "find Pod cs-a update strategy is InPlaceOnly but can not update in-place: template "
      "spec.containers[0].env added";
  EXPECT_EQ(status.message(), message);
  EXPECT_THAT(Describe(s->plan), IsEmpty());
  EXPECT_THAT(Events(s->plan), ElementsAre("Warning FailedUpdatePodInPlace: " + message));
  EXPECT_THAT(s->plan.summary()->blocked_reasons(), ElementsAre(message));
  EXPECT_EQ(s->plan.summary()->updated_now(), 0);
}

TEST(PlanUpdateTest, InPlaceIfPossibleFallsBackWithReason) {
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1), {PvcBuilder("data-cs-a", "a")},
                        EnvChangeRevisions());
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete cs-a pvcs=data-cs-a"));
  EXPECT_THAT(Events(s->plan),
              ElementsAre("Normal InPlaceUpdateNotPossible: pod cs-a cannot be updated in place to revision cs-2 "
                          "(template spec.containers[0].env added), so it is recreated",
                          "Normal SuccessfulUpdatePodReCreate: successfully delete pod cs-a for update(revision cs-2)",
                          "Normal SuccessfulDelete: succeed to delete pod cs-a"));
}

TEST(PlanUpdateTest, ReCreateDeletesPodAndPvcsDirectly) {
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1"), ReadyPod("cs-b", "cs-1")},
                        Spec(2, PodUpdatePolicy::kReCreate, 1),
                        {PvcBuilder("data-cs-a", "a"), PvcBuilder("logs-cs-a", "a"), PvcBuilder("data-cs-b", "b")});
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete cs-a pvcs=data-cs-a,logs-cs-a"));
  EXPECT_EQ(s->plan.response()->actions(0).delete_pod().uid(), "uid-cs-a");
  EXPECT_TRUE(s->plan.response()->actions(0).stop_on_error());
}

TEST(PlanUpdateTest, ReCreateRetainKeepsPvcs) {
  ResolvedSpec spec = Spec(1, PodUpdatePolicy::kReCreate, 1);
  spec.retain_pvcs = true;
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, spec, {PvcBuilder("data-cs-a", "a")});
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete cs-a pvcs="));
}

TEST(PlanUpdateTest, VctChangeRecreatesAndDropsRetainedPvcs) {
  ResolvedSpec spec = Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1);
  spec.retain_pvcs = true;
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, spec, {PvcBuilder("data-cs-a", "a")},
                        {RevisionBuilder("cs-1", 1).Annotation(kVctHashAnnotation, "111"),
                         RevisionBuilder("cs-2", 2).Template(TemplateJson("nginx:1.26")).Annotation(
                             kVctHashAnnotation, "222")});
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete cs-a pvcs=data-cs-a"));
  EXPECT_THAT(Events(s->plan)[0], HasSubstr("volumeClaimTemplates changed"));
}

TEST(PlanUpdateTest, ReCreateHookedPreDeleteLabelsInsteadOfDeleting) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_pre_delete() = Hook("pd");
  auto s = MakeScenario(cs, {ReadyPod("cs-a", "cs-1").Label("pd", "true")}, Spec(1, PodUpdatePolicy::kReCreate, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("patch cs-a lifecycle labels=apps.kruise.io/specified-delete=true,"
                          "lifecycle.apps.kruise.io/state=PreparingDelete ann=lifecycle.apps.kruise.io/timestamp"));
}

// ================================================================================================
// Gates, candidates, limits

TEST(PlanUpdateTest, PausedAndOnDeleteDoNothing) {
  ResolvedSpec paused = Spec(1, PodUpdatePolicy::kReCreate, 1);
  paused.paused = true;
  auto s = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, paused);
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), IsEmpty());
  EXPECT_THAT(s->plan.summary()->blocked_reasons(), ElementsAre("updateStrategy.paused is true"));

  ResolvedSpec on_delete = Spec(1, PodUpdatePolicy::kReCreate, 1);
  on_delete.rolling_update = false;
  auto t = MakeScenario(UpdatedCloneSet(), {ReadyPod("cs-a", "cs-1")}, on_delete);
  ASSERT_TRUE(PlanUpdateBothForms(t->ctx, t->plan).ok());
  EXPECT_THAT(Describe(t->plan), IsEmpty());
  EXPECT_EQ(t->plan.summary()->blocked_reasons_size(), 1);
}

struct LimitCase {
  std::string name;
  int32_t replicas;
  int32_t partition;
  int32_t max_unavailable;
  std::vector<std::string> not_ready;  // pod names (of cs-a..) that are not ready
  std::vector<std::string> on_update;  // pods already on cs-2
  std::vector<std::string> want_deleted;
  int32_t want_update_num;
};

class LimitTest : public ::testing::TestWithParam<LimitCase> {};

TEST_P(LimitTest, Budget) {
  const LimitCase& c = GetParam();
  std::vector<pb::Pod> pods;
  for (int i = 0; i < c.replicas; ++i) {
    const std::string name = std::string("cs-") + static_cast<char>('a' + i);
    const bool updated = std::find(c.on_update.begin(), c.on_update.end(), name) != c.on_update.end();
    // Older pods became ready earlier, so the default order takes later letters first among ready pods.
    PodBuilder b = ReadyPod(name, updated ? "cs-2" : "cs-1");
    b.Ready(Now() - absl::Hours(10 - i));
    if (std::find(c.not_ready.begin(), c.not_ready.end(), name) != c.not_ready.end()) b.NotReady(Now());
    pods.push_back(b);
  }
  ResolvedSpec spec = Spec(c.replicas, PodUpdatePolicy::kReCreate, c.max_unavailable);
  spec.partition = c.partition;
  auto s = MakeScenario(UpdatedCloneSet(), pods, spec);
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  std::vector<std::string> deleted;
  for (const pb::Action& a : s->plan.response()->actions()) deleted.push_back(a.delete_pod().name());
  EXPECT_EQ(deleted, c.want_deleted);
  EXPECT_EQ(s->plan.summary()->update_num(), c.want_update_num);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LimitTest,
    ::testing::Values(
        LimitCase{"OneAtATimeMostRecentlyReadyFirst", 4, 0, 1, {}, {}, {"cs-d"}, 4},
        LimitCase{"TwoAtATime", 4, 0, 2, {}, {}, {"cs-d", "cs-c"}, 4},
        LimitCase{"NotReadyFirstAndFreeOfGlobalBudget", 4, 0, 2, {"cs-a"}, {}, {"cs-a", "cs-d"}, 4},
        LimitCase{"UnavailableTargetPodConsumesBudget", 4, 0, 1, {"cs-a"}, {"cs-a"}, {}, 3},
        LimitCase{"PartitionLimitsCount", 4, 3, 4, {}, {}, {"cs-d"}, 1},
        LimitCase{"PartitionReached", 4, 2, 4, {}, {"cs-c", "cs-d"}, {}, 0},
        LimitCase{"UnavailableOldPodsBlockReadyOnes", 4, 0, 1, {"cs-b"}, {}, {"cs-b"}, 4}),
    [](const auto& info) { return info.param.name; });

TEST(PlanUpdateTest, CandidatesSkipPreparingDeleteAndGrace) {
  pb::Pod grace = ReadyPod("cs-b", "cs-1").Annotation(kInPlaceGraceAnnotation, R"({"revision":"cs-2"})");
  auto s = MakeScenario(UpdatedCloneSet(),
                        {ReadyPod("cs-a", "cs-1").Lifecycle(kStatePreparingDelete), grace, ReadyPod("cs-c", "cs-1")},
                        Spec(3, PodUpdatePolicy::kReCreate, 3));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete cs-c pvcs="));
  EXPECT_THAT(s->plan.summary()->blocked_reasons(), ElementsAre("1 pods are in their in-place grace period"));
}

TEST(PlanUpdateTest, UpdatedStateIsCandidateEvenWithGrace) {
  pb::Pod pod = ReadyPod("cs-a", "cs-1").Lifecycle(kStateUpdated).Annotation(kInPlaceGraceAnnotation, "{}");
  auto s = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kReCreate, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete cs-a pvcs="));
}

TEST(PlanUpdateTest, PreparingUpdatePodGoesFirst) {
  auto s = MakeScenario(UpdatedCloneSet(),
                        {ReadyPod("cs-a", "cs-1"), ReadyPod("cs-b", "cs-1").Lifecycle(kStatePreparingUpdate)},
                        Spec(2, PodUpdatePolicy::kInPlaceIfPossible, 2));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  // cs-b is unavailable (PreparingUpdate) and first; cs-a follows within the budget of 2.
  std::vector<std::string> described = Describe(s->plan);
  ASSERT_EQ(described.size(), 4u);
  EXPECT_THAT(described[0], HasSubstr("status cs-b"));
  EXPECT_THAT(described[2], HasSubstr("status cs-a"));
}

// ================================================================================================
// PlanRefresh

TEST(PlanRefreshTest, SteadyPodNoWrites) {
  auto s = MakeScenario(CloneSetBuilder(), {ReadyPod("cs-a", "cs-1")}, Spec(1, PodUpdatePolicy::kReCreate, 1),
                        {}, {}, "cs-1", "cs-1");
  absl::Status error;
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, &error));
  EXPECT_TRUE(error.ok());
  EXPECT_THAT(Describe(s->plan), IsEmpty());
}

TEST(PlanRefreshTest, NewPodGetsInPlaceReadyTrue) {
  pb::Pod pod = ReadyPod("cs-a", "cs-1");
  pod.mutable_conditions()->RemoveLast();  // drop InPlaceUpdateReady
  auto s = MakeScenario(CloneSetBuilder(), {pod}, Spec(1, PodUpdatePolicy::kReCreate, 1), {}, {}, "cs-1", "cs-1");
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), ElementsAre("status cs-a in-place-update-ready InPlaceUpdateReady=True"));
}

TEST(PlanRefreshTest, MissingPodTemplateHashIsPatched) {
  pb::Pod pod = ReadyPod("cs-a", "cs-1");
  pod.mutable_metadata()->mutable_labels()->erase(kPodTemplateHashLabel);
  auto s = MakeScenario(CloneSetBuilder(), {pod}, Spec(1, PodUpdatePolicy::kReCreate, 1), {}, {}, "cs-1", "cs-1");
  EXPECT_TRUE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), ElementsAre("patch cs-a pod-template-hash labels=pod-template-hash=1"));
}

TEST(PlanRefreshTest, PodTemplateHashRidesOnLifecyclePatch) {
  pb::Pod pod = ReadyPod("cs-a", "cs-1").Lifecycle(kStatePreparingNormal);
  pod.mutable_metadata()->mutable_labels()->erase(kPodTemplateHashLabel);
  auto s = MakeScenario(CloneSetBuilder(), {pod}, Spec(1, PodUpdatePolicy::kReCreate, 1), {}, {}, "cs-1", "cs-1");
  EXPECT_TRUE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), ElementsAre("patch cs-a lifecycle labels=lifecycle.apps.kruise.io/state=Normal,"
                                             "pod-template-hash=1 ann=lifecycle.apps.kruise.io/timestamp"));
}

// §6.2 refresh rows.
struct TransitionCase {
  std::string name;
  std::string lifecycle;  // "none", "preDelete", "inPlaceUpdate", "preNormal"
  std::string state;
  std::string revision;          // pod revision
  std::vector<std::string> hook_labels;  // labels on the pod (hook keys set to "true")
  std::string node;
  std::string want_state;        // "" = no transition
};

class TransitionTest : public ::testing::TestWithParam<TransitionCase> {};

TEST_P(TransitionTest, Refresh) {
  const TransitionCase& c = GetParam();
  CloneSetBuilder cs = UpdatedCloneSet();
  pb::Lifecycle* lifecycle = cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle();
  if (c.lifecycle == "none") cs.mutable_clone_set()->mutable_spec()->clear_lifecycle();
  if (c.lifecycle == "preDelete") *lifecycle->mutable_pre_delete() = Hook("pd");
  if (c.lifecycle == "inPlaceUpdate") *lifecycle->mutable_in_place_update() = Hook("iu");
  if (c.lifecycle == "preNormal") *lifecycle->mutable_pre_normal() = Hook("pn");
  PodBuilder b = ReadyPod("cs-a", c.revision);
  b.Lifecycle(c.state).Node(c.node);
  for (const std::string& l : c.hook_labels) b.Label(l, "true");
  auto s = MakeScenario(cs, {b}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  const bool modified = PlanRefresh(s->ctx, s->plan, nullptr);
  EXPECT_EQ(modified, !c.want_state.empty());
  if (c.want_state.empty()) {
    EXPECT_THAT(Describe(s->plan), IsEmpty());
  } else {
    EXPECT_THAT(Describe(s->plan),
                ElementsAre("patch cs-a lifecycle labels=lifecycle.apps.kruise.io/state=" + c.want_state +
                            " ann=lifecycle.apps.kruise.io/timestamp"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, TransitionTest,
    ::testing::Values(
        TransitionCase{"PreparingNormalScheduled", "none", kStatePreparingNormal, "cs-2", {}, "n1", kStateNormal},
        TransitionCase{"PreparingNormalUnscheduled", "none", kStatePreparingNormal, "cs-2", {}, "", ""},
        TransitionCase{"PreNormalAllHookedUnscheduled", "preNormal", kStatePreparingNormal, "cs-2", {"pn"}, "",
                       kStateNormal},
        TransitionCase{"PreNormalNotHooked", "preNormal", kStatePreparingNormal, "cs-2", {}, "n1", ""},
        TransitionCase{"PreparingUpdateRolledBackNoHook", "preDelete", kStatePreparingUpdate, "cs-2", {}, "n1",
                       kStateNormal},
        TransitionCase{"PreparingUpdateRolledBackUnhooked", "inPlaceUpdate", kStatePreparingUpdate, "cs-2", {}, "n1",
                       kStateUpdated},
        TransitionCase{"PreparingUpdateRolledBackHooked", "inPlaceUpdate", kStatePreparingUpdate, "cs-2", {"iu"},
                       "n1", kStateNormal},
        TransitionCase{"PreparingUpdateOldRevisionWaits", "inPlaceUpdate", kStatePreparingUpdate, "cs-1", {}, "n1",
                       ""},
        TransitionCase{"UpdatingNoLifecycleToNormal", "none", kStateUpdating, "cs-2", {}, "n1", kStateNormal},
        TransitionCase{"UpdatingNoInPlaceHookOneHop", "preDelete", kStateUpdating, "cs-2", {}, "n1", kStateNormal},
        TransitionCase{"UpdatingHookRemovedToUpdated", "inPlaceUpdate", kStateUpdating, "cs-2", {}, "n1",
                       kStateUpdated},
        TransitionCase{"UpdatingHookBackToNormal", "inPlaceUpdate", kStateUpdating, "cs-2", {"iu"}, "n1",
                       kStateNormal},
        TransitionCase{"UpdatedRehookedToNormal", "inPlaceUpdate", kStateUpdated, "cs-2", {"iu"}, "n1",
                       kStateNormal},
        TransitionCase{"UpdatedWaitsForHook", "inPlaceUpdate", kStateUpdated, "cs-2", {}, "n1", ""},
        TransitionCase{"UpdatedNoHookToNormal", "preDelete", kStateUpdated, "cs-2", {}, "n1", kStateNormal},
        TransitionCase{"NormalStays", "inPlaceUpdate", kStateNormal, "cs-2", {}, "n1", ""},
        TransitionCase{"PreparingDeleteStays", "preDelete", kStatePreparingDelete, "cs-2", {"pd"}, "n1", ""}),
    [](const auto& info) { return info.param.name; });

TEST(PlanRefreshTest, UpdatingNotCompletedStays) {
  InPlaceUpdateState state;
  state.revision = "cs-2";
  state.last_container_statuses["main"] = {"id-25", "cid-a"};
  pb::Pod pod = WithStatusIds(ReadyPod("cs-a", "cs-2").Lifecycle(kStateUpdating)
                                  .Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state)),
                              "nginx:1.26", "id-25", "cid-a");
  pod.mutable_container_statuses(0)->set_image("nginx:1.25");
  pod.mutable_conditions(2)->set_status("False");  // InPlaceUpdateReady
  auto s = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), IsEmpty());
}

TEST(PlanRefreshTest, CompletionWritesReadyTrueOnlyWithoutLifecycle) {
  InPlaceUpdateState state;
  state.revision = "cs-2";
  state.last_container_statuses["main"] = {"id-25", "cid-a"};
  pb::Pod pod = WithStatusIds(ReadyPod("cs-a", "cs-2").Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state)),
                              "nginx:1.26", "id-26", "cid-a2");
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == kInPlaceUpdateReadyCondition) {
      c.set_status("False");
      c.set_reason("StartInPlaceUpdate");
    }
  }
  auto s = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), ElementsAre("status cs-a in-place-update-ready InPlaceUpdateReady=True"));
}

pb::Pod GracePod(const std::string& revision_label, absl::Time started, const std::string& grace_json) {
  InPlaceUpdateState state;
  state.revision = "cs-2";
  state.update_timestamp = base::FormatTime(started);
  pb::Pod pod = WithStatusIds(ReadyPod("cs-a", revision_label)
                                  .Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state))
                                  .Annotation(kInPlaceGraceAnnotation, grace_json),
                              "nginx:1.25", "id-25", "cid-a");
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == kInPlaceUpdateReadyCondition) c.set_status("False");
  }
  return pod;
}

constexpr char kGrace[] =
    R"({"revision":"cs-2","containerImages":{"main":"nginx:1.26"},"graceSeconds":30,"oldRevision":"cs-1"})";

struct GraceCase {
  std::string name;
  int elapsed_seconds;
  absl::Duration want_requeue;
};
class GraceWaitTest : public ::testing::TestWithParam<GraceCase> {};
TEST_P(GraceWaitTest, RequeuesRemainingWholeSeconds) {
  auto s = MakeScenario(UpdatedCloneSet(), {GracePod("cs-2", Now() - absl::Seconds(GetParam().elapsed_seconds), kGrace)},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  s->ctx.now += absl::Milliseconds(300);  // sub-second now: the remainder is rounded up
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), IsEmpty());
  EXPECT_EQ(s->plan.requeue(), GetParam().want_requeue);
}
INSTANTIATE_TEST_SUITE_P(Cases, GraceWaitTest,
                         ::testing::Values(GraceCase{"JustStarted", 0, absl::Seconds(30)},
                                           GraceCase{"TwelveSecondsIn", 12, absl::Seconds(18)},
                                           GraceCase{"LastSecond", 29, absl::Seconds(1)}),
                         [](const auto& info) { return info.param.name; });

TEST(PlanRefreshTest, GraceExpiredAppliesImages) {
  auto s = MakeScenario(UpdatedCloneSet(), {GracePod("cs-2", Now() - absl::Seconds(31), kGrace)},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan), ElementsAre("patch cs-a finish-grace images=main=nginx:1.26 "
                                             "ann=apps.kruise.io/inplace-update-state "
                                             "rm-ann=apps.kruise.io/inplace-update-grace"));
  EXPECT_THAT(StateAnnotation(s->plan, 0),
              HasSubstr(R"("lastContainerStatuses":{"main":{"imageID":"id-25","containerID":"cid-a"}})"));
  EXPECT_EQ(s->plan.requeue(), absl::ZeroDuration());
}

TEST(PlanRefreshTest, GraceRevisionLabelChangedDropsAnnotation) {
  auto s = MakeScenario(UpdatedCloneSet(), {GracePod("cs-3", Now(), kGrace)},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  PlanRefresh(s->ctx, s->plan, nullptr);
  EXPECT_THAT(Describe(s->plan), ElementsAre("patch cs-a finish-grace rm-ann=apps.kruise.io/inplace-update-grace"));
}

TEST(PlanRefreshTest, RollbackDuringGraceRestoresThePod) {
  // The template went back to cs-1 while cs-a waited to apply cs-2.
  auto s = MakeScenario(CloneSetBuilder(), {GracePod("cs-2", Now() - absl::Seconds(5), kGrace)},
                        Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1), {}, {}, "cs-2", "cs-1");
  EXPECT_FALSE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("patch cs-a cancel-grace labels=controller-revision-hash=cs-1,pod-template-hash=1 "
                          "rm-ann=apps.kruise.io/inplace-update-grace,apps.kruise.io/inplace-update-state",
                          "status cs-a in-place-update-ready InPlaceUpdateReady=True"));
  EXPECT_THAT(Events(s->plan),
              ElementsAre("Normal CancelledUpdatePodInPlace: cancelled the pending in-place update of pod cs-a to "
                          "revision cs-2 during its grace period: the update revision is now cs-1"));
}

TEST(PlanRefreshTest, NextBatchWhenFirstBatchReady) {
  InPlaceUpdateState state;
  state.revision = "cs-2";
  state.last_container_statuses["main"] = {"id-old", "cid-old"};
  state.next_container_images["side"] = "busybox:2";
  state.pre_check_containers_required_ready = {"main"};
  state.container_batches_record.push_back({"t0", {"main"}});
  pb::Pod pod = ReadyPod("cs-a", "cs-2").Container("side", "busybox:1")
                    .Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state));
  pod.mutable_container_statuses(0)->set_image_id("id-new");
  pod.mutable_container_statuses(0)->set_container_id("cid-new");
  pod.mutable_container_statuses(1)->set_image_id("id-side");
  pod.mutable_container_statuses(1)->set_container_id("cid-side");
  auto s = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  PlanRefresh(s->ctx, s->plan, nullptr);
  EXPECT_THAT(Describe(s->plan), ElementsAre("patch cs-a next-batch images=side=busybox:2 "
                                             "ann=apps.kruise.io/inplace-update-state"));
  absl::StatusOr<InPlaceUpdateState> next = ParseInPlaceState(StateAnnotation(s->plan, 0));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->next_container_images.empty());
  EXPECT_EQ(next->container_batches_record.size(), 2u);
  EXPECT_EQ(next->last_container_statuses["side"].image_id, "id-side");

  // Not ready yet: nothing.
  pod.mutable_container_statuses(0)->set_ready(false);
  auto t = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  PlanRefresh(t->ctx, t->plan, nullptr);
  EXPECT_THAT(Describe(t->plan), IsEmpty());
}

TEST(PlanRefreshTest, MarkPodNotReadyKeyRemovedWhenSkippingUpdated) {
  CloneSetBuilder cs = UpdatedCloneSet();
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_in_place_update() = Hook("iu", true);
  pb::Pod pod = ReadyPod("cs-a", "cs-2").Lifecycle(kStateUpdating).Label("iu", "true")
                    .ReadinessGate(kKruisePodReadyCondition)
                    .Condition(kKruisePodReadyCondition, "False", Now());
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == kKruisePodReadyCondition) c.set_message(R"([{"userAgent":"Lifecycle","key":"preUpdateHook"}])");
  }
  auto s = MakeScenario(cs, {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  EXPECT_TRUE(PlanRefresh(s->ctx, s->plan, nullptr));
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("status cs-a mark-pod-not-ready KruisePodReady=True",
                          "patch cs-a lifecycle labels=lifecycle.apps.kruise.io/state=Normal "
                          "ann=lifecycle.apps.kruise.io/timestamp"));
}

// The write budget: an in-place image update without lifecycle costs 3 pod writes end to end.
TEST(WriteBudgetTest, InPlaceUpdateIsThreeWrites) {
  pb::Pod pod = WithStatusIds(ReadyPod("cs-a", "cs-1"), "nginx:1.25", "id-25", "cid-a");
  auto s = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  ASSERT_TRUE(PlanUpdateBothForms(s->ctx, s->plan).ok());
  int writes = s->plan.response()->actions_size();
  // Apply the plan's two writes the way the executor would, then let the kubelet restart the container.
  const pb::PatchPod& patch = s->plan.response()->actions(1).patch_pod();
  for (const auto& [k, v] : patch.set_labels()) (*pod.mutable_metadata()->mutable_labels())[k] = v;
  for (const auto& [k, v] : patch.set_annotations()) (*pod.mutable_metadata()->mutable_annotations())[k] = v;
  pod = WithStatusIds(pod, "nginx:1.26", "id-26", "cid-a2");
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == kInPlaceUpdateReadyCondition) {
      c.set_status("False");
      c.set_reason("StartInPlaceUpdate");
    }
  }
  auto next = MakeScenario(UpdatedCloneSet(), {pod}, Spec(1, PodUpdatePolicy::kInPlaceIfPossible, 1));
  EXPECT_FALSE(PlanRefresh(next->ctx, next->plan, nullptr));
  writes += next->plan.response()->actions_size();
  EXPECT_EQ(writes, 3);
}

}  // namespace
}  // namespace cloneset::planner
