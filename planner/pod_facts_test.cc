#include "planner/pod_facts.h"
#include "planner/context_facts.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/context.h"
#include "planapi/pod_table.h"
#include "planner/predicates.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using testing::CloneSetBuilder;
using testing::MakeContext;
using testing::Now;
using testing::PodBuilder;
using testing::Request;

// Every fact must agree with the predicate it replaces (predicates.h / inplace.h read the protobuf directly).
struct FactsCase {
  std::string name;
  PodBuilder pod;
};

class FactsAgreeWithPredicates : public ::testing::TestWithParam<FactsCase> {};

TEST_P(FactsAgreeWithPredicates, OnePod) {
  const pb::Pod pod = GetParam().pod;
  const PodFacts f = ComputePodFacts(pod);
  EXPECT_EQ(f.name, pod.metadata().name());
  EXPECT_EQ(f.node_name, pod.node_name());
  EXPECT_EQ(f.revision, Label(pod.metadata(), kRevisionLabel));
  EXPECT_EQ(f.instance_id, InstanceId(pod));
  EXPECT_EQ(f.specified_delete_label, pod.metadata().labels().contains(kSpecifiedDeleteLabel));
  EXPECT_EQ(f.has_template_hash_label, pod.metadata().labels().contains(kPodTemplateHashLabel));
  EXPECT_EQ(f.in_place_gate, HasReadinessGate(pod, kInPlaceUpdateReadyCondition));
  EXPECT_EQ(f.uid, pod.metadata().uid());
  EXPECT_EQ(f.resource_version, pod.metadata().resource_version());
  const pb::Condition* ready = FindCondition(pod, "Ready");
  EXPECT_EQ(f.has_ready_condition, ready != nullptr);
  EXPECT_EQ(f.ready_false, ready != nullptr && ready->status() == "False");
  EXPECT_EQ(f.has_in_place_condition, FindCondition(pod, kInPlaceUpdateReadyCondition) != nullptr);
  const pb::Condition* containers_ready = FindCondition(pod, "ContainersReady");
  EXPECT_EQ(f.containers_ready, containers_ready != nullptr && containers_ready->status() == "True");
  EXPECT_EQ(f.k8s_ready, IsK8sReady(pod));
  EXPECT_EQ(f.created, ToTime(pod.metadata().creation_timestamp()));
  for (const int32_t min_ready : {0, 30, 7200}) {
    EXPECT_EQ(IsAvailable(f, min_ready, Now()), IsAvailable(pod, min_ready, Now())) << min_ready;
    EXPECT_EQ(IsUpdateReady(f, min_ready, Now()), IsUpdateReady(pod, min_ready, Now())) << min_ready;
  }
  for (const std::string revision : {"cs-1", "cs-2", "other-1", "1"}) {
    EXPECT_EQ(RevisionMatches(f, revision), RevisionMatches(pod, revision)) << revision;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, FactsAgreeWithPredicates,
    ::testing::Values(
        FactsCase{"plain_ready", PodBuilder("cs-a").Revision("cs-1").Ready(Now() - absl::Seconds(60)).Node("n1")},
        FactsCase{"not_ready_unscheduled", PodBuilder("cs-b").Revision("cs-2").NotReady()},
        FactsCase{"short_hash_label", PodBuilder("cs-c").Revision("2").Ready(Now() - absl::Hours(3))},
        FactsCase{"no_revision", PodBuilder("cs-d").Ready(Now())},
        FactsCase{"specified_delete_preparing", PodBuilder("cs-e")
                                                    .Revision("cs-1")
                                                    .SpecifiedDelete()
                                                    .Lifecycle(kStatePreparingDelete)
                                                    .Ready(Now() - absl::Seconds(5))},
        FactsCase{"gate_false", PodBuilder("cs-f")
                                    .Revision("cs-2")
                                    .Ready(Now() - absl::Seconds(90))
                                    .ReadinessGate(kInPlaceUpdateReadyCondition)
                                    .Condition(kInPlaceUpdateReadyCondition, "False", Now())},
        FactsCase{"pending_phase", PodBuilder("cs-g").Revision("cs-1").Phase("Pending")},
        FactsCase{"template_hash_and_restarts",
                  PodBuilder("cs-h").Revision("cs-1").Label(kPodTemplateHashLabel, "1").Restarts(4).Ready(Now())}));

TEST(PodFactsTest, AnnotationsCurrentKeyWinsUnlessEmpty) {
  const pb::Pod both = PodBuilder("cs-a")
                           .Annotation(kInPlaceStateAnnotation, R"({"revision":"cs-2"})")
                           .Annotation(kLegacyInPlaceStateAnnotation, R"({"revision":"old"})")
                           .Annotation(kLegacyInPlaceGraceAnnotation, "{}");
  PodFacts f = ComputePodFacts(both);
  EXPECT_EQ(f.in_place_state, R"({"revision":"cs-2"})");
  EXPECT_TRUE(f.has_legacy_state);
  EXPECT_EQ(f.in_place_grace, "{}");
  EXPECT_FALSE(f.has_grace_key);
  EXPECT_TRUE(f.has_legacy_grace);

  const pb::Pod empty_current = PodBuilder("cs-b")
                                    .Annotation(kInPlaceGraceAnnotation, "")
                                    .Annotation(kLegacyInPlaceGraceAnnotation, R"({"revision":"cs-1"})");
  f = ComputePodFacts(empty_current);
  EXPECT_EQ(f.in_place_grace, R"({"revision":"cs-1"})");
  EXPECT_TRUE(f.has_grace_key);
}

// The hot half says whether the cold half's in-place strings are empty, so that the stages' walks need not read
// them: an empty annotation under either key counts as none.
TEST(PodFactsTest, HotFlagsSayWhetherTheInPlaceStringsAreEmpty) {
  struct Case {
    std::string name;
    PodBuilder pod;
    bool state;
    bool grace;
  };
  const std::vector<Case> cases = {
      {"none", PodBuilder("cs-a"), false, false},
      {"state", PodBuilder("cs-b").Annotation(kInPlaceStateAnnotation, "{}"), true, false},
      {"empty_state", PodBuilder("cs-c").Annotation(kInPlaceStateAnnotation, ""), false, false},
      {"legacy_state", PodBuilder("cs-d").Annotation(kLegacyInPlaceStateAnnotation, "{}"), true, false},
      {"grace", PodBuilder("cs-e").Annotation(kInPlaceGraceAnnotation, "{}"), false, true},
      {"empty_grace_key", PodBuilder("cs-f").Annotation(kInPlaceGraceAnnotation, ""), false, false},
      {"legacy_grace", PodBuilder("cs-g").Annotation(kLegacyInPlaceGraceAnnotation, "{}"), false, true},
  };
  for (const Case& c : cases) {
    const pb::Pod pod = c.pod;
    const PodFacts f = ComputePodFacts(pod);
    EXPECT_EQ(f.has_in_place_state, c.state) << c.name;
    EXPECT_EQ(f.has_in_place_grace, c.grace) << c.name;
    EXPECT_EQ(f.has_in_place_state, !f.in_place_state.empty()) << c.name;
    EXPECT_EQ(f.has_in_place_grace, !f.in_place_grace.empty()) << c.name;
  }
}

TEST(PodFactsTest, MaxRestartsAndPhaseOrdinal) {
  pb::Pod pod = PodBuilder("cs-a").Restarts(2).Container("side", "busybox");
  pb::ContainerStatus* side = pod.add_container_statuses();
  side->set_name("side");
  side->set_restart_count(7);
  EXPECT_EQ(ComputePodFacts(pod).max_restarts, 7);
  for (const auto& [phase, ordinal] : std::vector<std::pair<std::string, int>>{
           {"Pending", 0}, {"Unknown", 1}, {"Running", 2}, {"Succeeded", 0}, {"", 0}}) {
    pod.set_phase(phase);
    EXPECT_EQ(ComputePodFacts(pod).phase_ordinal, ordinal) << phase;
  }
}

TEST(PodFactsTest, SelectorLabelsCountedOnlyOnExactMatch) {
  const pb::Pod pod = PodBuilder("cs-a").Label("tier", "web").Label("zone", "a");
  const std::vector<std::pair<std::string, std::string>> want = {{"app", "demo"}, {"tier", "web"}, {"zone", "b"}};
  size_t matched = 99;
  const PodFacts f = ComputePodFacts(pod, want, &matched, "cs-2", "cs-1");
  EXPECT_EQ(matched, 2u);  // app=demo and tier=web; zone differs
  EXPECT_FALSE(f.on_update_revision);
  EXPECT_FALSE(f.on_current_revision);
}

TEST(PodFactsTest, RevisionFlagsFollowTheContext) {
  const pb::PlanRequest request = Request(CloneSetBuilder().Replicas(2),
                                          {PodBuilder("cs-a").Revision("cs-1"), PodBuilder("cs-b").Revision("cs-2")});
  PlanContext ctx = MakeContext(request, ResolvedSpec(), "cs-1", "cs-2");
  ASSERT_EQ(ctx.pod_facts.size(), 2u);
  EXPECT_TRUE(ctx.pod_facts[0].on_current_revision);
  EXPECT_FALSE(ctx.pod_facts[0].on_update_revision);
  EXPECT_TRUE(ctx.pod_facts[1].on_update_revision);
  EXPECT_TRUE(OnRevision(ctx, FactsAt(ctx, 1), "cs-2"));

  // A test (or stage) that moves the update revision afterwards gets facts computed against the new one.
  ctx.update_revision = "cs-1";
  EXPECT_TRUE(FactsAt(ctx, 0).on_update_revision);
  std::vector<PodHotFacts> scratch;
  const std::vector<PodHotFacts>& all = AllFacts(ctx, scratch);
  EXPECT_EQ(&all, &scratch);
  EXPECT_TRUE(all[0].on_update_revision);
  EXPECT_FALSE(all[1].on_update_revision);
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  EXPECT_EQ(&cold, &cold_scratch);
  // Neither of the context's revisions: compares the labels.
  EXPECT_TRUE(OnRevision(ctx, all[1], cold[1], "cs-2"));
  EXPECT_FALSE(OnRevision(ctx, all[0], cold[0], "cs-2"));
  // The context's own strings are answered by the flags, whether passed themselves or as equal text.
  EXPECT_TRUE(OnRevision(ctx, all[0], cold[0], ctx.update_revision));
  EXPECT_TRUE(OnRevision(ctx, all[0], cold[0], std::string("cs-1")));
  EXPECT_FALSE(OnRevision(ctx, all[1], cold[1], ctx.update_revision));
}

TEST(PodFactsTest, AllFactsRecomputesForEditedPods) {
  const pb::PlanRequest request = Request(CloneSetBuilder().Replicas(2),
                                          {PodBuilder("cs-a").Revision("cs-1"), PodBuilder("cs-b").Revision("cs-2")});
  PlanContext ctx = MakeContext(request, ResolvedSpec(), "cs-1", "cs-2");
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  EXPECT_EQ(&AllFacts(ctx, scratch), &ctx.pod_facts);
  EXPECT_EQ(&AllColdFacts(ctx, cold_scratch), &ctx.pod_cold);
  std::swap(ctx.pods[0], ctx.pods[1]);
  const std::vector<PodHotFacts>& all = AllFacts(ctx, scratch);
  EXPECT_EQ(&all, &scratch);
  EXPECT_TRUE(all[0].on_update_revision);  // cs-b, on cs-2
  EXPECT_FALSE(all[1].on_update_revision);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  EXPECT_EQ(&cold, &cold_scratch);
  EXPECT_EQ(cold[0].name, "cs-b");
  EXPECT_EQ(cold[1].name, "cs-a");
  EXPECT_EQ(FactsAt(ctx, 0).name, "cs-b");
}

// The same table with every string reference given its own copy of the string: a valid table that shares
// nothing, as a client that does not intern might send.
pb::PodTable Unshared(const pb::PodTable& shared) {
  pb::PodTable out = shared;
  out.clear_string_data();
  out.clear_string_ends();
  const auto text = [&](uint32_t ref) {
    if (ref == 0) return std::string();
    const uint32_t begin = ref == 1 ? 0 : shared.string_ends(static_cast<int>(ref) - 2);
    return shared.string_data().substr(begin, shared.string_ends(static_cast<int>(ref) - 1) - begin);
  };
  for (auto* column : {out.mutable_name(), out.mutable_namespace_(), out.mutable_uid(),
                       out.mutable_resource_version(), out.mutable_node_name(), out.mutable_phase(),
                       out.mutable_labels(), out.mutable_annotations(), out.mutable_finalizers(),
                       out.mutable_owner_references(), out.mutable_readiness_gates(), out.mutable_containers(),
                       out.mutable_conditions(), out.mutable_container_statuses()}) {
    for (uint32_t& ref : *column) {
      if (ref == 0) continue;
      out.mutable_string_data()->append(text(ref));
      out.add_string_ends(static_cast<uint32_t>(out.string_data().size()));
      ref = static_cast<uint32_t>(out.string_ends_size());
    }
  }
  return out;
}

void ExpectSameFacts(const PodFacts& want, const PodFacts& got, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.uid, want.uid);
  EXPECT_EQ(got.resource_version, want.resource_version);
  EXPECT_EQ(got.node_name, want.node_name);
  EXPECT_EQ(got.revision, want.revision);
  EXPECT_EQ(got.instance_id, want.instance_id);
  EXPECT_EQ(got.in_place_state, want.in_place_state);
  EXPECT_EQ(got.in_place_grace, want.in_place_grace);
  EXPECT_EQ(got.has_in_place_state, want.has_in_place_state);
  EXPECT_EQ(got.has_in_place_grace, want.has_in_place_grace);
  EXPECT_EQ(got.ready_since, want.ready_since);
  EXPECT_EQ(got.created, want.created);
  EXPECT_EQ(got.max_restarts, want.max_restarts);
  EXPECT_EQ(got.lifecycle, want.lifecycle);
  EXPECT_EQ(got.phase_ordinal, want.phase_ordinal);
  EXPECT_EQ(got.running, want.running);
  EXPECT_EQ(got.k8s_ready, want.k8s_ready);
  EXPECT_EQ(got.in_place_ready, want.in_place_ready);
  EXPECT_EQ(got.in_place_gate, want.in_place_gate);
  EXPECT_EQ(got.in_place_settled, want.in_place_settled);
  EXPECT_EQ(got.specified_delete_label, want.specified_delete_label);
  EXPECT_EQ(got.has_template_hash_label, want.has_template_hash_label);
  EXPECT_EQ(got.on_update_revision, want.on_update_revision);
  EXPECT_EQ(got.on_current_revision, want.on_current_revision);
  EXPECT_EQ(got.has_revision_label, want.has_revision_label);
  EXPECT_EQ(got.has_ready_condition, want.has_ready_condition);
  EXPECT_EQ(got.ready_false, want.ready_false);
  EXPECT_EQ(got.containers_ready, want.containers_ready);
  EXPECT_EQ(got.has_in_place_condition, want.has_in_place_condition);
  EXPECT_EQ(got.has_legacy_state, want.has_legacy_state);
  EXPECT_EQ(got.has_grace_key, want.has_grace_key);
  EXPECT_EQ(got.has_legacy_grace, want.has_legacy_grace);
}

