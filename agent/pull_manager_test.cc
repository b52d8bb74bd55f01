#include "agent/pull_manager.h"

#include <thread>

#include "absl/strings/escaping.h"
#include "absl/synchronization/notification.h"
#include "agent/testing/fake_cri.h"
#include "agent/testing/fake_node_api.h"
#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using imagepull::NodeImage;
using imagepull::PullPhase;
using imagepull::PullReport;
using imagepull::PullRequest;
using base::testing::FakeClock;

// How long a test waits in real time for the manager's threads (their work takes no clock time): a bound for a
// loaded machine, never reached when the code is right.
constexpr absl::Duration kRealTimeBound = absl::Seconds(30);

const absl::Time kNow = absl::FromUnixSeconds(1767225600);

PullRequest Req(std::string uid, std::string image = "", int timeout = 30) {
  return PullRequest{.job = "ns/" + uid, .job_uid = uid, .image = image.empty() ? "img-" + uid : image,
                     .secret_namespace = "ns", .timeout_seconds = timeout};
}
PullReport Rep(std::string uid, PullPhase phase) {
  return PullReport{.job = "ns/" + uid, .job_uid = uid, .image = "img-" + uid, .phase = phase};
}

std::vector<std::string> Uids(const std::vector<PullRequest>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(r.job_uid);
  return out;
}

TEST(DecidePullsTest, Table) {
  struct Case {
    std::string name;
    std::vector<PullRequest> requests;
    std::vector<PullReport> reports;
    std::set<std::string> running;
    int cap;
    std::vector<std::string> start;
    std::vector<PullPhase> phases;
  };
  for (const Case& c : std::vector<Case>{
           {"cap bounds starts", {Req("a"), Req("b"), Req("c")}, {}, {}, 2, {"a", "b"},
            {PullPhase::kPulling, PullPhase::kPulling, PullPhase::kPending}},
           {"running ones count", {Req("a"), Req("b"), Req("c")}, {Rep("a", PullPhase::kPulling)}, {"a"}, 2, {"b"},
            {PullPhase::kPulling, PullPhase::kPulling, PullPhase::kPending}},
           {"finished never restarts", {Req("a"), Req("b")},
            {Rep("a", PullPhase::kSucceeded), Rep("b", PullPhase::kFailed)}, {}, 2, {},
            {PullPhase::kSucceeded, PullPhase::kFailed}},
           {"interrupted pull (restart) is re-run", {Req("a")}, {Rep("a", PullPhase::kPulling)}, {}, 1, {"a"},
            {PullPhase::kPulling}},
           {"reports of removed requests are dropped", {Req("b")}, {Rep("a", PullPhase::kSucceeded)}, {}, 1, {"b"},
            {PullPhase::kPulling}},
       }) {
    SCOPED_TRACE(c.name);
    NodeImage ni{.node = "n0", .requests = c.requests, .reports = c.reports};
    PullPlan plan = DecidePulls(ni, c.running, c.cap, kNow);
    EXPECT_EQ(Uids(plan.start), c.start);
    std::vector<PullPhase> phases;
    for (const auto& r : plan.reports) phases.push_back(r.phase);
    EXPECT_EQ(phases, c.phases);
  }
}

// Waits until the NodeImage holds `n` reports, all terminal.
bool AllTerminal(testing::FakeNodeApi& api, size_t n) {
  return api.AwaitNode(
      [n](const NodeImage& ni) {
        if (ni.reports.size() != n) return false;
        for (const auto& r : ni.reports) {
          if (!imagepull::IsTerminal(r.phase)) return false;
        }
        return true;
      },
      kRealTimeBound);
}

TEST(PullManagerTest, PullsEverythingReportsAndSurvivesARestart) {
  testing::FakeNodeApi api;
  testing::FakeCri cri;
  cri.Preload("img-c");
  const std::string secret = nlohmann::json({{"metadata", {{"name", "regcred"}}},
                                             {"data", {{".dockerconfigjson", absl::Base64Escape(R"({"auths":{"docker.io":{"username":"u","password":"p"}}})")}}}})
                                 .dump();
  api.secrets["ns/regcred"] = secret;
  PullRequest a = Req("a");
  a.pull_secrets = {"regcred"};
  api.SetRequests({a, Req("b"), Req("c")});
  FakeClock clock;
  {
    // Notify and the workers' own Notify drive it: the clock never moves.
    PullManager m(api, cri, {.max_concurrent = 2, .clock = &clock});
    m.Start();
    m.Notify();
    ASSERT_TRUE(AllTerminal(api, 3));
  }
  NodeImage ni = api.Snapshot();
  for (const auto& r : ni.reports) EXPECT_EQ(r.phase, PullPhase::kSucceeded) << r.job_uid;
  EXPECT_EQ(cri.Pulls("img-a"), 1);
  EXPECT_EQ(cri.Pulls("img-b"), 1);
  EXPECT_EQ(cri.Pulls("img-c"), 0) << "present images are not pulled";
  ASSERT_TRUE(cri.last_auth.has_value());
  EXPECT_EQ(api.secret_reads, std::vector<std::string>{"ns/regcred"});

  // A new agent (restart) with the same API state pulls nothing again and writes nothing.
  const int writes = api.writes;
  PullManager again(api, cri, {.max_concurrent = 2, .clock = &clock});
  ASSERT_TRUE(again.Sync().ok());
  EXPECT_EQ(again.running(), 0);
  EXPECT_EQ(api.writes, writes);
  EXPECT_EQ(cri.Pulls("img-a"), 1);
}

