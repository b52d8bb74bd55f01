#include "imagepull/coordinator.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::imagepull {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);

void SetTime(absl::Time t, google::protobuf::Timestamp* out) {
  out->set_seconds(absl::ToUnixSeconds(t));
}

pb::Pod Pod(std::string name, std::string node, std::string phase = "Running", bool ready = true,
            absl::Time ready_since = kT0, int restarts = 0) {
  pb::Pod p;
  p.mutable_metadata()->set_name(std::move(name));
  p.set_node_name(std::move(node));
  p.set_phase(std::move(phase));
  pb::Condition* condition = p.add_conditions();
  condition->set_type("Ready");
  condition->set_status(ready ? "True" : "False");
  SetTime(ready_since, condition->mutable_last_transition_time());
  p.add_container_statuses()->set_restart_count(restarts);
  SetTime(kT0 - absl::Hours(1), p.mutable_metadata()->mutable_creation_timestamp());
  return p;
}

PullJob Job(int parallelism, int min_ready = 0, int timeout = 60) {
  PullJob j;
  j.namespace_ = "ns";
  j.name = "web-7f9-app";
  j.uid = "job-uid";
  j.image = "nginx:1.25";
  j.parallelism = parallelism;
  j.min_updated_ready_pods = min_ready;
  j.timeout_seconds = timeout;
  return j;
}

NodeView Assigned(absl::Time at, std::optional<PullPhase> reported = std::nullopt, std::string message = "") {
  NodeView v;
  v.request = PullRequest{.job = "ns/web-7f9-app", .job_uid = "job-uid", .image = "nginx:1.25", .assigned_at = at};
  if (reported) {
    v.report = PullReport{.job = "ns/web-7f9-app", .job_uid = "job-uid", .image = "nginx:1.25", .phase = *reported,
                          .message = std::move(message), .start_time = at + absl::Seconds(1)};
    if (IsTerminal(*reported)) v.report->completion_time = at + absl::Seconds(3);
  }
  return v;
}

std::vector<pb::Pod> FourNodes() {
  return {Pod("p0", "n0"), Pod("p1", "n1"), Pod("p2", "n2"), Pod("p3", "n3")};
}

TEST(TargetNodesTest, FollowsDefaultUpdateOrderAndDeduplicates) {
  std::vector<pb::Pod> pods = {
      Pod("ready-old", "n1", "Running", true, kT0 - absl::Minutes(10)),
      Pod("ready-new", "n2", "Running", true, kT0 - absl::Minutes(1)),
      Pod("not-ready", "n3", "Running", false),
      Pod("pending", "n4", "Pending", false),
      Pod("unknown", "n5", "Unknown", false),
      Pod("unscheduled", "", "Pending", false),
      Pod("restarts", "n6", "Running", true, kT0 - absl::Minutes(10), 3),
      Pod("same-node", "n4", "Running", true),
  };
  pb::Pod deleting = Pod("deleting", "n9", "Pending", false);
  SetTime(kT0, deleting.mutable_metadata()->mutable_deletion_timestamp());
  pods.push_back(deleting);
  EXPECT_THAT(TargetNodes(pb::UpdateStrategy(), pods), ElementsAre("n4", "n5", "n3", "n2", "n6", "n1"));
}

// The coordinator pulls in the order the planner updates the pods (common/update_order.h), strategy included:
// before it shared that order it sorted by the default order only, so these gave n0 n1 n2 n3.
TEST(TargetNodesTest, FollowsThePlannersPriorityStrategy) {
  std::vector<pb::Pod> pods = FourNodes();
  (*pods[2].mutable_metadata()->mutable_labels())["tier"] = "canary";
  pb::UpdateStrategy strategy;
  pb::UpdatePriorityWeightTerm* term = strategy.mutable_priority_strategy()->add_weight_priority();
  term->set_weight(100);
  (*term->mutable_match_selector()->mutable_match_labels())["tier"] = "canary";
  EXPECT_THAT(TargetNodes(strategy, pods), ElementsAre("n2", "n0", "n1", "n3"));
}

