#include "planner/validation.h"

#include <functional>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/int_or_percent.h"
#include "planner/plan.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})";

pb::CloneSet Valid() {
  pb::CloneSet cs;
  cs.mutable_metadata()->set_name("demo");
  cs.mutable_metadata()->set_namespace_("default");
  cs.mutable_metadata()->set_uid("uid-1");
  cs.mutable_spec()->set_replicas(5);
  (*cs.mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "demo";
  cs.mutable_spec()->set_template_json(kTemplate);
  ApplyDefaults(&cs);
  return cs;
}

using Mutation = std::function<void(pb::CloneSet&)>;

struct RuleCase {
  std::string name;
  Mutation mutate;
  std::string field;    // "" = valid
  std::string message;  // substring
};

class CreateRuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(CreateRuleTest, Validates) {
  const RuleCase& c = GetParam();
  pb::CloneSet cs = Valid();
  c.mutate(cs);
  const std::vector<pb::FieldError> errors = ValidateCloneSet(cs, nullptr, {});
  if (c.field.empty()) {
    EXPECT_TRUE(errors.empty()) << errors[0].field() << ": " << errors[0].message();
    return;
  }
  ASSERT_EQ(errors.size(), 1u) << (errors.empty() ? "no errors" : errors[0].field() + ": " + errors[0].message());
  EXPECT_EQ(errors[0].field(), c.field);
  EXPECT_TRUE(absl::StrContains(errors[0].message(), c.message)) << errors[0].message();
}

pb::UpdateStrategy& Us(pb::CloneSet& cs) { return *cs.mutable_spec()->mutable_update_strategy(); }

INSTANTIATE_TEST_SUITE_P(
    Semantics22, CreateRuleTest,
    ::testing::Values(
        RuleCase{"valid", [](pb::CloneSet&) {}, "", ""},
        RuleCase{"name_not_dns", [](pb::CloneSet& cs) { cs.mutable_metadata()->set_name("Demo_1"); }, "metadata.name",
                 "DNS subdomain"},
        RuleCase{"negative_replicas", [](pb::CloneSet& cs) { cs.mutable_spec()->set_replicas(-1); }, "spec.replicas",
                 "greater than or equal to 0"},
        RuleCase{"empty_selector",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->clear_selector();
                   cs.mutable_spec()->set_template_json(
                       R"({"spec":{"containers":[{"name":"main","image":"nginx"}]}})");
                 },
                 "spec.selector", "empty selector is invalid for cloneset"},
        RuleCase{"selector_mismatch",
                 [](pb::CloneSet& cs) { (*cs.mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "x"; },
                 "spec.template.metadata.labels", "`selector` does not match template `labels`"},
        RuleCase{"selector_bad_operator",
                 [](pb::CloneSet& cs) {
                   auto* e = cs.mutable_spec()->mutable_selector()->add_match_expressions();
                   e->set_key("tier");
                   e->set_operator_("Maybe");
                 },
                 "spec.selector.matchExpressions[0].operator", "not one of"},
        RuleCase{"template_not_json", [](pb::CloneSet& cs) { cs.mutable_spec()->set_template_json("{oops"); },
                 "spec.template", "not valid JSON"},
        RuleCase{"template_no_containers",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(R"({"metadata":{"labels":{"app":"demo"}},"spec":{}})");
                 },
                 "spec.template.spec.containers", "at least one container"},
        RuleCase{"container_without_image",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main"}]}})");
                 },
                 "spec.template.spec.containers[0].image", "required"},
        RuleCase{"template_field_go_cannot_decode",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"x","ports":[{"containerPort":"80"}]}]}})");
                 },
                 "spec.template.spec.containers[0].ports[0].containerPort", "cannot decode a JSON string into Go int32"},
        RuleCase{"template_quantity_go_cannot_parse",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"x","resources":{"limits":{"memory":"1K"}}}]}})");
                 },
                 "spec.template.spec.containers[0].resources.limits.memory", "unable to parse quantity's suffix"},
        RuleCase{"restart_policy_never",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"x"}]}})");
                 },
                 "spec.template.spec.restartPolicy", "Always"},
        RuleCase{"active_deadline",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"activeDeadlineSeconds":5,"containers":[{"name":"main","image":"x"}]}})");
                 },
                 "spec.template.spec.activeDeadlineSeconds", "not Supported"},
        RuleCase{"deep_template",
                 [](pb::CloneSet& cs) { cs.mutable_spec()->set_template_json(std::string(100, '[') + std::string(100, ']')); },
                 "spec.template", "nested deeper than 64"},
        RuleCase{"volume_mount_of_nothing",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"x","volumeMounts":[{"name":"data","mountPath":"/d"},{"name":"gone","mountPath":"/g"}]}]}})");
                   cs.mutable_spec()->add_volume_claim_templates_json(R"({"metadata":{"name":"data"}})");
                 },
                 "spec.template.spec.containers[0].volumeMounts[1].name", "Not found: \"gone\""},
        RuleCase{"volume_mounts_of_template_volume_and_claim_template_ok",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_template_json(
                       R"({"metadata":{"labels":{"app":"demo"}},"spec":{"volumes":[{"name":"cfg","emptyDir":{}}],"initContainers":[{"name":"i","image":"x","volumeMounts":[{"name":"cfg","mountPath":"/c"}]}],"containers":[{"name":"main","image":"x","volumeMounts":[{"name":"data","mountPath":"/d"}]}]}})");
                   cs.mutable_spec()->add_volume_claim_templates_json(R"({"metadata":{"name":"data"}})");
                 },
                 "", ""},
        RuleCase{"vct_without_name",
                 [](pb::CloneSet& cs) { cs.mutable_spec()->add_volume_claim_templates_json(R"({"spec":{}})"); },
                 "spec.volumeClaimTemplates[0].metadata.name", "required"},
        RuleCase{"vct_field_go_cannot_decode",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->add_volume_claim_templates_json(
                       R"({"metadata":{"name":"data"},"spec":{"accessModes":"ReadWriteOnce"}})");
                 },
                 "spec.volumeClaimTemplates[0].spec.accessModes", "cannot decode a JSON string"},
        RuleCase{"pods_to_delete_duplicates",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->mutable_scale_strategy()->add_pods_to_delete("demo-a");
                   cs.mutable_spec()->mutable_scale_strategy()->add_pods_to_delete("demo-a");
                 },
                 "spec.scaleStrategy.podsToDelete", "duplicated items: [demo-a]"},
        RuleCase{"pods_to_delete_unknown_pod",
                 [](pb::CloneSet& cs) { cs.mutable_spec()->mutable_scale_strategy()->add_pods_to_delete("demo-zz"); },
                 "spec.scaleStrategy.podsToDelete", "find pod demo-zz failed"},
        RuleCase{"type_on_delete_v1alpha1", [](pb::CloneSet& cs) { Us(cs).set_type("OnDelete"); }, "", ""},
        // OnDelete has no rolling update: rolling fields the decoder did not drop are not checked.
        RuleCase{"type_on_delete_ignores_rolling_fields",
                 [](pb::CloneSet& cs) {
                   Us(cs).set_type("OnDelete");
                   Us(cs).mutable_max_unavailable()->set_int_value(0);
                   Us(cs).mutable_max_surge()->set_str_value("5");
                 },
                 "", ""},
        RuleCase{"type_on_delete_v1beta1",
                 [](pb::CloneSet& cs) {
                   cs.set_api_version("apps.kruise.io/v1beta1");
                   Us(cs).set_type("OnDelete");
                 },
                 "", ""},
        RuleCase{"type_unknown", [](pb::CloneSet& cs) { Us(cs).set_type("Rolling"); }, "spec.updateStrategy.type",
                 "\"Rolling\" is not one of"},
        RuleCase{"partition_negative", [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_int_value(-1); },
                 "spec.updateStrategy.partition", "must not be negative"},
        RuleCase{"partition_above_replicas_allowed", [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_int_value(9); },
                 "", ""},
        RuleCase{"partition_two_dots", [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_str_value("12.5.%"); },
                 "spec.updateStrategy.partition", "\"12.5.%\" is not a valid percentage"},
        RuleCase{"partition_fraction_ok", [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_str_value("12.5%"); },
                 "", ""},
        RuleCase{"max_unavailable_bare_number",
                 [](pb::CloneSet& cs) { Us(cs).mutable_max_unavailable()->set_str_value("5"); },
                 "spec.updateStrategy.maxUnavailable", "must end in %"},
        RuleCase{"max_surge_bare_number", [](pb::CloneSet& cs) { Us(cs).mutable_max_surge()->set_str_value("5"); },
                 "spec.updateStrategy.maxSurge", "\"5\" is not a valid percentage (a string value must end in %"},
        RuleCase{"partition_bare_number", [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_str_value("5"); },
                 "spec.updateStrategy.partition", "must end in %"},
        RuleCase{"max_surge_garbage", [](pb::CloneSet& cs) { Us(cs).mutable_max_surge()->set_str_value("lots"); },
                 "spec.updateStrategy.maxSurge", "not a valid percentage"},
        RuleCase{"in_place_only_with_surge",
                 [](pb::CloneSet& cs) {
                   Us(cs).set_type("InPlaceOnly");
                   Us(cs).mutable_max_surge()->set_int_value(1);
                 },
                 "spec.updateStrategy.maxSurge", "InPlaceOnly"},
        RuleCase{"both_budgets_zero", [](pb::CloneSet& cs) { Us(cs).mutable_max_unavailable()->set_int_value(0); },
                 "spec.updateStrategy.maxUnavailable", "should not both be less than 1"},
        RuleCase{"both_zero_percent_rounds_up_ok",
                 [](pb::CloneSet& cs) { Us(cs).mutable_max_unavailable()->set_str_value("1%"); }, "", ""},
        RuleCase{"both_zero_with_no_replicas_ok",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_replicas(0);
                   Us(cs).mutable_max_unavailable()->set_int_value(0);
                 },
                 "", ""},
        RuleCase{"weight_and_order",
                 [](pb::CloneSet& cs) {
                   auto* p = Us(cs).mutable_priority_strategy();
                   auto* w = p->add_weight_priority();
                   w->set_weight(50);
                   (*w->mutable_match_selector()->mutable_match_labels())["a"] = "b";
                   p->add_order_priority()->set_ordered_key("k");
                 },
                 "spec.updateStrategy.priorityStrategy", "only one of"},
        RuleCase{"weight_out_of_range",
                 [](pb::CloneSet& cs) {
                   auto* w = Us(cs).mutable_priority_strategy()->add_weight_priority();
                   w->set_weight(101);
                   (*w->mutable_match_selector()->mutable_match_labels())["a"] = "b";
                 },
                 "spec.updateStrategy.priorityStrategy.weightPriority[0].weight", "[0, 100]"},
        RuleCase{"weight_zero_passes",
                 [](pb::CloneSet& cs) {
                   auto* w = Us(cs).mutable_priority_strategy()->add_weight_priority();
                   w->set_weight(0);
                   (*w->mutable_match_selector()->mutable_match_labels())["a"] = "b";
                 },
                 "", ""},
        RuleCase{"weight_empty_selector",
                 [](pb::CloneSet& cs) { Us(cs).mutable_priority_strategy()->add_weight_priority()->set_weight(5); },
                 "spec.updateStrategy.priorityStrategy.weightPriority[0].matchSelector", "can not be empty"},
        RuleCase{"order_empty_key", [](pb::CloneSet& cs) { Us(cs).mutable_priority_strategy()->add_order_priority(); },
                 "spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey", "can not be empty"},
        RuleCase{"scatter_empty_key", [](pb::CloneSet& cs) { Us(cs).add_scatter_strategy()->set_value("v"); },
                 "spec.updateStrategy.scatterStrategy[0].key", "should not be empty"},
        RuleCase{"scatter_duplicate",
                 [](pb::CloneSet& cs) {
                   for (int i = 0; i < 2; ++i) {
                     auto* t = Us(cs).add_scatter_strategy();
                     t->set_key("zone");
                     t->set_value("a");
                   }
                 },
                 "spec.updateStrategy.scatterStrategy[1]", "duplicated term zone:a"},
        RuleCase{"progress_deadline_not_above_min_ready",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_min_ready_seconds(30);
                   cs.mutable_spec()->set_progress_deadline_seconds(30);
                 },
                 "spec.progressDeadlineSeconds", "greater than minReadySeconds"},
        RuleCase{"progress_deadline_maxint_ok",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->set_min_ready_seconds(30);
                   cs.mutable_spec()->set_progress_deadline_seconds(INT32_MAX);
                 },
                 "", ""},
        RuleCase{"progress_deadline_negative",
                 [](pb::CloneSet& cs) { cs.mutable_spec()->set_progress_deadline_seconds(-5); },
                 "spec.progressDeadlineSeconds", "greater than or equal to 0"},
        RuleCase{"v1beta1_skips_progress_vs_min_ready",
                 [](pb::CloneSet& cs) {
                   cs.set_api_version("apps.kruise.io/v1beta1");
                   cs.mutable_spec()->set_min_ready_seconds(30);
                   cs.mutable_spec()->set_progress_deadline_seconds(30);
                 },
                 "", ""},
        RuleCase{"scale_max_unavailable_bad",
                 [](pb::CloneSet& cs) {
                   cs.mutable_spec()->mutable_scale_strategy()->mutable_max_unavailable()->set_str_value("x%");
                 },
                 "spec.scaleStrategy.maxUnavailable", "not a number"},
        RuleCase{"pvc_retention_unknown",
                 [](pb::CloneSet& cs) { cs.mutable_spec()->mutable_scale_strategy()->set_pvc_retention_policy("Keep"); },
                 "spec.scaleStrategy.pvcRetentionPolicy", "Delete, Retain"},
        RuleCase{"predownload_parallelism_percent",
                 [](pb::CloneSet& cs) { Us(cs).mutable_image_predownload_parallelism()->set_str_value("50%"); },
                 "spec.updateStrategy.imagePreDownloadParallelism", "no percentage"},
        RuleCase{"predownload_timeout_negative",
                 [](pb::CloneSet& cs) { Us(cs).set_image_predownload_timeout_seconds(-1); },
                 "spec.updateStrategy.imagePreDownloadTimeoutSeconds", "negative"},
        RuleCase{"min_ready_negative", [](pb::CloneSet& cs) { cs.mutable_spec()->set_min_ready_seconds(-1); },
                 "spec.minReadySeconds", "greater than or equal to 0"},
        RuleCase{"api_version_unknown", [](pb::CloneSet& cs) { cs.set_api_version("apps/v1"); }, "apiVersion",
                 "not supported"}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Update rules (§2.2 14-16)

