#include "planner/status.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1800000000);
constexpr char kOld[] = "cs-old111";
constexpr char kNew[] = "cs-new222";

struct P {
  std::string revision = kNew;
  bool ready = true;
  int ready_age = 3600;       // seconds since Ready became True
  std::string lifecycle = "";  // "" = no label
  std::string in_place = "";   // InPlaceUpdateReady status, "" = absent
  std::string phase = "Running";
};

pb::Pod MakePod(int i, const P& p) {
  pb::Pod pod;
  pod.mutable_metadata()->set_name("cs-" + std::to_string(i));
  (*pod.mutable_metadata()->mutable_labels())[kRevisionLabel] = p.revision;
  if (!p.lifecycle.empty()) (*pod.mutable_metadata()->mutable_labels())[kLifecycleStateLabel] = p.lifecycle;
  pod.set_phase(p.phase);
  pb::Condition* ready = pod.add_conditions();
  ready->set_type("Ready");
  ready->set_status(p.ready ? "True" : "False");
  SetTimestamp(kNow - absl::Seconds(p.ready_age), ready->mutable_last_transition_time());
  if (!p.in_place.empty()) {
    pb::Condition* c = pod.add_conditions();
    c->set_type(kInPlaceUpdateReadyCondition);
    c->set_status(p.in_place);
  }
  return pod;
}

pb::Condition Cond(const std::string& type, const std::string& status, const std::string& reason,
                   absl::Duration age, const std::string& message = "") {
  pb::Condition c;
  c.set_type(type);
  c.set_status(status);
  c.set_reason(reason);
  c.set_message(message);
  SetTimestamp(kNow - age, c.mutable_last_transition_time());
  SetTimestamp(kNow - age, c.mutable_last_update_time());
  return c;
}

// A context over `pods` with the given spec; the stored status carries `old_conditions`.
class Fixture {
 public:
  Fixture(std::vector<P> pods, ResolvedSpec spec, std::vector<pb::Condition> old_conditions = {},
          std::string old_update_revision = kNew) {
    cs_.mutable_metadata()->set_name("cs");
    cs_.mutable_metadata()->set_generation(7);
    cs_.mutable_status()->set_update_revision(old_update_revision);
    for (const pb::Condition& c : old_conditions) *cs_.mutable_status()->add_conditions() = c;
    for (size_t i = 0; i < pods.size(); ++i) pods_.push_back(MakePod(static_cast<int>(i), pods[i]));
    ctx.clone_set = &cs_;
    ctx.now = kNow;
    ctx.spec = spec;
    ctx.current_revision = kOld;
    ctx.update_revision = kNew;
    ctx.selector_string = "app=demo";
    ctx.collision_count = 2;
    for (const pb::Pod& p : pods_) ctx.pods.push_back(&p);
  }
  pb::CloneSetStatus Run(absl::Status scale = absl::OkStatus(), absl::Status update = absl::OkStatus()) {
    return ComputeStatus(ctx, scale, update, plan);
  }
  PlanContext ctx;
  PlanBuilder plan;

 private:
  pb::CloneSet cs_;
  std::vector<pb::Pod> pods_;
};

ResolvedSpec Spec(int32_t replicas, int32_t partition = 0, int32_t min_ready = 0) {
  ResolvedSpec s;
  s.replicas = replicas;
  s.partition = partition;
  s.min_ready_seconds = min_ready;
  s.expected_updated_replicas = replicas - partition;
  return s;
}

ResolvedSpec WithDeadline(ResolvedSpec s, int32_t seconds = 600) {
  s.has_progress_deadline = seconds != INT32_MAX;
  s.progress_deadline_seconds = seconds;
  return s;
}

