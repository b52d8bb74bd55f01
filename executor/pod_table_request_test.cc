// How the executor sends a CloneSet's pods to the planner: as PlanRequest.pod_table by default, as
// PlanRequest.pods with --planner_pod_table=false or when the table cannot carry a pod (a timestamp outside the
// years 1678-2262, reported once). Whichever encoding goes out, the planner sees the same name-sorted pods, the
// same random seed and the executor's feature gates, and Apply checks its writes against the same snapshot pods.
#include <string>
#include <utility>
#include <vector>

#include "base/testing/fake_clock.h"
#include "executor/reconciler.h"
#include "executor/testing/mocks.h"
#include "executor/testing/reconciler_fixture.h"
#include "gmock/gmock.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kube/testing/mock_rest_client.h"
#include "planapi/feature_gates.h"
#include "planapi/pod_table.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::StrictMock;
using kube::PatchType;

using testing::kKey;
constexpr int64_t kYear3000 = 32503680000;  // seconds; past what the table's int64 nanoseconds hold

// A pod with something in every part the table encodes: labels, annotations, finalizers, owner, containers,
// conditions with times, container statuses.
pb::Pod FullPod(const std::string& name, int rv) {
  pb::Pod p = testing::GatedPod(name, rv);
  auto* m = p.mutable_metadata();
  (*m->mutable_labels())["controller-revision-hash"] = "cs-v1";
  (*m->mutable_annotations())["note"] = name;
  m->add_finalizers("example.com/keep");
  auto* cond = p.add_conditions();
  cond->set_type("Ready");
  cond->set_status("True");
  cond->mutable_last_transition_time()->set_seconds(1700000100);
  auto* cs = p.add_container_statuses();
  cs->set_name("main");
  cs->set_ready(true);
  return p;
}

pb::Pod WithConditionTime(pb::Pod p, int64_t seconds) {
  p.mutable_conditions(0)->mutable_last_transition_time()->set_seconds(seconds);
  return p;
}

// The pods of a request as the planner reads them, whichever encoding carries them.
std::vector<pb::Pod> PodsOf(const pb::PlanRequest& req) {
  std::vector<pb::Pod> out;
  if (!req.has_pod_table()) return {req.pods().begin(), req.pods().end()};
  auto view = planapi::PodTableView::Open(req.pod_table());
  EXPECT_TRUE(view.ok()) << view.status();
  if (!view.ok()) return out;
  google::protobuf::Arena arena;
  for (uint32_t row = 0; row < (*view)->size(); ++row) out.push_back(*(*view)->Materialize(row, &arena));
  return out;
}

std::vector<std::string> NamesOf(const std::vector<pb::Pod>& pods) {
  std::vector<std::string> names;
  for (const auto& p : pods) names.push_back(p.metadata().name());
  return names;
}

class PodTableRequestTest : public testing::ReconcilerFixture {
 protected:
  Reconciler Make(bool pod_table) {
    ReconcilerDeps deps = Deps();
    deps.planner_pod_table = pod_table;
    deps.pod_table_fallback = [this](const std::string& key, const absl::Status& error) {
      fallbacks_.emplace_back(key, std::string(error.message()));
    };
    return Reconciler(std::move(deps));
  }

  std::vector<std::pair<std::string, std::string>> fallbacks_;
};

struct EncodingCase {
  std::string name;
  bool pod_table_flag;
  std::vector<pb::Pod> pods;  // as the cache returns them (unsorted)
  bool want_table;
  std::vector<std::pair<std::string, std::string>> want_fallbacks;  // after two reconciles
};

class EncodingTest : public PodTableRequestTest, public ::testing::WithParamInterface<EncodingCase> {};

