#include "planapi/pod_table.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "planner/bench/rollout_snapshot.h"
#include "planner/context.h"
#include "planner/testing/both_encodings.h"
#include "planner/testing/deterministic_bytes.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using planapi::EncodePodTable;
using planapi::PodTableView;

using testing::Now;
using testing::PlanBothEncodings;
using testing::PodBuilder;
using testing::WithPodTable;

google::protobuf::RepeatedPtrField<pb::Pod> Pods(const std::vector<pb::Pod>& pods) {
  google::protobuf::RepeatedPtrField<pb::Pod> out;
  for (const pb::Pod& p : pods) *out.Add() = p;
  return out;
}

// Pods that between them set every field of pb::Pod, with shared and unshared strings.
std::vector<pb::Pod> VariedPods() {
  pb::Pod launch = PodBuilder("cs-launch").Container("sidecar", "envoy:1").Build();
  launch.mutable_containers(0)->set_launch_priority(-3);
  launch.mutable_containers(1)->set_launch_priority(7);
  pb::Pod zero_priority = PodBuilder("cs-zero").Build();
  zero_priority.mutable_containers(0)->set_launch_priority(0);
  pb::Pod owners = PodBuilder("cs-owners").Build();
  pb::OwnerReference* other = owners.mutable_metadata()->add_owner_references();
  other->set_api_version("v1");
  other->set_kind("ConfigMap");
  other->set_name("cm");
  other->set_uid("cm-uid");
  other->set_block_owner_deletion(true);
  owners.mutable_metadata()->set_generation(4);
  pb::Pod conditions = PodBuilder("cs-conditions").Ready(Now() - absl::Milliseconds(1500)).Build();
  pb::Condition* c = conditions.add_conditions();
  c->set_type("InPlaceUpdateReady");
  c->set_status("False");
  c->set_reason("StartInPlaceUpdate");
  c->set_message("updating \"main\"");
  c->mutable_last_update_time()->set_seconds(1700000000);
  c->mutable_last_update_time()->set_nanos(123456789);
  pb::Pod before_epoch = PodBuilder("cs-old").Build();
  before_epoch.mutable_metadata()->mutable_creation_timestamp()->set_seconds(-2);  // 1969, with nanos
  before_epoch.mutable_metadata()->mutable_creation_timestamp()->set_nanos(499999999);
  pb::Pod bare;
  bare.mutable_metadata()->set_name("bare");
  pb::Pod resized = PodBuilder("cs-resized")
                        .Container("sidecar", "envoy:1")
                        .Resources("main", {{"cpu", "100m"}, {"memory", "128Mi"}}, {{"cpu", "1"}})
                        .Resources("sidecar", {{"memory", "64Mi"}}, {}, /*running=*/false)
                        .RestartOnResize("main", "memory")
                        .RestartOnResize("main", "cpu")
                        .Build();
  return {
      PodBuilder("cs-a").Revision("cs-1").Ready(Now() - absl::Seconds(60)).Node("n1").Restarts(3),
      PodBuilder("cs-b")
          .Revision("cs-2")
          .NotReady()
          .Lifecycle("PreparingUpdate")
          .Annotation("apps.kruise.io/inplace-update-state", R"({"revision":"cs-2"})")
          .Finalizer("example.com/hold")
          .Finalizer("example.com/other")
          .ReadinessGate("InPlaceUpdateReady")
          .ResourceVersion("77"),
      PodBuilder("cs-c").Revision("cs-1").Phase("Succeeded").Deleting(Now() - absl::Seconds(5)),
      PodBuilder("cs-d").Label("empty-value", "").Annotation("empty", "").Phase(""),
      launch,
      zero_priority,
      owners,
      conditions,
      before_epoch,
      bare,
      resized,
  };
}

