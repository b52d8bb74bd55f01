#include "planner/plan.h"

#include <string>

#include "absl/strings/match.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "planner/context.h"
#include "planner/plan_limits.h"
#include "planner/predicates.h"
#include "planner/revision.h"
#include "planner/testing/both_encodings.h"

namespace cloneset::planner {
namespace {

using testing::PlanBothEncodings;

constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})";
const absl::Time kNow = absl::FromUnixSeconds(1800000000);

pb::PlanRequest Request(int32_t replicas, bool with_selector = true) {
  pb::PlanRequest req;
  pb::CloneSet* cs = req.mutable_clone_set();
  cs->mutable_metadata()->set_name("demo");
  cs->mutable_metadata()->set_namespace_("default");
  cs->mutable_metadata()->set_uid("uid-1");
  cs->mutable_metadata()->set_generation(1);
  cs->mutable_metadata()->set_resource_version("10");
  cs->mutable_spec()->set_replicas(replicas);
  if (with_selector) (*cs->mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "demo";
  cs->mutable_spec()->set_template_json(kTemplate);
  SetTimestamp(kNow, req.mutable_now());
  req.set_random_seed(42);
  return req;
}

// Adds the revision the template maps to, and `n` ready pods on it; the stored status matches them.
std::string Settle(pb::PlanRequest& req, int n) {
  pb::ComputeRevisionRequest cr;
  *cr.mutable_clone_set() = req.clone_set();
  absl::StatusOr<pb::ComputeRevisionResponse> rev = ComputeRevision(cr);
  EXPECT_TRUE(rev.ok()) << rev.status();
  pb::ControllerRevision* r = req.add_revisions();
  r->mutable_metadata()->set_name(rev->name());
  r->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  r->mutable_metadata()->mutable_owner_references(0)->set_controller(true);
  (*r->mutable_metadata()->mutable_labels())["app"] = "demo";
  (*r->mutable_metadata()->mutable_annotations())[kVctHashAnnotation] = rev->volume_claim_templates_hash();
  r->set_revision(1);
  r->set_data_json(rev->data_json());
  for (int i = 0; i < n; ++i) {
    pb::Pod* pod = req.add_pods();
    const std::string id = std::string("id00") + static_cast<char>('a' + i);
    pod->mutable_metadata()->set_name("demo-" + id);
    pod->mutable_metadata()->set_uid("pod-uid-" + id);
    pod->mutable_metadata()->set_resource_version("5");
    auto& labels = *pod->mutable_metadata()->mutable_labels();
    labels["app"] = "demo";
    labels[kRevisionLabel] = rev->name();
    labels[kPodTemplateHashLabel] = rev->hash();
    labels[kInstanceIdLabel] = id;
    labels[kLifecycleStateLabel] = kStateNormal;
    auto* ref = pod->mutable_metadata()->add_owner_references();
    ref->set_uid("uid-1");
    ref->set_controller(true);
    pod->set_node_name("node-1");
    pod->add_readiness_gates(kInPlaceUpdateReadyCondition);
    pb::Container* c = pod->add_containers();
    c->set_name("main");
    c->set_image("nginx:1.25");
    pod->set_phase("Running");
    for (const char* type : {"Ready", kInPlaceUpdateReadyCondition}) {
      pb::Condition* cond = pod->add_conditions();
      cond->set_type(type);
      cond->set_status("True");
      SetTimestamp(kNow - absl::Hours(1), cond->mutable_last_transition_time());
    }
    pb::ContainerStatus* cs = pod->add_container_statuses();
    cs->set_name("main");
    cs->set_image("nginx:1.25");
    cs->set_image_id("sha256:1");
    cs->set_ready(true);
  }
  pb::CloneSetStatus* st = req.mutable_clone_set()->mutable_status();
  st->set_observed_generation(1);
  st->set_replicas(n);
  st->set_ready_replicas(n);
  st->set_available_replicas(n);
  st->set_updated_replicas(n);
  st->set_updated_ready_replicas(n);
  st->set_updated_available_replicas(n);
  st->set_expected_updated_replicas(req.clone_set().spec().replicas());
  st->set_update_revision(rev->name());
  st->set_current_revision(rev->name());
  st->set_label_selector("app=demo");
  return rev->name();
}

int Count(const pb::PlanResponse& r, pb::Action::KindCase kind) {
  int n = 0;
  for (const pb::Action& a : r.actions()) n += a.kind_case() == kind;
  return n;
}

TEST(PlanTest, SteadyStateIsIdle) {
  pb::PlanRequest req = Request(2);
  const std::string rev = Settle(req, 2);
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->actions_size(), 0) << resp->DebugString();
  EXPECT_FALSE(resp->write_status());
  EXPECT_FALSE(resp->has_status());
  EXPECT_EQ(resp->current_revision(), rev);
  EXPECT_EQ(resp->update_revision(), rev);
  EXPECT_EQ(resp->summary().phase(), "idle");
  EXPECT_FALSE(resp->has_requeue_after());
}

