// The reconcile against mocks: exact API calls for each kind of plan, and the rules of reconciler.h.
// Size: one test per kind of plan and per rule of reconciler.h over one fixture (testing/reconciler_fixture.h).
#include "executor/reconciler.h"

#include <algorithm>
#include <atomic>

#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "executor/testing/mocks.h"
#include "executor/testing/reconciler_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"
#include "kube/testing/mock_rest_client.h"
#include "planapi/pod_table.h"
#include "prometheus/registry.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::InSequence;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::StrictMock;
using kube::PatchType;

using testing::AddInPlaceUpdate;
using testing::kKey;

std::string Obj(const std::string& name, int rv) {
  return "{\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"ns\",\"resourceVersion\":\"" +
         std::to_string(rv) + "\"}}";
}

absl::Status Conflict() {
  return kube::StatusFromHttp(409, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict",)"
                                   R"("code":409,"message":"the object has been modified"})");
}

// An answer of the API server that failed the write (an etcd timeout): an event, but no ApplyFailed condition.
absl::Status EtcdTimeout() {
  return kube::StatusFromHttp(500, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                                   R"("reason":"InternalError","code":500,"message":"etcd timeout"})");
}

constexpr char kCloneSetPath[] = "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs";
std::string CloneSetObj(const std::string& uid) {
  return R"({"metadata":{"name":"cs","namespace":"ns","uid":")" + uid + R"(","resourceVersion":"100"}})";
}

class ReconcilerTest : public testing::ReconcilerFixture {
 protected:
  ReconcilerTest() : metrics_(registry_) {
    ON_CALL(planner_, Validate(_)).WillByDefault(Return(pb::ValidateResponse()));
  }
  Reconciler Make(int apply_parallelism = 1, ClusterCache* cache = nullptr) {
    ReconcilerDeps deps = Deps();
    if (cache != nullptr) deps.cache = cache;
    deps.metrics = &metrics_;
    deps.owns = [this](const std::string&) { return owns_; };
    deps.apply_parallelism = apply_parallelism;
    return Reconciler(std::move(deps));
  }
  // The planner plans the in-place update of `names` (snapshot version 7) and the CloneSet status; returns the
  // snapshot's pods.
  std::vector<pb::Pod> PlanInPlaceUpdates(std::initializer_list<const char*> names);

  prometheus::Registry registry_;
  ExecutorMetrics metrics_;
  bool owns_ = true;
};

pb::Action CreatePodAction(const std::string& name, int batch, bool with_pvc) {
  pb::Action a;
  auto* c = a.mutable_create_pod();
  c->set_pod_json(Obj(name, 0));
  if (with_pvc) c->add_pvc_jsons(Obj("ws-" + name, 0));
  c->set_batch(batch);
  a.set_stop_on_error(true);
  return a;
}

TEST_F(ReconcilerTest, ScaleUpCreatesPvcThenPodThenStatusAndRecordsExpectations) {
  pb::PlanResponse plan;
  *plan.add_actions() = CreatePodAction("cs-a", 0, true);
  plan.set_write_status(true);
  plan.mutable_status()->set_replicas(1);
  auto* ev = plan.add_events();
  ev->set_type(pb::NORMAL);
  ev->set_reason("SuccessfulCreate");
  ev->set_message("succeed to create pod cs-a");
  ev->set_involved_pod("cs-a");
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
    EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/persistentvolumeclaims", Obj("ws-cs-a", 0)))
        .WillOnce(Return(Obj("ws-cs-a", 11)));
    EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-a", 0))).WillOnce(Return(Obj("cs-a", 12)));
    EXPECT_CALL(client_, Patch("/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status", PatchType::kMerge,
                               HasSubstr("\"replicas\":1")))
        .WillOnce(Return(Obj("cs", 13)));
  }
  EXPECT_CALL(events_, Event(_, "Normal", "SuccessfulCreate", "succeed to create pod cs-a"));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPvc, "ws-cs-a", Want::kPresent, "11"},
                                      {ObjectKind::kPod, "cs-a", Want::kPresent, "12"},
                                      {ObjectKind::kCloneSet, "cs", Want::kAtLeastVersion, "13"}}));
  EXPECT_EQ(metrics_.actions_total("CreatePod", "success"), 1);

  // Until the cache shows those writes, the planner is not called again (StrictMock would fail).
  auto again = Make().Reconcile(kKey);
  EXPECT_EQ(again.result, "requeue_after");
  EXPECT_EQ(again.requeue_after, absl::Minutes(5));
}

TEST_F(ReconcilerTest, PlannerUnavailableWritesNothing) {
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(Return(absl::UnavailableError("connection refused")));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(absl::IsUnavailable(r.error));
  EXPECT_EQ(r.result, "error");
}

