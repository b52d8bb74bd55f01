// The worker loop's step (worker.h) on a real work queue driven by a fake clock: which keys come back, and when.
#include "executor/worker.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/testing/fake_clock.h"
#include "prometheus/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

constexpr absl::Duration kBackoff = absl::Seconds(1);

struct Fixture {
  base::testing::FakeClock clock;
  kube::WorkQueue queue{{.name = "test",
                         .clock = &clock,
                         .limiter = std::make_unique<kube::ItemExponentialRateLimiter>(kBackoff, absl::Minutes(1))}};
  bool synced = true;
  std::vector<std::string> reconciled;
  std::vector<std::string> failures;
  ReconcileResult result;

  WorkerDeps Deps() {
    return {.queue = &queue,
            .reconcile =
                [this](const std::string& key) {
                  reconciled.push_back(key);
                  clock.Advance(absl::Milliseconds(5));  // the reconcile takes time on the injected clock
                  return result;
                },
            .synced = [this] { return synced; },
            .clock = &clock,
            .failed = [this](const std::string& key, const absl::Status& s) { failures.push_back(key); }};
  }

  // The keys ready `after` from now. A marker key due at that very moment comes out after every key due by then
  // (the queue hands out delayed keys in the order of their time, ties in the order they were added), so Get never
  // waits.
  std::vector<std::string> ReadyAfter(absl::Duration after) {
    queue.AddAfter("~marker", after);
    clock.Advance(after);
    std::vector<std::string> out;
    for (auto key = queue.Get(); key.has_value() && *key != "~marker"; key = queue.Get()) {
      out.push_back(*key);
      queue.Done(*key);
    }
    return out;
  }
};

struct Case {
  std::string name;
  bool synced;
  ReconcileResult result;
  absl::Duration wait;                  // fake time after the step
  std::vector<std::string> want_ready;  // keys back in the queue by then
  bool want_reconciled;
  int want_requeues;  // the key's back-off count after the step
};

class WorkerTest : public ::testing::TestWithParam<Case> {};

TEST_P(WorkerTest, RequeuesByTheOutcome) {
  const Case& tc = GetParam();
  Fixture f;
  f.synced = tc.synced;
  f.result = tc.result;
  f.queue.Add("ns/a");
  EXPECT_TRUE(ProcessNextWorkItem(f.Deps()));
  EXPECT_EQ(!f.reconciled.empty(), tc.want_reconciled);
  EXPECT_EQ(f.queue.NumRequeues("ns/a"), tc.want_requeues);
  EXPECT_EQ(f.failures.size(), tc.result.error.ok() || !tc.want_reconciled ? 0u : 1u);
  EXPECT_THAT(f.ReadyAfter(tc.wait), ElementsAreArray(tc.want_ready));
}

ReconcileResult Result(absl::Status error, absl::Duration requeue_after = absl::ZeroDuration()) {
  ReconcileResult r;
  r.error = error;
  r.requeue_after = requeue_after;
  return r;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WorkerTest,
    ::testing::Values(
        Case{"done", true, Result(absl::OkStatus()), absl::Hours(1), {}, true, 0},
        Case{"requeue_after_not_yet", true, Result(absl::OkStatus(), absl::Seconds(30)), absl::Seconds(29), {},
             true, 0},
        Case{"requeue_after_due", true, Result(absl::OkStatus(), absl::Seconds(30)), absl::Seconds(30), {"ns/a"},
             true, 0},
        Case{"error_backs_off", true, Result(absl::UnavailableError("down")), kBackoff - absl::Milliseconds(10), {},
             true, 1},
        Case{"error_retried", true, Result(absl::UnavailableError("down")), kBackoff, {"ns/a"}, true, 1},
        // The reconciler's own back-off (retry_backoff.h) replaces the queue's.
        Case{"error_with_reconciler_backoff_not_yet", true,
             Result(absl::UnavailableError("down"), absl::Seconds(3)), absl::Seconds(3) - absl::Milliseconds(10), {},
             true, 0},
        Case{"error_with_reconciler_backoff_due", true, Result(absl::UnavailableError("down"), absl::Seconds(3)),
             absl::Seconds(3), {"ns/a"}, true, 0},
        Case{"not_synced_not_yet", false, Result(absl::OkStatus()), kNotSyncedRetry - absl::Milliseconds(1), {},
             false, 0},
        Case{"not_synced_retried", false, Result(absl::OkStatus()), kNotSyncedRetry, {"ns/a"}, false, 0}),
    [](const auto& info) { return info.param.name; });