struct UpdateCase {
  std::string name;
  Mutation mutate_new;
  std::string field;
  std::string message;
};

class UpdateRuleTest : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(UpdateRuleTest, Validates) {
  const UpdateCase& c = GetParam();
  pb::CloneSet old = Valid();
  old.mutable_spec()->mutable_update_strategy()->set_type("InPlaceOnly");
  pb::CloneSet cs = old;
  c.mutate_new(cs);
  const std::vector<pb::FieldError> errors = ValidateCloneSet(cs, &old, {});
  if (c.field.empty()) {
    EXPECT_TRUE(errors.empty()) << errors[0].field() << ": " << errors[0].message();
    return;
  }
  ASSERT_EQ(errors.size(), 1u) << (errors.empty() ? "no errors" : errors[0].field() + ": " + errors[0].message());
  EXPECT_EQ(errors[0].field(), c.field);
  EXPECT_TRUE(absl::StrContains(errors[0].message(), c.message)) << errors[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    Semantics22Update, UpdateRuleTest,
    ::testing::Values(
        UpdateCase{"replicas_change_ok", [](pb::CloneSet& cs) { cs.mutable_spec()->set_replicas(9); }, "", ""},
        UpdateCase{"selector_immutable",
                   [](pb::CloneSet& cs) {
                     (*cs.mutable_spec()->mutable_selector()->mutable_match_labels())["tier"] = "web";
                     cs.mutable_spec()->set_template_json(
                         R"({"metadata":{"labels":{"app":"demo","tier":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})");
                   },
                   "spec.selector", "field is immutable"},
        UpdateCase{"image_change_in_place_only_ok",
                   [](pb::CloneSet& cs) {
                     cs.mutable_spec()->set_template_json(
                         R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}})");
                   },
                   "", ""},
        UpdateCase{"env_change_in_place_only_rejected",
                   [](pb::CloneSet& cs) {
                     cs.mutable_spec()->set_template_json(
                         R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25","env":[{"name":"A","value":"1"}]}]}})");
                   },
                   "spec.template.spec", "only allowed to update images in spec for InPlaceOnly, but found add "
                                         "/containers/0/env"},
        UpdateCase{"label_change_in_place_only_ok",
                   [](pb::CloneSet& cs) {
                     cs.mutable_spec()->set_template_json(
                         R"({"metadata":{"labels":{"app":"demo","v":"2"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})");
                   },
                   "", ""},
        UpdateCase{"rename_rejected", [](pb::CloneSet& cs) { cs.mutable_metadata()->set_name("other"); },
                   "metadata.name", "immutable"},
        UpdateCase{"pods_to_delete_existing_entry_kept_ok",
                   [](pb::CloneSet& cs) { cs.mutable_spec()->set_replicas(4); }, "", ""}),
    [](const auto& info) { return info.param.name; });