// Two reconciles of the same snapshot: each request carries the name-sorted pods in exactly one encoding, both
// requests are the same, and an unencodable snapshot is reported once.
TEST_P(EncodingTest, RequestCarriesTheSortedPodsInOneEncoding) {
  const EncodingCase& tc = GetParam();
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).Times(2).WillRepeatedly(Return(tc.pods));
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  std::vector<pb::PlanRequest> sent;
  EXPECT_CALL(planner_, Plan(_)).Times(2).WillRepeatedly([&sent](const pb::PlanRequest& req) {
    sent.push_back(req);
    return testing::AnswerLikeAPlanner(pb::PlanResponse())(req);
  });
  Reconciler r = Make(tc.pod_table_flag);
  for (int i = 0; i < 2; ++i) {
    const ReconcileResult result = r.Reconcile(kKey);
    EXPECT_TRUE(result.error.ok()) << result.error;
  }
  ASSERT_EQ(sent.size(), 2u);
  std::vector<pb::Pod> want = tc.pods;
  std::sort(want.begin(), want.end(),
            [](const pb::Pod& a, const pb::Pod& b) { return a.metadata().name() < b.metadata().name(); });
  for (const pb::PlanRequest& req : sent) {
    EXPECT_EQ(req.has_pod_table(), tc.want_table);
    EXPECT_EQ(req.pods_size(), tc.want_table ? 0 : static_cast<int>(want.size()));
    EXPECT_EQ(planapi::PodsInRequest(req), static_cast<int>(want.size()));
    const std::vector<pb::Pod> got = PodsOf(req);
    EXPECT_EQ(NamesOf(got), NamesOf(want));
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got[i], want[i]))
          << "pod " << i << ":\n" << got[i].DebugString() << "want:\n" << want[i].DebugString();
    }
  }
  // Apart from the pods (equal above; a table's label order follows the map's, so its bytes may differ), the two
  // requests are the same: seed, time, CloneSet.
  for (pb::PlanRequest& req : sent) {
    req.clear_pods();
    req.clear_pod_table();
  }
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(sent[0], sent[1]));
  EXPECT_EQ(fallbacks_, tc.want_fallbacks);
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, EncodingTest,
    ::testing::Values(
        EncodingCase{"table_by_default", true, {FullPod("cs-c", 3), FullPod("cs-a", 1), FullPod("cs-b", 2)}, true,
                     {}},
        EncodingCase{"objects_with_the_flag_off", false,
                     {FullPod("cs-c", 3), FullPod("cs-a", 1), FullPod("cs-b", 2)}, false, {}},
        EncodingCase{"no_pods_table", true, {}, true, {}},
        EncodingCase{"no_pods_objects", false, {}, false, {}},
        // The second pod by name has a condition in the year 3000: objects, reported once with the pod and field.
        EncodingCase{"unencodable_timestamp_falls_back",
                     true,
                     {FullPod("cs-c", 3), FullPod("cs-a", 1), WithConditionTime(FullPod("cs-b", 2), kYear3000)},
                     false,
                     {{kKey, "pods[1].status.conditions[0].lastTransitionTime: seconds 32503680000, nanos 0 is outside "
                             "what a pod table carries (1678-2262)"}}},
        // With the flag off nothing is encoded, so nothing falls back.
        EncodingCase{"unencodable_timestamp_flag_off",
                     false,
                     {WithConditionTime(FullPod("cs-a", 1), kYear3000)},
                     false,
                     {}}),
    [](const auto& info) { return info.param.name; });

// The planner's instance ids come from the seed: it is a function of the snapshot, not of the encoding.
TEST_F(PodTableRequestTest, SeedDoesNotDependOnTheEncoding) {
  const std::vector<pb::Pod> pods = {FullPod("cs-b", 2), FullPod("cs-a", 1)};
  const uint64_t table_seed = Make(true).BuildRequest(kKey, *cs_, pods).request.random_seed();
  const uint64_t objects_seed = Make(false).BuildRequest(kKey, *cs_, pods).request.random_seed();
  EXPECT_EQ(table_seed, objects_seed);
  // A new resourceVersion of a pod is a new snapshot: a new seed.
  std::vector<pb::Pod> changed = pods;
  changed[0].mutable_metadata()->set_resource_version("9");
  EXPECT_NE(Make(true).BuildRequest(kKey, *cs_, changed).request.random_seed(), table_seed);
}