TEST_F(ReconcilerTest, SlowStartStopsAfterTheFailingBatch) {
  pb::PlanResponse plan;
  *plan.add_actions() = CreatePodAction("cs-a", 0, false);
  *plan.add_actions() = CreatePodAction("cs-b", 1, false);
  *plan.add_actions() = CreatePodAction("cs-c", 1, false);
  *plan.add_actions() = CreatePodAction("cs-d", 2, false);
  plan.set_write_status(true);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
    EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-a", 0))).WillOnce(Return(Obj("cs-a", 5)));
    EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-b", 0)))
        .WillOnce(Return(EtcdTimeout()));
    // A 500 may come after the commit: the read shows it did not.
    EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/cs-b")).WillOnce(Return(absl::NotFoundError("no cs-b")));
    EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-c", 0))).WillOnce(Return(Obj("cs-c", 6)));
  }
  EXPECT_CALL(events_, Event(_, "Warning", "FailedCreate", HasSubstr("etcd timeout")));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(absl::IsUnavailable(r.error));
  EXPECT_EQ(metrics_.actions_total("CreatePod", "error"), 1);
  EXPECT_EQ(metrics_.actions_total("CreatePod", "success"), 2);
}

// Concurrent apply keeps slow start: the creations of a batch may overlap, the next batch starts only after the
// whole batch, and nothing after the batch with a failure is created (StrictMock: no cs-d, no status write).
TEST_F(ReconcilerTest, ConcurrentSlowStartFinishesTheFailingBatchOnly) {
  pb::PlanResponse plan;
  *plan.add_actions() = CreatePodAction("cs-a", 0, false);
  *plan.add_actions() = CreatePodAction("cs-b", 1, false);
  *plan.add_actions() = CreatePodAction("cs-c", 1, false);
  *plan.add_actions() = CreatePodAction("cs-d", 2, false);
  plan.set_write_status(true);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
  ::testing::Expectation first =
      EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-a", 0))).WillOnce(Return(Obj("cs-a", 5)));
  ::testing::Expectation failed = EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-b", 0)))
      .After(first)
      .WillOnce(Return(EtcdTimeout()));
  EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/cs-b"))
      .After(failed)
      .WillOnce(Return(absl::NotFoundError("no cs-b")));
  EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-c", 0)))
      .After(first)
      .WillOnce(Return(Obj("cs-c", 6)));
  EXPECT_CALL(events_, Event(_, "Warning", "FailedCreate", HasSubstr("etcd timeout")));
  auto r = Make(4).Reconcile(kKey);
  EXPECT_TRUE(absl::IsUnavailable(r.error));
  EXPECT_EQ(metrics_.actions_total("CreatePod", "error"), 1);
  EXPECT_EQ(metrics_.actions_total("CreatePod", "success"), 2);
}

// The pods of a deleted CloneSet can leave the cache before the CloneSet does: no pod is created for a CloneSet
// that a fresh read shows gone or replaced (same name, new uid).
TEST_F(ReconcilerTest, NoCreationForACloneSetThatIsGone) {
  for (const absl::StatusOr<std::string>& fresh :
       {absl::StatusOr<std::string>(absl::NotFoundError("gone")), absl::StatusOr<std::string>(CloneSetObj("uid-2"))}) {
    SCOPED_TRACE(fresh.ok() ? "replaced" : "deleted");
    pb::PlanResponse plan;
    *plan.add_actions() = CreatePodAction("cs-a", 0, true);
    plan.set_write_status(true);
    EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(fresh));  // StrictMock: no Create, no status
    auto r = Make().Reconcile(kKey);
    EXPECT_TRUE(r.error.ok()) << r.error;
    EXPECT_EQ(r.result, "cloneset_gone");
    EXPECT_EQ(metrics_.actions_total("CreatePod", "success"), 0);
  }
}

// A pod as the snapshot holds it and as the API server answers a write of it (metadata, one container, status).
pb::Pod SnapshotPod(const std::string& name, int rv) {
  pb::Pod p;
  p.mutable_metadata()->set_name(name);
  p.mutable_metadata()->set_namespace_("ns");
  p.mutable_metadata()->set_uid("u-" + name);
  p.mutable_metadata()->set_resource_version(std::to_string(rv));
  auto* c = p.add_containers();
  c->set_name("main");
  c->set_image("img:v1");
  return p;
}
std::string PodJson(const std::string& name, int rv, const std::string& extra_labels = "") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"u-)" + name + R"(","resourceVersion":")" +
         std::to_string(rv) + R"(")" + (extra_labels.empty() ? "" : R"(,"labels":)" + extra_labels) +
         R"(},"spec":{"containers":[{"name":"main","image":"img:v1"}]},"status":{"phase":"Running"}})";
}

std::vector<pb::Pod> ReconcilerTest::PlanInPlaceUpdates(std::initializer_list<const char*> names) {
  std::vector<pb::Pod> pods;
  pb::PlanResponse plan;
  for (const char* name : names) {
    pods.push_back(SnapshotPod(name, 7));
    AddInPlaceUpdate(plan, pods.back());
  }
  plan.set_write_status(true);
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(pods));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  return pods;
}