pb::Pod OwnedPod(const std::string& name, const std::string& owner_uid, bool terminating) {
  pb::Pod pod;
  pod.mutable_metadata()->set_name(name);
  auto* ref = pod.mutable_metadata()->add_owner_references();
  ref->set_uid(owner_uid);
  ref->set_controller(true);
  if (terminating) pod.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(100);
  return pod;
}

TEST(PodsToDeleteTest, NewNamesMustBeLivePodsOfThisCloneSet) {
  const pb::Pod mine = OwnedPod("demo-a", "uid-1", false);
  const pb::Pod dying = OwnedPod("demo-b", "uid-1", true);
  const pb::Pod foreign = OwnedPod("demo-c", "uid-2", false);
  pb::CloneSet old = Valid();
  pb::CloneSet cs = old;
  for (const char* n : {"demo-a", "demo-b", "demo-c"}) cs.mutable_spec()->mutable_scale_strategy()->add_pods_to_delete(n);
  const std::vector<pb::FieldError> errors = ValidateCloneSet(cs, &old, {&mine, &dying, &foreign});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].message(), "pod demo-b already terminating");
  EXPECT_EQ(errors[1].message(), "pod demo-c owner is not this CloneSet");
  // Names already present in the old object are not re-checked.
  pb::CloneSet later = cs;
  EXPECT_TRUE(ValidateCloneSet(later, &cs, {}).empty());
}

