#include "planner/plan.h"

#include <string>

#include "absl/strings/match.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "planner/context.h"
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

}  // namespace
}  // namespace cloneset::planner