const pb::Condition* FindType(const pb::CloneSetStatus& s, const std::string& type) {
  for (const pb::Condition& c : s.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Counters (§7.1)

struct CounterCase {
  std::string name;
  std::vector<P> pods;
  ResolvedSpec spec;
  // replicas, ready, available, updated, updatedReady, updatedAvailable, expectedUpdated
  std::vector<int32_t> want;
  std::string want_current;
};

class CounterTest : public ::testing::TestWithParam<CounterCase> {};

TEST_P(CounterTest, Counts) {
  const CounterCase& c = GetParam();
  Fixture f(c.pods, c.spec);
  const pb::CloneSetStatus s = f.Run();
  EXPECT_EQ((std::vector<int32_t>{s.replicas(), s.ready_replicas(), s.available_replicas(), s.updated_replicas(),
                                  s.updated_ready_replicas(), s.updated_available_replicas(),
                                  s.expected_updated_replicas()}),
            c.want);
  EXPECT_EQ(s.current_revision(), c.want_current);
  EXPECT_EQ(s.update_revision(), kNew);
  EXPECT_EQ(s.observed_generation(), 7);
  EXPECT_EQ(s.collision_count(), 2);
  EXPECT_EQ(s.label_selector(), "app=demo");
}

INSTANTIATE_TEST_SUITE_P(
    Semantics71, CounterTest,
    ::testing::Values(
        CounterCase{"all_updated_ready_promotes", {{}, {}, {}}, Spec(3), {3, 3, 3, 3, 3, 3, 3}, kNew},
        CounterCase{"mixed_revisions", {{}, {.revision = kOld}, {.revision = kOld}}, Spec(3, 2),
                    {3, 3, 3, 1, 1, 1, 1}, kOld},
        CounterCase{"not_ready_still_promotes", {{.ready = false}, {.ready = false}}, Spec(2),
                    {2, 0, 0, 2, 0, 0, 2}, kNew},
        CounterCase{"fewer_pods_than_spec_no_promotion", {{}, {}}, Spec(3), {2, 2, 2, 2, 2, 2, 3}, kOld},
        CounterCase{"more_pods_than_spec_no_promotion", {{}, {}, {}}, Spec(2), {3, 3, 3, 3, 3, 3, 2}, kOld},
        CounterCase{"min_ready_not_elapsed", {{.ready_age = 10}, {.ready_age = 100}}, Spec(2, 0, 30),
                    {2, 2, 1, 2, 2, 1, 2}, kNew},
        CounterCase{"min_ready_exact_boundary_not_available", {{.ready_age = 30}}, Spec(1, 0, 30),
                    {1, 1, 0, 1, 1, 0, 1}, kNew},
        CounterCase{"lifecycle_ready_but_not_available",
                    {{.lifecycle = "PreparingUpdate"}, {.lifecycle = "Normal"}, {.revision = kOld,
                                                                                 .lifecycle = "PreparingDelete"}},
                    Spec(3), {3, 3, 1, 2, 2, 1, 3}, kOld},
        CounterCase{"in_place_not_ready", {{.in_place = "False"}, {.in_place = "True"}}, Spec(2),
                    {2, 1, 1, 2, 1, 1, 2}, kNew},
        CounterCase{"pending_pod", {{.phase = "Pending"}, {}}, Spec(2), {2, 1, 1, 2, 1, 1, 2}, kNew},
        CounterCase{"short_hash_label_counts_updated", {{.revision = "new222"}}, Spec(1), {1, 1, 1, 1, 1, 1, 1},
                    kNew},
        CounterCase{"no_pods_zero_replicas_promotes", {}, Spec(0), {0, 0, 0, 0, 0, 0, 0}, kNew},
        CounterCase{"partition_expected", {{.revision = kOld}, {.revision = kOld}, {}, {}, {}}, Spec(5, 2),
                    {5, 5, 5, 3, 3, 3, 3}, kOld}),
    [](const auto& info) { return info.param.name; });

TEST(StatusTest, OnDeleteExpectsAllReplicas) {
  ResolvedSpec spec = Spec(4);
  spec.rolling_update = false;
  spec.expected_updated_replicas = 4;
  Fixture f({{.revision = kOld}}, spec);
  EXPECT_EQ(f.Run().expected_updated_replicas(), 4);
}

// ---------------------------------------------------------------------------------------------------------------
// Progressing (§7.4)

struct ProgressCase {
  std::string name;
  std::vector<P> pods;
  ResolvedSpec spec;
  std::vector<pb::Condition> old;
  std::string old_update_revision;
  std::string want_status;  // "" = no Progressing condition
  std::string want_reason;
  absl::Duration want_transition_age;  // now - lastTransitionTime
  absl::Duration want_update_age;      // now - lastUpdateTime
  absl::Duration want_requeue;
};

class ProgressTest : public ::testing::TestWithParam<ProgressCase> {};

TEST_P(ProgressTest, Transitions) {
  const ProgressCase& c = GetParam();
  Fixture f(c.pods, c.spec, c.old, c.old_update_revision);
  const pb::CloneSetStatus s = f.Run();
  const pb::Condition* p = FindType(s, "Progressing");
  if (c.want_status.empty()) {
    EXPECT_EQ(p, nullptr);
  } else {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->status(), c.want_status);
    EXPECT_EQ(p->reason(), c.want_reason);
    EXPECT_EQ(kNow - ToTime(p->last_transition_time()), c.want_transition_age);
    EXPECT_EQ(kNow - ToTime(p->last_update_time()), c.want_update_age);
  }
  EXPECT_EQ(f.plan.requeue(), c.want_requeue);
}

const absl::Duration kZero = absl::ZeroDuration();
const absl::Duration kDay = absl::Hours(24);
const std::vector<P> kRollingOut = {{}, {.revision = kOld}, {.revision = kOld}};

ResolvedSpec Paused(ResolvedSpec s) {
  s.paused = true;
  return s;
}

// OnDelete as ResolveSpec resolves it: no rolling update, every replica expected on the update revision. Paused is
// set to show that it does not count without a rolling update.
ResolvedSpec OnDelete(int32_t replicas) {
  ResolvedSpec s = WithDeadline(Spec(replicas));
  s.rolling_update = false;
  s.paused = true;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Semantics74, ProgressTest,
    ::testing::Values(
        ProgressCase{"no_deadline_removes", kRollingOut, Spec(3),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(5))}, kNew, "", "", kZero, kZero,
                     kZero},
        ProgressCase{"deadline_maxint_removes", kRollingOut, WithDeadline(Spec(3), INT32_MAX), {}, kNew, "", "",
                     kZero, kZero, kZero},
        ProgressCase{"available", {{}, {}, {}}, WithDeadline(Spec(3)), {}, kNew, "True", "CloneSetAvailable", kZero,
                     kZero, kZero},
        ProgressCase{"available_keeps_timestamps", {{}, {}, {}}, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetAvailable", kDay)}, kNew, "True", "CloneSetAvailable",
                     kDay, kDay, kZero},
        ProgressCase{"available_needs_min_ready", {{.ready_age = 5}}, WithDeadline(Spec(1, 0, 30)), {}, kNew, "True",
                     "CloneSetUpdated", kZero, kZero, absl::Seconds(26)},  // the minReadySeconds requeue is sooner
        ProgressCase{"paused", kRollingOut, WithDeadline(Paused(Spec(3))), {}, kNew, "True", "CloneSetPaused", kZero,
                     kZero, kZero},
        ProgressCase{"partition_available", kRollingOut, WithDeadline(Spec(3, 2)), {}, kNew, "True",
                     "ProgressPartitionAvailable", kZero, kZero, kZero},
        ProgressCase{"partition_not_yet_available", {{.ready = false}, {.revision = kOld}, {.revision = kOld}},
                     WithDeadline(Spec(3, 2)), {}, kNew, "True", "CloneSetUpdated", kZero, kZero,
                     absl::Seconds(601)},
        ProgressCase{"fresh_rollout", kRollingOut, WithDeadline(Spec(3)), {}, kNew, "True", "CloneSetUpdated", kZero,
                     kZero, absl::Seconds(601)},
        ProgressCase{"progressing_keeps_clock", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(100))}, kNew, "True",
                     "CloneSetUpdated", absl::Seconds(100), absl::Seconds(100), absl::Seconds(501)},
        // Planned again one second past the deadline also when less than a second is left (upstream: at the
        // deadline itself, where it has not passed yet; docs/compatibility.md).
        ProgressCase{"sub_second_remaining_padded_too", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Milliseconds(599500))}, kNew, "True",
                     "CloneSetUpdated", absl::Milliseconds(599500), absl::Milliseconds(599500),
                     absl::Milliseconds(1500)},
        ProgressCase{"exactly_at_deadline_not_exceeded_checked_again", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(600))}, kNew, "True",
                     "CloneSetUpdated", absl::Seconds(600), absl::Seconds(600), absl::Seconds(1)},
        ProgressCase{"deadline_exceeded", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(601))}, kNew, "False",
                     "ProgressDeadlineExceeded", kZero, kZero, kZero},
        ProgressCase{"exceeded_stays", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "False", "ProgressDeadlineExceeded", absl::Seconds(30))}, kNew, "False",
                     "ProgressDeadlineExceeded", absl::Seconds(30), absl::Seconds(30), kZero},
        ProgressCase{"exceeded_then_available", {{}, {}, {}}, WithDeadline(Spec(3)),
                     {Cond("Progressing", "False", "ProgressDeadlineExceeded", absl::Seconds(30))}, kNew, "True",
                     "CloneSetAvailable", kZero, kZero, kZero},
        ProgressCase{"exceeded_then_paused", kRollingOut, WithDeadline(Paused(Spec(3))),
                     {Cond("Progressing", "False", "ProgressDeadlineExceeded", absl::Seconds(30))}, kNew, "True",
                     "CloneSetPaused", kZero, kZero, kZero},
        // Differences from upstream (docs/compatibility.md): a long Available/Paused period does not count.
        ProgressCase{"after_long_available_starts_fresh", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetAvailable", kDay)}, kNew, "True", "CloneSetUpdated", kDay,
                     kZero, absl::Seconds(601)},
        ProgressCase{"after_long_pause_starts_fresh", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetPaused", kDay)}, kNew, "True", "CloneSetUpdated", kDay,
                     kZero, absl::Seconds(601)},
        ProgressCase{"after_partition_available_starts_fresh", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "ProgressPartitionAvailable", kDay)}, kNew, "True",
                     "CloneSetUpdated", kDay, kZero, absl::Seconds(601)},
        ProgressCase{"new_revision_clears_exceeded", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "False", "ProgressDeadlineExceeded", kDay)}, kOld, "True",
                     "CloneSetUpdated", kZero, kZero, absl::Seconds(601)},
        ProgressCase{"new_revision_restarts_clock", kRollingOut, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(500))}, kOld, "True",
                     "CloneSetUpdated", kZero, kZero, absl::Seconds(601)},
        // Scale: a scale-up of an available CloneSet is progress to be made, a scale-down that leaves every pod
        // updated and available is Available again.
        ProgressCase{"scale_up_progressing", {{}, {}, {}}, WithDeadline(Spec(5)),
                     {Cond("Progressing", "True", "CloneSetAvailable", absl::Seconds(30))}, kNew, "True",
                     "CloneSetUpdated", absl::Seconds(30), kZero, absl::Seconds(601)},
        ProgressCase{"scale_up_done_available", {{}, {}, {}, {}, {}}, WithDeadline(Spec(5)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(30))}, kNew, "True",
                     "CloneSetAvailable", absl::Seconds(30), kZero, kZero},
        ProgressCase{"scale_up_past_deadline", {{}, {}, {.ready = false}}, WithDeadline(Spec(3)),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(601))}, kNew, "False",
                     "ProgressDeadlineExceeded", kZero, kZero, kZero},
        // Partition: lowering it after PartitionAvailable starts a rollout of the rest.
        ProgressCase{"partition_lowered", {{}, {.revision = kOld}, {.revision = kOld}}, WithDeadline(Spec(3, 1)),
                     {Cond("Progressing", "True", "ProgressPartitionAvailable", absl::Seconds(30))}, kNew, "True",
                     "CloneSetUpdated", absl::Seconds(30), kZero, absl::Seconds(601)},
        // OnDelete: never Paused nor PartitionAvailable; old pods wait for a deletion, so the deadline passes.
        ProgressCase{"on_delete_waits_for_deletions", kRollingOut, OnDelete(3), {}, kNew, "True", "CloneSetUpdated",
                     kZero, kZero, absl::Seconds(601)},
        ProgressCase{"on_delete_past_deadline", kRollingOut, OnDelete(3),
                     {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(601))}, kNew, "False",
                     "ProgressDeadlineExceeded", kZero, kZero, kZero},
        ProgressCase{"on_delete_all_replaced", {{}, {}, {}}, OnDelete(3),
                     {Cond("Progressing", "False", "ProgressDeadlineExceeded", absl::Seconds(30))}, kNew, "True",
                     "CloneSetAvailable", kZero, kZero, kZero}),
    [](const auto& info) { return info.param.name; });