// The gates the executor was started with (--feature_gates, --cloneset_scaling_exclude_preparing_delete) are in
// every request, in both encodings, and in the bytes the gRPC client sends (RequestWithPods::Serialize).
TEST_F(PodTableRequestTest, EveryRequestCarriesTheFeatureGates) {
  const absl::StatusOr<planapi::FeatureGateSettings> settings = planapi::ParseFeatureGates(
      "CloneSetShortHash=true,InPlaceUpdateEnvFromMetadata=false,PreparingUpdateAsUpdate=true", true);
  ASSERT_TRUE(settings.ok()) << settings.status();
  const std::vector<pb::Pod> pods = {FullPod("cs-b", 2), FullPod("cs-a", 1)};
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillRepeatedly(Return(pods));
  for (bool table : {true, false}) {
    SCOPED_TRACE(table ? "table" : "objects");
    EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
    ReconcilerDeps deps = Deps();
    deps.planner_pod_table = table;
    deps.feature_gates = settings->gates;
    Reconciler r(std::move(deps));
    std::vector<pb::PlanRequest> sent;
    EXPECT_CALL(planner_, Plan(_)).Times(2).WillRepeatedly([&sent](const pb::PlanRequest& req) {
      sent.push_back(req);
      return testing::AnswerLikeAPlanner(pb::PlanResponse())(req);
    });
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(r.Reconcile(kKey).error.ok());
    ASSERT_EQ(sent.size(), 2u);
    for (const pb::PlanRequest& req : sent) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(req.feature_gates(), settings->gates))
          << req.feature_gates().ShortDebugString();
    }
    RequestWithPods snapshot = r.BuildRequest(kKey, *cs_, pods);
    const planapi::RequestBytes bytes = snapshot.Serialize();
    pb::PlanRequest wire;
    ASSERT_TRUE(wire.ParseFromString(bytes.head + (bytes.table ? bytes.table->bytes() : "") + bytes.tail));
    EXPECT_EQ(wire.has_pod_table(), table);
    EXPECT_TRUE(wire.feature_gates().clone_set_short_hash());
    EXPECT_TRUE(wire.feature_gates().disable_in_place_update_env_from_metadata());
    EXPECT_TRUE(wire.feature_gates().preparing_update_as_update());
    EXPECT_TRUE(wire.feature_gates().scaling_exclude_preparing_delete());
    ::testing::Mock::VerifyAndClearExpectations(&planner_);
  }
  // Without the flag, upstream's defaults: the proto's zero values.
  const RequestWithPods plain = Make(true).BuildRequest(kKey, *cs_, pods);
  EXPECT_EQ(plain.request.feature_gates().ByteSizeLong(), 0u);
}

// The snapshot keeps the pod objects next to the request in both encodings, sorted by name.
TEST_F(PodTableRequestTest, SnapshotPodsAreTheSortedPodsInBothEncodings) {
  const std::vector<pb::Pod> pods = {FullPod("cs-b", 2), FullPod("cs-a", 1)};
  for (bool table : {true, false}) {
    SCOPED_TRACE(table ? "table" : "objects");
    const RequestWithPods snapshot = Make(table).BuildRequest(kKey, *cs_, pods);
    EXPECT_EQ(snapshot.table_pods.size(), table ? 2u : 0u);
    std::vector<std::string> names;
    for (const pb::Pod* p : snapshot.Pods()) names.push_back(p->metadata().name());
    EXPECT_EQ(names, (std::vector<std::string>{"cs-a", "cs-b"}));
  }
}

struct ApplyCase {
  std::string name;
  bool pod_table_flag;
  int64_t condition_seconds;  // of the pod's Ready condition (kYear3000: the table cannot carry it)
};

class ApplyEncodingTest : public PodTableRequestTest, public ::testing::WithParamInterface<ApplyCase> {};

