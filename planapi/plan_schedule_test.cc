// The plan's stages and per-pod groups, and the bounded runner: order kept within a group, no more than
// `parallelism` groups in flight, nothing started after a stop.
#include "planapi/plan_schedule.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace cloneset::planapi {
namespace {

using Groups = std::vector<std::vector<int>>;

pb::Action Create(const std::string& pod, int batch) {
  pb::Action a;
  a.mutable_create_pod()->set_pod_json(R"({"metadata":{"name":")" + pod + R"("}})");
  a.mutable_create_pod()->set_batch(batch);
  return a;
}
pb::Action Patch(const std::string& pod) {
  pb::Action a;
  a.mutable_patch_pod()->set_name(pod);
  return a;
}
pb::Action Status(const std::string& pod) {
  pb::Action a;
  a.mutable_patch_pod_status()->set_name(pod);
  return a;
}
pb::Action Delete(const std::string& pod) {
  pb::Action a;
  a.mutable_delete_pod()->set_name(pod);
  return a;
}
pb::Action Revision() {
  pb::Action a;
  a.mutable_create_revision()->set_revision_json(R"({"metadata":{"name":"cs-1"}})");
  return a;
}
pb::Action Pvc() {
  pb::Action a;
  a.mutable_delete_pvc()->set_name("data-cs-a");
  return a;
}

struct Stage {
  Groups groups;
  bool creates;
  bool operator==(const Stage&) const = default;
};

std::vector<Stage> Schedule(const std::vector<pb::Action>& actions) {
  pb::PlanResponse plan;
  for (const auto& a : actions) *plan.add_actions() = a;
  std::vector<Stage> out;
  for (const PlanStage& s : SchedulePlan(plan)) out.push_back({s.groups, s.creates});
  return out;
}

TEST(SchedulePlan, StagesAndGroups) {
  struct Case {
    std::string name;
    std::vector<pb::Action> actions;
    std::vector<Stage> want;
  };
  const Case cases[] = {
      {"empty", {}, {}},
      {"in-place update: status before spec per pod, pods side by side",
       {Status("a"), Patch("a"), Status("b"), Patch("b"), Patch("c")},
       {{{{0, 1}, {2, 3}, {4}}, false}}},
      {"revision first, alone",
       {Revision(), Status("a"), Patch("a")},
       {{{{0}}, false}, {{{1, 2}}, false}}},
      {"slow-start batches are stages",
       {Create("a", 0), Create("b", 1), Create("c", 1), Create("d", 2), Create("e", 2), Create("f", 2)},
       {{{{0}}, true}, {{{1}, {2}}, true}, {{{3}, {4}, {5}}, true}}},
      {"deletes and patches of different pods share a stage; creates do not",
       {Patch("a"), Delete("b"), Delete("a"), Create("c", 0), Patch("d")},
       {{{{0, 2}, {1}}, false}, {{{3}}, true}, {{{4}}, false}}},
      {"PVC actions are barriers",
       {Patch("a"), Pvc(), Patch("b"), Patch("c")},
       {{{{0}}, false}, {{{1}}, false}, {{{2}, {3}}, false}}},
      {"a pod's actions stay in plan order across interleaving",
       {Status("a"), Status("b"), Patch("b"), Patch("a")},
       {{{{0, 3}, {1, 2}}, false}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Schedule(c.actions), c.want);
  }
}

TEST(PodOfAction, NamesThePod) {
  EXPECT_EQ(PodOfAction(Create("a", 0)), "a");
  EXPECT_EQ(PodOfAction(Delete("b")), "b");
  EXPECT_EQ(PodOfAction(Patch("c")), "c");
  EXPECT_EQ(PodOfAction(Status("d")), "d");
  EXPECT_EQ(PodOfAction(Revision()), "");
  EXPECT_EQ(PodOfAction(Pvc()), "");
}

// Every action runs once, a group's actions in order, and never more than `parallelism` at a time; and
// `parallelism` do run at once: the first `parallelism` actions wait for each other (bounded in real time, so a
// runner that ran fewer at once fails instead of hanging), so the overlap is certain, not likely.
TEST(RunGroups, BoundedAndOrderedWithinAGroup) {
  for (int parallelism : {1, 2, 4}) {
    SCOPED_TRACE(parallelism);
    Groups groups;
    for (int g = 0; g < 12; ++g) groups.push_back({3 * g, 3 * g + 1, 3 * g + 2});
    std::mutex mu;
    std::vector<int> order;
    std::atomic<int> in_flight{0};
    std::atomic<int> max_in_flight{0};
    std::atomic<bool> stop{false};
    absl::Mutex barrier_mu;
    int arrived = 0;
    bool barrier_met = true;
    RunGroups(groups, parallelism, stop, [&](int action) {
      const int now = ++in_flight;
      int seen = max_in_flight.load();
      while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
      }
      {
        absl::MutexLock l(&barrier_mu);
        if (++arrived <= parallelism) {
          const auto all_arrived = [&] { return arrived >= parallelism; };
          if (!barrier_mu.AwaitWithTimeout(absl::Condition(&all_arrived), absl::Seconds(60))) barrier_met = false;
        }
      }
      {
        std::lock_guard<std::mutex> l(mu);
        order.push_back(action);
      }
      --in_flight;
    });
    ASSERT_EQ(order.size(), 36u);
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 36; ++i) EXPECT_EQ(sorted[i], i);
    for (int g = 0; g < 12; ++g) {
      const auto pos = [&](int a) { return std::find(order.begin(), order.end(), a) - order.begin(); };
      EXPECT_LT(pos(3 * g), pos(3 * g + 1));
      EXPECT_LT(pos(3 * g + 1), pos(3 * g + 2));
    }
    EXPECT_TRUE(barrier_met) << "fewer than " << parallelism << " actions ran at once";
    EXPECT_EQ(max_in_flight.load(), parallelism);
    if (parallelism == 1) {
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
    }
  }
}

// Two groups in flight; the first fails and stops: the other finishes its action in flight but starts neither
// its next action nor a new group.
TEST(RunGroups, NothingStartsAfterAStop) {
  const Groups groups = {{0}, {1, 2}, {3}, {4}};
  std::mutex mu;
  std::vector<int> ran;
  std::atomic<bool> stop{false};
  absl::Notification started0, started1, stopped;
  RunGroups(groups, 2, stop, [&](int action) {
    {
      std::lock_guard<std::mutex> l(mu);
      ran.push_back(action);
    }
    if (action == 0) {
      started0.Notify();
      started1.WaitForNotification();
      stop = true;  // what the executor does after a failure with stop_on_error
      stopped.Notify();
    } else if (action == 1) {
      started1.Notify();
      started0.WaitForNotification();
      stopped.WaitForNotification();
    }
  });
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<int>{0, 1}));
}

TEST(RunGroups, StoppedBeforehandRunsNothing) {
  std::atomic<bool> stop{true};
  int runs = 0;
  RunGroups({{0}, {1}}, 4, stop, [&](int) { ++runs; });
  EXPECT_EQ(runs, 0);
}

}  // namespace
}  // namespace cloneset::planapi