TEST(StatusTest, ExceededMessageNamesRevision) {
  Fixture f(kRollingOut, WithDeadline(Spec(3)), {Cond("Progressing", "True", "CloneSetUpdated", kDay)});
  const pb::CloneSetStatus s = f.Run();
  const pb::Condition* p = FindType(s, "Progressing");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->message(), "CloneSet revision cs-new222 has timed out progressing");
}

// The messages are upstream's, word for word.
TEST(StatusTest, ProgressingMessages) {
  struct M {
    std::vector<P> pods;
    ResolvedSpec spec;
    std::string message;
  };
  for (const M& m : std::vector<M>{{{{}, {}, {}}, WithDeadline(Spec(3)), "CloneSet is available"},
                                   {kRollingOut, WithDeadline(Paused(Spec(3))), "CloneSet is paused"},
                                   {kRollingOut, WithDeadline(Spec(3, 2)), "CloneSet has been paused due to partition ready"},
                                   {kRollingOut, WithDeadline(Spec(3)), "CloneSet is progressing"}}) {
    Fixture f(m.pods, m.spec);
    const pb::CloneSetStatus s = f.Run();
    const pb::Condition* p = FindType(s, "Progressing");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->message(), m.message);
  }
}

// As upstream's SetCondition: a condition that changes status or reason moves to the end of the list; one that
// keeps them stays where it is.
TEST(StatusTest, ReplacedConditionMovesToTheEnd) {
  Fixture f({{}, {}, {}}, WithDeadline(Spec(3)),
            {Cond("Progressing", "True", "CloneSetUpdated", absl::Seconds(30)),
             Cond("FailedScale", "True", "", absl::Seconds(30), "no ids left")});
  const pb::CloneSetStatus s = f.Run(absl::InternalError("no ids left"));
  ASSERT_EQ(s.conditions_size(), 2);
  EXPECT_EQ(s.conditions(0).type(), "FailedScale");
  EXPECT_EQ(s.conditions(1).type(), "Progressing");
  EXPECT_EQ(s.conditions(1).reason(), "CloneSetAvailable");

  Fixture same({{}, {}, {}}, WithDeadline(Spec(3)),
               {Cond("Progressing", "True", "CloneSetAvailable", absl::Seconds(30)),
                Cond("FailedScale", "True", "", absl::Seconds(30), "no ids left")});
  const pb::CloneSetStatus kept = same.Run(absl::InternalError("no ids left"));
  ASSERT_EQ(kept.conditions_size(), 2);
  EXPECT_EQ(kept.conditions(0).type(), "Progressing");
}

