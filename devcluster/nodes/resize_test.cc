#include "devcluster/nodes/resize.h"

#include <gtest/gtest.h>

#include <string>

#include "base/time_format.h"

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

const ResizeClock::time_point kNow = absl::ToChronoTime(absl::FromUnixSeconds(1800000000));

// A pod whose container "app" is asked for `spec_cpu` and runs with `running_cpu` (requests; memory 1Gi both).
json Pod(const std::string& spec_cpu, const std::string& running_cpu, bool running = true) {
  json status = {{"name", "app"}};
  if (running) {
    status["state"] = {{"running", {{"startedAt", "2027-01-15T08:00:00Z"}}}};
    status["allocatedResources"] = {{"cpu", running_cpu}, {"memory", "1Gi"}};
    status["resources"] = {{"requests", {{"cpu", running_cpu}, {"memory", "1Gi"}}}};
  } else {
    status["state"] = {{"waiting", {{"reason", "ContainerCreating"}}}};
  }
  return {{"metadata", {{"name", "web"}, {"generation", 3}}},
          {"spec", {{"containers", json::array({{{"name", "app"},
                                                 {"resources", {{"requests", {{"cpu", spec_cpu}, {"memory", "1Gi"}}}}}}})}}},
          {"status", {{"containerStatuses", json::array({status})}}}};
}

const ResizeNode kNode{.cpu_milli_capacity = 4000, .memory_capacity = int64_t{8} << 30, .cpu_milli_used = 1000};

struct Case {
  std::string name;
  json pod;
  ResizeFault fault;
  bool accepted;
  std::string pending_reason;  // "" = none
  std::string pending_message;
  std::string cpu_after;  // status resources.requests.cpu after the decision
};

class DecideResizeTest : public ::testing::TestWithParam<Case> {};

TEST_P(DecideResizeTest, Outcome) {
  const Case& c = GetParam();
  const ResizeDecision d = DecideResize(c.pod, kNode, c.fault, ResizeTiming{}, kNow);
  EXPECT_EQ(d.accepted, c.accepted);
  EXPECT_EQ(d.in_progress, c.accepted);
  ASSERT_EQ(d.pending.has_value(), !c.pending_reason.empty());
  if (d.pending) {
    EXPECT_EQ((*d.pending)["reason"], c.pending_reason);
    EXPECT_EQ((*d.pending)["message"], c.pending_message);
  }
  json status = c.pod["status"];
  ApplyResize(d, 3, "2027-01-15T08:00:00Z", status);
  EXPECT_EQ(status["containerStatuses"][0]["resources"]["requests"]["cpu"], c.cpu_after);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DecideResizeTest,
    ::testing::Values(Case{"Unchanged", Pod("1", "1"), {}, false, "", "", "1"},
                      Case{"SameValueOtherSpelling", Pod("1000m", "1"), {}, false, "", "", "1"},
                      Case{"Accepted", Pod("2", "1"), {}, true, "", "", "1"},
                      Case{"Infeasible", Pod("5", "1"), {}, false, "Infeasible",
                           "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000", "1"},
                      Case{"Deferred", Pod("3500m", "1"), {}, false, "Deferred",
                           "Node didn't have enough resource: cpu, requested: 3500, used: 1000, capacity: 4000", "1"},
                      Case{"FaultInfeasible", Pod("2", "1"), {.outcome = "Infeasible"}, false, "Infeasible",
                           "resize held back by the pod annotation devcluster.cloneset.io/fault (resize-infeasible)",
                           "1"},
                      Case{"NotRunningStartsWithTheSpec", Pod("2", "1", false), {}, false, "", "", "2"}),
    [](const auto& info) { return info.param.name; });

TEST(DecideResizeTest, AcceptedThenAppliedAfterTheDelay) {
  json pod = Pod("2", "1");
  const ResizeTiming timing{.actuate = seconds(1), .retry = seconds(5)};
  ResizeDecision d = DecideResize(pod, kNode, {}, timing, kNow);
  ASSERT_TRUE(d.accepted);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_EQ(*d.wake_at, kNow + seconds(1));
  ApplyResize(d, 3, base::FormatTime(absl::FromChrono(kNow)), pod["status"]);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["allocatedResources"]["cpu"], "2");
  ASSERT_EQ(pod["status"]["conditions"].size(), 1u);
  EXPECT_EQ(pod["status"]["conditions"][0]["type"], "PodResizeInProgress");
  EXPECT_EQ(pod["status"]["conditions"][0]["observedGeneration"], 3);

  // Too early: still in progress, nothing new.
  d = DecideResize(pod, kNode, {}, timing, kNow + milliseconds(500));
  EXPECT_FALSE(d.accepted);
  EXPECT_TRUE(d.in_progress);
  // Due: applied, the condition goes.
  d = DecideResize(pod, kNode, {}, timing, kNow + seconds(1));
  EXPECT_FALSE(d.in_progress);
  ApplyResize(d, 3, base::FormatTime(absl::FromChrono(kNow + seconds(1))), pod["status"]);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"], "2");
  EXPECT_FALSE(pod["status"].contains("conditions"));
}

TEST(DecideResizeTest, DeferredIsTriedAgain) {
  const ResizeDecision d = DecideResize(Pod("3500m", "1"), kNode, {}, ResizeTiming{.retry = seconds(7)}, kNow);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_EQ(*d.wake_at, kNow + seconds(7));
  const ResizeDecision infeasible = DecideResize(Pod("5", "1"), kNode, {}, ResizeTiming{}, kNow);
  EXPECT_FALSE(infeasible.wake_at.has_value()) << "only a new spec changes an Infeasible resize";
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
