// In-place resize with the InPlaceWorkloadVerticalScaling gate (semantics §5.7-§5.9): what is resized in place
// (QoS classes, other resources, mixes with images, the gate off), what a resize writes (ResizePod before the
// PatchPod, the state annotation), when it completes, and how a resize the kubelet holds back is reported.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/inplace.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/testing/both_encodings.h"
#include "planner/update_test_util.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::CloneSetBuilder;
using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::cloneset::planner::update_testing::Describe;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using Json = nlohmann::json;
using Resources = std::map<std::string, std::string>;

// A template whose container "main" has `requests` and `limits` (absent when empty); optionally a second container.
Json Template(const Json& requests, const Json& limits, const std::string& image = "nginx:1.25") {
  Json resources = Json::object();
  if (!requests.empty()) resources["requests"] = requests;
  if (!limits.empty()) resources["limits"] = limits;
  Json main = {{"name", "main"}, {"image", image}};
  if (!resources.empty()) main["resources"] = resources;
  return {{"metadata", {{"labels", {{"app", "demo"}}}}}, {"spec", {{"containers", Json::array({main})}}}};
}

const Json kBurstableRequests = {{"cpu", "100m"}, {"memory", "128Mi"}};
const Json kBurstableLimits = {{"cpu", "200m"}, {"memory", "256Mi"}};

struct SpecCase {
  std::string name;
  Json old_template;
  Json new_template;
  bool gate;
  std::string why_not;  // "" = in place
  std::map<std::string, ContainerResources> resources = {};
  std::map<std::string, std::string> images = {};
};

class ResizeSpecTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(ResizeSpecTest, Eligibility) {
  const SpecCase& c = GetParam();
  PlanContext ctx;
  ctx.gates.set_in_place_workload_vertical_scaling(c.gate);
  std::string why;
  auto spec = CalculateInPlaceUpdateSpec(ctx, c.old_template.dump(), c.new_template.dump(), "cs-2", &why);
  EXPECT_EQ(why, c.why_not);
  ASSERT_EQ(spec.has_value(), c.why_not.empty());
  if (!spec.has_value()) return;
  EXPECT_EQ(spec->container_resources, c.resources);
  EXPECT_EQ(spec->container_images, c.images);
}

Json With(Json t, const std::string& list, const std::string& name, const Json& value) {
  t["spec"]["containers"][0]["resources"][list][name] = value;
  return t;
}

const Json kBurstable = Template(kBurstableRequests, kBurstableLimits);
const Json kGuaranteed = Template(kBurstableLimits, kBurstableLimits);

