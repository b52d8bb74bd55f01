// The plan applier's stop rules, status and events, over an in-memory writer that answers each action with a
// scripted outcome (the executor's writer is covered with the API calls it makes in executor/reconciler_test.cc
// and apply_failures_test.cc).
#include "planapi/applier.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"

namespace cloneset::planapi {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

absl::Status Http(int code, const std::string& reason) {
  return kube::StatusFromHttp(code, R"({"kind":"Status","status":"Failure","reason":")" + reason +
                                        R"(","message":")" + reason + R"(","code":)" + std::to_string(code) + "}");
}

// Writes are recorded as "<type> <pod>"; an action's outcome is scripted by that string.
class ScriptedWriter : public PlanWriter {
 public:
  std::map<std::string, absl::Status> outcomes;
  bool may_write = true;
  int writes_allowed = 1000;  // MayWrite turns false after this many writes
  absl::StatusOr<bool> exists = true;
  std::vector<std::string> writes;
  std::vector<pb::CloneSetStatus> statuses;
  std::vector<std::string> events;

  bool MayWrite() override { return may_write && static_cast<int>(writes.size()) < writes_allowed; }
  absl::StatusOr<bool> CloneSetExists() override { return exists; }
  absl::Status Write(const pb::Action& action) override {
    std::string what(ActionType(action));
    if (action.has_create_pod()) what += " " + action.create_pod().revision();  // the test's pod name
    if (action.has_patch_pod()) what += " " + action.patch_pod().name();
    if (action.has_delete_pod()) what += " " + action.delete_pod().name();
    writes.push_back(what);
    auto it = outcomes.find(what);
    return it == outcomes.end() ? absl::OkStatus() : it->second;
  }
  absl::Status WriteStatus(const pb::CloneSetStatus& status) override {
    statuses.push_back(status);
    return absl::OkStatus();
  }
  void Event(std::string_view type, std::string_view reason, std::string_view message) override {
    events.push_back(std::string(type) + " " + std::string(reason));
  }
};

pb::Action Create(const std::string& pod, int batch) {
  pb::Action a;
  a.mutable_create_pod()->set_pod_json(R"({"metadata":{"name":")" + pod + R"("}})");
  a.mutable_create_pod()->set_revision(pod);
  a.mutable_create_pod()->set_batch(batch);
  return a;
}
pb::Action Patch(const std::string& pod, bool stop_on_error = false) {
  pb::Action a;
  a.mutable_patch_pod()->set_name(pod);
  a.set_stop_on_error(stop_on_error);
  return a;
}
pb::Action Delete(const std::string& pod) {
  pb::Action a;
  a.mutable_delete_pod()->set_name(pod);
  return a;
}

pb::PlanResponse Plan(std::vector<pb::Action> actions) {
  pb::PlanResponse plan;
  for (auto& a : actions) *plan.add_actions() = std::move(a);
  plan.set_write_status(true);
  plan.mutable_status()->set_replicas(3);
  pb::Event* e = plan.add_events();
  e->set_type(pb::NORMAL);
  e->set_reason("About-b");
  e->set_involved_pod("b");
  return plan;
}

const absl::Time kNow = absl::FromUnixSeconds(1767225600);

struct Case {
  std::string name;
  std::vector<pb::Action> actions;
  std::map<std::string, absl::Status> outcomes;
  std::vector<std::string> want_writes;
  bool want_status;
  std::string want_result;
  bool want_stopped;
  std::vector<std::string> want_events;
};

class ApplierTest : public ::testing::TestWithParam<Case> {};