// The executor's own cache keeps the pods as table rows only (pod_rows.h): its snapshot has the pods in their table
// and no pod objects, and Apply materializes from the table the pods its writes compare with. This cache answers
// so from the mock's pods; everything else goes to the mock.
class TableOnlyCache final : public ClusterCache {
 public:
  explicit TableOnlyCache(ClusterCache& cache) : c_(cache) {}
  std::shared_ptr<const pb::CloneSet> GetCloneSet(const std::string& key) override { return c_.GetCloneSet(key); }
  std::vector<pb::Pod> PodsOwnedBy(const std::string& ns, const std::string& uid) override {
    return c_.PodsOwnedBy(ns, uid);
  }
  planapi::SnapshotPods PodSnapshot(const std::string& ns, const std::string& uid, bool with_table) override {
    EXPECT_TRUE(with_table);
    std::vector<pb::Pod> pods = c_.PodsOwnedBy(ns, uid);
    std::sort(pods.begin(), pods.end(),
              [](const pb::Pod& a, const pb::Pod& b) { return a.metadata().name() < b.metadata().name(); });
    std::vector<const pb::Pod*> sorted;
    for (const pb::Pod& p : pods) sorted.push_back(&p);
    planapi::SnapshotPods out;
    out.table = planapi::EncodePodTable(sorted);
    return out;
  }
  std::vector<pb::PersistentVolumeClaim> PvcsOwnedBy(const std::string& ns, const std::string& uid) override {
    return c_.PvcsOwnedBy(ns, uid);
  }
  std::vector<pb::ControllerRevision> RevisionsOwnedBy(const std::string& ns, const std::string& uid) override {
    return c_.RevisionsOwnedBy(ns, uid);
  }
  Observed Lookup(ObjectKind kind, const std::string& ns, const std::string& name) override {
    return c_.Lookup(kind, ns, name);
  }
  absl::StatusOr<std::vector<pb::Pod>> ListPodsFresh(const std::string& ns, const std::string& uid) override {
    return c_.ListPodsFresh(ns, uid);
  }
  std::vector<pb::Node> NodesNamed(const std::vector<std::string>& names) override { return c_.NodesNamed(names); }
  bool HasSynced() override { return c_.HasSynced(); }

 private:
  ClusterCache& c_;
};

// The status patch is guarded by the pod's uid (a kubelet status write since the snapshot does not make it a
// 409); the spec patch then uses the version the status write returned, metadata and spec being unchanged. The
// same with the pods only in the snapshot's table: the pod compared is the one materialized from its row.
TEST_F(ReconcilerTest, PodPatchAfterOwnStatusWriteUsesReturnedVersionWithPodsOnlyInTheTable) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1"))
      .WillOnce(Return(std::vector<pb::Pod>{SnapshotPod("cs-b", 7), SnapshotPod("cs-a", 7), SnapshotPod("cs-c", 7)}));
  pb::PlanResponse plan;
  AddInPlaceUpdate(plan, SnapshotPod("cs-a", 7));
  AddInPlaceUpdate(plan, SnapshotPod("cs-c", 7));
  EXPECT_CALL(planner_, Validate(::testing::Property(&pb::ValidateRequest::pods_size, 3)))
      .WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(::testing::Property(&pb::PlanRequest::pods_size, 0)))
      .WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a/status", PatchType::kStrategicMerge, _))
        .WillOnce(Return(PodJson("cs-a", 9)));
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a", PatchType::kStrategicMerge,
                               HasSubstr("\"resourceVersion\":\"9\"")))
        .WillOnce(Return(Obj("cs-a", 10)));
    // A pod whose labels changed since the snapshot: no spec patch, the plan stops as after a conflict.
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-c/status", PatchType::kStrategicMerge, _))
        .WillOnce(Return(PodJson("cs-c", 9, R"({"someone":"else"})")));
  }
  TableOnlyCache table_only(cache_);
  auto r = Make(1, &table_only).Reconcile(kKey);
  EXPECT_TRUE(kube::IsConflict(r.error)) << r.error;
  EXPECT_EQ(expectations_.Get(kKey), (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "10"},
                                                               {ObjectKind::kPod, "cs-c", Want::kAtLeastVersion, "9"}}));
}

// The status patch is guarded by the pod's uid (a kubelet status write since the snapshot does not make it a
// 409); the spec patch then uses the version the status write returned, metadata and spec being unchanged.
TEST_F(ReconcilerTest, PodPatchAfterOwnStatusWriteUsesReturnedVersion) {
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{SnapshotPod("cs-a", 7)}));
  pb::PlanResponse plan;
  AddInPlaceUpdate(plan, SnapshotPod("cs-a", 7));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a/status", PatchType::kStrategicMerge,
                               AllOf(HasSubstr(R"("metadata":{"uid":"u-cs-a"})"), Not(HasSubstr("resourceVersion")))))
        .WillOnce(Return(PodJson("cs-a", 9)));  // the kubelet wrote version 8 since the snapshot
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a", PatchType::kStrategicMerge,
                               HasSubstr("\"resourceVersion\":\"9\"")))
        .WillOnce(Return(Obj("cs-a", 10)));
  }
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "10"}}));
}

