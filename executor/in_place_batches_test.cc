// The executor asks the planner for in-place batches (PlanRequest.accept_in_place_batches) and expands them before
// anything reads the plan: a plan with a StartInPlaceUpdates action makes exactly the API writes and events of the
// same plan spelled out per pod.
#include <string>
#include <tuple>
#include <vector>

#include "base/testing/fake_clock.h"
#include "executor/reconciler.h"
#include "executor/testing/mocks.h"
#include "executor/testing/reconciler_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/testing/mock_rest_client.h"
#include "planapi/in_place_batches.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::StrictMock;
using kube::PatchType;

using testing::GatedPod;
using testing::kKey;

// What the API server answers to the status write of GatedPod(name): its metadata and spec at version `rv`.
std::string StatusWriteAnswer(const std::string& name, int rv) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"u-)" + name + R"(","resourceVersion":")" +
         std::to_string(rv) +
         R"(","labels":{"app":"web"},"creationTimestamp":"2023-11-14T22:13:20Z",)"
         R"("ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs","uid":"uid-1",)"
         R"("controller":true}]},)"
         R"("spec":{"nodeName":"n1","readinessGates":[{"conditionType":"InPlaceUpdateReady"}],)"
         R"("containers":[{"name":"main","image":"img:v1"}]},"status":{"phase":"Running"}})";
}

pb::Condition Cond(const std::string& type, const std::string& reason) {
  pb::Condition c;
  c.set_type(type);
  c.set_status("False");
  c.set_reason(reason);
  c.mutable_last_transition_time()->set_seconds(1700000500);
  return c;
}

// Two gated pods, cs-a ready (its status write also sets Ready=False) and cs-b not, between two other events.
pb::PlanResponse BatchedPlan() {
  pb::PlanResponse plan;
  pb::StartInPlaceUpdates* b = plan.add_actions()->mutable_start_in_place_updates();
  b->mutable_status_patch()->set_purpose("start-in-place-update");
  *b->mutable_status_patch()->add_set_conditions() = Cond("InPlaceUpdateReady", "StartInPlaceUpdate");
  b->set_status_stop_on_error(true);
  *b->mutable_not_ready_condition() = Cond("Ready", "ReadinessGatesNotReady");
  b->mutable_patch()->set_purpose("in-place-update");
  (*b->mutable_patch()->mutable_set_labels())["controller-revision-hash"] = "cs-v2";
  (*b->mutable_patch()->mutable_container_images())["main"] = "img:v2";
  b->set_patch_stop_on_error(true);
  b->set_event_type(pb::NORMAL);
  b->set_event_reason("SuccessfulUpdatePodInPlace");
  b->set_event_message_prefix("successfully update pod ");
  b->set_event_message_suffix(" in-place(revision cs-v2)");
  b->set_events_before(1);
  for (const auto& [name, rv, not_ready] : {std::tuple{"cs-a", "7", true}, std::tuple{"cs-b", "8", false}}) {
    auto* t = b->add_targets();
    t->set_name(name);
    t->set_uid(std::string("u-") + name);
    t->set_resource_version(rv);
    t->set_in_place_update_state(std::string(R"({"revision":"cs-v2","pod":")") + name + R"("})");
    t->set_set_not_ready(not_ready);
  }
  for (const char* reason : {"Before", "After"}) {
    pb::Event* e = plan.add_events();
    e->set_type(pb::NORMAL);
    e->set_reason(reason);
    e->set_message(reason);
  }
  return plan;
}

struct Write {
  std::string path;
  std::string body;
  bool operator==(const Write&) const = default;
};

class InPlaceBatchesTest : public testing::ReconcilerFixture {
 protected:
  InPlaceBatchesTest() {
    ON_CALL(cache_, PodsOwnedBy("ns", "uid-1"))
        .WillByDefault(Return(std::vector<pb::Pod>{GatedPod("cs-a", 7), GatedPod("cs-b", 8)}));
  }
  Reconciler Make(bool batches) {
    ReconcilerDeps deps = Deps();
    deps.planner_in_place_batches = batches;
    return Reconciler(std::move(deps));
  }

  // Reconciles once with the planner answering `plan`; returns the API writes made, in order, and records the
  // events emitted and the request sent.
  std::vector<Write> ApplyPlan(const pb::PlanResponse& plan) {
    std::vector<Write> writes;
    EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Plan(_)).WillOnce([&](const pb::PlanRequest& request) {
      sent_.push_back(request);
      return testing::AnswerLikeAPlanner(plan)(request);
    });
    int version = 20;
    EXPECT_CALL(client_, Patch(_, PatchType::kStrategicMerge, _))
        .WillRepeatedly([&](std::string_view path, PatchType, std::string_view body) -> absl::StatusOr<std::string> {
          writes.push_back({std::string(path), std::string(body)});
          const std::string name = path.find("cs-a") != std::string_view::npos ? "cs-a" : "cs-b";
          return StatusWriteAnswer(name, ++version);
        });
    events_seen_.clear();
    EXPECT_CALL(events_, Event(_, _, _, _))
        .WillRepeatedly([&](const pb::CloneSet&, std::string_view type, std::string_view reason,
                            std::string_view message) {
          events_seen_.push_back(std::string(type) + " " + std::string(reason) + ": " + std::string(message));
        });
    const ReconcileResult r = Make(true).Reconcile(kKey);
    EXPECT_TRUE(r.error.ok()) << r.error;
    ::testing::Mock::VerifyAndClearExpectations(&planner_);
    ::testing::Mock::VerifyAndClearExpectations(&client_);
    ::testing::Mock::VerifyAndClearExpectations(&events_);
    return writes;
  }

  std::vector<pb::PlanRequest> sent_;
  std::vector<std::string> events_seen_;
};