TEST(PlanTest, MissingSelectorIsDefaultedOnceWithAnEvent) {
  pb::PlanRequest req = Request(2, /*with_selector=*/false);
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_GE(resp->actions_size(), 2);
  EXPECT_TRUE(resp->actions(0).has_create_revision());
  ASSERT_TRUE(resp->actions(1).has_patch_clone_set());
  EXPECT_EQ(resp->actions(1).patch_clone_set().merge_patch_json(), R"({"spec":{"selector":{"matchLabels":{"app":"demo"}}}})");
  EXPECT_EQ(resp->actions(1).patch_clone_set().purpose(), "default-selector");
  EXPECT_EQ(resp->actions(1).patch_clone_set().resource_version(), "10");
  ASSERT_GE(resp->events_size(), 1);
  EXPECT_EQ(resp->events(0).reason(), "SelectorDefaulted");
  EXPECT_EQ(resp->events(0).type(), pb::NORMAL);
  EXPECT_TRUE(resp->write_status());
  EXPECT_EQ(resp->status().label_selector(), "app=demo");
  EXPECT_EQ(Count(*resp, pb::Action::kCreatePod), 2);
  EXPECT_TRUE(resp->summary().scaling());

  // With the selector in place, no second defaulting write.
  pb::PlanRequest later = Request(2, /*with_selector=*/true);
  absl::StatusOr<pb::PlanResponse> again = PlanBothEncodings(later);
  ASSERT_TRUE(again.ok());
  for (const pb::Action& a : again->actions()) EXPECT_FALSE(a.has_patch_clone_set());
}

TEST(PlanTest, TemplateLabelsMustKeepMatchingTheSelector) {
  pb::PlanRequest req = Request(1);
  req.mutable_clone_set()->mutable_spec()->set_template_json(
      R"({"metadata":{"labels":{"app":"renamed"}},"spec":{"containers":[{"name":"main","image":"nginx"}]}})");
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(resp.status().message(),
            "spec.template.metadata.labels: {app=renamed} no longer match spec.selector \"app=demo\"; the selector "
            "is immutable, so keep the template labels it selects");
}

TEST(PlanTest, BadInputNamesTheField) {
  pb::PlanRequest req = Request(1);
  req.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->mutable_max_unavailable()->set_str_value("5");
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(resp.status().message(), "spec.updateStrategy.maxUnavailable: \"5\""))
      << resp.status();
  EXPECT_EQ(Plan(pb::PlanRequest()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlanTest, InvalidUtf8BecomesInvalidArgumentNotACrash) {
  // Found by the fuzzer (planner/fuzz/crashes/invalid_utf8_label_build_pod): the uid reaches the new pod's JSON.
  pb::PlanRequest req = Request(1);
  req.mutable_clone_set()->mutable_metadata()->set_uid("cs-uid\xd0");
  absl::StatusOr<pb::PlanResponse> plan = PlanBothEncodings(req);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "UTF-8")) << plan.status();
}