TEST(PullManagerTest, RestartMidPullResumesWithImageStatusFirst) {
  testing::FakeNodeApi api;
  testing::FakeCri cri;
  api.SetRequests({Req("a")});
  // The previous agent died after reporting Pulling; the runtime finished the pull anyway.
  ASSERT_TRUE(api.WriteReports(api.Snapshot(), {Rep("a", PullPhase::kPulling)}).ok());
  cri.Preload("img-a");
  FakeClock clock;
  PullManager m(api, cri, {.max_concurrent = 1, .clock = &clock});
  m.Start();
  m.Notify();
  ASSERT_TRUE(AllTerminal(api, 1));
  EXPECT_EQ(api.Snapshot().reports[0].phase, PullPhase::kSucceeded);
  EXPECT_EQ(api.Snapshot().reports[0].image_id, "sha256:img-a");
  EXPECT_EQ(cri.Pulls("img-a"), 0);
}

TEST(PullManagerTest, FailureIsReportedAndOthersContinue) {
  testing::FakeNodeApi api;
  testing::FakeCri cri;
  cri.AlwaysFail("bad");
  api.SetRequests({Req("x", "bad", /*timeout=*/1), Req("y")});
  FakeClock clock;  // the 1 s timeout leaves no room for a retry's 1 s back-off: no clock time is needed
  PullManager m(api, cri, {.max_concurrent = 1, .clock = &clock});
  m.Start();
  m.Notify();
  ASSERT_TRUE(AllTerminal(api, 2));
  NodeImage ni = api.Snapshot();
  EXPECT_EQ(ni.reports[0].phase, PullPhase::kFailed);
  EXPECT_EQ(ni.reports[0].message, "pull of bad did not finish within 1s (1 attempts): registry down");
  EXPECT_EQ(ni.reports[1].phase, PullPhase::kSucceeded);
}

// Without a Notify (a missed watch event), the loop syncs every `resync` of the injected clock.
TEST(PullManagerTest, ResyncsOnTheClock) {
  testing::FakeNodeApi api;
  testing::FakeCri cri;
  api.SetRequests({Req("a")});
  FakeClock clock;
  PullManager m(api, cri, {.max_concurrent = 1, .clock = &clock, .resync = absl::Seconds(5)});
  m.Start();
  ASSERT_TRUE(clock.AwaitWaiters(1, kRealTimeBound)) << "the loop does not wait on the injected clock";
  EXPECT_EQ(api.Snapshot().reports.size(), 0u);
  clock.Advance(absl::Seconds(5));
  ASSERT_TRUE(AllTerminal(api, 1));
  EXPECT_EQ(api.Snapshot().reports[0].phase, PullPhase::kSucceeded);
}

// Stop ends the loop's resync wait and a worker's back-off between pull attempts at once, with the clock standing
// still; the abandoned pull is left Pulling for the next agent.
TEST(PullManagerTest, StopEndsEveryWaitAtOnce) {
  testing::FakeNodeApi api;
  testing::FakeCri cri;
  cri.AlwaysFail("img-a");
  api.SetRequests({Req("a", "", /*timeout=*/300)});
  FakeClock clock;
  PullManager m(api, cri, {.max_concurrent = 1, .clock = &clock, .resync = absl::Hours(1)});
  m.Start();
  m.Notify();
  // The loop waits for the next resync, the worker for its 1 s back-off after the first failed attempt.
  ASSERT_TRUE(clock.AwaitWaiters(2, kRealTimeBound));
  absl::Notification stopped;
  std::thread stopper([&] {
    m.Stop();
    stopped.Notify();
  });
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(kRealTimeBound)) << "Stop waited for the clock";
  clock.Advance(absl::Hours(2));  // releases the waits if Stop did not, so the test ends
  stopper.join();
  EXPECT_EQ(cri.Pulls("img-a"), 1);
  ASSERT_EQ(api.Snapshot().reports.size(), 1u);
  EXPECT_EQ(api.Snapshot().reports[0].phase, PullPhase::kPulling);
}

}  // namespace
}  // namespace cloneset::agent
