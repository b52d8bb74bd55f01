#include "planapi/in_place_batches.h"

#include <string>
#include <vector>

#include "google/protobuf/arena.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "planapi/applier.h"
#include "planapi/plan_schedule.h"
#include "planner/plan.h"
#include "planner/bench/rollout_snapshot.h"
#include "planner/testing/both_encodings.h"
#include "planner/testing/deterministic_bytes.h"

namespace cloneset::planner {
namespace {

using planapi::ExpandInPlaceBatches;

namespace pb = ::cloneset::planner::v1;

pb::PlanResponse Parse(const std::string& text) {
  pb::PlanResponse out;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &out)) << text;
  return out;
}

// The templates of a batch of gated pods as the planner writes them (status template, Ready=False, patch, event).
constexpr char kGatedBatch[] = R"pb(
  status_patch {
    purpose: "start-in-place-update"
    set_conditions { type: "InPlaceUpdateReady" status: "False" reason: "StartInPlaceUpdate" last_transition_time { seconds: 100 } }
  }
  status_stop_on_error: true
  not_ready_condition { type: "Ready" status: "False" reason: "ReadinessGatesNotReady" message: "gate" last_transition_time { seconds: 100 } }
  patch {
    purpose: "in-place-update"
    set_labels { key: "controller-revision-hash" value: "cs-2" }
    container_images { key: "main" value: "nginx:1.26" }
  }
  patch_stop_on_error: true
  event_type: NORMAL
  event_reason: "SuccessfulUpdatePodInPlace"
  event_message_prefix: "update pod "
  event_message_suffix: " in-place"
)pb";

// The two actions and the event of one gated target of kGatedBatch.
std::string GatedActions(const std::string& name, const std::string& uid, const std::string& rv,
                         const std::string& state, bool not_ready) {
  std::string out = R"pb(
    actions {
      stop_on_error: true
      patch_pod_status {
        name: ")pb" + name + R"pb(" uid: ")pb" + uid + R"pb(" resource_version: ")pb" + rv + R"pb("
        purpose: "start-in-place-update"
        set_conditions { type: "InPlaceUpdateReady" status: "False" reason: "StartInPlaceUpdate" last_transition_time { seconds: 100 } }
  )pb";
  if (not_ready) {
    out += R"pb(
        set_conditions { type: "Ready" status: "False" reason: "ReadinessGatesNotReady" message: "gate" last_transition_time { seconds: 100 } }
    )pb";
  }
  out += R"pb(
      }
    }
    actions {
      stop_on_error: true
      patch_pod {
        name: ")pb" + name + R"pb(" uid: ")pb" + uid + R"pb(" resource_version: ")pb" + rv + R"pb("
        purpose: "in-place-update"
        set_labels { key: "controller-revision-hash" value: "cs-2" }
        container_images { key: "main" value: "nginx:1.26" }
        set_annotations { key: "apps.kruise.io/inplace-update-state" value: ")pb" + state + R"pb(" }
      }
    }
  )pb";
  return out;
}

std::string Event(const std::string& name) {
  return R"pb(events { type: NORMAL reason: "SuccessfulUpdatePodInPlace" message: "update pod )pb" + name +
         R"pb( in-place" involved_pod: ")pb" + name + R"pb(" })pb";
}

struct ExpandCase {
  std::string name;
  std::string plan;      // text format, as the planner sends it
  std::string expected;  // text format, after ExpandInPlaceBatches
};