INSTANTIATE_TEST_SUITE_P(
    Cases, ResizeSpecTest,
    ::testing::Values(
        SpecCase{"BurstableCpuLimit", kBurstable, With(kBurstable, "limits", "cpu", "300m"), true, "",
                 {{"main", {{}, {{"cpu", "300m"}}}}}},
        SpecCase{"BurstableMemoryRequestCanonical", kBurstable, With(kBurstable, "requests", "memory", "0.25Gi"), true,
                 "", {{"main", {{{"memory", "256Mi"}}, {}}}}},
        SpecCase{"GuaranteedStaysGuaranteed", kGuaranteed,
                 With(With(kGuaranteed, "limits", "cpu", "1"), "requests", "cpu", "1"), true, "",
                 {{"main", {{{"cpu", "1"}}, {{"cpu", "1"}}}}}},
        SpecCase{"GuaranteedToBurstable", kGuaranteed, With(kGuaranteed, "limits", "cpu", "1"), true,
                 "template resources change the pod's QoS class from Guaranteed to Burstable"},
        SpecCase{"BurstableToGuaranteed", kBurstable,
                 With(With(kBurstable, "requests", "cpu", "200m"), "requests", "memory", "256Mi"), true,
                 "template resources change the pod's QoS class from Burstable to Guaranteed"},
        SpecCase{"BestEffortToBurstable", Template(Json::object(), Json::object()),
                 Template(kBurstableRequests, Json::object()), true, "template spec.containers[0].resources added"},
        SpecCase{"AddedLimitIsNotInPlace", Template(kBurstableRequests, Json::object()),
                 Template(kBurstableRequests, {{"cpu", "1"}}), true, "template spec.containers[0].resources.limits added"},
        SpecCase{"RemovedRequestIsNotInPlace", kBurstable,
                 Template({{"cpu", "100m"}}, kBurstableLimits), true,
                 "template spec.containers[0].resources.requests.memory removed"},
        SpecCase{"EphemeralStorage", With(kBurstable, "limits", "ephemeral-storage", "1Gi"),
                 With(kBurstable, "limits", "ephemeral-storage", "2Gi"), true,
                 "template spec.containers[0].resources.limits.ephemeral-storage changed (only cpu and memory are "
                 "resized in place)"},
        SpecCase{"HugePages", With(kGuaranteed, "limits", "hugepages-2Mi", "2Mi"),
                 With(kGuaranteed, "limits", "hugepages-2Mi", "4Mi"), true,
                 "template spec.containers[0].resources.limits.hugepages-2Mi changed (only cpu and memory are "
                 "resized in place)"},
        SpecCase{"ExtendedResource", With(kBurstable, "limits", "example.com/gpu", "1"),
                 With(kBurstable, "limits", "example.com/gpu", "2"), true,
                 "template spec.containers[0].resources.limits.example.com/gpu changed (only cpu and memory are "
                 "resized in place)"},
        SpecCase{"GateOff", kBurstable, With(kBurstable, "limits", "cpu", "300m"), false,
                 "template spec.containers[0].resources.limits.cpu changed"},
        SpecCase{"ImageAndResources", kBurstable,
                 With(Template(kBurstableRequests, kBurstableLimits, "nginx:1.26"), "limits", "memory", "512Mi"), true,
                 "", {{"main", {{}, {{"memory", "512Mi"}}}}}, {{"main", "nginx:1.26"}}},
        SpecCase{"ResourcesAndEnv", kBurstable,
                 [] {
                   Json t = With(kBurstable, "limits", "cpu", "300m");
                   t["spec"]["containers"][0]["env"] = Json::array({{{"name", "A"}, {"value", "1"}}});
                   return t;
                 }(),
                 true, "template spec.containers[0].env added"},
        // The pods of a limits-only template are Guaranteed (the API server defaults their requests from the
        // limits): a limit change keeps them so only when the request follows.
        SpecCase{"LimitsOnlyRequestFollowsLimit", Template(Json::object(), kBurstableLimits),
                 Template(Json::object(), {{"cpu", "400m"}, {"memory", "256Mi"}}), true, "",
                 {{"main", {{{"cpu", "400m"}}, {{"cpu", "400m"}}}}}},
        SpecCase{"PodLevelResources",
                 [] {
                   Json t = kBurstable;
                   t["spec"]["resources"] = {{"limits", {{"cpu", "1"}}}};
                   return t;
                 }(),
                 [] {
                   Json t = With(kBurstable, "limits", "cpu", "300m");
                   t["spec"]["resources"] = {{"limits", {{"cpu", "1"}}}};
                   return t;
                 }(),
                 true, "template has pod-level resources (spec.resources): such pods cannot be resized"}),
    [](const auto& info) { return info.param.name; });

TEST(ResizeStateTest, NextContainerResourcesAsGoWritesThem) {
  InPlaceUpdateState state;
  state.revision = "cs-2";
  state.update_timestamp = "2026-01-01T00:00:00Z";
  state.update_resources = true;
  state.next_container_resources["side"] = {{{"cpu", "100m"}}, {{"memory", "1Gi"}, {"cpu", "1"}}};
  state.pre_check_containers_required_ready = {"main"};
  const std::string json = FormatInPlaceState(state);
  EXPECT_EQ(json,
            R"({"revision":"cs-2","updateTimestamp":"2026-01-01T00:00:00Z","lastContainerStatuses":null,)"
            R"("updateResources":true,"nextContainerResources":{"side":{"limits":{"cpu":"1","memory":"1Gi"},)"
            R"("requests":{"cpu":"100m"}}},"preCheckBeforeNext":{"containersRequiredReady":["main"]}})");
  absl::StatusOr<InPlaceUpdateState> parsed = ParseInPlaceState(json);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->next_container_resources, state.next_container_resources);
  EXPECT_TRUE(HasNextBatch(*parsed));
}