// The uid-guarded status write succeeds on a pod whose labels changed since the snapshot: its version must not
// stand in for the snapshot's, so no spec patch is sent and the plan stops as after a conflict.
TEST_F(ReconcilerTest, StatusWriteShowingAChangedPodStopsBeforeTheSpecPatch) {
  PlanInPlaceUpdates({"cs-a"});
  EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a/status", PatchType::kStrategicMerge, _))
      .WillOnce(Return(PodJson("cs-a", 9, R"({"someone":"else"})")));  // StrictMock: no spec patch, no status
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(kube::IsConflict(r.error)) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "9"}}));
}

// With apply_parallelism 3, six pods' in-place updates: three pods are in flight at once (the first three
// writes wait for each other), each pod gets its status patch before its spec patch, and the CloneSet status
// is written after every pod write.
TEST_F(ReconcilerTest, IndependentPodsAreWrittenConcurrentlyInPerPodOrder) {
  const std::vector<pb::Pod> pods = PlanInPlaceUpdates({"cs-a", "cs-b", "cs-c", "cs-d", "cs-e", "cs-f"});
  std::atomic<int> in_flight{0}, max_in_flight{0}, arrived{0};
  absl::Notification three_in_flight;
  const auto write = [&](const std::string& body) {
    const int now = ++in_flight;
    for (int seen = max_in_flight.load(); now > seen && !max_in_flight.compare_exchange_weak(seen, now);) {
    }
    if (++arrived == 3) three_in_flight.Notify();
    const bool together = three_in_flight.WaitForNotificationWithTimeout(absl::Seconds(10));
    --in_flight;
    return together ? absl::StatusOr<std::string>(body) : absl::DeadlineExceededError("not concurrent");
  };
  ::testing::ExpectationSet pod_writes;
  for (const auto& pod : pods) {
    const std::string name = pod.metadata().name();
    ::testing::Sequence per_pod;
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/" + name + "/status", PatchType::kStrategicMerge, _))
        .InSequence(per_pod)
        .WillOnce([&, name](auto, auto, auto) { return write(PodJson(name, 8)); });
    pod_writes += EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/" + name, PatchType::kStrategicMerge,
                                             HasSubstr("\"resourceVersion\":\"8\"")))
                      .InSequence(per_pod)
                      .WillOnce([&, name](auto, auto, auto) { return write(Obj(name, 9)); });
  }
  EXPECT_CALL(client_, Patch("/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status", _, _))
      .After(pod_writes)
      .WillOnce(Return(Obj("cs", 13)));
  auto r = Make(3).Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(max_in_flight.load(), 3);
  EXPECT_EQ(metrics_.actions_total("PatchPod", "success"), 6);
  EXPECT_EQ(expectations_.Get(kKey).size(), 7u);  // six pods at version 9 and the CloneSet
}

// A conflict stops the plan also when pods are written concurrently: the conflicting pod's spec patch and the
// CloneSet status are never sent (other pods' writes may or may not have started; each has its own guard).
TEST_F(ReconcilerTest, ConcurrentApplyStopsOnConflict) {
  PlanInPlaceUpdates({"cs-a", "cs-b", "cs-c", "cs-d"});
  EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a/status", _, _)).WillOnce(Return(Conflict()));
  EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/cs-a")).WillOnce(Return(PodJson("cs-a", 20)));
  for (const char* name : {"cs-b", "cs-c", "cs-d"}) {
    const std::string n = name;
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/" + n + "/status", _, _))
        .Times(::testing::AtMost(1))
        .WillRepeatedly(Return(PodJson(n, 8)));
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/" + n, _, _))
        .Times(::testing::AtMost(1))
        .WillRepeatedly(Return(Obj(n, 9)));
  }
  auto r = Make(4).Reconcile(kKey);
  EXPECT_TRUE(kube::IsConflict(r.error)) << r.error;
  EXPECT_EQ(metrics_.actions_total("PatchPodStatus", "error"), 1);
  EXPECT_EQ(metrics_.actions_total("WriteStatus", "success"), 0);
}

TEST_F(ReconcilerTest, ConflictRereadsTheObjectAndStopsThePlan) {
  pb::PlanResponse plan;
  auto* pp = plan.add_actions()->mutable_patch_pod();
  pp->set_name("cs-a");
  pp->set_resource_version("7");
  (*pp->mutable_set_labels())["k"] = "v";
  auto* del = plan.add_actions()->mutable_delete_pod();
  del->set_name("cs-b");
  plan.set_write_status(true);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a", PatchType::kStrategicMerge, _))
      .WillOnce(Return(Conflict()));
  // The fresh pod is not the one the planner saw (not in the snapshot): no retry, re-plan later.
  EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/cs-a")).Times(2).WillRepeatedly(Return(Obj("cs-a", 20)));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(kube::IsConflict(r.error));
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "20"}}));
}

