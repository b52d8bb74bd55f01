// A write the API server keeps refusing is not retried in a hot loop (reconciler.h, "back-off per CloneSet").
//
// The set-up reproduces what a real cluster does around one CloneSet whose pods cannot be created (quota
// exhausted, namespace terminating): the planner mints a new pod name per plan, the API server refuses each create
// with a message naming that pod, and every write of the CloneSet's status comes back as a watch event that adds
// the key to the work queue at once (queue.Add, as InformerCache does). The worker loop then runs on the injected
// clock: nothing here sleeps, and any reconcile that happens without the clock moving is one a hot loop would do.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/time_format.h"
#include "executor/reconciler.h"
#include "executor/retry_backoff.h"
#include "executor/testing/mocks.h"
#include "executor/testing/reconciler_fixture.h"
#include "executor/worker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"
#include "kube/workqueue.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using testing::kKey;

constexpr char kCloneSetPath[] = "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs";
constexpr char kStatusPath[] = "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status";
constexpr char kPodsPath[] = "/api/v1/namespaces/ns/pods";

std::string Obj(const std::string& name, int rv) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"uid-1","resourceVersion":")" +
         std::to_string(rv) + R"("}})";
}

// kube-apiserver's answer to a pod create in a namespace whose ResourceQuota allows no more pods.
absl::Status QuotaExceeded(const std::string& pod) {
  return kube::StatusFromHttp(
      403, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"pods \")" +
               pod + R"(\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0"})");
}

class RefusalLoopTest : public testing::ReconcilerFixture {
 protected:
  RefusalLoopTest() {
    ON_CALL(planner_, Validate(_)).WillByDefault(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Validate(_)).Times(::testing::AnyNumber());
    // Each plan creates one pod under a fresh name, as the planner does for a missing replica.
    EXPECT_CALL(planner_, Plan(_)).WillRepeatedly(Invoke([this](const pb::PlanRequest& request) {
      ++plans_;
      pb::PlanResponse plan;
      pb::Action* a = plan.add_actions();
      a->mutable_create_pod()->set_pod_json(Obj("cs-" + std::to_string(plans_), 0));
      a->set_stop_on_error(true);
      plan.set_write_status(true);
      plan.set_pods_read(planapi::PodsInRequest(request));
      return absl::StatusOr<pb::PlanResponse>(plan);
    }));
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillRepeatedly(Invoke([this](std::string_view) {
      ++api_requests_;
      return absl::StatusOr<std::string>(Obj("cs", rv_));
    }));
    EXPECT_CALL(client_, Create(kPodsPath, _)).WillRepeatedly(Invoke([this](std::string_view, std::string_view body) {
      ++api_requests_;
      ++creates_;
      if (echo_creates_) queue_.Add(kKey);
      return absl::StatusOr<std::string>(QuotaExceeded(nlohmann::json::parse(body)["metadata"]["name"].get<std::string>()));
    }));
    // A status write lands in the cache and comes back as a watch event: the key is added at once.
    EXPECT_CALL(client_, Patch(kStatusPath, kube::PatchType::kMerge, _))
        .WillRepeatedly(Invoke([this](std::string_view, kube::PatchType, std::string_view body) {
          ++api_requests_;
          ++status_writes_;
          const nlohmann::json patch = nlohmann::json::parse(body);
          auto next = std::make_shared<pb::CloneSet>(*cs_);
          next->mutable_status()->clear_conditions();
          for (const auto& c : patch["status"].value("conditions", nlohmann::json::array())) {
            pb::Condition* cond = next->mutable_status()->add_conditions();
            cond->set_type(c.value("type", ""));
            cond->set_status(c.value("status", ""));
            cond->set_reason(c.value("reason", ""));
            cond->set_message(c.value("message", ""));
            if (const auto t = base::ParseTime(c.value("lastUpdateTime", "")); t.ok()) {
              cond->mutable_last_update_time()->set_seconds(absl::ToUnixSeconds(*t));
            }
          }
          next->mutable_metadata()->set_resource_version(std::to_string(++rv_));
          cs_ = next;
          queue_.Add(kKey);
          return absl::StatusOr<std::string>(Obj("cs", rv_));
        }));
    ON_CALL(cache_, GetCloneSet(kKey)).WillByDefault(Invoke([this](const std::string&) { return cs_; }));
    ON_CALL(events_, Event(_, _, _, _)).WillByDefault(Invoke(
        [this](const pb::CloneSet&, std::string_view, std::string_view reason, std::string_view) {
          ++events_by_reason_[std::string(reason)];
        }));
  }

  WorkerDeps Worker(Reconciler& r) {
    return {.queue = &queue_,
            .reconcile =
                [this, &r](const std::string& key) {
                  if (key == kMarker) {
                    marker_seen_ = true;
                    return ReconcileResult{};
                  }
                  ++reconciles_;
                  return r.Reconcile(key);
                },
            .synced = [] { return true; },
            .clock = &clock_};
  }

