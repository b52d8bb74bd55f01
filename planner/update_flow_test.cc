// End-to-end checks of the update stage through Plan(): the write budget of issue 2 (in-place update = 3 pod
// writes, ReCreate = DELETE pod + PVC now, the replacement by Scale).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/update_test_util.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::CloneSetBuilder;
using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::cloneset::planner::testing::PvcBuilder;
using ::cloneset::planner::testing::TemplateJson;
using ::cloneset::planner::update_testing::Describe;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::ControllerRevision StoredRevision(const pb::CloneSet& cs, int64_t number) {
  pb::ComputeRevisionRequest request;
  *request.mutable_clone_set() = cs;
  absl::StatusOr<pb::ComputeRevisionResponse> computed = ComputeRevision(request);
  EXPECT_TRUE(computed.ok()) << computed.status();
  pb::ControllerRevision revision;
  revision.mutable_metadata()->set_name(computed->name());
  revision.mutable_metadata()->set_namespace_(testing::kNamespace);
  revision.mutable_metadata()->set_resource_version("1");
  (*revision.mutable_metadata()->mutable_labels())["app"] = "demo";
  (*revision.mutable_metadata()->mutable_labels())[kRevisionHashLabel] = computed->hash();
  (*revision.mutable_metadata()->mutable_annotations())[kVctHashAnnotation] = computed->volume_claim_templates_hash();
  pb::OwnerReference* owner = revision.mutable_metadata()->add_owner_references();
  owner->set_api_version("apps.kruise.io/v1alpha1");
  owner->set_kind("CloneSet");
  owner->set_name(testing::kCloneSetName);
  owner->set_uid(testing::kCloneSetUid);
  owner->set_controller(true);
  *revision.mutable_metadata()->mutable_creation_timestamp() = testing::Ts(Now() - absl::Hours(24) + absl::Seconds(number));
  revision.set_revision(number);
  revision.set_data_json(computed->data_json());
  return revision;
}

pb::Pod RunningPod(const std::string& name, const std::string& revision) {
  return PodBuilder(name)
      .Revision(revision)
      .Label(kPodTemplateHashLabel, std::string(ShortHash(revision)))
      .Label(kInstanceLabel, testing::kCloneSetName)
      .Lifecycle(kStateNormal)
      .Node("n1")
      .Ready(Now() - absl::Hours(1))
      .ReadinessGate(kInPlaceUpdateReadyCondition)
      .Condition(kInPlaceUpdateReadyCondition, "True", Now() - absl::Hours(1));
}

struct Flow {
  pb::PlanRequest request;
  std::string old_revision;
  std::string new_revision;
};

Flow MakeFlow(const std::string& type, int replicas) {
  CloneSetBuilder old_cs = CloneSetBuilder().Replicas(replicas).UpdateType(type);
  CloneSetBuilder new_cs = CloneSetBuilder().Replicas(replicas).UpdateType(type).Template(TemplateJson("nginx:1.26"));
  Flow flow;
  pb::ControllerRevision r1 = StoredRevision(old_cs, 1);
  pb::ControllerRevision r2 = StoredRevision(new_cs, 2);
  flow.old_revision = r1.metadata().name();
  flow.new_revision = r2.metadata().name();
  std::vector<pb::Pod> pods;
  for (int i = 0; i < replicas; ++i) pods.push_back(RunningPod("cs-p" + std::to_string(i), flow.old_revision));
  pb::CloneSet cs = new_cs.Status(flow.old_revision, flow.old_revision);
  flow.request = testing::Request(cs, pods, {}, {r1, r2});
  return flow;
}

int PodWrites(const pb::PlanResponse& response, const std::string& pod) {
  int writes = 0;
  for (const pb::Action& a : response.actions()) {
    if ((a.has_patch_pod() && a.patch_pod().name() == pod) ||
        (a.has_patch_pod_status() && a.patch_pod_status().name() == pod) ||
        (a.has_delete_pod() && a.delete_pod().name() == pod)) {
      ++writes;
    }
  }
  return writes;
}

TEST(UpdateFlowTest, InPlaceUpdateTakesThreeWrites) {
  Flow flow = MakeFlow("InPlaceIfPossible", 1);
  absl::StatusOr<pb::PlanResponse> first = Plan(flow.request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->update_revision(), flow.new_revision);
  ASSERT_EQ(PodWrites(*first, "cs-p0"), 2) << first->DebugString();

  // The executor applies both writes; the kubelet restarts the container on the new image.
  pb::Pod& pod = *flow.request.mutable_pods(0);
  for (const pb::Action& a : first->actions()) {
    if (!a.has_patch_pod()) continue;
    for (const auto& [k, v] : a.patch_pod().set_labels()) (*pod.mutable_metadata()->mutable_labels())[k] = v;
    for (const auto& [k, v] : a.patch_pod().set_annotations()) (*pod.mutable_metadata()->mutable_annotations())[k] = v;
    for (const auto& [c, image] : a.patch_pod().container_images()) pod.mutable_containers(0)->set_image(image);
  }
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == kInPlaceUpdateReadyCondition) {
      c.set_status("False");
      c.set_reason("StartInPlaceUpdate");
    }
  }
  pod.mutable_container_statuses(0)->set_image("nginx:1.26");
  pod.mutable_container_statuses(0)->set_image_id("docker.io/library/nginx@sha256:26");
  pod.mutable_container_statuses(0)->set_container_id("containerd://new");
  *flow.request.mutable_clone_set()->mutable_status() = first->status();

  absl::StatusOr<pb::PlanResponse> second = Plan(flow.request);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Describe(second->actions(0)), "status cs-p0 in-place-update-ready InPlaceUpdateReady=True");
  EXPECT_EQ(PodWrites(*second, "cs-p0"), 1);
}

TEST(UpdateFlowTest, ReCreateDeletesPodAndPvcInOnePlan) {
  Flow flow = MakeFlow("ReCreate", 1);
  *flow.request.add_pvcs() = PvcBuilder("data-cs-p0", "p0");
  absl::StatusOr<pb::PlanResponse> plan = Plan(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(PodWrites(*plan, "cs-p0"), 1) << plan->DebugString();
  bool found = false;
  for (const pb::Action& a : plan->actions()) {
    if (a.has_delete_pod()) {
      EXPECT_THAT(Describe(a), "delete cs-p0 pvcs=data-cs-p0");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace cloneset::planner