TEST_F(ReconcilerTest, ConflictFromAStatusOnlyChangeRetriesAtTheFreshVersion) {
  pb::Pod seen;
  seen.mutable_metadata()->set_name("cs-a");
  seen.mutable_metadata()->set_namespace_("ns");
  seen.mutable_metadata()->set_uid("pu");
  seen.mutable_metadata()->set_resource_version("7");
  auto* c = seen.add_containers();
  c->set_name("main");
  c->set_image("img:v1");
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{seen}));
  pb::PlanResponse plan;
  auto* pp = plan.add_actions()->mutable_patch_pod();
  pp->set_name("cs-a");
  pp->set_uid("pu");
  pp->set_resource_version("7");
  (*pp->mutable_container_images())["main"] = "img:v2";
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  const std::string fresh =
      R"({"metadata":{"name":"cs-a","namespace":"ns","uid":"pu","resourceVersion":"8"},)"
      R"("spec":{"containers":[{"name":"main","image":"img:v1"}]},"status":{"phase":"Running"}})";
  {
    InSequence seq;
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a", PatchType::kStrategicMerge,
                               HasSubstr("\"resourceVersion\":\"7\"")))
        .WillOnce(Return(Conflict()));
    EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/pods/cs-a")).WillOnce(Return(fresh));
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a", PatchType::kStrategicMerge,
                               HasSubstr("\"resourceVersion\":\"8\"")))
        .WillOnce(Return(Obj("cs-a", 9)));
  }
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "9"}}));
}

TEST_F(ReconcilerTest, DeletePodThenItsPvcsWithUidPrecondition) {
  pb::PlanResponse plan;
  auto* del = plan.add_actions()->mutable_delete_pod();
  del->set_name("cs-b");
  del->set_uid("ub");
  del->add_pvc_names("ws-cs-b");
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/pods/cs-b", HasSubstr("\"preconditions\":{\"uid\":\"ub\"}")))
        .WillOnce(Return(Obj("cs-b", 30)));
    EXPECT_CALL(client_, Delete("/api/v1/namespaces/ns/persistentvolumeclaims/ws-cs-b", _))
        .WillOnce(Return(kube::StatusFromHttp(404, "")));
  }
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey), (std::vector<Expectation>{{ObjectKind::kPod, "cs-b", Want::kAbsent, ""},
                                                               {ObjectKind::kPvc, "ws-cs-b", Want::kAbsent, ""}}));
}

TEST_F(ReconcilerTest, InvalidCloneSetGetsEventAndConditionAndNoPlan) {
  pb::ValidateResponse invalid;
  auto* fe = invalid.add_errors();
  fe->set_field("spec.updateStrategy.partition");
  fe->set_message("must be >= 0");
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(invalid));
  EXPECT_CALL(events_, Event(_, "Warning", "InvalidSpec", "spec.updateStrategy.partition: must be >= 0"));
  EXPECT_CALL(client_, Patch("/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status", PatchType::kMerge,
                             HasSubstr("\"type\":\"Invalid\"")))
      .WillOnce(Return(Obj("cs", 101)));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.requeue_after, absl::ZeroDuration());
}

TEST_F(ReconcilerTest, NotOwnedShardIsSkippedAndLostShardStopsWrites) {
  owns_ = false;
  auto r = Make().Reconcile(kKey);
  EXPECT_EQ(r.result, "not_owned");

  owns_ = true;
  pb::PlanResponse plan;
  *plan.add_actions() = CreatePodAction("cs-a", 0, false);
  *plan.add_actions() = CreatePodAction("cs-b", 1, false);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
  EXPECT_CALL(client_, Create("/api/v1/namespaces/ns/pods", Obj("cs-a", 0))).WillOnce([this] {
    owns_ = false;  // the Lease is lost while the first write is in flight
    return absl::StatusOr<std::string>(Obj("cs-a", 5));
  });
  r = Make().Reconcile(kKey);
  EXPECT_EQ(r.result, "lost_shard");
}