std::vector<ExpandCase> Cases() {
  const std::string before = R"pb(actions { stop_on_error: true create_revision { revision_json: "{}" } })pb";
  const std::string after = R"pb(actions { delete_pod { name: "x" uid: "ux" } })pb";
  const std::string other_event = R"pb(events { type: WARNING reason: "Other" message: "m" })pb";
  return {
      {"NoBatchIsUntouched", before + after + other_event, before + after + other_event},
      {"GatedTargetsInOrderBetweenOtherActions",
       before +
           "actions { start_in_place_updates {" + kGatedBatch + R"pb(
             events_before: 1
             targets { name: "a" uid: "ua" resource_version: "1" in_place_update_state: "sa" set_not_ready: true }
             targets { name: "b" uid: "ub" resource_version: "2" in_place_update_state: "sb" }
           } })pb" +
           after + other_event + other_event,
       before + GatedActions("a", "ua", "1", "sa", true) + GatedActions("b", "ub", "2", "sb", false) + after +
           other_event + Event("a") + Event("b") + other_event},
      {"NoStatusTemplateNoEventsOnlyPatches",
       R"pb(actions { start_in_place_updates {
              patch { purpose: "in-place-update" set_labels { key: "k" value: "v" } }
              targets { name: "a" uid: "ua" resource_version: "1" in_place_update_state: "sa" set_not_ready: true }
            } })pb" +
           other_event,
       R"pb(actions { patch_pod {
              name: "a" uid: "ua" resource_version: "1" purpose: "in-place-update" set_labels { key: "k" value: "v" }
              set_annotations { key: "apps.kruise.io/inplace-update-state" value: "sa" }
            } })pb" +
           other_event},
      {"TwoBatchesPlaceTheirEventsByEventsBefore",
       "actions { start_in_place_updates {" + std::string(kGatedBatch) + R"pb(
          events_before: 0
          targets { name: "a" uid: "ua" resource_version: "1" in_place_update_state: "sa" }
        } })pb" + after +
           "actions { start_in_place_updates {" + kGatedBatch + R"pb(
          events_before: 1
          targets { name: "b" uid: "ub" resource_version: "2" in_place_update_state: "sb" }
        } })pb" + other_event,
       GatedActions("a", "ua", "1", "sa", false) + after + GatedActions("b", "ub", "2", "sb", false) + Event("a") +
           other_event + Event("b")},
      {"EmptyBatchIsDropped", before + "actions { start_in_place_updates {" + kGatedBatch + "} }" + after, before + after},
      {"StateIsPrefixTargetSuffix",
       R"pb(actions { start_in_place_updates {
              patch { purpose: "in-place-update" }
              in_place_update_state_prefix: "{\"revision\":\"r\",\"last\":"
              in_place_update_state_suffix: "}"
              targets { name: "a" uid: "ua" resource_version: "1" in_place_update_state: "{\"main\":1}" }
            } })pb",
       R"pb(actions { patch_pod {
              name: "a" uid: "ua" resource_version: "1" purpose: "in-place-update"
              set_annotations { key: "apps.kruise.io/inplace-update-state" value: "{\"revision\":\"r\",\"last\":{\"main\":1}}" }
            } })pb"},
      {"EventsBeforePastTheEndGoLast",
       "actions { start_in_place_updates {" + std::string(kGatedBatch) + R"pb(
          events_before: 99
          targets { name: "a" uid: "ua" resource_version: "1" in_place_update_state: "sa" }
        } })pb" + other_event,
       GatedActions("a", "ua", "1", "sa", false) + other_event + Event("a")},
  };
}

class ExpandTest : public ::testing::TestWithParam<ExpandCase> {};

TEST_P(ExpandTest, GivesThePerPodPlan) {
  pb::PlanResponse plan = Parse(GetParam().plan);
  const pb::PlanResponse expected = Parse(GetParam().expected);
  ExpandInPlaceBatches(&plan);
  EXPECT_EQ(testing::DeterministicBytes(plan), testing::DeterministicBytes(expected))
      << "got:\n" << plan.DebugString() << "\nwant:\n" << expected.DebugString();
}

TEST_P(ExpandTest, OnAnArenaToo) {
  google::protobuf::Arena arena;
  auto* plan = google::protobuf::Arena::CreateMessage<pb::PlanResponse>(&arena);
  *plan = Parse(GetParam().plan);
  ExpandInPlaceBatches(plan);
  EXPECT_EQ(testing::DeterministicBytes(*plan), testing::DeterministicBytes(Parse(GetParam().expected)));
}

// What an applier reads instead of the expanded plan: the same actions and events, built one at a time.
TEST_P(ExpandTest, RefsNameTheExpandedPlan) {
  const pb::PlanResponse plan = Parse(GetParam().plan);
  const pb::PlanResponse expected = Parse(GetParam().expected);
  const std::vector<planapi::ExpandedRef> actions = planapi::ExpandedActionOrder(plan);
  ASSERT_EQ(actions.size(), static_cast<size_t>(expected.actions_size()));
  for (size_t k = 0; k < actions.size(); ++k) {
    pb::Action scratch;
    EXPECT_EQ(testing::DeterministicBytes(planapi::ExpandedAction(plan, actions[k], &scratch)),
              testing::DeterministicBytes(expected.actions(static_cast<int>(k))))
        << "action " << k;
  }
  const std::vector<planapi::ExpandedRef> events = planapi::ExpandedEventOrder(plan);
  ASSERT_EQ(events.size(), static_cast<size_t>(expected.events_size()));
  for (size_t k = 0; k < events.size(); ++k) {
    pb::Event scratch;
    EXPECT_EQ(testing::DeterministicBytes(planapi::ExpandedEvent(plan, events[k], &scratch)),
              testing::DeterministicBytes(expected.events(static_cast<int>(k))))
        << "event " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ExpandTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ExpandCase>& info) { return info.param.name; });