TEST(TargetNodesTest, FollowsThePlannersScatterStrategy) {
  std::vector<pb::Pod> pods = FourNodes();
  for (int i : {0, 1}) (*pods[i].mutable_metadata()->mutable_labels())["zone"] = "A";
  pb::UpdateStrategy strategy;
  pb::UpdateScatterTerm* term = strategy.add_scatter_strategy();
  term->set_key("zone");
  term->set_value("A");
  EXPECT_THAT(TargetNodes(strategy, pods), ElementsAre("n0", "n2", "n3", "n1"));
}

TEST(TargetNodesTest, PreparingUpdatePodsFirst) {
  std::vector<pb::Pod> pods = FourNodes();
  (*pods[3].mutable_metadata()->mutable_labels())["lifecycle.apps.kruise.io/state"] = "PreparingUpdate";
  EXPECT_THAT(TargetNodes(pb::UpdateStrategy(), pods), ElementsAre("n3", "n0", "n1", "n2"));
}

TEST(DecideJobTest, AssignsInTheStrategysOrder) {
  PullJob job = Job(1);
  JobInputs in{.job = &job, .pods = FourNodes(), .now = kT0};
  (*in.pods[3].mutable_metadata()->mutable_labels())["tier"] = "canary";
  pb::UpdatePriorityOrderTerm* term = in.strategy.mutable_priority_strategy()->add_order_priority();
  term->set_ordered_key("tier");
  EXPECT_THAT(DecideJob(in).assign, ElementsAre("n0"));  // pods without the key come first (upstream parity)
  for (int i : {0, 1, 2}) (*in.pods[i].mutable_metadata()->mutable_labels())["tier"] = "v1";
  (*in.pods[3].mutable_metadata()->mutable_labels())["tier"] = "v2";
  EXPECT_THAT(DecideJob(in).assign, ElementsAre("n3"));  // the higher number first
}

TEST(ParseOwnerStateTest, ReadsTheUpdateStrategyAsThePlannerDoes) {
  const std::string clone_set = R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet",
    "metadata":{"name":"web","namespace":"ns","generation":2},
    "spec":{"replicas":4,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.25"}]}},
      "updateStrategy":{"type":"InPlaceIfPossible","scatterStrategy":[{"key":"zone","value":"A"}],
        "priorityStrategy":{"weightPriority":[{"weight":50,"matchSelector":{"matchLabels":{"tier":"canary"}}}]}}},
    "status":{"observedGeneration":2,"updatedReadyReplicas":1}})";
  absl::StatusOr<OwnerState> owner = ParseOwnerState(clone_set);
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(owner->updated_ready, 1);
  ASSERT_EQ(owner->strategy.scatter_strategy_size(), 1);
  EXPECT_EQ(owner->strategy.scatter_strategy(0).key(), "zone");
  ASSERT_EQ(owner->strategy.priority_strategy().weight_priority_size(), 1);
  EXPECT_EQ(owner->strategy.priority_strategy().weight_priority(0).weight(), 50);
  // A CloneSet the planner cannot decode still gives the status fields, with the default order.
  absl::StatusOr<OwnerState> odd = ParseOwnerState(R"({"spec":{"replicas":"x"},"status":{"updatedReadyReplicas":3}})");
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->updated_ready, 3);
  EXPECT_FALSE(odd->strategy.has_priority_strategy());
}

TEST(DecideJobTest, AssignsAtMostParallelismNodesInUpdateOrder) {
  PullJob job = Job(2);
  JobInputs in{.job = &job, .pods = FourNodes(), .now = kT0};
  JobDecision d = DecideJob(in);
  EXPECT_THAT(d.assign, ElementsAre("n0", "n1"));
  EXPECT_EQ(d.status.phase, "Running");
  EXPECT_EQ(d.status.desired, 4);
  EXPECT_EQ(d.status.pulling, 2);
  EXPECT_EQ(d.status.pending, 2);
  EXPECT_EQ(d.status.start_time, kT0);
  EXPECT_THAT(d.events, IsEmpty());
}