TEST_F(ReconcilerTest, ExpiredExpectationsCountALeakAndListFresh) {
  expectations_.Expect(kKey, {ObjectKind::kPod, "cs-a", Want::kPresent, "5"}, clock_.Now());
  clock_.Advance(absl::Minutes(5));
  pb::Pod fresh;
  fresh.mutable_metadata()->set_name("cs-a");
  EXPECT_CALL(cache_, ListPodsFresh("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{fresh}));
  EXPECT_CALL(cache_, PodsOwnedBy(_, _)).Times(0);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce([](const pb::PlanRequest& req) {
    EXPECT_EQ(planapi::PodsInRequest(req), 1);
    return testing::AnswerLikeAPlanner(pb::PlanResponse())(req);
  });
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(metrics_.leaked_total(), 1);
}

TEST_F(ReconcilerTest, DeletedCloneSetForgetsExpectations) {
  expectations_.Expect(kKey, {ObjectKind::kPod, "cs-a", Want::kPresent, ""}, clock_.Now());
  EXPECT_CALL(cache_, GetCloneSet(kKey)).WillOnce(Return(nullptr));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(expectations_.pending_keys(), 0u);
}

// ---------------------------------------------------------------------------------------------------------------
// No pod without its claim (docs/reliability.md): writes whose outcome a 500 leaves open, and claims.

constexpr char kPods[] = "/api/v1/namespaces/ns/pods";
constexpr char kPvcs[] = "/api/v1/namespaces/ns/persistentvolumeclaims";

// The fault suite's failure: the pod create was committed but answered 500. Reported as a failure, the next
// snapshot lacked the pod while its claim was there, and the claim cleanup deleted the claim of a running pod.
// Now the pod is read back, the create counts as done and the next plan waits until the cache shows the pod.
TEST_F(ReconcilerTest, PodCreateAnswered500AfterTheCommitIsReadBackAndExpected) {
  pb::PlanResponse plan;
  *plan.add_actions() = CreatePodAction("cs-a", 0, true);
  plan.mutable_actions(0)->mutable_create_pod()->add_claim_names("ws-cs-a");
  plan.set_write_status(true);
  plan.mutable_status()->set_replicas(1);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
    EXPECT_CALL(client_, Create(kPvcs, Obj("ws-cs-a", 0))).WillOnce(Return(Obj("ws-cs-a", 11)));
    EXPECT_CALL(client_, Create(kPods, Obj("cs-a", 0))).WillOnce(Return(EtcdTimeout()));
    EXPECT_CALL(client_, Get(std::string(kPods) + "/cs-a")).WillOnce(Return(Obj("cs-a", 12)));
    EXPECT_CALL(client_, Patch(std::string(kCloneSetPath) + "/status", PatchType::kMerge, HasSubstr("\"replicas\":1")))
        .WillOnce(Return(Obj("cs", 13)));
  }
  EXPECT_CALL(events_, Event(_, "Warning", "FailedCreate", _)).Times(0);
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPvc, "ws-cs-a", Want::kPresent, "11"},
                                      {ObjectKind::kPod, "cs-a", Want::kPresent, "12"},
                                      {ObjectKind::kCloneSet, "cs", Want::kAtLeastVersion, "13"}}));
}