TEST(PodTableTest, DecodesToEqualPods) {
  const std::vector<pb::Pod> pods = VariedPods();
  absl::StatusOr<pb::PodTable> table = EncodePodTable(Pods(pods));
  ASSERT_TRUE(table.ok()) << table.status();
  absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(*table);
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ((*view)->size(), pods.size());
  google::protobuf::Arena arena;
  for (size_t i = 0; i < pods.size(); ++i) {
    const pb::Pod* decoded = (*view)->Materialize(static_cast<uint32_t>(i), &arena);
    std::string diff;
    google::protobuf::util::MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differencer.Compare(pods[i], *decoded)) << pods[i].metadata().name() << ": " << diff;
  }
}

// The executor's cache encodes a pod's new row beside its previous one (EncodePodRow with `previous`): for every
// pair of pods, the row is the one encoded without it, and the pool's counts come out even.
TEST(PodTableTest, ARowEncodedBesideThePreviousOneIsTheSameRow) {
  const std::vector<pb::Pod> pods = VariedPods();
  for (const pb::Pod& before : pods) {
    for (const pb::Pod& after : pods) {
      SCOPED_TRACE(before.metadata().name() + " -> " + after.metadata().name());
      planapi::StringPool pool;
      planapi::PodRow previous, hinted, plain;
      planapi::EncodePodRow(before, pool, &previous);
      planapi::EncodePodRow(after, pool, &hinted, &previous);
      planapi::EncodePodRow(after, pool, &plain);
      EXPECT_EQ(hinted.strings, plain.strings);
      EXPECT_EQ(hinted.own, plain.own);
      EXPECT_EQ(hinted.values, plain.values);
      EXPECT_EQ(std::vector<uint32_t>(std::begin(hinted.counts), std::end(hinted.counts)),
                std::vector<uint32_t>(std::begin(plain.counts), std::end(plain.counts)));
      EXPECT_EQ(hinted.generation, plain.generation);
      EXPECT_EQ(hinted.creation_timestamp, plain.creation_timestamp);
      EXPECT_EQ(hinted.deletion_timestamp, plain.deletion_timestamp);
      EXPECT_EQ(hinted.error, plain.error);
      planapi::ReleasePodRow(pool, previous);
      planapi::ReleasePodRow(pool, plain);
      // The hinted row alone now holds its strings, each counted once: its table is the pod's.
      pb::PodTable table;
      planapi::PodTableBuilder builder(&table, pool, 1);
      ASSERT_TRUE(builder.Add(hinted).ok());
      builder.Finish();
      const absl::StatusOr<pb::PodTable> want = EncodePodTable(std::vector<const pb::Pod*>{&after});
      ASSERT_TRUE(want.ok()) << want.status();
      EXPECT_EQ(table.SerializeAsString(), want->SerializeAsString());
      planapi::ReleasePodRow(pool, hinted);
      EXPECT_EQ(pool.size(), 0u) << "a string counted more often than released";
    }
  }
}

TEST(PodTableTest, StoresEachStringOnceAndDropsDefaultColumns) {
  std::vector<pb::Pod> pods;
  for (int i = 0; i < 50; ++i) pods.push_back(PodBuilder("cs-" + std::to_string(i)).Revision("cs-1"));
  absl::StatusOr<pb::PodTable> table = EncodePodTable(Pods(pods));
  ASSERT_TRUE(table.ok());
  // Shared: namespace, app=demo, the revision label, owner reference strings, phase, condition strings, ...
  // Per pod: the name, uid and resourceVersion (stored without a search for a repeat) and the instance id.
  EXPECT_LT(table->string_ends_size(), 50 * 4 + 20);
  EXPECT_EQ(table->deletion_timestamp_size(), 0);  // no pod is being deleted
  EXPECT_EQ(table->generation_size(), 0);
  EXPECT_EQ(table->finalizer_counts_size(), 0);
  const size_t object_bytes = [&] {
    pb::PlanRequest r;
    for (const pb::Pod& p : pods) *r.add_pods() = p;
    return r.ByteSizeLong();
  }();
  // The strings shared by every pod are stored once: the table's string bytes are a small part of the objects'.
  // (The table as a whole is not smaller at 50 pods: its fixed-width columns cost 4 bytes a value; at 10 000
  // bench pods it is half the objects' size, docs/performance.md.)
  EXPECT_LT(table->string_data().size() * 4, object_bytes) << table->string_data().size();
}