TEST(ResizeStateTest, GraceSpecCarriesContainerResources) {
  InPlaceUpdateSpec spec;
  spec.revision = "cs-2";
  spec.grace_seconds = 10;
  spec.container_resources["main"] = {{{"cpu", "300m"}}, {}};
  const std::string json = FormatGraceSpec(spec);
  EXPECT_THAT(json, HasSubstr(R"("containerResources":{"main":{"requests":{"cpu":"300m"}}})"));
  absl::StatusOr<InPlaceUpdateSpec> parsed = ParseGraceSpec(json);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->container_resources, spec.container_resources);
}

// ---- Through Plan(): the writes of a resize and its completion ----

pb::ControllerRevision StoredRevision(const pb::CloneSet& cs, int64_t number) {
  pb::ComputeRevisionRequest request;
  *request.mutable_clone_set() = cs;
  absl::StatusOr<pb::ComputeRevisionResponse> computed = ComputeRevision(request);
  EXPECT_TRUE(computed.ok()) << computed.status();
  pb::ControllerRevision revision =
      testing::RevisionBuilder(computed->name(), number).Data(computed->data_json()).Label(kRevisionHashLabel,
                                                                                           computed->hash());
  return revision;
}

struct Rollout {
  pb::PlanRequest request;
  std::string old_revision;
  std::string new_revision;
};

// `replicas` ready pods (readiness gate InPlaceUpdateReady) on `old_template`, the CloneSet now on `new_template`,
// InPlaceIfPossible, maxUnavailable 1, the gate on. Each pod runs with `pod_requests`/`pod_limits` (spec and status).
Rollout MakeRollout(const Json& old_template, const Json& new_template, const Resources& pod_requests,
                    const Resources& pod_limits, int replicas = 2) {
  CloneSetBuilder old_cs = CloneSetBuilder().Replicas(replicas).UpdateType("InPlaceIfPossible").Template(
      old_template.dump());
  CloneSetBuilder new_cs = CloneSetBuilder()
                               .Replicas(replicas)
                               .UpdateType("InPlaceIfPossible")
                               .MaxUnavailable(testing::Int(1))
                               .Template(new_template.dump());
  Rollout r;
  const pb::ControllerRevision r1 = StoredRevision(old_cs, 1);
  const pb::ControllerRevision r2 = StoredRevision(new_cs, 2);
  r.old_revision = r1.metadata().name();
  r.new_revision = r2.metadata().name();
  std::vector<pb::Pod> pods;
  for (int i = 0; i < replicas; ++i) {
    pods.push_back(PodBuilder("cs-p" + std::to_string(i))
                       .Revision(r.old_revision)
                       .Label(kPodTemplateHashLabel, std::string(ShortHash(r.old_revision)))
                       .Node("n1")
                       .Ready(Now() - absl::Hours(1))
                       .ReadinessGate(kInPlaceUpdateReadyCondition)
                       .Condition(kInPlaceUpdateReadyCondition, "True", Now() - absl::Hours(1))
                       .Resources("main", pod_requests, pod_limits));
  }
  r.request = testing::Request(new_cs.Status(r.old_revision, r.old_revision), pods, {}, {r1, r2});
  r.request.mutable_feature_gates()->set_in_place_workload_vertical_scaling(true);
  return r;
}

const Resources kPodRequests = {{"cpu", "100m"}, {"memory", "128Mi"}};
const Resources kPodLimits = {{"cpu", "200m"}, {"memory", "256Mi"}};

std::string DescribeResize(const pb::Action& a) {
  std::string out = absl::StrCat("resize ", a.resize_pod().name(), " ", a.resize_pod().purpose());
  for (const auto& c : a.resize_pod().containers()) {
    absl::StrAppend(&out, " ", c.name(), ":requests=", update_testing::Join(c.requests()),
                    ":limits=", update_testing::Join(c.limits()));
  }
  return out;
}