// ---------------------------------------------------------------------------------------------------------------
// Defaulting (§1.1, §1.2, §2.1)

TEST(DefaultsTest, V1alpha1) {
  pb::CloneSet cs;
  cs.mutable_metadata()->set_name("demo");
  cs.mutable_spec()->set_template_json(kTemplate);
  ApplyDefaults(&cs);
  EXPECT_EQ(cs.api_version(), "apps.kruise.io/v1alpha1");
  EXPECT_EQ(cs.spec().replicas(), 1);
  EXPECT_EQ(cs.spec().selector().match_labels().at("app"), "demo");
  EXPECT_EQ(cs.spec().update_strategy().type(), "ReCreate");
  EXPECT_EQ(cs.spec().update_strategy().partition().int_value(), 0);
  EXPECT_EQ(cs.spec().update_strategy().max_unavailable().str_value(), "20%");
  EXPECT_EQ(cs.spec().update_strategy().max_surge().int_value(), 0);
  EXPECT_EQ(cs.spec().revision_history_limit(), 10);
  EXPECT_TRUE(cs.spec().scale_strategy().enable_pvc_reuse());
  EXPECT_EQ(cs.spec().scale_strategy().pvc_retention_policy(), "Delete");
}

TEST(DefaultsTest, V1beta1PvcReuseOffAndOnDeleteHasNoRollingFields) {
  pb::CloneSet cs;
  cs.set_api_version("apps.kruise.io/v1beta1");
  cs.mutable_spec()->set_template_json(kTemplate);
  cs.mutable_spec()->mutable_update_strategy()->set_type("OnDelete");
  cs.mutable_spec()->set_replicas(0);
  ApplyDefaults(&cs);
  EXPECT_FALSE(cs.spec().scale_strategy().enable_pvc_reuse());
  EXPECT_FALSE(HasValue(cs.spec().update_strategy().max_unavailable()));
  EXPECT_EQ(cs.spec().replicas(), 0);
}

