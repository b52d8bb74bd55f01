#include "planner/lifecycle.h"

#include <string>
#include <vector>

#include "base/time_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/predicates.h"
#include "planner/update_test_util.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::CloneSetBuilder;
using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::cloneset::planner::update_testing::Describe;
using ::cloneset::planner::update_testing::MakeScenario;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

pb::LifecycleHook Hook(std::map<std::string, std::string> labels, std::vector<std::string> finalizers,
                       bool mark = false) {
  pb::LifecycleHook hook;
  for (const auto& [k, v] : labels) (*hook.mutable_labels_handler())[k] = v;
  for (const auto& f : finalizers) hook.add_finalizers_handler(f);
  hook.set_mark_pod_not_ready(mark);
  return hook;
}

struct HookCase {
  std::string name;
  std::vector<std::pair<std::string, std::string>> pod_labels;
  std::vector<std::string> pod_finalizers;
  bool hooked;
  bool all_hooked;
};

class HookedTest : public ::testing::TestWithParam<HookCase> {};

TEST_P(HookedTest, Matches) {
  const pb::LifecycleHook hook = Hook({{"a", "1"}, {"b", "2"}}, {"f/x"});
  PodBuilder b("cs-a");
  for (const auto& [k, v] : GetParam().pod_labels) b.Label(k, v);
  for (const auto& f : GetParam().pod_finalizers) b.Finalizer(f);
  const pb::Pod pod = b;
  EXPECT_EQ(IsHooked(&hook, pod), GetParam().hooked);
  EXPECT_EQ(IsAllHooked(&hook, pod), GetParam().all_hooked);
}

INSTANTIATE_TEST_SUITE_P(Cases, HookedTest,
                         ::testing::Values(HookCase{"Nothing", {}, {}, false, false},
                                           HookCase{"OneLabel", {{"a", "1"}}, {}, true, false},
                                           HookCase{"WrongValue", {{"a", "9"}}, {}, false, false},
                                           HookCase{"OnlyFinalizer", {}, {"f/x"}, true, false},
                                           HookCase{"All", {{"a", "1"}, {"b", "2"}}, {"f/x"}, true, true},
                                           HookCase{"LabelsNoFinalizer", {{"a", "1"}, {"b", "2"}}, {}, true,
                                                    false}),
                         [](const auto& info) { return info.param.name; });

TEST(HookedTest, NullHook) {
  const pb::Pod pod = PodBuilder("cs-a");
  EXPECT_FALSE(IsHooked(nullptr, pod));
  EXPECT_FALSE(IsAllHooked(nullptr, pod));
}

TEST(HookAccessorsTest, ReturnConfiguredHooks) {
  CloneSetBuilder cs;
  *cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_pre_delete() = Hook({{"a", "1"}}, {});
  auto s = MakeScenario(cs, {}, ResolvedSpec{});
  EXPECT_NE(PreDeleteHook(s->ctx), nullptr);
  EXPECT_EQ(InPlaceUpdateHook(s->ctx), nullptr);
  EXPECT_EQ(PreNormalHook(s->ctx), nullptr);
}

TEST(AddPodPatchTest, FactsAndPodWriteTheSameTarget) {
  const pb::Pod pod = PodBuilder("cs-a").ResourceVersion("42");
  const PodFacts facts = ComputePodFacts(pod);
  PlanBuilder from_pod;
  PlanBuilder from_facts;
  AddPodPatch(pod, "in-place-update", from_pod);
  AddPodStatusPatch(pod, "start-in-place-update", from_pod);
  AddPodPatch(facts, "in-place-update", from_facts);
  AddPodStatusPatch(facts, "start-in-place-update", from_facts);
  const pb::PlanResponse& want = *from_pod.response();
  const pb::PlanResponse& got = *from_facts.response();
  ASSERT_EQ(got.actions_size(), 2);
  EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString());
  EXPECT_TRUE(got.actions(0).stop_on_error());
  EXPECT_EQ(got.actions(0).patch_pod().name(), "cs-a");
  EXPECT_EQ(got.actions(0).patch_pod().uid(), "uid-cs-a");
  EXPECT_EQ(got.actions(0).patch_pod().resource_version(), "42");
  EXPECT_EQ(got.actions(0).patch_pod().purpose(), "in-place-update");
  EXPECT_EQ(got.actions(1).patch_pod_status().name(), "cs-a");
  EXPECT_EQ(got.actions(1).patch_pod_status().uid(), "uid-cs-a");
  EXPECT_EQ(got.actions(1).patch_pod_status().resource_version(), "42");
  EXPECT_EQ(got.actions(1).patch_pod_status().purpose(), "start-in-place-update");
}

TEST(SetLifecycleStateTest, WritesStateAndTimestamp) {
  auto s = MakeScenario(CloneSetBuilder(), {PodBuilder("cs-a").Lifecycle(kStateNormal).ResourceVersion("7")},
                        ResolvedSpec{});
  EXPECT_TRUE(SetLifecycleState(s->ctx, *s->ctx.pods[0], kStatePreparingUpdate, false, nullptr, s->plan));
  ASSERT_EQ(s->plan.response()->actions_size(), 1);
  const pb::PatchPod& patch = s->plan.response()->actions(0).patch_pod();
  EXPECT_EQ(patch.resource_version(), "7");
  EXPECT_EQ(patch.uid(), "uid-cs-a");
  EXPECT_EQ(patch.set_labels().at(kLifecycleStateLabel), kStatePreparingUpdate);
  EXPECT_EQ(patch.set_annotations().at(kLifecycleTimestampAnnotation), base::FormatTime(Now()));
}

