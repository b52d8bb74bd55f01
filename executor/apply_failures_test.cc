// Refused writes are visible on the CloneSet (condition ApplyFailed + one Warning event), transport errors that a
// retry fixes are not Warning events (reconciler.h). Exact API calls against the mocks of ReconcilerFixture.
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
using ::testing::Not;
using ::testing::Return;
using kube::PatchType;
using testing::kKey;

constexpr char kStatusPath[] = "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status";
constexpr char kCloneSetPath[] = "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs";
constexpr char kTooLarge[] = "etcdserver: request is too large";

std::string Obj(const std::string& name, int rv) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"uid-1","resourceVersion":")" +
         std::to_string(rv) + R"("}})";
}

absl::Status Refusal(int code, const std::string& reason, const std::string& message) {
  return kube::StatusFromHttp(code, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" + reason +
                                        R"(","code":)" + std::to_string(code) + R"(,"message":")" + message + R"("})");
}

// What the HTTP client returns when the connection broke before any answer (no HTTP code).
absl::Status ConnectionBroke(const std::string& path) {
  return absl::UnavailableError("DELETE https://127.0.0.1:6443" + path + ": Write");
}

pb::Action CreatePod(const std::string& name) {
  pb::Action a;
  a.mutable_create_pod()->set_pod_json(Obj(name, 0));
  a.set_stop_on_error(true);
  return a;
}

pb::Action DeletePod(const std::string& name) {
  pb::Action a;
  a.mutable_delete_pod()->set_name(name);
  a.mutable_delete_pod()->set_uid("u-" + name);
  return a;
}

class ApplyFailuresTest : public testing::ReconcilerFixture {
 protected:
  ApplyFailuresTest() { ON_CALL(planner_, Validate(_)).WillByDefault(Return(pb::ValidateResponse())); }
  Reconciler Make() { return Reconciler(Deps()); }
  void PlanOnce(const pb::PlanResponse& plan) {
    EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  }
  // The CloneSet as the next snapshot shows it after our condition write.
  void CloneSetHas(const pb::Condition& c) { *cs_->mutable_status()->add_conditions() = c; }
};