// ---------------------------------------------------------------------------------------------------------------
// Failure conditions (§7.3, cleared on success here)

TEST(FailureConditionTest, ScaleErrorSetsFailedScale) {
  Fixture f({{}}, Spec(1));
  const pb::CloneSetStatus s = f.Run(absl::InternalError("no ids left"));
  const pb::Condition* c = FindType(s, "FailedScale");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status(), "True");
  EXPECT_EQ(c->message(), "no ids left");
  EXPECT_EQ(ToTime(c->last_transition_time()), kNow);
  EXPECT_EQ(FindType(s, "FailedUpdate"), nullptr);
}

TEST(FailureConditionTest, MessageRefreshedTransitionKept) {
  Fixture f({{}}, Spec(1), {Cond("FailedUpdate", "True", "", absl::Seconds(90), "old error")});
  const pb::CloneSetStatus s = f.Run(absl::OkStatus(), absl::InternalError("new error"));
  const pb::Condition* c = FindType(s, "FailedUpdate");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->message(), "new error");
  EXPECT_EQ(kNow - ToTime(c->last_transition_time()), absl::Seconds(90));
  EXPECT_EQ(ToTime(c->last_update_time()), kNow);
}

TEST(FailureConditionTest, ClearedWhenThePlanSucceeds) {
  Fixture f({{}}, Spec(1),
            {Cond("FailedScale", "True", "", absl::Seconds(9), "x"), Cond("FailedUpdate", "True", "", kDay, "y")});
  const pb::CloneSetStatus s = f.Run();
  EXPECT_EQ(s.conditions_size(), 0);
  EXPECT_TRUE(StatusNeedsWrite(f.ctx.clone_set->status(), s));
}