std::vector<std::string> Actions(const pb::PlanResponse& plan) {
  std::vector<std::string> out;
  for (const pb::Action& a : plan.actions()) out.push_back(a.has_resize_pod() ? DescribeResize(a) : Describe(a));
  return out;
}

// Applies the plan's writes to the request's pods as the API server would (labels, annotations, images, resized
// spec resources, status conditions).
void ApplyWrites(const pb::PlanResponse& plan, pb::PlanRequest& request) {
  for (const pb::Action& a : plan.actions()) {
    for (pb::Pod& pod : *request.mutable_pods()) {
      if (a.has_patch_pod() && a.patch_pod().name() == pod.metadata().name()) {
        for (const auto& [k, v] : a.patch_pod().set_labels()) (*pod.mutable_metadata()->mutable_labels())[k] = v;
        for (const auto& [k, v] : a.patch_pod().set_annotations()) {
          (*pod.mutable_metadata()->mutable_annotations())[k] = v;
        }
        for (pb::Container& c : *pod.mutable_containers()) {
          auto image = a.patch_pod().container_images().find(c.name());
          if (image != a.patch_pod().container_images().end()) c.set_image(image->second);
        }
      }
      if (a.has_resize_pod() && a.resize_pod().name() == pod.metadata().name()) {
        for (const auto& want : a.resize_pod().containers()) {
          for (pb::Container& c : *pod.mutable_containers()) {
            if (c.name() != want.name()) continue;
            for (const auto& [k, v] : want.requests()) (*c.mutable_resource_requests())[k] = v;
            for (const auto& [k, v] : want.limits()) (*c.mutable_resource_limits())[k] = v;
          }
        }
      }
      if (a.has_patch_pod_status() && a.patch_pod_status().name() == pod.metadata().name()) {
        for (const pb::Condition& set : a.patch_pod_status().set_conditions()) {
          for (pb::Condition& c : *pod.mutable_conditions()) {
            if (c.type() == set.type()) c = set;
          }
        }
      }
    }
  }
  if (plan.write_status()) *request.mutable_clone_set()->mutable_status() = plan.status();
}

// The kubelet carries the resize out: status resources = spec resources.
void KubeletResizes(pb::Pod& pod) {
  for (const pb::Container& c : pod.containers()) {
    for (pb::ContainerStatus& s : *pod.mutable_container_statuses()) {
      if (s.name() != c.name()) continue;
      *s.mutable_resource_requests() = c.resource_requests();
      *s.mutable_resource_limits() = c.resource_limits();
    }
  }
}

void SetPodCondition(pb::Pod& pod, const std::string& type, const std::string& status, const std::string& reason,
                     const std::string& message) {
  for (int i = pod.conditions_size() - 1; i >= 0; --i) {
    if (pod.conditions(i).type() == type) pod.mutable_conditions()->DeleteSubrange(i, 1);
  }
  if (status.empty()) return;
  pb::Condition* c = pod.add_conditions();
  c->set_type(type);
  c->set_status(status);
  c->set_reason(reason);
  c->set_message(message);
}