TEST(PlanTest, Deterministic) {
  pb::PlanRequest req = Request(5, false);
  Settle(req, 2);
  req.mutable_clone_set()->mutable_spec()->set_progress_deadline_seconds(600);
  req.mutable_clone_set()->mutable_spec()->set_min_ready_seconds(10);
  absl::StatusOr<pb::PlanResponse> a = PlanBothEncodings(req);
  absl::StatusOr<pb::PlanResponse> b = PlanBothEncodings(req);
  ASSERT_TRUE(a.ok() && b.ok());
  std::string sa, sb;
  google::protobuf::io::StringOutputStream oa(&sa), ob(&sb);
  {
    google::protobuf::io::CodedOutputStream ca(&oa), cb(&ob);
    ca.SetSerializationDeterministic(true);
    cb.SetSerializationDeterministic(true);
    a->SerializeToCodedStream(&ca);
    b->SerializeToCodedStream(&cb);
  }
  EXPECT_EQ(sa, sb);
  EXPECT_GT(a->actions_size(), 0);
}

TEST(PlanTest, DeletingCloneSetNeitherScalesNorUpdates) {
  pb::PlanRequest req = Request(3);
  Settle(req, 1);
  SetTimestamp(kNow - absl::Seconds(5), req.mutable_clone_set()->mutable_metadata()->mutable_deletion_timestamp());
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(Count(*resp, pb::Action::kCreatePod), 0);
  EXPECT_EQ(Count(*resp, pb::Action::kDeletePod), 0);
  EXPECT_FALSE(resp->summary().scaling());
}

TEST(PlanTest, PodsToDeleteTruncatedToClaimedPods) {
  pb::PlanRequest req = Request(2);
  Settle(req, 2);
  auto* ss = req.mutable_clone_set()->mutable_spec()->mutable_scale_strategy();
  ss->add_pods_to_delete("demo-gone1");
  ss->add_pods_to_delete("demo-id00a");
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  const pb::PatchCloneSet* truncate = nullptr;
  for (const pb::Action& a : resp->actions()) {
    if (a.has_patch_clone_set() && a.patch_clone_set().purpose() == "truncate-pods-to-delete") {
      truncate = &a.patch_clone_set();
    }
  }
  ASSERT_NE(truncate, nullptr) << resp->DebugString();
  EXPECT_EQ(truncate->merge_patch_json(), R"({"spec":{"scaleStrategy":{"podsToDelete":["demo-id00a"]}}})");
}