// Apply finds the planner's pods in the snapshot whatever the encoding: the in-place update's spec patch uses
// the version the uid-guarded status write returned only because the snapshot pod shows metadata and spec
// unchanged (a pod missing from the snapshot would stop the plan as after a conflict, without the spec patch).
TEST_P(ApplyEncodingTest, InPlaceUpdateUsesTheSnapshotPod) {
  const ApplyCase& tc = GetParam();
  const pb::Pod pod = WithConditionTime(FullPod("cs-a", 7), tc.condition_seconds);
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1")).WillOnce(Return(std::vector<pb::Pod>{pod}));
  pb::PlanResponse plan;
  testing::AddInPlaceUpdate(plan, pod);
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_)).WillOnce(testing::AnswerLikeAPlanner(plan));
  // The API server's answer: the snapshot's metadata and spec at version 9 (the kubelet wrote version 8).
  const std::string fresh =
      R"({"metadata":{"name":"cs-a","namespace":"ns","uid":"u-cs-a","resourceVersion":"9",)"
      R"("labels":{"app":"web","controller-revision-hash":"cs-v1"},"annotations":{"note":"cs-a"},)"
      R"("finalizers":["example.com/keep"],"creationTimestamp":"2023-11-14T22:13:20Z",)"
      R"("ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs","uid":"uid-1",)"
      R"("controller":true}]},)"
      R"("spec":{"nodeName":"n1","readinessGates":[{"conditionType":"InPlaceUpdateReady"}],)"
      R"("containers":[{"name":"main","image":"img:v1"}]},"status":{"phase":"Running"}})";
  {
    InSequence seq;
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a/status", PatchType::kStrategicMerge, _))
        .WillOnce(Return(fresh));
    EXPECT_CALL(client_, Patch("/api/v1/namespaces/ns/pods/cs-a", PatchType::kStrategicMerge,
                               HasSubstr("\"resourceVersion\":\"9\"")))
        .WillOnce(Return(std::string(R"({"metadata":{"name":"cs-a","resourceVersion":"10"}})")));
  }
  const ReconcileResult r = Make(tc.pod_table_flag).Reconcile(kKey);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(expectations_.Get(kKey),
            (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "10"}}));
}

INSTANTIATE_TEST_SUITE_P(Encodings, ApplyEncodingTest,
                         ::testing::Values(ApplyCase{"table", true, 1700000100},
                                           ApplyCase{"objects", false, 1700000100},
                                           ApplyCase{"fallback", true, kYear3000}),
                         [](const auto& info) { return info.param.name; });

// A planner older than the pod table ignores it and answers as if the CloneSet had no pods (pods_read 0): that
// plan must never be applied. The executor asks again with `pods`, applies that plan, reports once, and sends
// `pods` from then on.
TEST_F(PodTableRequestTest, PlannerThatIgnoresTheTableGetsObjects) {
  const pb::Pod pod = FullPod("cs-a", 7);
  EXPECT_CALL(cache_, PodsOwnedBy("ns", "uid-1"))
      .WillRepeatedly(Return(std::vector<pb::Pod>{pod}));
  pb::PlanResponse create_everything;  // what an old planner answers: a pod to create, nothing read
  create_everything.add_actions()->mutable_create_pod()->set_pod_json("{}");
  pb::PlanResponse idle;
  idle.set_pods_read(1);
  std::vector<pb::PlanRequest> sent;
  EXPECT_CALL(planner_, Validate(_)).WillOnce(Return(pb::ValidateResponse()));
  EXPECT_CALL(planner_, Plan(_))
      .WillOnce([&](const pb::PlanRequest& r) { sent.push_back(r); return create_everything; })
      .WillOnce([&](const pb::PlanRequest& r) { sent.push_back(r); return idle; })
      .WillOnce([&](const pb::PlanRequest& r) { sent.push_back(r); return idle; });
  Reconciler reconciler = Make(true);
  // No API call at all (StrictMock client): the create is never applied.
  const ReconcileResult first = reconciler.Reconcile(kKey);
  EXPECT_TRUE(first.error.ok()) << first.error;
  const ReconcileResult second = reconciler.Reconcile(kKey);
  EXPECT_TRUE(second.error.ok()) << second.error;
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_TRUE(sent[0].has_pod_table());
  EXPECT_EQ(sent[0].pods_size(), 0);
  for (size_t i : {1u, 2u}) {
    EXPECT_FALSE(sent[i].has_pod_table()) << i;
    EXPECT_EQ(NamesOf(PodsOf(sent[i])), std::vector<std::string>{"cs-a"}) << i;
  }
  ASSERT_EQ(fallbacks_.size(), 1u);
  EXPECT_EQ(fallbacks_[0].first, kKey);
  EXPECT_THAT(fallbacks_[0].second, HasSubstr("the planner read 0 of the 1 pods sent as pod_table"));
}

}  // namespace
}  // namespace cloneset::executor