TEST_F(InPlaceBatchesTest, RequestAcceptsBatchesUnlessTurnedOff) {
  const std::vector<pb::Pod> pods = {GatedPod("cs-a", 7)};
  EXPECT_TRUE(Make(true).BuildRequest(kKey, *cs_, pods).request.accept_in_place_batches());
  EXPECT_FALSE(Make(false).BuildRequest(kKey, *cs_, pods).request.accept_in_place_batches());
  // The default of ReconcilerDeps (and of --planner_in_place_batches) is on.
  EXPECT_TRUE(ReconcilerDeps{}.planner_in_place_batches);
}

TEST_F(InPlaceBatchesTest, BatchMakesTheWritesAndEventsOfThePerPodPlan) {
  pb::PlanResponse per_pod = BatchedPlan();
  planapi::ExpandInPlaceBatches(&per_pod);
  ASSERT_EQ(per_pod.actions_size(), 4);

  const std::vector<Write> batched_writes = ApplyPlan(BatchedPlan());
  const std::vector<std::string> batched_events = events_seen_;
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_TRUE(sent_[0].accept_in_place_batches());
  const std::vector<Write> per_pod_writes = ApplyPlan(per_pod);

  EXPECT_EQ(batched_writes, per_pod_writes);
  // Status write then spec patch, pod by pod in target order; each spec patch at the version its status write
  // returned, with the pod's own in-place state.
  ASSERT_EQ(batched_writes.size(), 4u);
  EXPECT_EQ(batched_writes[0].path, "/api/v1/namespaces/ns/pods/cs-a/status");
  EXPECT_THAT(batched_writes[0].body, HasSubstr("InPlaceUpdateReady"));
  EXPECT_THAT(batched_writes[0].body, HasSubstr("ReadinessGatesNotReady"));
  EXPECT_EQ(batched_writes[1].path, "/api/v1/namespaces/ns/pods/cs-a");
  EXPECT_THAT(batched_writes[1].body, HasSubstr("\"resourceVersion\":\"21\""));
  EXPECT_THAT(batched_writes[1].body, HasSubstr("img:v2"));
  EXPECT_THAT(batched_writes[1].body, HasSubstr(R"(\"pod\":\"cs-a\")"));
  EXPECT_EQ(batched_writes[2].path, "/api/v1/namespaces/ns/pods/cs-b/status");
  EXPECT_THAT(batched_writes[2].body, HasSubstr("InPlaceUpdateReady"));
  EXPECT_THAT(batched_writes[2].body, ::testing::Not(HasSubstr("ReadinessGatesNotReady")));
  EXPECT_EQ(batched_writes[3].path, "/api/v1/namespaces/ns/pods/cs-b");
  EXPECT_THAT(batched_writes[3].body, HasSubstr("\"resourceVersion\":\"23\""));
  EXPECT_THAT(batched_writes[3].body, HasSubstr(R"(\"pod\":\"cs-b\")"));

  EXPECT_EQ(batched_events, events_seen_);
  EXPECT_THAT(batched_events,
              ElementsAre("Normal Before: Before", "Normal SuccessfulUpdatePodInPlace: successfully update pod cs-a "
                                                   "in-place(revision cs-v2)",
                          "Normal SuccessfulUpdatePodInPlace: successfully update pod cs-b in-place(revision cs-v2)",
                          "Normal After: After"));
}

}  // namespace
}  // namespace cloneset::executor