TEST(ApplyFailedConditionTest, ReasonAndMessageFromTheApiServer) {
  struct Case {
    absl::Status refused;
    bool refused_rule;  // WriteRefused
    std::string reason;
    std::string message;
  };
  const std::vector<Case> cases = {
      {Refusal(413, "RequestEntityTooLarge", kTooLarge), true, "RequestEntityTooLarge",
       "CreatePod cs-a: etcdserver: request is too large (HTTP 413)"},
      {Refusal(403, "Forbidden", "pods is forbidden"), true, "Forbidden", "CreatePod cs-a: pods is forbidden (HTTP 403)"},
      {kube::StatusFromHttp(413, "too big"), true, "RequestEntityTooLarge", "CreatePod cs-a: HTTP 413: too big (HTTP 413)"},
      {kube::StatusFromHttp(418, "teapot"), true, "WriteRefused", "CreatePod cs-a: HTTP 418: teapot (HTTP 418)"},
      {Refusal(422, "Invalid", "spec: invalid"), true, "Invalid", "CreatePod cs-a: spec: invalid (HTTP 422)"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(WriteRefused(c.refused), c.refused_rule) << c.refused;
    const pb::Condition got = ApplyFailedCondition("CreatePod", "cs-a", c.refused);
    EXPECT_EQ(got.type(), "ApplyFailed");
    EXPECT_EQ(got.status(), "True");
    EXPECT_EQ(got.reason(), c.reason) << c.refused;
    EXPECT_EQ(got.message(), c.message) << c.refused;
  }
  // What the reconcile handles itself, and what a retry can fix, is no refusal.
  for (const absl::Status& s :
       {kube::StatusFromHttp(404, ""), Refusal(409, "Conflict", "modified"), Refusal(409, "AlreadyExists", "exists"),
        Refusal(429, "TooManyRequests", "slow down"), Refusal(500, "InternalError", "etcd timeout"),
        ConnectionBroke("/api/v1/namespaces/ns/pods/cs-a"), absl::OkStatus()}) {
    EXPECT_FALSE(WriteRefused(s)) << s;
  }
}

TEST(SetOwnConditionTest, KeepsTheTransitionTimeWhileTheStatusStays) {
  const absl::Time t0 = absl::FromUnixSeconds(1000), t1 = absl::FromUnixSeconds(2000);
  pb::CloneSetStatus status;
  pb::Condition c = ApplyFailedCondition("CreatePod", "cs-a", Refusal(403, "Forbidden", "no"));
  EXPECT_TRUE(SetOwnCondition(status, "ApplyFailed", &c, t0));
  EXPECT_FALSE(SetOwnCondition(status, "ApplyFailed", &c, t1)) << "same condition again: nothing new";
  ASSERT_EQ(status.conditions_size(), 1);
  EXPECT_EQ(status.conditions(0).last_transition_time().seconds(), 1000);
  EXPECT_EQ(status.conditions(0).last_update_time().seconds(), 2000);
  pb::Condition other = ApplyFailedCondition("PatchPod", "cs-b", Refusal(403, "Forbidden", "no"));
  EXPECT_TRUE(SetOwnCondition(status, "ApplyFailed", &other, t1)) << "another message is news";
  EXPECT_EQ(status.conditions(0).last_transition_time().seconds(), 1000);
  EXPECT_TRUE(SetOwnCondition(status, "ApplyFailed", nullptr, t1));
  EXPECT_EQ(status.conditions_size(), 0);
  EXPECT_FALSE(SetOwnCondition(status, "ApplyFailed", nullptr, t1));
}

// Every creation is refused (413): FailedCreate as upstream, plus one ApplyFailed event and the condition on the
// CloneSet. The next attempt refused the same way writes nothing more than the refused creation: no second
// ApplyFailed event, no second condition write.
TEST_F(ApplyFailuresTest, RefusedCreationSetsTheConditionOnceAndOneEvent) {
  pb::PlanResponse plan;
  *plan.add_actions() = CreatePod("cs-a");
  plan.set_write_status(true);
  PlanOnce(plan);
  {
    InSequence seq;
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(Obj("cs", 100)));
    EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-a", 0)))
        .WillOnce(Return(Refusal(413, "RequestEntityTooLarge", kTooLarge)));
    EXPECT_CALL(client_, Patch(kStatusPath, PatchType::kMerge,
                               AllOf(HasSubstr(R"("type":"ApplyFailed")"), HasSubstr(R"("status":"True")"),
                                     HasSubstr(R"("reason":"RequestEntityTooLarge")"),
                                     HasSubstr("CreatePod cs-a: etcdserver: request is too large (HTTP 413)"))))
        .WillOnce(Return(Obj("cs", 101)));
  }
  EXPECT_CALL(events_, Event(_, "Warning", "FailedCreate", HasSubstr(kTooLarge)));
  EXPECT_CALL(events_, Event(_, "Warning", "ApplyFailed", "CreatePod cs-a: etcdserver: request is too large (HTTP 413)"));
  auto r = Make().Reconcile(kKey);
  EXPECT_EQ(kube::HttpCode(r.error), 413);
  ::testing::Mock::VerifyAndClearExpectations(&client_);
  ::testing::Mock::VerifyAndClearExpectations(&events_);

  // The retry: the cache shows the condition; the same refusal is not news.
  CloneSetHas(ApplyFailedCondition("CreatePod", "cs-a", Refusal(413, "RequestEntityTooLarge", kTooLarge)));
  Expectations fresh(absl::Minutes(5));
  ReconcilerDeps deps = Deps();
  deps.expectations = &fresh;
  PlanOnce(plan);
  EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(Obj("cs", 101)));
  EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-a", 0)))
      .WillOnce(Return(Refusal(413, "RequestEntityTooLarge", kTooLarge)));
  EXPECT_CALL(events_, Event(_, "Warning", "FailedCreate", HasSubstr(kTooLarge)));
  EXPECT_CALL(events_, Event(_, _, "ApplyFailed", _)).Times(0);
  r = Reconciler(std::move(deps)).Reconcile(kKey);
  EXPECT_EQ(kube::HttpCode(r.error), 413);
}

// A refused write that does not stop the plan: the condition rides on the plan's own status write (one write).
TEST_F(ApplyFailuresTest, RefusalInAPlanThatWritesStatusGoesIntoThatStatusWrite) {
  pb::PlanResponse plan;
  *plan.add_actions() = DeletePod("cs-b");
  plan.set_write_status(true);
  plan.mutable_status()->set_replicas(3);
  PlanOnce(plan);
  {
    InSequence seq;
    EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/cs-b", _))
        .WillOnce(Return(Refusal(403, "Forbidden", "pods \\\"cs-b\\\" is forbidden")));
    EXPECT_CALL(client_, Patch(kStatusPath, PatchType::kMerge,
                               AllOf(HasSubstr(R"("replicas":3)"), HasSubstr(R"("type":"ApplyFailed")"),
                                     HasSubstr(R"("reason":"Forbidden")"))))
        .WillOnce(Return(Obj("cs", 101)));
  }
  EXPECT_CALL(events_, Event(_, "Warning", "FailedDelete", HasSubstr("forbidden")));
  EXPECT_CALL(events_, Event(_, "Warning", "ApplyFailed", R"(DeletePod cs-b: pods "cs-b" is forbidden (HTTP 403))"));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(absl::IsPermissionDenied(r.error)) << r.error;
}