TEST(PlanTest, ProgressingStatusWrittenOnNewRollout) {
  pb::PlanRequest req = Request(2);
  Settle(req, 2);
  req.mutable_clone_set()->mutable_spec()->set_progress_deadline_seconds(600);
  req.mutable_clone_set()->mutable_spec()->set_template_json(
      R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}})");
  pb::Condition* old = req.mutable_clone_set()->mutable_status()->add_conditions();
  old->set_type("Progressing");
  old->set_status("True");
  old->set_reason("CloneSetAvailable");
  SetTimestamp(kNow - absl::Hours(48), old->mutable_last_update_time());
  SetTimestamp(kNow - absl::Hours(48), old->mutable_last_transition_time());
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_TRUE(resp->write_status());
  EXPECT_NE(resp->status().update_revision(), resp->status().current_revision());
  ASSERT_EQ(resp->status().conditions_size(), 1);
  EXPECT_EQ(resp->status().conditions(0).reason(), "CloneSetUpdated");
  EXPECT_EQ(ToTime(resp->status().conditions(0).last_update_time()), kNow);
  EXPECT_EQ(Count(*resp, pb::Action::kCreateRevision), 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Bounded plans: one CloneSet cannot make a plan of unbounded size or work.

TEST(PlanBoundsTest, HugeReplicasCreateABoundedBatchAndRequeue) {
  for (const int32_t replicas : {3000000, 2147483647}) {
    SCOPED_TRACE(replicas);
    absl::StatusOr<pb::PlanResponse> resp = Plan(Request(replicas));
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_EQ(Count(*resp, pb::Action::kCreatePod), kMaxCreationsPerPlan);
    EXPECT_EQ(resp->summary().scale_up(), kMaxCreationsPerPlan);
    EXPECT_EQ(resp->summary().scale_up_limited_to(), kMaxCreationsPerPlan);
    EXPECT_EQ(resp->summary().phase(), "scale-out");
    EXPECT_EQ(resp->requeue_after().seconds(), kScaleOutRequeueSeconds);
    EXPECT_LT(resp->ByteSizeLong(), size_t{256} << 20);
  }
}

TEST(PlanBoundsTest, BelowTheBoundsNothingIsCut) {
  absl::StatusOr<pb::PlanResponse> resp = Plan(Request(500));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(Count(*resp, pb::Action::kCreatePod), 500);
  EXPECT_EQ(resp->summary().scale_up_limited_to(), 0);
  EXPECT_FALSE(resp->has_requeue_after());
}

TEST(PlanBoundsTest, LargeTemplatesAreCutByTheByteBudget) {
  // A 1 MiB annotation in the template: the creations stop at kMaxCreationBytesPerPlan of documents.
  pb::PlanRequest req = Request(1000);
  req.mutable_clone_set()->mutable_spec()->set_template_json(
      R"({"metadata":{"labels":{"app":"demo"},"annotations":{"big":")" + std::string(1 << 20, 'x') +
      R"("}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})");
  absl::StatusOr<pb::PlanResponse> resp = Plan(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  const int created = Count(*resp, pb::Action::kCreatePod);
  EXPECT_GT(created, 0);
  EXPECT_LE(created, kMaxCreationBytesPerPlan / (1 << 20));
  EXPECT_EQ(resp->summary().scale_up(), created);
  EXPECT_EQ(resp->summary().scale_up_limited_to(), created);
  EXPECT_EQ(resp->requeue_after().seconds(), kScaleOutRequeueSeconds);
  int64_t bytes = 0;
  for (const pb::Action& a : resp->actions()) bytes += a.has_create_pod() ? a.create_pod().pod_json().size() : 0;
  EXPECT_LE(bytes, kMaxCreationBytesPerPlan);
}

// The predicate is the core's only view of the call's deadline: asked between stages and inside the creation
// loop, and a true answer abandons the plan with CANCELLED and an empty response.
TEST(PlanBoundsTest, CancelCheckAbandonsThePlan) {
  struct Case {
    std::string name;
    int answer_true_from;  // the call of the predicate that first answers true
  };
  for (const Case& c : {Case{"at_once", 1}, Case{"inside_the_creation_loop", 3}}) {
    SCOPED_TRACE(c.name);
    int asked = 0;
    const CancelCheck cancelled = [&] { return ++asked >= c.answer_true_from; };
    pb::PlanResponse response;
    const absl::Status s = PlanInto(Request(kMaxCreationsPerPlan), &response, cancelled);
    EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
    // It stopped at once: a plan that ran on would ask about 40 times (every 256 creations).
    EXPECT_GE(asked, c.answer_true_from);
    EXPECT_LE(asked, c.answer_true_from + 1);
    EXPECT_EQ(response.actions_size(), 0);
    EXPECT_FALSE(response.has_summary());
  }
  // Never true: the whole plan, and the predicate was asked along the way.
  int asked = 0;
  pb::PlanResponse response;
  ASSERT_TRUE(PlanInto(Request(kMaxCreationsPerPlan), &response, [&] { return ++asked < 0; }).ok());
  EXPECT_EQ(Count(response, pb::Action::kCreatePod), kMaxCreationsPerPlan);
  EXPECT_GE(asked, kMaxCreationsPerPlan / 256);
}

// ---------------------------------------------------------------------------------------------------------------
// Paused keeps only the surge pods of an update in flight; with nothing rolling out it scales in.

TEST(PlanTest, PausedScalesInWhenNothingRollsOut) {
  pb::PlanRequest req = Request(7);
  Settle(req, 10);
  pb::UpdateStrategy* us = req.mutable_clone_set()->mutable_spec()->mutable_update_strategy();
  us->set_paused(true);
  us->mutable_max_surge()->set_int_value(3);
  absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(Count(*resp, pb::Action::kDeletePod), 3) << resp->DebugString();
  EXPECT_EQ(resp->summary().scale_down(), 3);
  EXPECT_EQ(resp->summary().phase(), "scale-in");
}