// Map entries are encoded in key order: the same pods give the same table, whatever order their maps were
// filled in (protobuf's map iteration order differs from map to map).
TEST(PodTableTest, SamePodsEncodeToTheSameBytes) {
  std::vector<pb::Pod> forward, backward;
  const std::vector<std::pair<std::string, std::string>> labels = {
      {"app", "demo"}, {"zone", "a"}, {"tier", "web"}, {"b", "1"}, {"controller-revision-hash", "cs-1"}};
  for (int i = 0; i < 20; ++i) {
    pb::Pod a = PodBuilder("cs-" + std::to_string(i));
    pb::Pod b = a;
    a.mutable_metadata()->clear_labels();
    b.mutable_metadata()->clear_labels();
    for (size_t k = 0; k < labels.size(); ++k) {
      (*a.mutable_metadata()->mutable_labels())[labels[k].first] = labels[k].second;
      const auto& back = labels[labels.size() - 1 - k];
      (*b.mutable_metadata()->mutable_labels())[back.first] = back.second;
      (*a.mutable_metadata()->mutable_annotations())["note-" + std::to_string(k)] = "x";
      (*b.mutable_metadata()->mutable_annotations())["note-" + std::to_string(labels.size() - 1 - k)] = "x";
    }
    forward.push_back(std::move(a));
    backward.push_back(std::move(b));
  }
  absl::StatusOr<pb::PodTable> one = EncodePodTable(Pods(forward));
  absl::StatusOr<pb::PodTable> two = EncodePodTable(Pods(backward));
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(testing::DeterministicBytes(*one), testing::DeterministicBytes(*two));
  // Key order within each pod: app, b, controller-revision-hash, tier, zone.
  absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(*one);
  ASSERT_TRUE(view.ok());
  std::vector<std::string> keys;
  for (auto r = (*view)->labels(0); r.begin < r.end; ++r.begin) {
    keys.emplace_back((*view)->Entry(one->labels(), 2, r.begin, 0));
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"app", "b", "controller-revision-hash", "tier", "zone"}));
}

TEST(PodTableTest, EncoderRejectsTimestampsItCannotCarry) {
  pb::Pod pod = PodBuilder("cs-far").Build();
  pod.mutable_metadata()->mutable_creation_timestamp()->set_seconds(253402300799LL);  // 9999-12-31
  absl::StatusOr<pb::PodTable> table = EncodePodTable(Pods({PodBuilder("cs-ok"), pod}));
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(table.status().message(), "pods[1].metadata.creationTimestamp")) << table.status();
}

struct BadTableCase {
  std::string name;
  std::function<void(pb::PodTable&)> mutate;
  std::string message;  // a substring of the error
};

class PodTableOpenTest : public ::testing::TestWithParam<BadTableCase> {};

TEST_P(PodTableOpenTest, NamesTheColumn) {
  absl::StatusOr<pb::PodTable> table = EncodePodTable(Pods(VariedPods()));
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE(PodTableView::Open(*table).ok());
  GetParam().mutate(*table);
  absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(*table);
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(view.status().message(), GetParam().message)) << view.status();
}