TEST(DefaultsTest, ExplicitValuesKept) {
  pb::CloneSet cs = Valid();
  cs.mutable_spec()->mutable_update_strategy()->mutable_max_unavailable()->set_int_value(3);
  cs.mutable_spec()->mutable_scale_strategy()->set_enable_pvc_reuse(false);
  (*cs.mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "other";
  ApplyDefaults(&cs);
  EXPECT_EQ(cs.spec().update_strategy().max_unavailable().int_value(), 3);
  EXPECT_FALSE(cs.spec().scale_strategy().enable_pvc_reuse());
  EXPECT_EQ(cs.spec().selector().match_labels().at("app"), "other");
}

// ---------------------------------------------------------------------------------------------------------------
// Plan request sanity (never crash, INVALID_ARGUMENT naming the field)

pb::PlanRequest GoodRequest() {
  pb::PlanRequest req;
  *req.mutable_clone_set() = Valid();
  req.mutable_now()->set_seconds(1800000000);
  pb::Pod* pod = req.add_pods();
  pod->mutable_metadata()->set_name("demo-abcde");
  return req;
}

struct RequestCase {
  std::string name;
  std::function<void(pb::PlanRequest&)> mutate;
  std::string message_prefix;  // "" = OK
};

class PlanRequestTest : public ::testing::TestWithParam<RequestCase> {};

TEST_P(PlanRequestTest, Checks) {
  pb::PlanRequest req = GoodRequest();
  GetParam().mutate(req);
  const absl::Status s = Plan(req).status();  // the request checks as Plan makes them, pods included
  if (GetParam().message_prefix.empty()) {
    EXPECT_TRUE(s.ok()) << s;
    return;
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), GetParam().message_prefix)) << s;
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, PlanRequestTest,
    ::testing::Values(
        RequestCase{"good", [](pb::PlanRequest&) {}, ""},
        RequestCase{"missing_name", [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_metadata()->clear_name(); },
                    "metadata.name: required"},
        RequestCase{"missing_uid", [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_metadata()->clear_uid(); },
                    "metadata.uid: required"},
        RequestCase{"bad_api_version", [](pb::PlanRequest& r) { r.mutable_clone_set()->set_api_version("v2"); },
                    "apiVersion: \"v2\""},
        RequestCase{"template_not_json",
                    [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_spec()->set_template_json("[1,"); },
                    "spec.template: is not valid JSON"},
        RequestCase{"template_array",
                    [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_spec()->set_template_json("[]"); },
                    "spec.template: must be a JSON object"},
        RequestCase{"template_deep",
                    [](pb::PlanRequest& r) {
                      std::string deep;
                      for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
                      r.mutable_clone_set()->mutable_spec()->set_template_json(deep);
                    },
                    "spec.template: is nested deeper"},
        RequestCase{"labels_not_strings",
                    [](pb::PlanRequest& r) {
                      r.mutable_clone_set()->mutable_spec()->set_template_json(R"({"metadata":{"labels":{"a":1}}})");
                    },
                    "spec.template.metadata.labels[a]: must be a string"},
        RequestCase{"partition_two_dots",
                    [](pb::PlanRequest& r) {
                      Us(*r.mutable_clone_set()).mutable_partition()->set_str_value("12.5.%");
                    },
                    "spec.updateStrategy.partition: \"12.5.%\" is not a valid percentage"},
        RequestCase{"max_unavailable_bare",
                    [](pb::PlanRequest& r) { Us(*r.mutable_clone_set()).mutable_max_unavailable()->set_str_value("5"); },
                    "spec.updateStrategy.maxUnavailable: \"5\""},
        RequestCase{"negative_replicas",
                    [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_spec()->set_replicas(-3); },
                    "spec.replicas: -3 must not be negative"},
        RequestCase{"unknown_type", [](pb::PlanRequest& r) { Us(*r.mutable_clone_set()).set_type("Blue"); },
                    "spec.updateStrategy.type: \"Blue\""},
        RequestCase{"bad_retention",
                    [](pb::PlanRequest& r) {
                      r.mutable_clone_set()->mutable_spec()->mutable_scale_strategy()->set_pvc_retention_policy("x");
                    },
                    "spec.scaleStrategy.pvcRetentionPolicy"},
        RequestCase{"missing_now", [](pb::PlanRequest& r) { r.clear_now(); }, "now: required"},
        RequestCase{"now_out_of_range", [](pb::PlanRequest& r) { r.mutable_now()->set_nanos(-1); }, "now: not a valid"},
        RequestCase{"pod_without_name", [](pb::PlanRequest& r) { r.mutable_pods(0)->mutable_metadata()->clear_name(); },
                    "pods[0].metadata.name: required"},
        RequestCase{"duplicate_pod", [](pb::PlanRequest& r) { *r.add_pods() = r.pods(0); },
                    "pods[1].metadata.name: duplicate"},
        RequestCase{"bad_condition_time",
                    [](pb::PlanRequest& r) {
                      r.mutable_pods(0)->add_conditions()->mutable_last_transition_time()->set_seconds(
                          300000000000LL);
                    },
                    "pods[0].status.conditions[0].lastTransitionTime: not a valid timestamp"},
        RequestCase{"bad_deletion_time",
                    [](pb::PlanRequest& r) {
                      r.mutable_pods(0)->mutable_metadata()->mutable_deletion_timestamp()->set_nanos(2000000000);
                    },
                    "pods[0].metadata.deletionTimestamp: not a valid timestamp"},
        RequestCase{"pvc_without_name", [](pb::PlanRequest& r) { r.add_pvcs(); }, "pvcs[0].metadata.name: required"},
        RequestCase{"vct_not_object",
                    [](pb::PlanRequest& r) { r.mutable_clone_set()->mutable_spec()->add_volume_claim_templates_json("1"); },
                    "spec.volumeClaimTemplates[0]: must be a JSON object"},
        RequestCase{"selector_in_without_values",
                    [](pb::PlanRequest& r) {
                      auto* e = r.mutable_clone_set()->mutable_spec()->mutable_selector()->add_match_expressions();
                      e->set_key("a");
                      e->set_operator_("In");
                    },
                    "spec.selector.matchExpressions[0].values: must be non-empty"},
        RequestCase{"status_condition_time",
                    [](pb::PlanRequest& r) {
                      r.mutable_clone_set()->mutable_status()->add_conditions()->mutable_last_update_time()->set_seconds(
                          -70000000000LL);
                    },
                    "status.conditions[0].lastUpdateTime"},
        RequestCase{"negative_grace",
                    [](pb::PlanRequest& r) { Us(*r.mutable_clone_set()).set_grace_period_seconds(-1); },
                    "spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace cloneset::planner