// The issue's case: DELETE of a pod breaks on the connection (no answer), the retry deletes it. Neither attempt is
// a Warning event, and no condition is written.
TEST_F(ApplyFailuresTest, TransportErrorFixedByTheRetryIsNoWarning) {
  pb::PlanResponse plan;
  *plan.add_actions() = DeletePod("roll-855pl");
  EXPECT_CALL(events_, Event(_, "Warning", _, _)).Times(0);
  PlanOnce(plan);
  EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/roll-855pl", _))
      .WillOnce(Return(ConnectionBroke("/api/v1/namespaces/ns/pods/roll-855pl")));
  // No answer: the executor reads the pod back in case the delete was committed; the connection is still down.
  EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/roll-855pl"))
      .WillOnce(Return(ConnectionBroke("/api/v1/namespaces/ns/pods/roll-855pl")));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(absl::IsUnavailable(r.error));
  EXPECT_EQ(r.result, "error");
  ::testing::Mock::VerifyAndClearExpectations(&client_);

  PlanOnce(plan);
  EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/roll-855pl", _)).WillOnce(Return(Obj("roll-855pl", 7)));
  r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
}

// A transport error leaves an ApplyFailed condition from before as it is (nothing was learnt); a plan whose writes
// all go through removes it: in its status write when it has one, else with a write of its own.
TEST_F(ApplyFailuresTest, ConditionStaysOverTransportErrorsAndGoesAfterACleanApply) {
  CloneSetHas(ApplyFailedCondition("CreatePod", "cs-a", Refusal(403, "Forbidden", "no")));
  pb::PlanResponse failing;
  *failing.add_actions() = DeletePod("cs-b");
  PlanOnce(failing);
  EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/cs-b", _))
      .WillOnce(Return(ConnectionBroke("/api/v1/namespaces/ns/pods/cs-b")));
  EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/cs-b"))
      .WillOnce(Return(ConnectionBroke("/api/v1/namespaces/ns/pods/cs-b")));
  EXPECT_TRUE(absl::IsUnavailable(Make().Reconcile(kKey).error));
  ::testing::Mock::VerifyAndClearExpectations(&client_);

  // No status in the plan: a write of its own removes the condition.
  PlanOnce(failing);
  {
    InSequence seq;
    EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/cs-b", _)).WillOnce(Return(Obj("cs-b", 8)));
    EXPECT_CALL(client_, Patch(kStatusPath, PatchType::kMerge, Not(HasSubstr("ApplyFailed"))))
        .WillOnce(Return(Obj("cs", 102)));
  }
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  ::testing::Mock::VerifyAndClearExpectations(&client_);

  // With a status in the plan (the planner carries the old conditions over): that write leaves it out.
  Expectations fresh(absl::Minutes(5));
  ReconcilerDeps deps = Deps();
  deps.expectations = &fresh;
  pb::PlanResponse with_status;
  with_status.set_write_status(true);
  *with_status.mutable_status() = cs_->status();
  with_status.mutable_status()->set_replicas(2);
  PlanOnce(with_status);
  EXPECT_CALL(client_, Patch(kStatusPath, PatchType::kMerge, AllOf(HasSubstr(R"("replicas":2)"),
                                                                   Not(HasSubstr("ApplyFailed")))))
      .WillOnce(Return(Obj("cs", 103)));
  r = Reconciler(std::move(deps)).Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
}

// Without an ApplyFailed condition, a clean apply writes nothing extra (StrictMock client).
TEST_F(ApplyFailuresTest, CleanApplyWithoutTheConditionWritesNothingExtra) {
  pb::PlanResponse plan;
  *plan.add_actions() = DeletePod("cs-b");
  PlanOnce(plan);
  EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/cs-b", _)).WillOnce(Return(Obj("cs-b", 8)));
  EXPECT_TRUE(Make().Reconcile(kKey).error.ok());
}

}  // namespace
}  // namespace cloneset::executor
