// The executor's writes of an in-place resize (reconciler.h): the pods/resize patch under the snapshot's version,
// the PatchPod after it at the version the resize returned (retried when only the kubelet's status moved on since),
// and an API server without the subresource turning the InPlaceWorkloadVerticalScaling gate off.
#include <string>
#include <vector>

#include "executor/reconciler.h"
#include "executor/testing/mocks.h"
#include "executor/testing/reconciler_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Return;
using ::testing::Truly;
using kube::PatchType;
using testing::kKey;

constexpr char kPodPath[] = "/api/v1/namespaces/ns/pods/cs-a";
constexpr char kResizePath[] = "/api/v1/namespaces/ns/pods/cs-a/resize";

// The pod as the snapshot holds it: container main at img:v1, cpu limit `cpu`.
pb::Pod SnapshotPod(int rv, const std::string& cpu = "200m") {
  pb::Pod p;
  p.mutable_metadata()->set_name("cs-a");
  p.mutable_metadata()->set_namespace_("ns");
  p.mutable_metadata()->set_uid("u-cs-a");
  p.mutable_metadata()->set_resource_version(std::to_string(rv));
  auto* c = p.add_containers();
  c->set_name("main");
  c->set_image("img:v1");
  (*c->mutable_resource_limits())["cpu"] = cpu;
  return p;
}

// The pod as the API server answers, with cpu limit `cpu` and `phase` (status moves on without the spec).
std::string PodJson(int rv, const std::string& cpu, const std::string& phase = "Running") {
  return R"({"metadata":{"name":"cs-a","namespace":"ns","uid":"u-cs-a","resourceVersion":")" + std::to_string(rv) +
         R"("},"spec":{"containers":[{"name":"main","image":"img:v1","resources":{"limits":{"cpu":")" + cpu +
         R"("}}}]},"status":{"phase":")" + phase + R"("}})";
}

absl::Status Conflict() {
  return kube::StatusFromHttp(409, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict",)"
                                   R"("code":409,"message":"the object has been modified"})");
}

// The planner's resize of cs-a to a cpu limit of 300m, then the patch that records it.
pb::PlanResponse ResizePlan() {
  pb::PlanResponse plan;
  pb::Action* resize = plan.add_actions();
  resize->set_stop_on_error(true);
  pb::ResizePod* r = resize->mutable_resize_pod();
  r->set_name("cs-a");
  r->set_uid("u-cs-a");
  r->set_resource_version("7");
  r->set_purpose("in-place-update");
  pb::ResizePod::ContainerResources* c = r->add_containers();
  c->set_name("main");
  (*c->mutable_limits())["cpu"] = "300m";
  pb::Action* patch = plan.add_actions();
  patch->set_stop_on_error(true);
  pb::PatchPod* p = patch->mutable_patch_pod();
  p->set_name("cs-a");
  p->set_uid("u-cs-a");
  p->set_resource_version("7");
  p->set_purpose("in-place-update");
  (*p->mutable_set_labels())["controller-revision-hash"] = "cs-2";
  return plan;
}

bool GateOn(const pb::PlanRequest& request) { return request.feature_gates().in_place_workload_vertical_scaling(); }

class ResizeApplyTest : public testing::ReconcilerFixture {
 protected:
  ResizeApplyTest() { ON_CALL(planner_, Validate(_)).WillByDefault(Return(pb::ValidateResponse())); }
  ReconcilerDeps GateDeps() {
    ReconcilerDeps deps = Deps();
    deps.feature_gates.set_in_place_workload_vertical_scaling(true);
    return deps;
  }
};

TEST_F(ResizeApplyTest, PatchFollowsTheResizeAtItsVersionAndRetriesAfterTheKubeletsStatusWrite) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{SnapshotPod(7)}));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(Truly(GateOn))).WillOnce(testing::AnswerLikeAPlanner(ResizePlan()));
  {
    InSequence seq;
    EXPECT_CALL(client_, Patch(kResizePath, PatchType::kStrategicMerge,
                               AllOf(HasSubstr(R"("resourceVersion":"7")"),
                                     HasSubstr(R"({"name":"main","resources":{"limits":{"cpu":"300m"}}})"))))
        .WillOnce(Return(PodJson(8, "300m")));
    // The kubelet took the resize up in between (version 9, status only): a conflict, then a retry at 9, checked
    // against the pod the resize returned (the snapshot's has the old cpu limit).
    EXPECT_CALL(client_, Patch(kPodPath, PatchType::kStrategicMerge, HasSubstr(R"("resourceVersion":"8")")))
        .WillOnce(Return(Conflict()));
    EXPECT_CALL(client_, Get(kPodPath)).WillOnce(Return(PodJson(9, "300m", "Running")));
    EXPECT_CALL(client_, Patch(kPodPath, PatchType::kStrategicMerge, HasSubstr(R"("resourceVersion":"9")")))
        .WillOnce(Return(PodJson(10, "300m")));
  }
  auto r = Reconciler(GateDeps()).Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "10"}}));
}