TEST_P(ApplierTest, StopRulesStatusAndEvents) {
  const Case& tc = GetParam();
  ScriptedWriter w;
  w.outcomes = tc.outcomes;
  const ApplyResult r = PlanApplier().Apply(pb::CloneSet(), Plan(tc.actions), w, kNow);
  EXPECT_THAT(w.writes, ElementsAreArray(tc.want_writes));
  EXPECT_EQ(w.statuses.size(), tc.want_status ? 1u : 0u);
  EXPECT_EQ(r.result, tc.want_result) << r.error;
  EXPECT_EQ(!r.stopped.ok(), tc.want_stopped) << r.stopped;
  EXPECT_THAT(w.events, ElementsAreArray(tc.want_events));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ApplierTest,
    ::testing::Values(
        Case{"all_written", {Patch("a"), Patch("b")}, {}, {"PatchPod a", "PatchPod b"}, true, "success", false,
             {"Normal About-b"}},
        // A conflict means a stale snapshot: nothing more, no status, and no event of b, whose patch never started.
        Case{"conflict_stops",
             {Patch("a"), Patch("b"), Delete("c")},
             {{"PatchPod a", Http(409, "Conflict")}},
             {"PatchPod a"},
             false,
             "error",
             true,
             {}},
        // Any other failure is noted and the plan goes on: the status is still written. An error without an HTTP
        // code (the simulation's old Aborted / FailedPrecondition) is no stop either.
        Case{"not_found_goes_on",
             {Patch("a"), Patch("b")},
             {{"PatchPod a", Http(404, "NotFound")}, {"PatchPod b", absl::AbortedError("modified")}},
             {"PatchPod a", "PatchPod b"},
             true,
             "error",
             false,
             {}},
        Case{"stop_on_error_stops",
             {Patch("a", true), Patch("b")},
             {{"PatchPod a", Http(500, "InternalError")}},
             {"PatchPod a"},
             false,
             "error",
             true,
             {}},
        // b's creation in the next slow-start batch never started: the plan's event about b (its "succeed to
        // create pod") is not emitted, as it would be again on every retry.
        Case{"no_event_of_a_creation_never_started",
             {Create("a", 0), Create("b", 1)},
             {{"CreatePod a", Http(500, "InternalError")}},
             {"CreatePod a"},
             false,
             "error",
             true,
             {"Warning FailedCreate"}},
        // Slow start: the batch with a failure finishes, the next one does not start. The plan's status is not
        // written.
        Case{"failed_batch_ends_the_plan",
             {Create("a", 0), Create("b", 0), Create("c", 1), Patch("d")},
             {{"CreatePod a", Http(500, "InternalError")}},
             {"CreatePod a", "CreatePod b"},
             false,
             "error",
             true,
             {"Warning FailedCreate", "Normal About-b"}},
        // A refused creation (403: quota, a terminating namespace, admission) stops the creations after it, in its
        // batch too; the CloneSet's status with the ApplyFailed and FailedScale conditions is written.
        Case{"refused_creation_stops_the_creations",
             {Create("a", 0), Create("b", 0), Create("c", 1), Patch("d")},
             {{"CreatePod a", Http(403, "Forbidden")}},
             {"CreatePod a"},
             true,
             "error",
             true,
             {"Warning FailedCreate", "Warning ApplyFailed"}},
        Case{"failed_delete_event",
             {Delete("b")},
             {{"DeletePod b", Http(404, "NotFound")}},
             {"DeletePod b"},
             true,
             "error",
             false,
             {"Warning FailedDelete"}},
        // A transport error (no answer) is retried, no event.
        Case{"transport_error_no_event",
             {Delete("c")},
             {{"DeletePod c", absl::UnavailableError("connection reset")}},
             {"DeletePod c"},
             true,
             "error",
             false,
             {"Normal About-b"}}),
    [](const auto& info) { return info.param.name; });

TEST(ApplierTest, RefusedWriteSetsApplyFailedInTheStatus) {
  ScriptedWriter w;
  w.outcomes["PatchPod a"] = Http(422, "Invalid");
  const ApplyResult r = PlanApplier().Apply(pb::CloneSet(), Plan({Patch("a")}), w, kNow);
  ASSERT_EQ(w.statuses.size(), 1u);
  const pb::Condition* c = FindCondition(w.statuses[0], kApplyFailedConditionType);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason(), "Invalid");
  EXPECT_EQ(c->message(), "PatchPod a: Invalid (HTTP 422)");
  EXPECT_EQ(w.statuses[0].replicas(), 3);
  EXPECT_THAT(w.events, ElementsAre("Warning ApplyFailed", "Normal About-b"));
  EXPECT_EQ(r.result, "error");
}