// ---------------------------------------------------------------------------------------------------------------
// An unused old revision with unreadable data is skipped with a Warning event and deleted.

pb::ControllerRevision* AddRevision(pb::PlanRequest& req, const std::string& name, int64_t number,
                                    const std::string& data) {
  pb::ControllerRevision* r = req.add_revisions();
  r->mutable_metadata()->set_name(name);
  r->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  r->mutable_metadata()->mutable_owner_references(0)->set_controller(true);
  r->set_revision(number);
  r->set_data_json(data);
  return r;
}

TEST(PlanTest, CorruptOldRevisionIsSkippedAndDeleted) {
  struct Case {
    std::string name;
    std::string data;
    std::string problem;
  };
  for (const Case& c : {Case{"not_json", "{not json", "revision data: not valid JSON"},
                        Case{"not_an_object", "[1,2]", "revision data: must be a JSON object"},
                        Case{"no_template", R"({"spec":{}})", "revision data: no spec.template"},
                        Case{"too_deep", std::string(200, '[') + std::string(200, ']'),
                             "revision data: is nested deeper than 64 levels"}}) {
    SCOPED_TRACE(c.name);
    pb::PlanRequest req = Request(2);
    const std::string live = Settle(req, 2);
    req.mutable_clone_set()->mutable_spec()->set_revision_history_limit(5);
    AddRevision(req, "demo-corrupt", 0, c.data);
    absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_EQ(resp->update_revision(), live);
    ASSERT_EQ(resp->events_size(), 1) << resp->DebugString();
    EXPECT_EQ(resp->events(0).type(), pb::WARNING);
    EXPECT_EQ(resp->events(0).reason(), "InvalidRevision");
    EXPECT_EQ(resp->events(0).message(), "controller revision demo-corrupt is skipped: " + c.problem +
                                             "; it is deleted unless a pod still carries its label");
    ASSERT_EQ(resp->actions_size(), 1) << resp->DebugString();
    EXPECT_EQ(resp->actions(0).delete_revision().name(), "demo-corrupt");
  }
}

TEST(PlanTest, CorruptRevisionStillCarriedByAPodIsKept) {
  pb::PlanRequest req = Request(2);
  Settle(req, 2);
  AddRevision(req, "demo-corrupt", 0, "{not json");
  (*req.mutable_pods(0)->mutable_metadata()->mutable_labels())[kRevisionLabel] = "demo-corrupt";
  absl::StatusOr<pb::PlanResponse> resp = Plan(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(Count(*resp, pb::Action::kDeleteRevision), 0);
  ASSERT_GE(resp->events_size(), 1);
  EXPECT_EQ(resp->events(0).reason(), "InvalidRevision");
}

TEST(PlanTest, CorruptCurrentRevisionStillFails) {
  pb::PlanRequest req = Request(2);
  Settle(req, 2);
  req.mutable_clone_set()->mutable_spec()->set_template_json(
      R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}})");
  AddRevision(req, "demo-corrupt", 0, "{not json");
  req.mutable_clone_set()->mutable_status()->set_current_revision("demo-corrupt");
  absl::StatusOr<pb::PlanResponse> resp = Plan(req);
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(resp.status().message(), "revisions[demo-corrupt].data_json: ")) << resp.status();
}

// ---------------------------------------------------------------------------------------------------------------
// Plan never acts on a CloneSet that Validate rejects (one set of rules).