// A claim whose create fails (and a read shows it absent) stops the action before the pod is POSTed; a claim
// created but answered 500 is read back and the pod follows.
TEST_F(ReconcilerTest, PodIsPostedOnlyAfterEachClaimIsKnownToExist) {
  struct Case {
    std::string name;
    absl::StatusOr<std::string> read_back;  // GET of the claim after its 500
    bool pod_posted;
  };
  const std::vector<Case> cases = {
      {"claim not committed", absl::NotFoundError("no ws-cs-a"), false},
      {"claim committed", Obj("ws-cs-a", 11), true},
      {"claim state unknown", absl::UnavailableError("connection refused"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expectations_.Forget(kKey);
    pb::PlanResponse plan;
    *plan.add_actions() = CreatePodAction("cs-a", 0, true);
    plan.mutable_actions(0)->mutable_create_pod()->add_claim_names("ws-cs-a");
    EXPECT_CALL(planner_, Validate(_)).WillRepeatedly(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
    {
      InSequence seq;
      EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
      EXPECT_CALL(client_, Create(kPvcs, Obj("ws-cs-a", 0))).WillOnce(Return(EtcdTimeout()));
      EXPECT_CALL(client_, Get(std::string(kPvcs) + "/ws-cs-a")).WillOnce(Return(c.read_back));
      if (c.pod_posted) EXPECT_CALL(client_, Create(kPods, Obj("cs-a", 0))).WillOnce(Return(Obj("cs-a", 12)));
    }
    EXPECT_CALL(events_, Event(_, "Warning", "FailedCreate", HasSubstr("etcd timeout"))).Times(c.pod_posted ? 0 : 1);
    auto r = Make().Reconcile(kKey);
    EXPECT_EQ(r.error.ok(), c.pod_posted) << r.error;
    ::testing::Mock::VerifyAndClearExpectations(&client_);
    ::testing::Mock::VerifyAndClearExpectations(&events_);
  }
}

// A claim the planner did not list for creation (its snapshot had it) must still be in the cache when the pod is
// POSTed: gone or terminating in the meantime, the pod is not created (StrictMock: no Create) and the plan fails;
// the next plan sees the claim missing and lists it for creation.
TEST_F(ReconcilerTest, PodIsNotPostedWhenAClaimItMountsLeftTheCache) {
  struct Case {
    std::string name;
    Observed claim;
    bool pod_posted;
  };
  const std::vector<Case> cases = {
      {"claim in the cache", Observed{.exists = true, .deleting = false, .resource_version = "9"}, true},
      {"claim gone", Observed{}, false},
      {"claim terminating", Observed{.exists = true, .deleting = true, .resource_version = "9"}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expectations_.Forget(kKey);
    pb::PlanResponse plan;
    *plan.add_actions() = CreatePodAction("cs-a", 0, false);
    plan.mutable_actions(0)->mutable_create_pod()->add_claim_names("ws-cs-a");
    EXPECT_CALL(planner_, Validate(_)).WillRepeatedly(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
    EXPECT_CALL(cache_, Lookup(ObjectKind::kPvc, "ns", "ws-cs-a")).WillRepeatedly(Return(c.claim));
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
    if (c.pod_posted) EXPECT_CALL(client_, Create(kPods, Obj("cs-a", 0))).WillOnce(Return(Obj("cs-a", 12)));
    auto r = Make().Reconcile(kKey);
    EXPECT_EQ(r.error.ok(), c.pod_posted) << r.error;
    if (!c.pod_posted) {
      EXPECT_TRUE(absl::IsFailedPrecondition(r.error)) << r.error;
      EXPECT_THAT(std::string(r.error.message()), HasSubstr("claim ws-cs-a of pod cs-a"));
    }
    ::testing::Mock::VerifyAndClearExpectations(&client_);
    ::testing::Mock::VerifyAndClearExpectations(&cache_);
  }
}

// The repair of a live pod's lost claim: POST it; AlreadyExists (someone was faster) is success too.
TEST_F(ReconcilerTest, CreatePvcPostsTheClaimAndExpectsIt) {
  for (bool exists : {false, true}) {
    SCOPED_TRACE(exists ? "already exists" : "created");
    expectations_.Forget(kKey);
    pb::PlanResponse plan;
    auto* a = plan.add_actions();
    a->mutable_create_pvc()->set_pvc_json(Obj("ws-cs-a", 0));
    a->mutable_create_pvc()->set_pod_name("cs-a");
    EXPECT_CALL(planner_, Validate(_)).WillRepeatedly(Return(pb::ValidateResponse()));
    EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
    EXPECT_CALL(client_, Get(kCloneSetPath)).WillOnce(Return(CloneSetObj("uid-1")));
    EXPECT_CALL(client_, Create(kPvcs, Obj("ws-cs-a", 0)))
        .WillOnce(Return(exists ? absl::StatusOr<std::string>(kube::StatusFromHttp(
                                      409, R"({"kind":"Status","status":"Failure","reason":"AlreadyExists","code":409})"))
                                : absl::StatusOr<std::string>(Obj("ws-cs-a", 21))));
    auto r = Make().Reconcile(kKey);
    EXPECT_TRUE(r.error.ok()) << r.error;
    EXPECT_EQ(expectations_.Get(kKey),
              (std::vector<Expectation>{{ObjectKind::kPvc, "ws-cs-a", Want::kPresent, exists ? "" : "21"}}));
    ::testing::Mock::VerifyAndClearExpectations(&client_);
  }
}

// A claim below its template's storage (semantics §4.11): the request carries the StorageClasses its claims name
// (and only those), and ExpandPvc is one merge patch of the claim's storage request under its resourceVersion,
// expected at the version it returns; the pod is not written. A conflict re-reads the claim and stops the plan.
TEST_F(ReconcilerTest, ExpandPvcPatchesTheClaimsStorageUnderItsVersion) {
  for (bool conflict : {false, true}) {
    SCOPED_TRACE(conflict ? "conflict" : "patched");
    expectations_.Forget(kKey);
    pb::PersistentVolumeClaim pvc;
    pvc.mutable_metadata()->set_name("ws-cs-a");
    pvc.mutable_metadata()->set_resource_version("30");
    pvc.set_storage_class_name("fast");
    pvc.set_storage_request("10Gi");
    EXPECT_CALL(cache_, PvcsOwnedBy("ns", _)).WillRepeatedly(Return(std::vector<pb::PersistentVolumeClaim>{pvc}));
    std::vector<pb::StorageClass> classes(3);
    classes[0].set_name("slow");
    classes[1].set_name("fast");
    classes[1].set_allow_volume_expansion(true);
    classes[2].set_name("other");
    EXPECT_CALL(cache_, StorageClasses()).WillRepeatedly(Return(classes));
    pb::PlanResponse plan;
    pb::ExpandPvc* e = plan.add_actions()->mutable_expand_pvc();
    e->set_name("ws-cs-a");
    e->set_uid("pvc-uid");
    e->set_resource_version("30");
    e->set_storage("20Gi");
    e->set_pod_name("cs-a");
    plan.set_write_status(true);
    EXPECT_CALL(planner_, Validate(_)).WillRepeatedly(Return(pb::ValidateResponse()));
    pb::PlanRequest sent;
    EXPECT_CALL(planner_, Plan(_)).WillOnce([&](const pb::PlanRequest& request) {
      sent = request;
      return testing::AnswerLikeAPlanner(plan)(request);
    });
    {
      InSequence seq;
      EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/persistentvolumeclaims/ws-cs-a", PatchType::kMerge,
                                 R"({"metadata":{"resourceVersion":"30"},)"
                                 R"("spec":{"resources":{"requests":{"storage":"20Gi"}}}})"))
          .WillOnce(Return(conflict ? absl::StatusOr<std::string>(Conflict())
                                    : absl::StatusOr<std::string>(Obj("ws-cs-a", 31))));
      if (conflict) {
        EXPECT_CALL(client_, Get("/api/v1/namespaces/ns/persistentvolumeclaims/ws-cs-a"))
            .WillOnce(Return(Obj("ws-cs-a", 35)));
      } else {
        EXPECT_CALL(client_, Patch("/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status",
                                   PatchType::kMerge, _))
            .WillOnce(Return(Obj("cs", 32)));
      }
    }
    auto r = Make().Reconcile(kKey);
    ASSERT_EQ(sent.storage_classes_size(), 1) << sent.ShortDebugString();
    EXPECT_EQ(sent.storage_classes(0).name(), "fast");
    EXPECT_TRUE(sent.storage_classes(0).allow_volume_expansion());
    if (conflict) {
      EXPECT_TRUE(kube::IsConflict(r.error)) << r.error;
      EXPECT_EQ(expectations_.Get(kKey),
                (std::vector<Expectation>{{ObjectKind::kPvc, "ws-cs-a", Want::kAtLeastVersion, "35"}}));
    } else {
      EXPECT_TRUE(r.error.ok()) << r.error;
      EXPECT_EQ(expectations_.Get(kKey),
                (std::vector<Expectation>{{ObjectKind::kPvc, "ws-cs-a", Want::kAtLeastVersion, "31"},
                                          {ObjectKind::kCloneSet, "cs", Want::kAtLeastVersion, "32"}}));
      EXPECT_EQ(metrics_.actions_total("ExpandPvc", "success"), 1);
    }
    ::testing::Mock::VerifyAndClearExpectations(&client_);
    ::testing::Mock::VerifyAndClearExpectations(&cache_);
  }
}

// A delete answered 500 after the commit: the read shows the pod terminating (or gone), so the pod's PVCs are
// deleted next and the next snapshot waits for the pod to leave the cache.
TEST_F(ReconcilerTest, DeleteAnswered500AfterTheCommitCountsAsDone) {
  pb::PlanResponse plan;
  auto* del = plan.add_actions()->mutable_delete_pod();
  del->set_name("cs-b");
  del->set_uid("ub");
  del->add_pvc_names("ws-cs-b");
  plan.mutable_actions(0)->set_stop_on_error(true);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Delete(std::string(kPods) + "/cs-b", _)).WillOnce(Return(EtcdTimeout()));
    EXPECT_CALL(client_, Get(std::string(kPods) + "/cs-b"))
        .WillOnce(Return(R"({"metadata":{"name":"cs-b","uid":"ub","deletionTimestamp":"2026-01-01T00:00:00Z"}})"));
    EXPECT_CALL(client_, Delete(std::string(kPvcs) + "/ws-cs-b", _)).WillOnce(Return(EtcdTimeout()));
    EXPECT_CALL(client_, Get(std::string(kPvcs) + "/ws-cs-b")).WillOnce(Return(absl::NotFoundError("gone")));
  }
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey), (std::vector<Expectation>{{ObjectKind::kPod, "cs-b", Want::kAbsent, ""},
                                                               {ObjectKind::kPvc, "ws-cs-b", Want::kAbsent, ""}}));
}

// ...but a read showing the same object still alive keeps the failure (stop_on_error: nothing after it runs).
TEST_F(ReconcilerTest, DeleteAnswered500BeforeTheCommitStaysAFailure) {
  pb::PlanResponse plan;
  auto* del = plan.add_actions()->mutable_delete_pod();
  del->set_name("cs-b");
  del->set_uid("ub");
  del->add_pvc_names("ws-cs-b");
  plan.mutable_actions(0)->set_stop_on_error(true);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  {
    InSequence seq;
    EXPECT_CALL(client_, Delete(std::string(kPods) + "/cs-b", _)).WillOnce(Return(EtcdTimeout()));
    EXPECT_CALL(client_, Get(std::string(kPods) + "/cs-b")).WillOnce(Return(R"({"metadata":{"name":"cs-b","uid":"ub"}})"));
  }
  EXPECT_CALL(events_, Event(_, "Warning", "FailedDelete", HasSubstr("etcd timeout")));
  auto r = Make().Reconcile(kKey);
  EXPECT_TRUE(absl::IsUnavailable(r.error)) << r.error;
  EXPECT_TRUE(expectations_.Get(kKey).empty());
}

}  // namespace
}  // namespace cloneset::executor