TEST(ApplierTest, LostWritePermissionStopsAtOnce) {
  ScriptedWriter w;
  w.writes_allowed = 1;
  const ApplyResult r = PlanApplier().Apply(pb::CloneSet(), Plan({Patch("a"), Patch("b")}), w, kNow);
  EXPECT_THAT(w.writes, ElementsAre("PatchPod a"));
  EXPECT_THAT(w.statuses, IsEmpty());
  EXPECT_THAT(w.events, IsEmpty());
  EXPECT_EQ(r.result, "lost_shard");
}

TEST(ApplierTest, CreationsWaitForTheCloneSetToBeThere) {
  ScriptedWriter gone;
  gone.exists = false;
  EXPECT_EQ(PlanApplier().Apply(pb::CloneSet(), Plan({Create("a", 0)}), gone, kNow).result, "cloneset_gone");
  EXPECT_THAT(gone.writes, IsEmpty());
  ScriptedWriter unknown;
  unknown.exists = absl::UnavailableError("down");
  const ApplyResult r = PlanApplier().Apply(pb::CloneSet(), Plan({Create("a", 0)}), unknown, kNow);
  EXPECT_EQ(r.result, "error");
  EXPECT_TRUE(absl::IsUnavailable(r.error));
  EXPECT_THAT(unknown.writes, IsEmpty());
  // A plan without creations does not ask.
  ScriptedWriter patches;
  patches.exists = false;
  EXPECT_EQ(PlanApplier().Apply(pb::CloneSet(), Plan({Patch("a")}), patches, kNow).result, "success");
}

TEST(ApplierTest, RequeueAfterThePlansDelay) {
  ScriptedWriter w;
  pb::PlanResponse plan = Plan({});
  plan.mutable_requeue_after()->set_seconds(30);
  const ApplyResult r = PlanApplier().Apply(pb::CloneSet(), plan, w, kNow);
  EXPECT_EQ(r.result, "requeue_after");
  EXPECT_EQ(r.requeue_after, absl::Seconds(30));
}

// kube-apiserver's wording of refusals, as a Status with its message.
absl::Status Refused(int code, const std::string& reason, const std::string& message) {
  return kube::StatusFromHttp(code, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":")" + reason +
                                        R"(","code":)" + std::to_string(code) + R"(,"message":")" + message + R"("})");
}

TEST(RefusalCauseTest, FromTheApiServersWording) {
  struct Case {
    absl::Status refused;
    std::string want;
  };
  const std::vector<Case> cases = {
      {Refused(403, "Forbidden",
               R"(pods \"web-x\" is forbidden: unable to create new content in namespace ns because it is being )"
               "terminated"),
       "NamespaceTerminating"},
      {Refused(403, "Forbidden",
               R"(pods \"web-x\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3)"),
       "QuotaExceeded"},
      {Refused(403, "Forbidden",
               R"(pods \"web-x\" is forbidden: violates PodSecurity \"restricted:latest\": )"
               R"(allowPrivilegeEscalation != false (container \"main\" must set )"
               R"(securityContext.allowPrivilegeEscalation=false))"),
       "PodSecurity"},
      {Refused(400, "BadRequest", R"(admission webhook \"deny.example.com\" denied the request: no)"),
       "AdmissionDenied"},
      {Refused(403, "Forbidden",
               R"(pods \"web-x\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no)"),
       "AdmissionDenied"},
      {Refused(422, "Invalid", R"(Pod \"web-x\" is invalid: spec.containers[0].image: Required value)"), "Invalid"},
      {Refused(403, "Forbidden", R"(pods is forbidden: User \"x\" cannot create resource)"), "Forbidden"},
      {kube::StatusFromHttp(413, "too big"), "RequestEntityTooLarge"},
  };
  for (const Case& c : cases) EXPECT_EQ(RefusalCause(c.refused), c.want) << c.refused;
}