TEST(PlanTest, PlanRejectsWhatValidateRejects) {
  struct Case {
    std::string name;
    std::string template_json;           // empty: kTemplate
    void (*edit)(pb::CloneSet*) = nullptr;
    std::string field;                   // Validate's first error and the start of Plan's message
  };
  const std::vector<Case> cases = {
      {"containers_not_a_list", R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":7}})", nullptr,
       "spec.template.spec.containers"},
      {"no_containers", R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[]}})", nullptr,
       "spec.template.spec.containers"},
      {"no_spec", R"({"metadata":{"labels":{"app":"demo"}}})", nullptr, "spec.template.spec"},
      {"container_without_image", R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"m"}]}})",
       nullptr, "spec.template.spec.containers[0].image"},
      {"restart_policy_never",
       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"restartPolicy":"Never","containers":[{"name":"m","image":"x"}]}})",
       nullptr, "spec.template.spec.restartPolicy"},
      {"negative_min_ready_seconds", "", [](pb::CloneSet* cs) { cs->mutable_spec()->set_min_ready_seconds(-1); },
       "spec.minReadySeconds"},
      {"surge_with_in_place_only", "",
       [](pb::CloneSet* cs) {
         cs->mutable_spec()->mutable_update_strategy()->set_type("InPlaceOnly");
         cs->mutable_spec()->mutable_update_strategy()->mutable_max_surge()->set_int_value(1);
       },
       "spec.updateStrategy.maxSurge"},
      {"duplicate_pods_to_delete", "",
       [](pb::CloneSet* cs) {
         cs->mutable_spec()->mutable_scale_strategy()->add_pods_to_delete("demo-id00a");
         cs->mutable_spec()->mutable_scale_strategy()->add_pods_to_delete("demo-id00a");
       },
       "spec.scaleStrategy.podsToDelete"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::PlanRequest req = Request(2);
    Settle(req, 2);
    if (!c.template_json.empty()) req.mutable_clone_set()->mutable_spec()->set_template_json(c.template_json);
    if (c.edit != nullptr) c.edit(req.mutable_clone_set());
    pb::ValidateRequest vreq;
    *vreq.mutable_clone_set() = req.clone_set();
    *vreq.mutable_pods() = req.pods();
    absl::StatusOr<pb::ValidateResponse> validated = Validate(vreq);
    ASSERT_TRUE(validated.ok()) << validated.status();
    ASSERT_GE(validated->errors_size(), 1);
    EXPECT_EQ(validated->errors(0).field(), c.field);
    absl::StatusOr<pb::PlanResponse> plan = PlanBothEncodings(req);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << (plan.ok() ? plan->DebugString() : "");
    EXPECT_TRUE(absl::StartsWith(plan.status().message(), validated->errors(0).field() + ": ")) << plan.status();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// summary.phase says what the plan does.

TEST(PlanTest, PhaseNamesWhatThePlanDoes) {
  struct Case {
    std::string name;
    int32_t replicas;
    int pods;
    void (*edit)(pb::PlanRequest&);
    std::string phase;
  };
  const std::vector<Case> cases = {
      {"idle", 2, 2, [](pb::PlanRequest&) {}, "idle"},
      {"status_only", 2, 2, [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_status()->set_ready_replicas(0); },
       "status"},
      {"blocked_by_pause", 2, 2,
       [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->set_paused(true); },
       "blocked"},
      {"scale_out", 3, 2, [](pb::PlanRequest&) {}, "scale-out"},
      {"scale_in", 1, 2, [](pb::PlanRequest&) {}, "scale-in"},
      {"update", 2, 2,
       [](pb::PlanRequest& r) {
         r.mutable_clone_set()->mutable_spec()->set_template_json(
             R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}})");
       },
       "update"},
      {"refresh", 2, 2,
       [](pb::PlanRequest& r) { r.mutable_pods(0)->mutable_metadata()->mutable_labels()->erase(kPodTemplateHashLabel); },
       "refresh"},
      {"housekeeping", 2, 2,
       [](pb::PlanRequest& r) {
         r.mutable_clone_set()->mutable_spec()->set_revision_history_limit(0);
         AddRevision(r, "demo-older", 0, r.revisions(0).data_json() + " ");
       },
       "housekeeping"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::PlanRequest req = Request(c.replicas);
    Settle(req, c.pods);
    c.edit(req);
    absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_EQ(resp->summary().phase(), c.phase) << resp->DebugString();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// InPlaceUpdateReady=True only where needed: not in a plan that scales, never for a pod it deletes.

TEST(PlanTest, InPlaceReadyWrittenOnlyForPodsThatStay) {
  struct Case {
    std::string name;
    int32_t replicas;
    bool recreate = false;  // a new template: the ReCreate update deletes a pod
    bool want_write;
  };
  for (const Case& c : {Case{"steady", 3, false, true}, Case{"scale_in_deletes_it", 2, false, false},
                        Case{"scale_out", 4, false, false}, Case{"recreate_deletes_it", 3, true, false}}) {
    SCOPED_TRACE(c.name);
    pb::PlanRequest req = Request(c.replicas);
    Settle(req, 3);
    // demo-id00c is fresh: no InPlaceUpdateReady condition yet, so not ready.
    pb::Pod* fresh = req.mutable_pods(2);
    fresh->clear_conditions();
    pb::Condition* ready = fresh->add_conditions();
    ready->set_type("Ready");
    ready->set_status("False");
    SetTimestamp(kNow - absl::Minutes(1), ready->mutable_last_transition_time());
    if (c.recreate) {
      req.mutable_clone_set()->mutable_spec()->set_template_json(
          R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}})");
    }
    absl::StatusOr<pb::PlanResponse> resp = PlanBothEncodings(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
    int writes = 0;
    bool deleted = false;
    for (const pb::Action& a : resp->actions()) {
      if (a.has_patch_pod_status() && a.patch_pod_status().purpose() == "in-place-update-ready") ++writes;
      if (a.has_delete_pod() && a.delete_pod().name() == "demo-id00c") deleted = true;
    }
    EXPECT_EQ(writes, c.want_write ? 1 : 0) << resp->DebugString();
    EXPECT_EQ(deleted, !c.want_write && c.replicas <= 3) << resp->DebugString();
  }
}

TEST(ValidateRpcTest, DefaultsThenValidates) {
  pb::ValidateRequest req;
  req.mutable_clone_set()->mutable_metadata()->set_name("demo");
  req.mutable_clone_set()->mutable_spec()->set_template_json(kTemplate);
  absl::StatusOr<pb::ValidateResponse> resp = Validate(req);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->errors_size(), 0) << resp->errors(0).field();
  EXPECT_EQ(resp->defaulted().spec().selector().match_labels().at("app"), "demo");
  req.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->mutable_partition()->set_str_value("12.5.%");
  resp = Validate(req);
  ASSERT_TRUE(resp.ok());
  ASSERT_EQ(resp->errors_size(), 1);
  EXPECT_EQ(resp->errors(0).field(), "spec.updateStrategy.partition");
}