TEST(DecideJobTest, FreedSlotGoesToTheNextNode) {
  PullJob job = Job(2);
  JobInputs in{.job = &job, .pods = FourNodes(), .now = kT0 + absl::Seconds(5)};
  in.nodes["n0"] = Assigned(kT0, PullPhase::kSucceeded);
  in.nodes["n1"] = Assigned(kT0, PullPhase::kPulling);
  JobDecision d = DecideJob(in);
  EXPECT_THAT(d.assign, ElementsAre("n2"));
  EXPECT_EQ(d.status.succeeded, 1);
  EXPECT_EQ(d.status.pulling, 2);
  EXPECT_EQ(d.status.pending, 1);
}

TEST(DecideJobTest, WaitsForMinUpdatedReadyPods) {
  struct Case {
    int min_ready;
    int updated_ready;
    bool already_assigned;
    std::vector<std::string> assign;
    std::string phase;
  };
  for (const Case& c : std::vector<Case>{{2, 1, false, {}, "Waiting"},
                                         {2, 2, false, {"n0"}, "Running"},
                                         {0, 0, false, {"n0"}, "Running"},
                                         // once started, a dip in ready pods does not stop the job
                                         {2, 0, true, {}, "Running"}}) {
    SCOPED_TRACE(testing::Message() << c.min_ready << "/" << c.updated_ready << "/" << c.already_assigned);
    PullJob job = Job(1, c.min_ready);
    JobInputs in{.job = &job, .pods = FourNodes(), .updated_ready = c.updated_ready, .now = kT0};
    if (c.already_assigned) in.nodes["n0"] = Assigned(kT0, PullPhase::kPulling);
    JobDecision d = DecideJob(in);
    EXPECT_EQ(d.assign, c.assign);
    EXPECT_EQ(d.status.phase, c.phase);
  }
  PullJob job = Job(1, 3);
  JobInputs in{.job = &job, .pods = FourNodes(), .updated_ready = 1, .now = kT0};
  EXPECT_EQ(DecideJob(in).status.message, "waiting for 3 updated ready pods (have 1)");
  EXPECT_EQ(DecideJob(in).status.pending, 4);
}

TEST(DecideJobTest, ReportedFailureIsAWarningAndDoesNotBlock) {
  PullJob job = Job(1);
  JobInputs in{.job = &job, .pods = FourNodes(), .now = kT0 + absl::Seconds(5)};
  in.nodes["n0"] = Assigned(kT0, PullPhase::kFailed, "rpc error: not found");
  JobDecision d = DecideJob(in);
  EXPECT_THAT(d.assign, ElementsAre("n1"));
  EXPECT_EQ(d.status.failed, 1);
  ASSERT_EQ(d.status.nodes.size(), 4u);
  EXPECT_EQ(d.status.nodes[0].node, "n0");
  EXPECT_EQ(d.status.nodes[0].phase, PullPhase::kFailed);
  EXPECT_EQ(d.status.nodes[0].message, "rpc error: not found");
  EXPECT_THAT(d.events, ElementsAre(JobEvent{"Warning", "ImagePullFailed",
                                             "ImagePullJob web-7f9-app: node n0 failed to pull nginx:1.25: rpc "
                                             "error: not found"}));
  // Already reported: no second event.
  job.status = d.status;
  EXPECT_THAT(DecideJob(in).events, IsEmpty());
}