TEST(SameRefusalTest, TheObjectsNameDoesNotCount) {
  const auto quota = [](const std::string& pod, const std::string& used) {
    return ApplyFailedCondition(
        "CreatePod", pod,
        Refused(403, "Forbidden", "pods \\\"" + pod + "\\\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=" +
                                      used + ", limited: pods=" + used));
  };
  EXPECT_TRUE(SameRefusal(quota("web-abcde", "3"), quota("web-fghij", "3")));
  EXPECT_FALSE(SameRefusal(quota("web-abcde", "3"), quota("web-fghij", "4")));
  EXPECT_FALSE(SameRefusal(quota("web-abcde", "3"),
                           ApplyFailedCondition("CreatePod", "web-abcde", Refused(422, "Invalid", "bad"))));
  EXPECT_TRUE(SameRefusal(ApplyFailedCondition("WriteStatus", "", Refused(403, "Forbidden", "no")),
                          ApplyFailedCondition("WriteStatus", "", Refused(403, "Forbidden", "no"))));
}

// A refusal that lasts: the first attempt reports it (condition, FailedScale, two events); an attempt refused the
// same way under another pod name within the window writes nothing but the creation; after the window it is
// reported again; a clean plan removes both conditions.
TEST(ApplierTest, RefusalReportedOncePerWindow) {
  const auto refused = [](const std::string& pod) {
    return Refused(403, "Forbidden", "pods \\\"" + pod + "\\\" is forbidden: exceeded quota: q");
  };
  pb::CloneSet cs;
  ScriptedWriter first;
  first.outcomes["CreatePod a"] = refused("a");
  PlanApplier().Apply(cs, Plan({Create("a", 0)}), first, kNow);
  ASSERT_EQ(first.statuses.size(), 1u);
  EXPECT_THAT(first.events, ElementsAre("Warning FailedCreate", "Warning ApplyFailed", "Normal About-b"));
  const pb::Condition* fs = FindCondition(first.statuses[0], kFailedScaleConditionType);
  ASSERT_NE(fs, nullptr);
  EXPECT_EQ(fs->reason(), "FailedCreate");
  EXPECT_THAT(fs->message(), ::testing::HasSubstr("exceeded quota: q"));
  EXPECT_EQ(FindCondition(first.statuses[0], kApplyFailedConditionType)->reason(), "Forbidden");
  *cs.mutable_status() = first.statuses[0];

  ScriptedWriter again;
  again.outcomes["CreatePod b"] = refused("b");
  const ApplyResult r = PlanApplier().Apply(cs, Plan({Create("b", 0)}), again, kNow + absl::Minutes(9));
  EXPECT_EQ(r.result, "error");
  EXPECT_THAT(again.writes, ElementsAre("CreatePod b"));
  EXPECT_THAT(again.statuses, IsEmpty());
  EXPECT_THAT(again.events, IsEmpty());

  ScriptedWriter later;
  later.outcomes["CreatePod c"] = refused("c");
  PlanApplier().Apply(cs, Plan({Create("c", 0)}), later, kNow + absl::Minutes(10));
  EXPECT_EQ(later.statuses.size(), 1u);
  EXPECT_THAT(later.events, ElementsAre("Warning FailedCreate", "Warning ApplyFailed", "Normal About-b"));

  ScriptedWriter clean;
  pb::PlanResponse plan = Plan({Create("d", 0)});
  plan.set_write_status(false);
  PlanApplier().Apply(cs, plan, clean, kNow + absl::Minutes(11));
  ASSERT_EQ(clean.statuses.size(), 1u);
  EXPECT_EQ(FindCondition(clean.statuses[0], kApplyFailedConditionType), nullptr);
  EXPECT_EQ(FindCondition(clean.statuses[0], kFailedScaleConditionType), nullptr);
}

}  // namespace
}  // namespace cloneset::planapi