TEST(WorkerTest, SuccessForgetsTheBackOff) {
  Fixture f;
  f.queue.Add("ns/a");
  f.result = Result(absl::UnavailableError("down"));
  ASSERT_TRUE(ProcessNextWorkItem(f.Deps()));
  EXPECT_EQ(f.queue.NumRequeues("ns/a"), 1);
  f.clock.Advance(kBackoff);  // due: the next Get hands it out at once
  f.result = Result(absl::OkStatus());
  ASSERT_TRUE(ProcessNextWorkItem(f.Deps()));
  EXPECT_THAT(f.reconciled, ElementsAre("ns/a", "ns/a"));
  EXPECT_EQ(f.queue.NumRequeues("ns/a"), 0);
  EXPECT_THAT(f.ReadyAfter(absl::Hours(1)), IsEmpty());
}

TEST(WorkerTest, StopsOnceTheQueueIsShutDownAndDrained) {
  Fixture f;
  f.queue.Add("ns/a");
  f.queue.ShutDown();
  EXPECT_TRUE(ProcessNextWorkItem(f.Deps()));  // ready work is still handed out
  EXPECT_THAT(f.reconciled, ElementsAre("ns/a"));
  EXPECT_FALSE(ProcessNextWorkItem(f.Deps()));
  RunWorker(f.Deps());  // returns at once
  EXPECT_THAT(f.failures, IsEmpty());
}

// The value of the series of family `name` whose labels include `labels`; -1 when there is none.
double Sample(prometheus::Registry& registry, const std::string& name, const std::map<std::string, std::string>& labels) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        bool found = false;
        for (const auto& l : m.label) found = found || (l.name == k && l.value == v);
        match = match && found;
      }
      if (match) return family.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return -1;
}

// ExecutorMetrics keeps the series it has looked up (metrics.cc): outcomes accumulate per result, and a CloneSet's
// gauges follow its latest status, are gone once forgotten and come back when it is observed again.
TEST(ExecutorMetricsTest, SeriesAccumulateAndForgottenCloneSetsComeBack) {
  prometheus::Registry registry;
  ExecutorMetrics metrics(registry);
  Fixture f;
  for (const char* result : {"success", "requeue_after", "success"}) {
    f.queue.Add("ns/a");
    f.result.result = result;
    WorkerDeps deps = f.Deps();
    deps.metrics = &metrics;
    ASSERT_TRUE(ProcessNextWorkItem(deps));
  }
  EXPECT_EQ(Sample(registry, "controller_runtime_reconcile_total", {{"result", "success"}}), 2);
  EXPECT_EQ(Sample(registry, "controller_runtime_reconcile_total", {{"result", "requeue_after"}}), 1);
  metrics.Action("PatchPod", "success");
  metrics.Action("PatchPod", "success");
  metrics.Action("PatchPod", "error");
  EXPECT_EQ(metrics.actions_total("PatchPod", "success"), 2);
  EXPECT_EQ(metrics.actions_total("PatchPod", "error"), 1);

  planner::v1::CloneSet cs;
  cs.mutable_metadata()->set_namespace_("ns");
  cs.mutable_metadata()->set_name("a");
  cs.mutable_spec()->set_replicas(5);
  cs.mutable_status()->set_updated_replicas(2);
  metrics.ObserveCloneSet(cs, false);
  cs.mutable_status()->set_updated_replicas(4);
  metrics.ObserveCloneSet(cs, true);
  const std::map<std::string, std::string> a = {{"namespace", "ns"}, {"name", "a"}};
  EXPECT_EQ(Sample(registry, "cloneset_spec_replicas", a), 5);
  EXPECT_EQ(Sample(registry, "cloneset_status_updated_replicas", a), 4);
  EXPECT_EQ(Sample(registry, "cloneset_rollout_progress_deadline_exceeded", a), 1);
  metrics.ForgetCloneSet("ns", "a");
  EXPECT_EQ(Sample(registry, "cloneset_status_updated_replicas", a), -1);
  cs.mutable_status()->set_updated_replicas(5);
  metrics.ObserveCloneSet(cs, false);
  EXPECT_EQ(Sample(registry, "cloneset_status_updated_replicas", a), 5);
  EXPECT_EQ(Sample(registry, "cloneset_rollout_progress_deadline_exceeded", a), 0);
}

}  // namespace
}  // namespace cloneset::executor