TEST(DecideJobTest, PullWithoutAgentReportTimesOut) {
  struct Case {
    std::optional<PullPhase> report;
    absl::Duration elapsed;
    PullPhase want;
  };
  // timeout 60 s: no report -> 2*60+30 s after assignment; report started at +1 s -> 60+30 s after that.
  for (const Case& c : std::vector<Case>{{std::nullopt, absl::Seconds(149), PullPhase::kPulling},
                                         {std::nullopt, absl::Seconds(150), PullPhase::kFailed},
                                         {PullPhase::kPulling, absl::Seconds(90), PullPhase::kPulling},
                                         {PullPhase::kPulling, absl::Seconds(91), PullPhase::kFailed},
                                         {PullPhase::kSucceeded, absl::Hours(1), PullPhase::kSucceeded}}) {
    SCOPED_TRACE(absl::FormatDuration(c.elapsed));
    PullJob job = Job(1, 0, 60);
    JobInputs in{.job = &job, .pods = {Pod("p0", "n0"), Pod("p1", "n1")}, .now = kT0 + c.elapsed};
    in.nodes["n0"] = Assigned(kT0, c.report);
    JobDecision d = DecideJob(in);
    EXPECT_EQ(d.status.nodes[0].phase, c.want);
    // A timed-out node frees its slot.
    EXPECT_EQ(d.assign.size(), c.want == PullPhase::kPulling ? 0u : 1u);
  }
}

TEST(DecideJobTest, CompletesOnceAndKeepsTheCompletionTime) {
  PullJob job = Job(2);
  JobInputs in{.job = &job, .pods = {Pod("p0", "n0"), Pod("p1", "n1")}, .now = kT0 + absl::Seconds(10)};
  in.nodes["n0"] = Assigned(kT0, PullPhase::kSucceeded);
  in.nodes["n1"] = Assigned(kT0, PullPhase::kFailed, "timeout");
  JobDecision d = DecideJob(in);
  EXPECT_EQ(d.status.phase, "Complete");
  EXPECT_EQ(d.status.completion_time, kT0 + absl::Seconds(10));
  EXPECT_EQ(d.status.message, "pulled on 1 of 2 nodes");
  ASSERT_EQ(d.events.size(), 2u);
  EXPECT_EQ(d.events[1], (JobEvent{"Normal", "ImagePullJobComplete",
                                   "ImagePullJob web-7f9-app: nginx:1.25 pulled on 1 of 2 nodes (1 failed)"}));
  job.status = d.status;
  in.now += absl::Minutes(1);
  JobDecision again = DecideJob(in);
  EXPECT_TRUE(again.status == job.status) << "a settled job must not be rewritten";
  EXPECT_THAT(again.events, IsEmpty());
}

TEST(DecideJobTest, UpdatedPodsDropTheirPendingNodes) {
  PullJob job = Job(1);
  // p1..p3 were updated in place meanwhile: they no longer match the selector.
  JobInputs in{.job = &job, .pods = {Pod("p0", "n0")}, .now = kT0};
  in.nodes["n0"] = Assigned(kT0, PullPhase::kSucceeded);
  JobDecision d = DecideJob(in);
  EXPECT_THAT(d.assign, IsEmpty());
  EXPECT_EQ(d.status.desired, 1);
  EXPECT_EQ(d.status.phase, "Complete");
}

TEST(DecideJobTest, NoTargetsCompletesAtOnce) {
  PullJob job = Job(1);
  JobInputs in{.job = &job, .now = kT0};
  JobDecision d = DecideJob(in);
  EXPECT_EQ(d.status.phase, "Complete");
  EXPECT_EQ(d.status.desired, 0);
}