// TableFactsReader remembers what each string reference is; the facts must be those of the pod objects whether
// the table shares its strings (as EncodePodTable does) or repeats them, memoized or not.
TEST(TableFactsReaderTest, SharedAndUnsharedTablesGiveTheObjectsFacts) {
  std::vector<pb::Pod> pods;
  for (const std::string state : {"", kStateNormal, kStatePreparingNormal, kStatePreparingUpdate, kStateUpdating,
                                  kStateUpdated, kStatePreparingDelete, "Bogus"}) {
    PodBuilder b("cs-state-" + std::to_string(pods.size()));
    b.Revision(pods.size() % 2 == 0 ? "cs-1" : "cs-2").Ready(Now() - absl::Seconds(60)).Node("n1");
    if (!state.empty()) b.Lifecycle(state);
    pods.push_back(b);
  }
  pods.push_back(PodBuilder("cs-web").Label("tier", "web").Label("zone", "b").Revision("2").Restarts(3));
  pods.push_back(PodBuilder("cs-gate")
                     .Revision("cs-2")
                     .ReadinessGate(kInPlaceUpdateReadyCondition)
                     .Condition(kInPlaceUpdateReadyCondition, "True", Now())
                     .Condition("ContainersReady", "True", Now())
                     .Ready(Now() - absl::Seconds(5)));
  pb::Pod reasoned = PodBuilder("cs-reason").Condition(kInPlaceUpdateReadyCondition, "True", Now());
  reasoned.mutable_conditions(reasoned.conditions_size() - 1)->set_reason("StartInPlaceUpdate");
  pods.push_back(reasoned);
  pods.push_back(PodBuilder("cs-notes")
                     .Annotation(kInPlaceGraceAnnotation, "")
                     .Annotation(kLegacyInPlaceGraceAnnotation, R"({"revision":"cs-1"})")
                     .Annotation(kLegacyInPlaceStateAnnotation, R"({"revision":"old"})")
                     .SpecifiedDelete()
                     .Label(kPodTemplateHashLabel, "1")
                     .Phase("Unknown"));
  pods.push_back(PodBuilder("cs-plain").Phase("Pending"));

  std::vector<const pb::Pod*> pointers;
  for (const pb::Pod& p : pods) pointers.push_back(&p);
  absl::StatusOr<pb::PodTable> shared = planapi::EncodePodTable(pointers);
  ASSERT_TRUE(shared.ok()) << shared.status();
  const std::vector<std::pair<std::string, std::string>> match_labels = {{"app", "demo"}, {"tier", "web"}};
  for (const auto& [table_name, table] : {std::pair{"shared", *shared}, std::pair{"unshared", Unshared(*shared)}}) {
    absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(table);
    ASSERT_TRUE(view.ok()) << view.status();
    for (const bool memoize : {true, false}) {
      TableFactsReader reader(**view, match_labels, "cs-2", "cs-1", memoize);
      for (size_t i = 0; i < pods.size(); ++i) {
        size_t want_matched = 0;
        const PodFacts want = ComputePodFacts(pods[i], match_labels, &want_matched, "cs-2", "cs-1");
        size_t matched = 99;
        PodFacts got;
        reader.Read(static_cast<uint32_t>(i), got, &matched);
        const std::string where = std::string(table_name) + (memoize ? " memoized " : " ") + pods[i].metadata().name();
        EXPECT_EQ(matched, want_matched) << where;
        EXPECT_EQ(got.row, i);
        ExpectSameFacts(want, got, where);
      }
    }
  }
}