TEST(ResizePlanTest, ResizeOnlyKeepsThePodReadyAndMarksItUpdating) {
  Rollout r = MakeRollout(kBurstable, With(kBurstable, "limits", "cpu", "300m"), kPodRequests, kPodLimits);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string labels = absl::StrCat("controller-revision-hash=", r.new_revision,
                                          ",lifecycle.apps.kruise.io/state=Updating,pod-template-hash=",
                                          std::string(ShortHash(r.new_revision)));
  // One pod (maxUnavailable 1): the resize of only the changed value, then the patch; no InPlaceUpdateReady=False.
  EXPECT_THAT(Actions(*plan),
              ElementsAre("resize cs-p0 in-place-update main:requests=:limits=cpu=300m",
                          absl::StrCat("patch cs-p0 in-place-update labels=", labels,
                                       " ann=apps.kruise.io/inplace-update-state,lifecycle.apps.kruise.io/timestamp")));
  const std::string state = plan->actions(1).patch_pod().set_annotations().at(kInPlaceStateAnnotation);
  EXPECT_EQ(state, absl::StrCat(R"({"revision":")", r.new_revision, R"(","updateTimestamp":")", Rfc3339(Now()),
                                R"(","lastContainerStatuses":null,"updateResources":true,)",
                                R"("containerBatchesRecord":[{"timestamp":")", Rfc3339(Now()),
                                R"(","containers":["main"]}]})"));
  EXPECT_EQ(plan->summary().updated_now(), 1);

  // Applied; the kubelet has not resized yet: the pod waits in Updating (unavailable), nothing else is written.
  ApplyWrites(*plan, r.request);
  absl::StatusOr<pb::PlanResponse> waiting = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  for (const pb::Action& a : waiting->actions()) {
    const bool about_p0 = (a.has_patch_pod() && a.patch_pod().name() == "cs-p0") || a.has_resize_pod();
    EXPECT_FALSE(about_p0) << Describe(a);
  }
  EXPECT_EQ(waiting->summary().updated_now(), 0) << "the budget is taken by the resizing pod";

  // Resized: lifecycle back to Normal, and that is all (InPlaceUpdateReady stayed True).
  KubeletResizes(*r.request.mutable_pods(0));
  absl::StatusOr<pb::PlanResponse> done = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_GE(done->actions_size(), 1);
  EXPECT_EQ(Describe(done->actions(0)),
            "patch cs-p0 lifecycle labels=lifecycle.apps.kruise.io/state=Normal ann=lifecycle.apps.kruise.io/timestamp");
}

TEST(ResizePlanTest, ResizeWaitsForTheResizeConditionsToGo) {
  Rollout r = MakeRollout(kBurstable, With(kBurstable, "limits", "cpu", "300m"), kPodRequests, kPodLimits, 1);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ApplyWrites(*plan, r.request);
  pb::Pod& pod = *r.request.mutable_pods(0);
  KubeletResizes(pod);
  SetPodCondition(pod, "PodResizeInProgress", "True", "", "");
  absl::StatusOr<pb::PlanResponse> in_progress = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(in_progress.ok());
  EXPECT_THAT(Actions(*in_progress), IsEmpty());
  SetPodCondition(pod, "PodResizeInProgress", "", "", "");
  absl::StatusOr<pb::PlanResponse> done = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(done.ok());
  EXPECT_THAT(Actions(*done), ElementsAre(HasSubstr("patch cs-p0 lifecycle")));
}

TEST(ResizePlanTest, InfeasibleResizeBlocksTheRolloutAndIsReported) {
  Rollout r = MakeRollout(kBurstable, With(With(kBurstable, "requests", "cpu", "64"), "limits", "cpu", "64"),
                          kPodRequests, kPodLimits);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ApplyWrites(*plan, r.request);
  const std::string message = "Node didn't have enough capacity: cpu, requested: 64100, capacity: 8000";
  SetPodCondition(*r.request.mutable_pods(0), "PodResizePending", "True", "Infeasible", message);

  absl::StatusOr<pb::PlanResponse> blocked = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  EXPECT_EQ(blocked->summary().updated_now(), 0) << "the infeasible pod holds the only unavailable slot";
  EXPECT_THAT(blocked->summary().blocked_reasons(),
              ::testing::Contains(absl::StrCat("pod cs-p0: resize Infeasible: ", message)));
  ASSERT_TRUE(blocked->write_status());
  const pb::Condition* condition = nullptr;
  for (const pb::Condition& c : blocked->status().conditions()) {
    if (c.type() == kResizePendingCondition) condition = &c;
  }
  ASSERT_NE(condition, nullptr);
  EXPECT_EQ(condition->status(), "True");
  EXPECT_EQ(condition->reason(), "Infeasible");
  const std::string summary =
      absl::StrCat("1 pod waits for an in-place resize the kubelet holds back: cs-p0 (Infeasible: ", message, ")");
  EXPECT_EQ(condition->message(), summary);
  bool event = false;
  for (const pb::Event& e : blocked->events()) {
    if (e.reason() == "PodResizeInfeasible") {
      event = true;
      EXPECT_EQ(e.type(), pb::WARNING);
      EXPECT_EQ(e.message(), summary);
    }
  }
  EXPECT_TRUE(event);
  EXPECT_EQ(blocked->status().available_replicas(), 1);

  // The same again: no new event, no status write for it.
  ApplyWrites(*blocked, r.request);
  absl::StatusOr<pb::PlanResponse> again = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(again.ok());
  for (const pb::Event& e : again->events()) EXPECT_NE(e.reason(), "PodResizeInfeasible");
  EXPECT_FALSE(again->write_status());

  // The kubelet resizes after all (a Deferred resize once the node has room): the condition goes.
  SetPodCondition(*r.request.mutable_pods(0), "PodResizePending", "", "", "");
  KubeletResizes(*r.request.mutable_pods(0));
  absl::StatusOr<pb::PlanResponse> cleared = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(cleared.ok());
  ASSERT_TRUE(cleared->write_status());
  for (const pb::Condition& c : cleared->status().conditions()) EXPECT_NE(c.type(), kResizePendingCondition);
}