TEST(FailureConditionTest, OtherConditionKeptWhileOneStageFails) {
  Fixture f({{}}, Spec(1), {Cond("FailedUpdate", "True", "", kDay, "y")});
  const pb::CloneSetStatus s = f.Run(absl::InternalError("scale broke"));
  ASSERT_NE(FindType(s, "FailedUpdate"), nullptr);
  ASSERT_NE(FindType(s, "FailedScale"), nullptr);
  EXPECT_EQ(FindType(s, "FailedUpdate")->message(), "y");
}

// ---------------------------------------------------------------------------------------------------------------
// Requeue (§7.5)

struct RequeueCase {
  std::string name;
  std::vector<P> pods;
  int32_t min_ready;
  bool fail;
  absl::Duration want;
};

class MinReadyRequeueTest : public ::testing::TestWithParam<RequeueCase> {};

TEST_P(MinReadyRequeueTest, Requeues) {
  const RequeueCase& c = GetParam();
  Fixture f(c.pods, Spec(static_cast<int32_t>(c.pods.size()), 0, c.min_ready));
  f.Run(c.fail ? absl::InternalError("x") : absl::OkStatus());
  EXPECT_EQ(f.plan.requeue(), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Semantics75, MinReadyRequeueTest,
    ::testing::Values(RequeueCase{"all_available", {{}, {}}, 30, false, kZero},
                      RequeueCase{"first_to_become_available", {{.ready_age = 10}, {.ready_age = 25}}, 30, false,
                                  absl::Seconds(6)},
                      RequeueCase{"exact_boundary_waits_one_second", {{.ready_age = 30}}, 30, false, absl::Seconds(1)},
                      RequeueCase{"lifecycle_blocked_falls_back_to_min_ready", {{.lifecycle = "PreparingUpdate"}}, 30,
                                  false, absl::Seconds(30)},
                      RequeueCase{"no_min_ready", {{.ready_age = 0}}, 0, false, kZero},
                      RequeueCase{"not_after_errors", {{.ready_age = 10}}, 30, true, kZero},
                      RequeueCase{"not_ready_pods_do_not_count", {{.ready = false}}, 30, false, kZero}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// When to write (§7.2)

pb::CloneSetStatus BaseStatus() {
  pb::CloneSetStatus s;
  s.set_observed_generation(3);
  s.set_replicas(3);
  s.set_ready_replicas(3);
  s.set_available_replicas(3);
  s.set_updated_replicas(3);
  s.set_updated_ready_replicas(3);
  s.set_updated_available_replicas(3);
  s.set_expected_updated_replicas(3);
  s.set_update_revision(kNew);
  s.set_current_revision(kNew);
  s.set_label_selector("app=demo");
  *s.add_conditions() = Cond("Progressing", "True", "CloneSetAvailable", kDay, "CloneSet is available");
  return s;
}

struct WriteCase {
  std::string name;
  void (*mutate)(pb::CloneSetStatus&);
  bool want;
};

class NeedsWriteTest : public ::testing::TestWithParam<WriteCase> {};

TEST_P(NeedsWriteTest, Decides) {
  pb::CloneSetStatus next = BaseStatus();
  GetParam().mutate(next);
  EXPECT_EQ(StatusNeedsWrite(BaseStatus(), next), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Semantics72, NeedsWriteTest,
    ::testing::Values(
        WriteCase{"identical", [](pb::CloneSetStatus&) {}, false},
        WriteCase{"generation", [](pb::CloneSetStatus& s) { s.set_observed_generation(4); }, true},
        WriteCase{"replicas", [](pb::CloneSetStatus& s) { s.set_replicas(4); }, true},
        WriteCase{"ready", [](pb::CloneSetStatus& s) { s.set_ready_replicas(2); }, true},
        WriteCase{"available", [](pb::CloneSetStatus& s) { s.set_available_replicas(2); }, true},
        WriteCase{"updated", [](pb::CloneSetStatus& s) { s.set_updated_replicas(2); }, true},
        WriteCase{"updated_ready", [](pb::CloneSetStatus& s) { s.set_updated_ready_replicas(2); }, true},
        WriteCase{"updated_available", [](pb::CloneSetStatus& s) { s.set_updated_available_replicas(2); }, true},
        WriteCase{"expected_updated", [](pb::CloneSetStatus& s) { s.set_expected_updated_replicas(1); }, true},
        WriteCase{"update_revision", [](pb::CloneSetStatus& s) { s.set_update_revision("x"); }, true},
        WriteCase{"current_revision", [](pb::CloneSetStatus& s) { s.set_current_revision("x"); }, true},
        WriteCase{"collision_count", [](pb::CloneSetStatus& s) { s.set_collision_count(1); }, true},
        WriteCase{"label_selector", [](pb::CloneSetStatus& s) { s.set_label_selector("app=x"); }, true},
        WriteCase{"progress_reason", [](pb::CloneSetStatus& s) { s.mutable_conditions(0)->set_reason("CloneSetPaused"); },
                  true},
        WriteCase{"progress_status", [](pb::CloneSetStatus& s) { s.mutable_conditions(0)->set_status("False"); },
                  true},
        WriteCase{"progress_removed", [](pb::CloneSetStatus& s) { s.clear_conditions(); }, true},
        WriteCase{"progress_message_only", [](pb::CloneSetStatus& s) { s.mutable_conditions(0)->set_message("m"); },
                  false},
        WriteCase{"progress_transition_time_only",
                  [](pb::CloneSetStatus& s) { s.mutable_conditions(0)->mutable_last_transition_time()->set_seconds(1); },
                  false},
        WriteCase{"progress_clock_restarted",
                  [](pb::CloneSetStatus& s) { s.mutable_conditions(0)->mutable_last_update_time()->set_seconds(1); },
                  true},
        WriteCase{"failed_scale_appears",
                  [](pb::CloneSetStatus& s) { *s.add_conditions() = Cond("FailedScale", "True", "", kZero, "e"); },
                  true}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace cloneset::planner