// A selector of more matchLabels than the memo can number (255) is matched by comparing every key's text.
TEST(TableFactsReaderTest, SelectorsOfManyLabelsCompareText) {
  const pb::Pod pod = PodBuilder("cs-a").Label("k7", "v7").Label("k300", "v300").Label("k9", "other");
  std::vector<const pb::Pod*> pointers = {&pod};
  absl::StatusOr<pb::PodTable> table = planapi::EncodePodTable(pointers);
  ASSERT_TRUE(table.ok());
  absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(*table);
  ASSERT_TRUE(view.ok()) << view.status();
  std::vector<std::pair<std::string, std::string>> match_labels;
  for (int k = 0; k < 301; ++k) match_labels.emplace_back(absl::StrCat("k", k), absl::StrCat("v", k));
  size_t want_matched = 0;
  ComputePodFacts(pod, match_labels, &want_matched, "cs-2", "cs-1");
  EXPECT_EQ(want_matched, 2u);  // k7=v7 and k300=v300; k9 has another value
  TableFactsReader reader(**view, match_labels, "cs-2", "cs-1");
  PodFacts f;
  size_t matched = 0;
  reader.Read(0, f, &matched);
  EXPECT_EQ(matched, want_matched);
}

// The reason and message of the InPlaceUpdateReady condition decide in_place_settled by their text: a reference
// to an empty string (not reference 0) is empty too.
TEST(TableFactsReaderTest, EmptyStringUnderAnotherReferenceIsEmpty) {
  const pb::Pod pod = PodBuilder("cs-a").Condition(kInPlaceUpdateReadyCondition, "True", Now());
  std::vector<const pb::Pod*> pointers = {&pod};
  absl::StatusOr<pb::PodTable> table = planapi::EncodePodTable(pointers);
  ASSERT_TRUE(table.ok());
  // Append an empty string and point every condition's reason and message at it.
  table->add_string_ends(table->string_ends(table->string_ends_size() - 1));
  const auto empty_ref = static_cast<uint32_t>(table->string_ends_size());
  for (int c = 0; c < table->conditions_size() / 4; ++c) {
    table->set_conditions(4 * c + 2, empty_ref);
    table->set_conditions(4 * c + 3, empty_ref);
  }
  absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(*table);
  ASSERT_TRUE(view.ok()) << view.status();
  const std::vector<std::pair<std::string, std::string>> none;
  TableFactsReader reader(**view, none, "cs-2", "cs-1");
  PodFacts f;
  size_t matched = 0;
  reader.Read(0, f, &matched);
  EXPECT_TRUE(f.in_place_settled);
  EXPECT_TRUE(ComputePodFacts(pod).in_place_settled);
}

}  // namespace
}  // namespace cloneset::planner