TEST(ResizePlanTest, ImageAndResourcesRestartTheContainer) {
  Rollout r = MakeRollout(kBurstable,
                          With(Template(kBurstableRequests, kBurstableLimits, "nginx:1.26"), "limits", "memory", "512Mi"),
                          kPodRequests, kPodLimits, 1);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<std::string> actions = Actions(*plan);
  ASSERT_EQ(actions.size(), 3u) << plan->DebugString();
  EXPECT_THAT(actions[0], HasSubstr("status cs-p0 start-in-place-update InPlaceUpdateReady=False"));
  EXPECT_EQ(actions[1], "resize cs-p0 in-place-update main:requests=:limits=memory=512Mi");
  EXPECT_THAT(actions[2], HasSubstr("images=main=nginx:1.26"));
  EXPECT_THAT(actions[2], ::testing::Not(HasSubstr("Updating")));
  const std::string state = plan->actions(2).patch_pod().set_annotations().at(kInPlaceStateAnnotation);
  EXPECT_THAT(state, HasSubstr(R"("updateResources":true,"updateImages":true)"));
}

TEST(ResizePlanTest, RestartContainerPolicyMakesThePodNotReady) {
  Rollout r = MakeRollout(kBurstable, With(kBurstable, "limits", "memory", "512Mi"), kPodRequests, kPodLimits, 1);
  r.request.mutable_pods(0)->mutable_containers(0)->add_restart_on_resize("memory");
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<std::string> actions = Actions(*plan);
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_THAT(actions[0], HasSubstr("InPlaceUpdateReady=False"));
  EXPECT_THAT(actions[2], ::testing::Not(HasSubstr("Updating")));

  // A cpu-only resize with the memory policy restarts nothing: the pod stays ready.
  Rollout cpu = MakeRollout(kBurstable, With(kBurstable, "limits", "cpu", "300m"), kPodRequests, kPodLimits, 1);
  cpu.request.mutable_pods(0)->mutable_containers(0)->add_restart_on_resize("memory");
  absl::StatusOr<pb::PlanResponse> cpu_plan = testing::PlanBothEncodings(cpu.request);
  ASSERT_TRUE(cpu_plan.ok());
  EXPECT_THAT(Actions(*cpu_plan), ElementsAre(HasSubstr("resize cs-p0"), HasSubstr("Updating")));
}

TEST(ResizePlanTest, GateOffRecreates) {
  Rollout r = MakeRollout(kBurstable, With(kBurstable, "limits", "cpu", "300m"), kPodRequests, kPodLimits, 1);
  r.request.mutable_feature_gates()->set_in_place_workload_vertical_scaling(false);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(Actions(*plan), ElementsAre("delete cs-p0 pvcs="));
  bool why = false;
  for (const pb::Event& e : plan->events()) {
    if (e.reason() == "InPlaceUpdateNotPossible") {
      why = true;
      EXPECT_THAT(e.message(), HasSubstr("template spec.containers[0].resources.limits.cpu changed"));
    }
  }
  EXPECT_TRUE(why);
}