INSTANTIATE_TEST_SUITE_P(
    Table, PodTableOpenTest,
    ::testing::Values(
        BadTableCase{"string_end_past_data", [](pb::PodTable& t) { t.set_string_ends(3, 1u << 30); },
                     "pod_table.string_ends[3]"},
        BadTableCase{"string_end_backwards", [](pb::PodTable& t) { t.set_string_ends(4, 0); },
                     "pod_table.string_ends[4]"},
        BadTableCase{"name_missing", [](pb::PodTable& t) { t.set_name(2, 0); }, "pod_table.name[2]: required"},
        BadTableCase{"name_dangling", [](pb::PodTable& t) { t.set_name(1, 1u << 20); },
                     "pod_table.name[1]: string 1048576 does not exist"},
        BadTableCase{"short_uid_column", [](pb::PodTable& t) { t.mutable_uid()->RemoveLast(); },
                     "pod_table.uid: holds 10 entries, expected 11 (or none)"},
        BadTableCase{"short_creation_column", [](pb::PodTable& t) { t.mutable_creation_timestamp()->RemoveLast(); },
                     "pod_table.creation_timestamp"},
        BadTableCase{"label_counts_too_many", [](pb::PodTable& t) { t.set_label_counts(0, 1000); },
                     "pod_table.labels: holds"},
        BadTableCase{"label_odd", [](pb::PodTable& t) { t.mutable_labels()->RemoveLast(); },
                     "pod_table.labels: holds"},
        BadTableCase{"label_dangling", [](pb::PodTable& t) { t.set_labels(5, 99999); },
                     "pod_table.labels[5]: string 99999"},
        BadTableCase{"condition_counts_short", [](pb::PodTable& t) { t.mutable_condition_counts()->RemoveLast(); },
                     "pod_table.condition_counts"},
        BadTableCase{"owner_flags_short", [](pb::PodTable& t) { t.mutable_owner_reference_flags()->RemoveLast(); },
                     "pod_table.owner_reference_flags"},
        BadTableCase{"status_restarts_long", [](pb::PodTable& t) { t.add_container_status_restart_count(1); },
                     "pod_table.container_status_restart_count"},
        BadTableCase{"container_resources_short",
                     [](pb::PodTable& t) { t.mutable_container_resources()->RemoveLast(); },
                     "pod_table.container_resources: holds"},
        BadTableCase{"container_resource_counts_short",
                     [](pb::PodTable& t) { t.mutable_container_resource_counts()->RemoveLast(); },
                     "pod_table.container_resource_counts"},
        BadTableCase{"status_resource_dangling",
                     [](pb::PodTable& t) { t.set_container_status_resources(0, 99999); },
                     "pod_table.container_status_resources[0]: string 99999"},
        BadTableCase{"restart_on_resize_long", [](pb::PodTable& t) { t.add_container_restart_on_resize(1); },
                     "pod_table.container_restart_on_resize"},
        BadTableCase{"transition_times_short",
                     [](pb::PodTable& t) { t.mutable_condition_last_transition_time()->RemoveLast(); },
                     "pod_table.condition_last_transition_time"}),
    [](const ::testing::TestParamInfo<BadTableCase>& info) { return info.param.name; });

pb::PlanRequest Snapshot(int32_t pods) {
  absl::StatusOr<pb::PlanRequest> request = bench::MidRolloutRequest(pods);
  EXPECT_TRUE(request.ok()) << request.status();
  return request.ok() ? *request : pb::PlanRequest();
}

TEST(PodTablePlanTest, PodsAndTableTogetherAreRejected) {
  pb::PlanRequest request = Snapshot(10);
  *request.mutable_pod_table() = WithPodTable(request).pod_table();
  absl::StatusOr<pb::PlanResponse> plan = Plan(request);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "pod_table: set either pods or pod_table")) << plan.status();
}

TEST(PodTablePlanTest, DuplicateNamesAreRejected) {
  pb::PlanRequest request = WithPodTable(Snapshot(10));
  request.mutable_pod_table()->set_name(7, request.pod_table().name(3));
  absl::StatusOr<pb::PlanResponse> plan = Plan(request);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "pod_table.name[7]: duplicate pod")) << plan.status();
}

// The same plan from either encoding, over the rollout shapes every stage takes: the benchmark's mid-rollout
// CloneSet, and variants that scale, recreate, pause, hook, prioritise and scatter.
struct VariantCase {
  std::string name;
  std::function<void(pb::PlanRequest&)> mutate;
};

class PodTablePlanVariants : public ::testing::TestWithParam<std::tuple<VariantCase, int>> {};