// The benchmark's mid-rollout snapshot: its in-place starts form one batch, which expands to the per-pod plan in
// both encodings. (Its pods have no ContainersReady condition, so no target sets Ready=False; update_flow_test
// interleaves targets that do and do not.)
TEST(InPlaceBatchesPlanTest, MidRolloutStartsAreOneBatch) {
  absl::StatusOr<pb::PlanRequest> request = bench::MidRolloutRequest(2000);
  ASSERT_TRUE(request.ok()) << request.status();
  request->set_accept_in_place_batches(true);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(*request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  int batches = 0;
  int targets = 0;
  for (const pb::Action& action : plan->actions()) {
    if (!action.has_start_in_place_updates()) continue;
    ++batches;
    targets += action.start_in_place_updates().targets_size();
  }
  EXPECT_EQ(batches, 1);
  EXPECT_GT(targets, 100);
  EXPECT_EQ(targets, plan->summary().updated_now());
  for (const pb::Event& event : plan->events()) EXPECT_NE(event.reason(), "SuccessfulUpdatePodInPlace");
}

// Records every write and event of a plan; the `fail_at`-th write (1-based; 0: none) fails.
class RecordingWriter final : public planapi::PlanWriter {
 public:
  explicit RecordingWriter(int fail_at) : fail_at_(fail_at) {}
  bool MayWrite() override { return true; }
  absl::StatusOr<bool> CloneSetExists() override { return true; }
  absl::Status Write(const pb::Action& action) override {
    if (action.has_start_in_place_updates()) return absl::InternalError("a batch reached the writer");
    writes.push_back(testing::DeterministicBytes(action));
    return static_cast<int>(writes.size()) == fail_at_ ? absl::InternalError("refused") : absl::OkStatus();
  }
  absl::Status WriteStatus(const pb::CloneSetStatus& status) override {
    writes.push_back("status " + testing::DeterministicBytes(status));
    return absl::OkStatus();
  }
  void Event(std::string_view type, std::string_view reason, std::string_view message) override {
    events.push_back(std::string(type) + " " + std::string(reason) + " " + std::string(message));
  }
  std::vector<std::string> writes;
  std::vector<std::string> events;

 private:
  const int fail_at_;
};

// The applier writes a plan with batches as its expansion (reconciler.cc keeps the batches so that the first write
// does not wait for the whole plan to be built): the same writes, stops and events in the same order, and the same
// stages, as for the expanded plan.
TEST(InPlaceBatchesPlanTest, AppliedAsTheExpandedPlan) {
  absl::StatusOr<pb::PlanRequest> request = bench::MidRolloutRequest(2000);
  ASSERT_TRUE(request.ok()) << request.status();
  request->set_accept_in_place_batches(true);
  absl::StatusOr<pb::PlanResponse> batched = Plan(*request);
  ASSERT_TRUE(batched.ok()) << batched.status();
  pb::PlanResponse expanded = *batched;
  ExpandInPlaceBatches(&expanded);
  ASSERT_GT(expanded.actions_size(), batched->actions_size());

  std::vector<planapi::PlanStage> want = planapi::SchedulePlan(expanded);
  planapi::PlanStages stages(*batched);
  ASSERT_EQ(stages.size(), expanded.actions_size());
  size_t n = 0;
  for (planapi::PlanStage stage; stages.Next(&stage); ++n) {
    ASSERT_LT(n, want.size());
    EXPECT_EQ(stage.groups, want[n].groups) << "stage " << n;
    EXPECT_EQ(stage.creates, want[n].creates) << "stage " << n;
  }
  EXPECT_EQ(n, want.size());

  // The mid-rollout in-place patches stop the plan when they fail (stop_on_error): fail the first, one in the
  // middle, none.
  for (int fail_at : {0, 1, 2, expanded.actions_size() / 2}) {
    RecordingWriter from_batches(fail_at);
    RecordingWriter from_expanded(fail_at);
    const absl::Time now = absl::FromUnixSeconds(request->now().seconds());
    const planapi::ApplyResult a = planapi::PlanApplier().Apply(request->clone_set(), *batched, from_batches, now);
    const planapi::ApplyResult b = planapi::PlanApplier().Apply(request->clone_set(), expanded, from_expanded, now);
    EXPECT_EQ(from_batches.writes, from_expanded.writes) << "fail_at " << fail_at;
    EXPECT_EQ(from_batches.events, from_expanded.events) << "fail_at " << fail_at;
    EXPECT_EQ(a.result, b.result);
    EXPECT_EQ(a.error, b.error);
    EXPECT_EQ(a.stopped, b.stopped);
    if (fail_at == 0) {
      EXPECT_EQ(from_batches.writes.size(), static_cast<size_t>(expanded.actions_size()) + 1);
    }
  }
}

}  // namespace
}  // namespace cloneset::planner
