#include "planner/context_builder.h"

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kruise/keys.h"
#include "planner/predicates.h"
#include "planner/testing/both_encodings.h"

namespace cloneset::planner {
namespace {

constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})";

pb::CloneSet Base(int32_t replicas) {
  pb::CloneSet cs;
  cs.mutable_metadata()->set_name("demo");
  cs.mutable_metadata()->set_uid("uid-1");
  cs.mutable_spec()->set_replicas(replicas);
  cs.mutable_spec()->set_template_json(kTemplate);
  return cs;
}

pb::UpdateStrategy& Us(pb::CloneSet& cs) { return *cs.mutable_spec()->mutable_update_strategy(); }

struct SpecCase {
  std::string name;
  int32_t replicas;
  std::function<void(pb::CloneSet&)> mutate;
  // partition, maxSurge, maxUnavailable, expectedUpdated
  std::vector<int32_t> want;
  bool want_rolling = true;
};

class ResolveSpecTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(ResolveSpecTest, Resolves) {
  pb::CloneSet cs = Base(GetParam().replicas);
  GetParam().mutate(cs);
  absl::StatusOr<ResolvedSpec> r = ResolveSpec(cs, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((std::vector<int32_t>{r->partition, r->max_surge, r->max_unavailable, r->expected_updated_replicas}),
            GetParam().want);
  EXPECT_EQ(r->rolling_update, GetParam().want_rolling);
}

INSTANTIATE_TEST_SUITE_P(
    Rounding, ResolveSpecTest,
    ::testing::Values(
        SpecCase{"defaults_20pct_of_10_up", 10, [](pb::CloneSet&) {}, {0, 0, 2, 10}},
        SpecCase{"defaults_20pct_of_4_rounds_up_without_surge", 4, [](pb::CloneSet&) {}, {0, 0, 1, 4}},
        SpecCase{"surge_makes_unavailable_round_down", 4,
                 [](pb::CloneSet& cs) { Us(cs).mutable_max_surge()->set_int_value(1); }, {0, 1, 0, 4}},
        SpecCase{"surge_percent_rounds_up", 10, [](pb::CloneSet& cs) { Us(cs).mutable_max_surge()->set_str_value("25%"); },
                 {0, 3, 2, 10}},
        SpecCase{"paused_forces_surge_zero_and_rounds_up", 4,
                 [](pb::CloneSet& cs) {
                   Us(cs).mutable_max_surge()->set_int_value(2);
                   Us(cs).set_paused(true);
                 },
                 {0, 0, 1, 4}},
        SpecCase{"partition_percent", 5, [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_str_value("50%"); },
                 {3, 0, 1, 2}},
        SpecCase{"partition_clamped", 5, [](pb::CloneSet& cs) { Us(cs).mutable_partition()->set_int_value(10); },
                 {5, 0, 1, 0}},
        SpecCase{"fractional_max_unavailable", 8,
                 [](pb::CloneSet& cs) { Us(cs).mutable_max_unavailable()->set_str_value("12.5%"); }, {0, 0, 1, 8}},
        SpecCase{"on_delete_rounds_20pct_down", 4,
                 [](pb::CloneSet& cs) {
                   cs.set_api_version(kruise::kV1beta1);
                   Us(cs).set_type("OnDelete");
                   Us(cs).mutable_partition()->set_int_value(2);
                   Us(cs).mutable_max_surge()->set_int_value(2);
                 },
                 {0, 0, 0, 4}, false},
        SpecCase{"on_delete_10", 10, [](pb::CloneSet& cs) { Us(cs).set_type("OnDelete"); }, {0, 0, 2, 10}, false}),
    [](const auto& info) { return info.param.name; });

TEST(ResolveSpecTest, VersionDefaultsAndFlags) {
  pb::CloneSet cs = Base(3);
  cs.mutable_spec()->clear_replicas();
  absl::StatusOr<ResolvedSpec> alpha = ResolveSpec(cs, {});
  ASSERT_TRUE(alpha.ok());
  EXPECT_EQ(alpha->replicas, 1);
  EXPECT_TRUE(alpha->pvc_reuse);
  EXPECT_EQ(alpha->revision_history_limit, 10);
  EXPECT_EQ(alpha->scale_max_unavailable, INT32_MAX);
  EXPECT_FALSE(alpha->has_progress_deadline);
  cs.set_api_version(kruise::kV1beta1);
  cs.mutable_spec()->mutable_scale_strategy()->set_pvc_retention_policy("Retain");
  cs.mutable_spec()->mutable_scale_strategy()->mutable_max_unavailable()->set_str_value("50%");
  cs.mutable_spec()->set_progress_deadline_seconds(600);
  Us(cs).set_type("InPlaceIfPossible");
  pb::FeatureGates gates;
  gates.set_scaling_exclude_preparing_delete(true);
  absl::StatusOr<ResolvedSpec> beta = ResolveSpec(cs, gates);
  ASSERT_TRUE(beta.ok());
  EXPECT_FALSE(beta->pvc_reuse);
  EXPECT_TRUE(beta->retain_pvcs);
  EXPECT_EQ(beta->scale_max_unavailable, 1);
  EXPECT_TRUE(beta->has_progress_deadline);
  EXPECT_TRUE(beta->exclude_preparing_delete);
  EXPECT_EQ(beta->policy, PodUpdatePolicy::kInPlaceIfPossible);
  cs.mutable_spec()->set_progress_deadline_seconds(INT32_MAX);
  EXPECT_FALSE(ResolveSpec(cs, {})->has_progress_deadline);
}

// ---------------------------------------------------------------------------------------------------------------

TEST(SelectorTest, EffectiveSelectorDefaultsFromTemplate) {
  pb::CloneSet cs = Base(1);
  bool defaulted = false;
  absl::StatusOr<pb::LabelSelector> s = EffectiveSelector(cs, &defaulted);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(defaulted);
  EXPECT_EQ(common::LabelSelector::FromProto(*s, "spec.selector")->String(), "app=demo");
  (*cs.mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "demo";
  s = EffectiveSelector(cs, &defaulted);
  EXPECT_FALSE(defaulted);
  cs.mutable_spec()->clear_selector();
  cs.mutable_spec()->set_template_json(R"({"spec":{}})");
  EXPECT_EQ(EffectiveSelector(cs, &defaulted).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------------------------

pb::Pod Pod(const std::string& name, const std::string& owner, const std::string& app, bool controller = true) {
  pb::Pod p;
  p.mutable_metadata()->set_name(name);
  (*p.mutable_metadata()->mutable_labels())["app"] = app;
  auto* ref = p.mutable_metadata()->add_owner_references();
  ref->set_uid(owner);
  ref->set_controller(controller);
  p.set_phase("Running");
  return p;
}

std::vector<std::string> Names(const std::vector<const pb::Pod*>& pods) {
  std::vector<std::string> out;
  for (const pb::Pod* p : pods) out.push_back(p->metadata().name());
  return out;
}

TEST(BuildContextTest, SplitsAndSortsPodsAndPvcs) {
  pb::PlanRequest req;
  *req.mutable_clone_set() = Base(3);
  req.mutable_now()->set_seconds(1800000000);
  *req.add_pods() = Pod("demo-c", "uid-1", "demo");
  *req.add_pods() = Pod("demo-a", "uid-1", "demo");
  *req.add_pods() = Pod("demo-x", "uid-1", "other");  // no longer selected: released
  *req.add_pods() = Pod("demo-f", "uid-1", "demo");
  req.mutable_pods(3)->set_phase("Failed");
  *req.add_pods() = Pod("demo-d", "uid-1", "demo");
  req.mutable_pods(4)->mutable_metadata()->mutable_deletion_timestamp()->set_seconds(5);
  *req.add_pods() = Pod("demo-z", "uid-2", "demo");                // another CloneSet's pod
  *req.add_pods() = Pod("demo-b", "uid-1", "demo", false);         // owned, not controller: ours
  pb::PersistentVolumeClaim* keep = req.add_pvcs();
  keep->mutable_metadata()->set_name("data-demo-b");
  keep->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  pb::PersistentVolumeClaim* first = req.add_pvcs();
  first->mutable_metadata()->set_name("data-demo-a");
  first->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  pb::PersistentVolumeClaim* dying = req.add_pvcs();
  dying->mutable_metadata()->set_name("data-demo-c");
  dying->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  dying->mutable_metadata()->mutable_deletion_timestamp()->set_seconds(9);
  pb::PersistentVolumeClaim* foreign = req.add_pvcs();
  foreign->mutable_metadata()->set_name("data-other");
  foreign->mutable_metadata()->add_owner_references()->set_uid("uid-9");

  PlanBuilder plan;
  absl::StatusOr<PlanContext> ctx = BuildContext(req, plan);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ(Names(ctx->pods), (std::vector<std::string>{"demo-a", "demo-b", "demo-c"}));
  EXPECT_EQ(Names(ctx->inactive_pods), (std::vector<std::string>{"demo-d", "demo-f"}));
  EXPECT_EQ(Names(ctx->released_pods), (std::vector<std::string>{"demo-x"}));
  ASSERT_EQ(ctx->pvcs.size(), 2u);
  EXPECT_EQ(ctx->pvcs[0]->metadata().name(), "data-demo-a");
  EXPECT_EQ(ctx->pvcs[1]->metadata().name(), "data-demo-b");
  EXPECT_TRUE(ctx->selector_defaulted);
  EXPECT_EQ(ctx->selector_string, "app=demo");
  EXPECT_EQ(ctx->now, absl::FromUnixSeconds(1800000000));
  // No revisions yet: the update revision is created by this plan and is also the current one.
  EXPECT_FALSE(ctx->update_revision.empty());
  EXPECT_EQ(ctx->current_revision, ctx->update_revision);
  ASSERT_EQ(plan.response()->actions_size(), 1);
  EXPECT_TRUE(plan.response()->actions(0).has_create_revision());
}

// ClassifyPods sorts by the bytes after the common prefix packed into an integer; these names exercise short
// rests, equal packed prefixes that differ later, bytes above 0x7f and a name that is a prefix of another.
TEST(BuildContextTest, NameOrderIsByteOrder) {
  pb::PlanRequest req;
  *req.mutable_clone_set() = Base(8);
  req.mutable_now()->set_seconds(1800000000);
  const std::vector<std::string> names = {"demo-abcdefghij2", "demo-\xc3\xa9", "demo-abcdefghij1", "demo-b",
                                          "demo-abcdefgh",    "demo-a",         "demo-ab",         "demo-"};
  for (const std::string& name : names) *req.add_pods() = Pod(name, "uid-1", "demo");
  PlanBuilder plan;
  absl::StatusOr<PlanContext> ctx = BuildContext(req, plan);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  std::vector<std::string> want = names;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Names(ctx->pods), want);
  ASSERT_EQ(ctx->pod_facts.size(), want.size());
  ASSERT_EQ(ctx->pod_cold.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ctx->pod_cold[i].pod, ctx->pods[i]);
}

// From 256 pods on, the name order comes from a radix sort of the packed prefixes plus a comparison sort of
// equal ones. Shuffled names with bytes above 0x7f, names that share more than eight bytes after the common
// prefix, and names that are prefixes of others, sent as objects and as a pod table, come out in byte order.
TEST(BuildContextTest, NameOrderIsByteOrderAtScale) {
  pb::PlanRequest req;
  *req.mutable_clone_set() = Base(700);
  req.mutable_now()->set_seconds(1800000000);
  std::mt19937 random(7);
  const std::string alphabet = "ab09-z\xc3\xa9\xff";
  std::vector<std::string> names;
  for (int i = 0; i < 600; ++i) {
    std::string name = "demo-";
    const int length = 1 + static_cast<int>(random() % 14);
    for (int k = 0; k < length; ++k) name += alphabet[random() % alphabet.size()];
    if (i % 5 == 0) name = "demo-sharedprefix" + std::to_string(i);  // equal packed prefixes
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  names.push_back("demo-sharedprefix");  // a prefix of the shared ones
  std::shuffle(names.begin(), names.end(), random);
  for (const std::string& name : names) *req.add_pods() = Pod(name, "uid-1", "demo");
  std::vector<std::string> want = names;
  std::sort(want.begin(), want.end());

  PlanBuilder plan;
  absl::StatusOr<PlanContext> ctx = BuildContext(req, plan);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ(Names(ctx->pods), want);

  const pb::PlanRequest table_request = testing::WithPodTable(req);
  PlanBuilder table_plan;
  absl::StatusOr<PlanContext> table_ctx = BuildContext(table_request, table_plan);
  ASSERT_TRUE(table_ctx.ok()) << table_ctx.status();
  std::vector<std::string> table_names;
  for (const PodColdFacts& f : table_ctx->pod_cold) table_names.emplace_back(f.name);
  EXPECT_EQ(table_names, want);
}

// The first bad pod in request order is reported, whether it is a duplicate name or a bad timestamp.
struct BadPodCase {
  std::string name;
  std::function<void(pb::PlanRequest&)> mutate;
  std::string want;
};

class ClassifyPodsErrors : public ::testing::TestWithParam<BadPodCase> {};

TEST_P(ClassifyPodsErrors, FirstInRequestOrder) {
  pb::PlanRequest req;
  *req.mutable_clone_set() = Base(3);
  req.mutable_now()->set_seconds(1800000000);
  for (const char* name : {"demo-c", "demo-a", "demo-b"}) *req.add_pods() = Pod(name, "uid-1", "demo");
  GetParam().mutate(req);
  PlanBuilder plan;
  absl::StatusOr<PlanContext> ctx = BuildContext(req, plan);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ctx.status().message(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ClassifyPodsErrors,
    ::testing::Values(
        BadPodCase{"duplicate_is_the_later_one",
                   [](pb::PlanRequest& r) { *r.add_pods() = Pod("demo-a", "uid-1", "demo"); },
                   "pods[3].metadata.name: duplicate pod \"demo-a\""},
        BadPodCase{"earlier_bad_timestamp_wins",
                   [](pb::PlanRequest& r) {
                     *r.add_pods() = Pod("demo-a", "uid-1", "demo");
                     r.mutable_pods(2)->mutable_metadata()->mutable_creation_timestamp()->set_nanos(-1);
                   },
                   "pods[2].metadata.creationTimestamp: not a valid timestamp (seconds 0, nanos -1)"},
        BadPodCase{"missing_name",
                   [](pb::PlanRequest& r) { r.mutable_pods(1)->mutable_metadata()->clear_name(); },
                   "pods[1].metadata.name: required"},
        BadPodCase{"bad_condition_time",
                   [](pb::PlanRequest& r) {
                     pb::Condition* c = r.mutable_pods(0)->add_conditions();
                     c->set_type("Ready");
                     c->mutable_last_transition_time()->set_seconds(-99999999999999);
                   },
                   "pods[0].status.conditions[0].lastTransitionTime: not a valid timestamp (seconds -99999999999999, "
                   "nanos 0)"},
        BadPodCase{"foreign_pods_are_checked_too",
                   [](pb::PlanRequest& r) {
                     *r.add_pods() = Pod("zzz", "uid-other", "demo");
                     *r.add_pods() = Pod("zzz", "uid-other", "demo");
                   },
                   "pods[4].metadata.name: duplicate pod \"zzz\""}));

// Requests in name order (what the executor sends) take the planner's fast path, which finds them sorted and
// distinct in one pass over neighbours: a duplicate anywhere in them is still reported, in either encoding, at
// its later occurrence.
TEST(ClassifyPodsSortedTest, DuplicatesInANameOrderedRequest) {
  struct Case {
    std::vector<std::string> names;
    int duplicate;  // index of the later occurrence, -1 for none
  };
  const std::vector<Case> cases = {
      {{"demo-a", "demo-b", "demo-c", "demo-d"}, -1},
      {{"demo-a", "demo-a", "demo-b", "demo-c"}, 1},
      {{"demo-a", "demo-b", "demo-b", "demo-c"}, 2},
      {{"demo-a", "demo-b", "demo-c", "demo-c"}, 3},
      {{"demo-a", "demo-b", "demo-b", "demo-b"}, 2},
      {{"demo-a"}, -1},
      {{"demo-a", "demo-c", "demo-b", "demo-c"}, 3},  // unsorted after a strictly increasing start
  };
  for (const Case& c : cases) {
    pb::PlanRequest req;
    *req.mutable_clone_set() = Base(static_cast<int32_t>(c.names.size()));
    req.mutable_now()->set_seconds(1800000000);
    for (const std::string& name : c.names) *req.add_pods() = Pod(name, "uid-1", "demo");
    const std::string where = absl::StrJoin(c.names, ",");
    for (const bool table : {false, true}) {
      const pb::PlanRequest request = table ? testing::WithPodTable(req) : req;
      PlanBuilder plan;
      absl::StatusOr<PlanContext> ctx = BuildContext(request, plan);
      if (c.duplicate < 0) {
        ASSERT_TRUE(ctx.ok()) << where << ": " << ctx.status();
        std::vector<std::string> want = c.names;
        std::sort(want.begin(), want.end());
        ASSERT_EQ(ctx->pod_cold.size(), want.size()) << where;
        for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ctx->pod_cold[i].name, want[i]) << where;
        continue;
      }
      ASSERT_FALSE(ctx.ok()) << where << (table ? " (table)" : "");
      const std::string field =
          table ? absl::StrCat("pod_table.name[", c.duplicate, "]") : absl::StrCat("pods[", c.duplicate, "].metadata.name");
      EXPECT_EQ(ctx.status().message(),
                absl::StrCat(field, ": duplicate pod \"", c.names[static_cast<size_t>(c.duplicate)], "\""))
          << where;
    }
  }
}

TEST(JsonDepthTest, Limits) {
  EXPECT_TRUE(CheckJsonDepth(std::string(64, '[') + std::string(64, ']'), "f").ok());
  EXPECT_FALSE(CheckJsonDepth(std::string(65, '['), "f").ok());
  EXPECT_TRUE(CheckJsonDepth(R"({"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"["})", "f").ok());
}

}  // namespace
}  // namespace cloneset::planner