TEST_P(PodTablePlanVariants, SamePlan) {
  pb::PlanRequest request = Snapshot(std::get<1>(GetParam()));
  std::get<0>(GetParam()).mutate(request);
  absl::StatusOr<pb::PlanResponse> plan = PlanBothEncodings(request);
  ASSERT_TRUE(plan.ok()) << plan.status();
}

pb::CloneSetSpec& Spec(pb::PlanRequest& r) { return *r.mutable_clone_set()->mutable_spec(); }

INSTANTIATE_TEST_SUITE_P(
    Table, PodTablePlanVariants,
    ::testing::Combine(
        ::testing::Values(
            VariantCase{"mid_rollout", [](pb::PlanRequest&) {}},
            VariantCase{"recreate", [](pb::PlanRequest& r) { Spec(r).mutable_update_strategy()->set_type("ReCreate"); }},
            VariantCase{"in_place_only",
                        [](pb::PlanRequest& r) {
                          // InPlaceOnly admits no maxSurge (Plan applies Validate's rules).
                          Spec(r).mutable_update_strategy()->set_type("InPlaceOnly");
                          Spec(r).mutable_update_strategy()->clear_max_surge();
                        }},
            VariantCase{"paused", [](pb::PlanRequest& r) { Spec(r).mutable_update_strategy()->set_paused(true); }},
            VariantCase{"partition_zero",
                        [](pb::PlanRequest& r) {
                          Spec(r).mutable_update_strategy()->mutable_partition()->set_int_value(0);
                        }},
            VariantCase{"min_ready", [](pb::PlanRequest& r) { Spec(r).set_min_ready_seconds(700); }},
            VariantCase{"scale_up", [](pb::PlanRequest& r) { Spec(r).set_replicas(Spec(r).replicas() + 7); }},
            VariantCase{"scale_down", [](pb::PlanRequest& r) { Spec(r).set_replicas(Spec(r).replicas() * 2 / 3); }},
            VariantCase{"pods_to_delete",
                        [](pb::PlanRequest& r) {
                          Spec(r).mutable_scale_strategy()->add_pods_to_delete(r.pods(0).metadata().name());
                          Spec(r).mutable_scale_strategy()->add_pods_to_delete("not-a-pod");
                        }},
            VariantCase{"in_place_hook",
                        [](pb::PlanRequest& r) {
                          auto* hook = Spec(r).mutable_lifecycle()->mutable_in_place_update();
                          (*hook->mutable_labels_handler())["example.com/drain"] = "true";
                          hook->set_mark_pod_not_ready(true);
                        }},
            VariantCase{"priority",
                        [](pb::PlanRequest& r) {
                          auto* term = Spec(r).mutable_update_strategy()->mutable_priority_strategy()->add_weight_priority();
                          term->set_weight(50);
                          (*term->mutable_match_selector()->mutable_match_labels())["lifecycle.apps.kruise.io/state"] =
                              "Normal";
                        }},
            VariantCase{"scatter",
                        [](pb::PlanRequest& r) {
                          auto* term = Spec(r).mutable_update_strategy()->add_scatter_strategy();
                          term->set_key("app");
                          term->set_value("bench");
                        }},
            VariantCase{"selector_expression",
                        [](pb::PlanRequest& r) {
                          auto* req = Spec(r).mutable_selector()->add_match_expressions();
                          req->set_key("example.com/quarantined");
                          req->set_operator_("DoesNotExist");
                        }},
            VariantCase{"released_and_foreign",
                        [](pb::PlanRequest& r) {
                          if (r.pods_size() < 5) return;
                          (*r.mutable_pods(2)->mutable_metadata()->mutable_labels())["app"] = "other";
                          r.mutable_pods(3)->mutable_metadata()->mutable_owner_references(0)->set_uid("someone");
                          r.mutable_pods(4)->set_phase("Failed");
                        }}),
        ::testing::Values(1, 10, 37, 200)),
    [](const ::testing::TestParamInfo<std::tuple<VariantCase, int>>& info) {
      return std::get<0>(info.param).name + "_" + std::to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace cloneset::planner