TEST(ComputeRevisionTest, NameHashAndExistence) {
  pb::ComputeRevisionRequest req;
  *req.mutable_clone_set() = Request(1).clone_set();
  absl::StatusOr<pb::ComputeRevisionResponse> first = ComputeRevision(req);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->name(), "demo-" + first->hash());
  EXPECT_FALSE(first->exists());
  EXPECT_EQ(first->hash(), RevisionHash(first->data_json(), 0));
  pb::ControllerRevision* r = req.add_revisions();
  r->mutable_metadata()->set_name(first->name());
  r->set_revision(1);
  r->set_data_json(first->data_json());
  absl::StatusOr<pb::ComputeRevisionResponse> second = ComputeRevision(req);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->exists());
  EXPECT_EQ(second->name(), first->name());
  req.mutable_clone_set()->mutable_spec()->set_template_json(std::string(200, '['));
  EXPECT_EQ(ComputeRevision(req).status().code(), absl::StatusCode::kInvalidArgument);
}

// The message names the field once (the shared vector compute_revision_error_template carries it to every client).
TEST(ComputeRevisionTest, BadTemplateNamesTheFieldOnce) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"spec\":", "spec.template: not valid JSON"},
      {"[1]", "spec.template: must be a JSON object"},
  };
  for (const auto& [template_json, message] : cases) {
    pb::ComputeRevisionRequest req;
    *req.mutable_clone_set() = Request(1).clone_set();
    req.mutable_clone_set()->mutable_spec()->set_template_json(template_json);
    const absl::Status status = ComputeRevision(req).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << template_json;
    EXPECT_EQ(std::string(status.message()), message) << template_json;
  }
}

}  // namespace
}  // namespace cloneset::planner