TEST(ResizePlanTest, PodAlreadyAtTheTargetResourcesIsNotResizedAgain) {
  // A pod resized earlier (e.g. a plan whose patch failed after the resize) gets only the patch.
  Rollout r = MakeRollout(kBurstable, With(kBurstable, "limits", "cpu", "300m"), kPodRequests,
                          {{"cpu", "300m"}, {"memory", "256Mi"}}, 1);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(Actions(*plan), ElementsAre(HasSubstr("patch cs-p0 in-place-update")));
}

TEST(ResizePlanTest, LaterBatchResizesAfterTheFirstIsReady) {
  // Two containers with launch priorities: "main" (higher) first, then "side" resized in the next batch.
  Json old_t = kBurstable;
  old_t["spec"]["containers"].push_back(
      {{"name", "side"}, {"image", "busybox:1"},
       {"resources", {{"requests", {{"cpu", "50m"}}}, {"limits", {{"cpu", "100m"}}}}}});
  Json new_t = With(old_t, "limits", "cpu", "300m");
  new_t["spec"]["containers"][1]["resources"]["limits"]["cpu"] = "200m";
  Rollout r = MakeRollout(old_t, new_t, kPodRequests, kPodLimits, 1);
  pb::Pod& pod = *r.request.mutable_pods(0);
  pb::Container* side = pod.add_containers();
  side->set_name("side");
  side->set_image("busybox:1");
  (*side->mutable_resource_requests())["cpu"] = "50m";
  (*side->mutable_resource_limits())["cpu"] = "100m";
  pb::ContainerStatus* side_status = pod.add_container_statuses();
  side_status->set_name("side");
  side_status->set_image("busybox:1");
  *side_status->mutable_resource_requests() = side->resource_requests();
  *side_status->mutable_resource_limits() = side->resource_limits();
  pod.mutable_containers(0)->set_launch_priority(1);
  side->set_launch_priority(0);

  absl::StatusOr<pb::PlanResponse> first = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Actions(*first), ElementsAre("resize cs-p0 in-place-update main:requests=:limits=cpu=300m",
                                           HasSubstr("patch cs-p0 in-place-update")));
  const std::string state = first->actions(1).patch_pod().set_annotations().at(kInPlaceStateAnnotation);
  EXPECT_THAT(state, HasSubstr(R"("nextContainerResources":{"side":{"limits":{"cpu":"200m"}}})"));
  EXPECT_THAT(state, HasSubstr(R"("preCheckBeforeNext":{"containersRequiredReady":["main"]})"));

  ApplyWrites(*first, r.request);
  KubeletResizes(pod);
  pod.mutable_container_statuses(0)->set_ready(true);
  absl::StatusOr<pb::PlanResponse> second = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Actions(*second), ElementsAre("resize cs-p0 next-batch side:requests=:limits=cpu=200m",
                                            HasSubstr("patch cs-p0 next-batch")));
}

TEST(ResizePlanTest, GracePeriodResizesWhenItEnds) {
  Rollout r = MakeRollout(kBurstable, With(kBurstable, "limits", "cpu", "300m"), kPodRequests, kPodLimits, 1);
  r.request.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->set_grace_period_seconds(10);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_THAT(Actions(*plan), ElementsAre(HasSubstr("patch cs-p0 in-place-update")));
  EXPECT_THAT(plan->actions(0).patch_pod().set_annotations().at(kInPlaceGraceAnnotation),
              HasSubstr(R"("containerResources":{"main":{"limits":{"cpu":"300m"}}})"));
  ApplyWrites(*plan, r.request);
  *r.request.mutable_now() = testing::Ts(Now() + absl::Seconds(11));
  absl::StatusOr<pb::PlanResponse> later = testing::PlanBothEncodings(r.request);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_THAT(Actions(*later), ElementsAre("resize cs-p0 finish-grace main:requests=:limits=cpu=300m",
                                           HasSubstr("patch cs-p0 finish-grace")));
}

}  // namespace
}  // namespace cloneset::planner