TEST(SetLifecycleStateTest, SameStateNoWrite) {
  auto s = MakeScenario(CloneSetBuilder(), {PodBuilder("cs-a").Lifecycle(kStateNormal)}, ResolvedSpec{});
  EXPECT_FALSE(SetLifecycleState(s->ctx, *s->ctx.pods[0], kStateNormal, false, nullptr, s->plan));
  EXPECT_THAT(Describe(s->plan), IsEmpty());
}

TEST(SetLifecycleStateTest, ReAddsHandlerInSamePatch) {
  const pb::LifecycleHook hook = Hook({{"hook", "on"}}, {"f/x", "f/y"});
  auto s = MakeScenario(CloneSetBuilder(), {PodBuilder("cs-a").Lifecycle(kStateUpdated).Finalizer("f/x")},
                        ResolvedSpec{});
  EXPECT_TRUE(SetLifecycleState(s->ctx, *s->ctx.pods[0], kStatePreparingUpdate, false, &hook, s->plan));
  EXPECT_THAT(Describe(s->plan),
              ElementsAre("patch cs-a lifecycle labels=hook=on,lifecycle.apps.kruise.io/state=PreparingUpdate "
                          "ann=lifecycle.apps.kruise.io/timestamp fin+=f/y"));
}

// ---- markPodNotReady (§6.4) ----
struct NotReadyCase {
  std::string name;
  std::string state;
  bool gate;
  std::string current_status;   // "" = no KruisePodReady condition
  std::string current_message;
  std::vector<std::string> want;  // Describe() of actions
  std::string want_message;
};

class NotReadyTest : public ::testing::TestWithParam<NotReadyCase> {};

TEST_P(NotReadyTest, Writes) {
  const NotReadyCase& c = GetParam();
  PodBuilder b("cs-a");
  b.Lifecycle(kStateNormal).Ready(Now() - absl::Hours(1)).Condition("ContainersReady", "True", Now());
  if (c.gate) b.ReadinessGate(kKruisePodReadyCondition);
  if (!c.current_status.empty()) b.Condition(kKruisePodReadyCondition, c.current_status, Now() - absl::Hours(1));
  pb::Pod pod = b;
  for (pb::Condition& cond : *pod.mutable_conditions()) {
    if (cond.type() == kKruisePodReadyCondition) cond.set_message(c.current_message);
  }
  auto s = MakeScenario(CloneSetBuilder(), {pod}, ResolvedSpec{});
  ApplyNotReadyPolicy(s->ctx, *s->ctx.pods[0], c.state, s->plan);
  EXPECT_THAT(Describe(s->plan), ::testing::ElementsAreArray(c.want));
  if (!c.want.empty()) {
    EXPECT_EQ(s->plan.response()->actions(0).patch_pod_status().set_conditions(0).message(), c.want_message);
  }
}

constexpr char kUpdateKey[] = R"([{"userAgent":"Lifecycle","key":"preUpdateHook"}])";
constexpr char kDeleteKey[] = R"([{"userAgent":"Lifecycle","key":"preDeleteHook"}])";
constexpr char kBothKeys[] =
    R"([{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"Lifecycle","key":"preUpdateHook"}])";

INSTANTIATE_TEST_SUITE_P(
    Cases, NotReadyTest,
    ::testing::Values(
        NotReadyCase{"NoGateNoWrite", kStatePreparingUpdate, false, "True", "", {}, ""},
        NotReadyCase{"AddUpdateKey",
                     kStatePreparingUpdate,
                     true,
                     "True",
                     "",
                     {"status cs-a mark-pod-not-ready KruisePodReady=False Ready=False/ReadinessGatesNotReady"},
                     kUpdateKey},
        NotReadyCase{"AddDeleteKeyNoCondition",
                     kStatePreparingDelete,
                     true,
                     "",
                     "",
                     {"status cs-a mark-pod-not-ready KruisePodReady=False Ready=False/ReadinessGatesNotReady"},
                     kDeleteKey},
        NotReadyCase{"AlreadyListedAndFalse", kStatePreparingUpdate, true, "False", kUpdateKey, {}, ""},
        NotReadyCase{"AddSecondKeySorted",
                     kStatePreparingUpdate,
                     true,
                     "False",
                     kDeleteKey,
                     {"status cs-a mark-pod-not-ready KruisePodReady=False Ready=False/ReadinessGatesNotReady"},
                     kBothKeys},
        NotReadyCase{"RemoveLastKey",
                     kStateUpdated,
                     true,
                     "False",
                     kUpdateKey,
                     {"status cs-a mark-pod-not-ready KruisePodReady=True"},
                     ""},
        NotReadyCase{"RemoveOneOfTwo",
                     kStateUpdated,
                     true,
                     "False",
                     kBothKeys,
                     {"status cs-a mark-pod-not-ready KruisePodReady=False"},
                     kDeleteKey},
        NotReadyCase{"RemoveAbsentKey", kStateUpdated, true, "True", "", {}, ""},
        NotReadyCase{"NormalDoesNothing", kStateNormal, true, "True", "", {}, ""}),
    [](const auto& info) { return info.param.name; });

TEST(SetLifecycleStateTest, MarkPodNotReadyRunsEvenWhenStateUnchanged) {
  pb::Pod pod = PodBuilder("cs-a").Lifecycle(kStatePreparingDelete).ReadinessGate(kKruisePodReadyCondition);
  auto s = MakeScenario(CloneSetBuilder(), {pod}, ResolvedSpec{});
  EXPECT_FALSE(SetLifecycleState(s->ctx, *s->ctx.pods[0], kStatePreparingDelete, true, nullptr, s->plan));
  EXPECT_THAT(Describe(s->plan), ElementsAre("status cs-a mark-pod-not-ready KruisePodReady=False"));
}

}  // namespace
}  // namespace cloneset::planner