  // Runs the worker over what is ready, in rounds, until a round reconciles nothing or `limit` reconciles of the
  // CloneSet ran; returns those. Each round ends at a marker key due a nanosecond later (the queue hands out keys
  // due by then first), so Get never waits and the clock moves by nanoseconds only: what runs here is what would
  // run at once.
  int DrainReady(const WorkerDeps& w, int limit) {
    const int before = reconciles_;
    for (int round_start = -1; round_start != reconciles_ && reconciles_ - before < limit;) {
      round_start = reconciles_;
      queue_.AddAfter(kMarker, absl::Nanoseconds(1));
      clock_.Advance(absl::Nanoseconds(1));
      for (marker_seen_ = false; !marker_seen_;) ProcessNextWorkItem(w);
    }
    return reconciles_ - before;
  }

  static constexpr char kMarker[] = "~marker";
  bool echo_creates_ = false;
  bool marker_seen_ = false;
  int reconciles_ = 0;
  kube::WorkQueue queue_{{.name = "test", .clock = &clock_}};
  int plans_ = 0, creates_ = 0, status_writes_ = 0, api_requests_ = 0, rv_ = 100;
  std::map<std::string, int> events_by_reason_;
};

// The cause, pinned: a failed reconcile's own writes come back as watch events, and a watch event adds the key at
// once (queue.Add), bypassing the delay AddRateLimited gave it. The condition write's echo reconciles again at the
// same instant. (While the condition's message named each attempt's new pod, every attempt rewrote it and this
// never ended; SameRefusal ends that, planapi/applier.h.)
TEST_F(RefusalLoopTest, WithoutBackoffTheConditionWritesEchoReconcilesAtOnce) {
  Reconciler r(Deps());
  queue_.Add(kKey);
  EXPECT_EQ(DrainReady(Worker(r), 50), 2);
  EXPECT_EQ(plans_, 2);
  EXPECT_EQ(creates_, 2);
  EXPECT_EQ(status_writes_, 1);
}

// Any echo of an attempt (here one per refused create: the watch event of a write the attempt caused) is an
// immediate new plan, new pod name and refused POST without the back-off, and nothing with it.
TEST_F(RefusalLoopTest, AnEchoPerAttemptIsAHotLoopWithoutBackoff) {
  echo_creates_ = true;
  Reconciler r(Deps());
  queue_.Add(kKey);
  EXPECT_EQ(DrainReady(Worker(r), 50), 50);
  EXPECT_EQ(plans_, 50);

  RetryBackoff backoff({.base = absl::Seconds(1), .cap = absl::Seconds(8), .jitter = 0}, [] { return 0.0; });
  ReconcilerDeps deps = Deps();
  deps.backoff = &backoff;
  Reconciler held(std::move(deps));
  plans_ = 0;
  queue_.Add(kKey);
  DrainReady(Worker(held), 50);
  EXPECT_EQ(plans_, 1);
}

// With the back-off: one attempt, then the condition's echo finds the CloneSet backing off and asks nothing; the
// next plan comes when the back-off has passed, and the same refusal writes no condition and no event again.
TEST_F(RefusalLoopTest, BackoffHoldsTheKeyAgainstItsOwnEchoes) {
  RetryBackoff backoff({.base = absl::Seconds(1), .cap = absl::Seconds(8), .jitter = 0}, [] { return 0.0; });
  prometheus::Registry registry;
  ExecutorMetrics metrics(registry);
  ReconcilerDeps deps = Deps();
  deps.backoff = &backoff;
  deps.metrics = &metrics;
  Reconciler r(std::move(deps));
  queue_.Add(kKey);
  DrainReady(Worker(r), 50);
  EXPECT_EQ(plans_, 1);
  EXPECT_EQ(creates_, 1);
  EXPECT_EQ(status_writes_, 1);
  EXPECT_EQ(events_by_reason_["ApplyFailed"], 1);
  EXPECT_EQ(events_by_reason_["FailedCreate"], 1);

  // 1 s, 2 s, 4 s, 8 s, 8 s: five more attempts in 23 s, each a GET of the CloneSet and the refused POST only.
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::optional<absl::Duration> wait = backoff.Wait(kKey, "uid-1/1", clock_.Now());
    ASSERT_TRUE(wait.has_value());
    clock_.Advance(*wait - absl::Milliseconds(1));
    EXPECT_EQ(DrainReady(Worker(r), 50), 0) << "nothing runs while the CloneSet backs off";
    clock_.Advance(absl::Milliseconds(1));
    DrainReady(Worker(r), 50);
    EXPECT_EQ(plans_, attempt + 2);
  }
  EXPECT_EQ(plans_, 6);
  EXPECT_EQ(creates_, 6);
  EXPECT_EQ(status_writes_, 1) << "the same refusal under another pod name is not news";
  EXPECT_EQ(events_by_reason_["ApplyFailed"], 1);
  EXPECT_EQ(events_by_reason_["FailedCreate"], 1);
  EXPECT_EQ(api_requests_, 1 + 6 * 2);
  EXPECT_EQ(metrics.refused_writes_total("create", "pods", "QuotaExceeded"), 6);
}

}  // namespace
}  // namespace cloneset::executor