TEST_F(ResizeApplyTest, AResizeConflictWithAChangedSpecStopsThePlan) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{SnapshotPod(7)}));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(ResizePlan()));
  EXPECT_CALL(client_, Patch(kResizePath, PatchType::kStrategicMerge, _)).WillOnce(Return(Conflict()));
  // Someone resized it meanwhile: not the pod the planner saw. No retry, no PatchPod (StrictMock).
  EXPECT_CALL(client_, Get(kPodPath)).Times(2).WillRepeatedly(Return(PodJson(9, "1")));
  auto r = Reconciler(GateDeps()).Reconcile(kKey);
  EXPECT_TRUE(kube::IsConflict(r.error)) << r.error;
}

TEST_F(ResizeApplyTest, WithoutTheSubresourceResizesTurnIntoRecreation) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillRepeatedly(Return(std::vector<pb::Pod>{SnapshotPod(7)}));
  EXPECT_CALL(planner_, Validate(_)).WillRepeatedly(Return(pb::ValidateResponse()));
  Reconciler reconciler(GateDeps());
  EXPECT_CALL(planner_, Plan(Truly(GateOn))).WillOnce(testing::AnswerLikeAPlanner(ResizePlan()));
  EXPECT_CALL(client_, Patch(kResizePath, PatchType::kStrategicMerge, _))
      .WillOnce(Return(kube::StatusFromHttp(
          404, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,)"
               R"("message":"the server could not find the requested resource"})")));
  EXPECT_CALL(client_, Get(kPodPath)).WillOnce(Return(PodJson(7, "200m")));  // the pod is there
  EXPECT_CALL(events_, Event(_, "Warning", "PodResizeUnsupported",
                             HasSubstr("the API server does not serve pods/resize")));
  auto r = reconciler.Reconcile(kKey);
  EXPECT_TRUE(absl::IsFailedPrecondition(r.error)) << r.error;
  ::testing::Mock::VerifyAndClearExpectations(&client_);
  ::testing::Mock::VerifyAndClearExpectations(&planner_);
  ::testing::Mock::VerifyAndClearExpectations(&events_);

  // From now on the planner is asked without the gate (it recreates such pods).
  EXPECT_CALL(planner_, Validate(_)).WillRepeatedly(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(Truly([](const pb::PlanRequest& r) { return !GateOn(r); })))
      .WillOnce(testing::AnswerLikeAPlanner(pb::PlanResponse()));
  r = reconciler.Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
}

TEST_F(ResizeApplyTest, AResize404ForAPodThatIsGoneIsNoMissingSubresource) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{SnapshotPod(7)}));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(ResizePlan()));
  const absl::Status gone = kube::StatusFromHttp(
      404, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,)"
           R"("message":"pods \"cs-a\" not found","details":{"name":"cs-a","kind":"pods"}})");
  EXPECT_CALL(client_, Patch(kResizePath, PatchType::kStrategicMerge, _)).WillOnce(Return(gone));
  EXPECT_CALL(client_, Get(kPodPath)).WillOnce(Return(gone));
  EXPECT_CALL(events_, Event(_, _, "PodResizeUnsupported", _)).Times(0);
  Reconciler reconciler(GateDeps());
  auto r = reconciler.Reconcile(kKey);
  EXPECT_EQ(kube::HttpCode(r.error), 404) << r.error;
}

TEST_F(ResizeApplyTest, DiscoveryWithoutTheSubresourceSendsTheGateOff) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{SnapshotPod(7)}));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(Truly([](const pb::PlanRequest& r) { return !GateOn(r); })))
      .WillOnce(testing::AnswerLikeAPlanner(pb::PlanResponse()));
  ReconcilerDeps deps = GateDeps();
  deps.serves_pod_resize = false;
  EXPECT_TRUE(Reconciler(std::move(deps)).Reconcile(kKey).error.ok());
}

}  // namespace
}  // namespace cloneset::executor