// Drives DecideJob like the loop does, with agents finishing pulls at random times and the coordinator
// "restarting" (deciding from API state only) every round; measures nodes pulling at once.
TEST(DecideJobTest, ParallelismIsNeverExceededMeasured) {
  for (int parallelism : {1, 2, 3, 5}) {
    SCOPED_TRACE(parallelism);
    std::mt19937 rng(parallelism);
    PullJob job = Job(parallelism);
    std::vector<pb::Pod> pods;
    for (int i = 0; i < 12; ++i) pods.push_back(Pod("p" + std::to_string(i), "n" + std::to_string(i)));
    std::map<std::string, NodeView> api;  // what the NodeImages say
    absl::Time now = kT0;
    int max_pulling = 0, rounds = 0, total_assigned = 0;
    std::map<std::string, int> assigned_count;
    while (rounds++ < 200) {
      JobInputs in{.job = &job, .pods = pods, .nodes = api, .now = now};
      JobDecision d = DecideJob(in);
      job.status = d.status;
      for (const std::string& n : d.assign) {
        api[n] = Assigned(now, PullPhase::kPulling);
        ++assigned_count[n];
        ++total_assigned;
      }
      int pulling = 0;
      for (auto& [n, v] : api) {
        if (!IsTerminal(v.report->phase)) {
          ++pulling;
          if (rng() % 3 == 0) v.report->phase = (rng() % 5 == 0) ? PullPhase::kFailed : PullPhase::kSucceeded;
        }
      }
      max_pulling = std::max(max_pulling, pulling);
      if (d.status.phase == "Complete") break;
      now += absl::Seconds(1);
    }
    EXPECT_EQ(max_pulling, parallelism);
    EXPECT_EQ(total_assigned, 12);
    for (const auto& [n, c] : assigned_count) EXPECT_EQ(c, 1) << n << " was assigned twice";
    EXPECT_EQ(job.status.phase, "Complete");
    EXPECT_EQ(job.status.succeeded + job.status.failed, 12);
  }
}

TEST(DesiredRequestsTest, KeepsLiveJobsDropsDeletedAddsNew) {
  auto req = [](std::string uid) { return PullRequest{.job = "ns/" + uid, .job_uid = uid, .image = "i"}; };
  std::vector<PullRequest> current = {req("a"), req("gone"), req("b")};
  std::vector<PullRequest> out = DesiredRequests(current, {"a", "b", "c"}, {req("c"), req("a")});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].job_uid, "a");
  EXPECT_EQ(out[1].job_uid, "b");
  EXPECT_EQ(out[2].job_uid, "c");
  EXPECT_THAT(DesiredRequests(current, {}, {}), IsEmpty());
}

}  // namespace
}  // namespace cloneset::imagepull

namespace cloneset::imagepull {
namespace {

TEST(RolloutOverTest, Table) {
  PullJob job;
  job.revision_hash = "7f9";
  struct Case {
    std::string name;
    std::string owner_json;  // "" = owner gone
    bool over;
    int32_t updated_ready;
  };
  for (const Case& c : std::vector<Case>{
           {"owner gone", "", true, 0},
           {"rolling out", R"({"metadata":{"generation":2},"status":{"observedGeneration":2,"currentRevision":"web-1",
              "updateRevision":"web-7f9","updatedReadyReplicas":3}})", false, 3},
           {"settled on the job's revision", R"({"metadata":{"generation":2},"status":{"observedGeneration":2,
              "currentRevision":"web-7f9","updateRevision":"web-7f9","updatedReadyReplicas":8}})", true, 8},
           {"replaced by a newer revision", R"({"metadata":{"generation":3},"status":{"observedGeneration":3,
              "currentRevision":"web-1","updateRevision":"web-abc","updatedReadyReplicas":5}})", true, 0},
           {"status not caught up yet", R"({"metadata":{"generation":3},"status":{"observedGeneration":2,
              "currentRevision":"web-1","updateRevision":"web-1"}})", false, 0},
       }) {
    SCOPED_TRACE(c.name);
    OwnerState owner;
    if (!c.owner_json.empty()) {
      auto parsed = ParseOwnerState(c.owner_json);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      owner = *parsed;
    }
    EXPECT_EQ(RolloutOver(job, owner), c.over);
    EXPECT_EQ(UpdatedReadyFor(job, owner), c.updated_ready);
  }
  EXPECT_FALSE(ParseOwnerState("nope").ok());
}

}  // namespace
}  // namespace cloneset::imagepull
