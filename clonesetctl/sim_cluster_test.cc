// The simulation applies a plan as the executor does (planapi/applier.h over the simulation's writer): the same
// order of writes, the same stop rules, the same reading of "already there" and "already gone".
#include "clonesetctl/sim_cluster.h"

#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kube/object_patch.h"
#include "nlohmann/json.hpp"
#include "snapshot/patch.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Json = nlohmann::json;

constexpr char kCloneSet[] = R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet",
  "metadata":{"name":"web","namespace":"default"},
  "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
          "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}}})";

constexpr char kLifecycle[] = "lifecycle.apps.kruise.io/state";

pb::Action CreatePod(const std::string& name, int batch) {
  pb::Action a;
  a.mutable_create_pod()->set_pod_json(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
      R"(","namespace":"default","labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}})");
  a.mutable_create_pod()->set_batch(batch);
  return a;
}

pb::Action SetLifecycle(const std::string& pod, const std::string& state, const std::string& rv = "") {
  pb::Action a;
  a.mutable_patch_pod()->set_name(pod);
  a.mutable_patch_pod()->set_resource_version(rv);
  (*a.mutable_patch_pod()->mutable_set_labels())[kLifecycle] = state;
  return a;
}

pb::PlanResponse Plan(std::vector<pb::Action> actions, int status_replicas) {
  pb::PlanResponse plan;
  for (auto& a : actions) *plan.add_actions() = std::move(a);
  plan.set_write_status(true);
  plan.mutable_status()->set_replicas(status_replicas);
  return plan;
}

class SimApplyTest : public ::testing::Test {
 protected:
  SimApplyTest() : cluster_(SimOptions{}, kNow) {
    EXPECT_TRUE(cluster_.ApplyCloneSet(kCloneSet, kNow).ok());
    const AppliedPlan first = cluster_.Apply(Plan({CreatePod("web-a", 0)}, 1), kNow);
    EXPECT_THAT(first.created, ElementsAre("web-a"));
  }
  static constexpr absl::Time kNow = absl::FromUnixSeconds(1767225600);
  SimCluster cluster_;
};

TEST_F(SimApplyTest, APodThatExistsAlreadyIsReusedAndTheNextBatchStarts) {
  // The executor counts AlreadyExists on a create as done (the pod is left over from an earlier attempt).
  const AppliedPlan applied = cluster_.Apply(Plan({CreatePod("web-a", 0), CreatePod("web-b", 1)}, 2), kNow);
  EXPECT_THAT(applied.created, ElementsAre("web-b"));
  EXPECT_EQ(applied.stopped, "");
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 2);
}

TEST_F(SimApplyTest, APodsActionsRunTogetherInPlanOrder) {
  cluster_.Apply(Plan({CreatePod("web-b", 0)}, 2), kNow);
  // The executor's stages: one group per pod, each in plan order, groups ordered by their first action.
  const AppliedPlan applied = cluster_.Apply(
      Plan({SetLifecycle("web-a", "PreparingUpdate"), SetLifecycle("web-b", "PreparingUpdate"),
            SetLifecycle("web-a", "Updating")},
           2),
      kNow);
  EXPECT_THAT(applied.lifecycle, ElementsAre("web-a: - -> PreparingUpdate", "web-a: PreparingUpdate -> Updating",
                                             "web-b: - -> PreparingUpdate"));
}

TEST_F(SimApplyTest, AConflictStopsThePlanAndKeepsTheStatus) {
  cluster_.Apply(Plan({CreatePod("web-b", 0)}, 2), kNow);
  const AppliedPlan applied =
      cluster_.Apply(Plan({SetLifecycle("web-a", "PreparingUpdate", "1"), SetLifecycle("web-b", "PreparingUpdate")},
                          5),
                     kNow);
  EXPECT_THAT(applied.lifecycle, IsEmpty());
  EXPECT_THAT(applied.stopped, ::testing::HasSubstr("modified"));
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 2);
}

TEST_F(SimApplyTest, DeletingAPodThatIsGoneIsDone) {
  pb::Action del;
  del.mutable_delete_pod()->set_name("web-zz");
  const AppliedPlan applied = cluster_.Apply(Plan({del}, 3), kNow);
  EXPECT_EQ(applied.stopped, "");
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 3);
}

// The sim writes what the executor writes: each action is the executor's request (snapshot/patch.h) applied to
// the stored JSON by the API server's patch code (kube/object_patch.h), under the request's preconditions.
constexpr char kOwnedPod[] = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-o","namespace":"default",
  "labels":{"app":"web","keep":"1","drop":"1"},"annotations":{"note":"x"},
  "finalizers":["example.com/a","example.com/b"],
  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"old","uid":"owner-old","controller":false},
                     {"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"owner-cm"}]},
  "spec":{"containers":[{"name":"main","image":"nginx:1"},{"name":"side","image":"busybox:1"}]}})";

Json Doc(const std::string& text) { return Json::parse(text); }
std::string VersionOf(const Json& doc) { return doc["metadata"]["resourceVersion"].get<std::string>(); }

struct PodPatchCase {
  std::string name;
  std::function<void(pb::PatchPod&)> edit;
  bool stale = false;  // the snapshot's version is out of date: 409, nothing written
};

TEST_F(SimApplyTest, APodPatchStoresWhatTheExecutorsStrategicMergeGives) {
  const std::vector<PodPatchCase> cases = {
      {"labels set and removed", [](pb::PatchPod& p) {
         (*p.mutable_set_labels())["new"] = "2";
         p.add_remove_labels("drop");
       }},
      {"finalizer removed and annotation removed", [](pb::PatchPod& p) {
         p.add_remove_finalizers("example.com/a");
         p.add_remove_annotations("note");
       }},
      {"owner reference removed", [](pb::PatchPod& p) { p.add_remove_owner_uids("owner-old"); }},
      {"image changed", [](pb::PatchPod& p) { (*p.mutable_container_images())["side"] = "busybox:2"; }},
      {"everything at once", [](pb::PatchPod& p) {
         p.add_remove_labels("drop");
         p.add_remove_finalizers("example.com/b");
         p.add_add_finalizers("example.com/c");
         p.add_remove_owner_uids("owner-cm");
         (*p.mutable_container_images())["main"] = "nginx:2";
       }},
      {"stale version", [](pb::PatchPod& p) { (*p.mutable_set_labels())["new"] = "2"; }, true},
  };
  for (const PodPatchCase& c : cases) {
    SimCluster cluster(SimOptions{}, kNow);
    ASSERT_TRUE(cluster.ApplyCloneSet(kCloneSet, kNow).ok());
    pb::Action create;
    create.mutable_create_pod()->set_pod_json(kOwnedPod);
    ASSERT_THAT(cluster.Apply(Plan({create}, 1), kNow).created, ElementsAre("web-o")) << c.name;
    const Json before = Doc(cluster.pod_json("web-o"));

    pb::Action action;
    pb::PatchPod& patch = *action.mutable_patch_pod();
    patch.set_name("web-o");
    patch.set_resource_version(c.stale ? "1" : VersionOf(before));
    c.edit(patch);
    const AppliedPlan applied = cluster.Apply(Plan({action}, 1), kNow);
    const Json after = Doc(cluster.pod_json("web-o"));
    if (c.stale) {
      EXPECT_THAT(applied.stopped, ::testing::HasSubstr("modified")) << c.name;
      EXPECT_EQ(after, before) << c.name;
      continue;
    }
    EXPECT_EQ(applied.stopped, "") << c.name;
    const snapshot::ApiRequest req = snapshot::PodPatchRequest("default", patch);
    ASSERT_EQ(req.content_type, snapshot::kStrategicMergePatch);
    auto want = kube::ApplyStrategicMergePatch(before, Doc(req.body), "Pod");
    ASSERT_TRUE(want.ok()) << want.status();
    // The one change the server adds: a new version (the cluster's one counter, so not necessarily the next).
    EXPECT_GT(std::stoll(VersionOf(after)), std::stoll(VersionOf(before))) << c.name;
    (*want)["metadata"]["resourceVersion"] = VersionOf(after);
    EXPECT_EQ(after, *want) << c.name << "\n" << after.dump() << "\n" << want->dump();
    // The planner's next snapshot is that JSON through the executor's decoder.
    auto decoded = snapshot::PodFromJson(after.dump());
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    const planapi::RequestWithPods next = cluster.Snapshot(kNow);
    bool found = false;
    for (const pb::Pod* p : next.Pods()) {
      if (p->metadata().name() != "web-o") continue;
      found = true;
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(p->metadata(), decoded->metadata())) << c.name;
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*p, *decoded)) << c.name;
    }
    EXPECT_TRUE(found) << c.name;
  }
}

// The executor guards a write of its own conditions (InPlaceUpdateReady) by the pod's uid only, so a metadata write
// of the same pod earlier in the plan does not refuse it. Writing the condition straight into the pod, the sim
// used to check the snapshot's resourceVersion too and stopped such a plan with a 409 no API server sends.
TEST_F(SimApplyTest, AnOwnConditionWriteIsGuardedByTheUidAsTheExecutorSendsIt) {
  const Json pod = Doc(cluster_.pod_json("web-a"));
  const std::string uid = pod["metadata"]["uid"];
  const std::string rv = VersionOf(pod);
  pb::Action label = SetLifecycle("web-a", "Updating", rv);
  pb::Action ready;
  pb::PatchPodStatus& status = *ready.mutable_patch_pod_status();
  status.set_name("web-a");
  status.set_uid(uid);
  status.set_resource_version(rv);
  pb::Condition& c = *status.add_set_conditions();
  c.set_type(snapshot::kInPlaceUpdateReadyCondition);
  c.set_status("True");
  c.mutable_last_transition_time()->set_seconds(absl::ToUnixSeconds(kNow));
  const AppliedPlan applied = cluster_.Apply(Plan({label, ready}, 1), kNow);
  EXPECT_EQ(applied.stopped, "");
  const Json after = Doc(cluster_.pod_json("web-a"));
  ASSERT_TRUE(after["status"]["conditions"].is_array());
  bool in_place_ready = false;
  for (const Json& cond : after["status"]["conditions"]) {
    in_place_ready |= cond["type"] == snapshot::kInPlaceUpdateReadyCondition && cond["status"] == "True";
  }
  EXPECT_TRUE(in_place_ready) << after.dump();

  // Another pod under that name (another uid) is refused.
  status.set_uid("someone-else");
  EXPECT_THAT(cluster_.Apply(Plan({ready}, 1), kNow).stopped, ::testing::HasSubstr("uid precondition"));
}

TEST_F(SimApplyTest, ACloneSetPatchIsTheExecutorsMergePatchUnderItsVersion) {
  const Json before = Doc(cluster_.clone_set_json());
  pb::Action action;
  pb::PatchCloneSet& patch = *action.mutable_patch_clone_set();
  patch.set_merge_patch_json(R"({"spec":{"replicas":3,"scaleStrategy":{"podsToDelete":null}}})");
  patch.set_resource_version(VersionOf(before));
  EXPECT_EQ(cluster_.Apply(Plan({action}, 1), kNow).stopped, "");
  const Json after = Doc(cluster_.clone_set_json());
  auto req = snapshot::CloneSetPatchRequest("default", "web", "", patch);
  ASSERT_TRUE(req.ok()) << req.status();
  Json want = kube::ApplyMergePatch(before, Doc(req->body));
  EXPECT_GT(std::stoll(VersionOf(after)), std::stoll(VersionOf(before)));
  want["metadata"]["resourceVersion"] = VersionOf(after);
  want["metadata"]["generation"] = 2;  // the spec changed
  want["status"] = after["status"];    // the plan's status write, after the patch
  EXPECT_EQ(after, want) << after.dump() << "\n" << want.dump();
  EXPECT_EQ(cluster_.clone_set().spec().replicas(), 3);

  patch.set_resource_version(VersionOf(before));  // stale now
  EXPECT_THAT(cluster_.Apply(Plan({action}, 1), kNow).stopped, ::testing::HasSubstr("modified"));
}

TEST_F(SimApplyTest, TheStatusWriteIsTheExecutorsStatusRequest) {
  const Json before = Doc(cluster_.clone_set_json());
  pb::PlanResponse plan = Plan({}, 4);
  plan.mutable_status()->set_update_revision("web-abc");
  plan.mutable_status()->set_observed_generation(1);
  cluster_.Apply(plan, kNow);
  const Json after = Doc(cluster_.clone_set_json());
  const snapshot::ApiRequest req = snapshot::CloneSetStatusRequest("default", "web", "", plan.status());
  EXPECT_EQ(req.content_type, snapshot::kMergePatch);
  EXPECT_EQ(after, kube::ApplyMergePatch(before, Doc(req.body)));
  EXPECT_EQ(cluster_.clone_set().status().replicas(), 4);
  EXPECT_EQ(cluster_.clone_set().status().update_revision(), "web-abc");
}

// The simulated pods move by the embedded cluster's kubelet model: bound in the creation write, Pending at the
// kubelet's first sync, running after the start delay, ready after the ready delay; a start drawn to fail runs but
// never becomes ready. Each status write is one new version, as the fleet models of the client examples count.
TEST(SimKubeletTest, PodsMoveByTheEmbeddedClustersModel) {
  struct Case {
    double fail_rate;
    bool ready_at_end;
    int failed_starts;
  };
  for (const Case& c : std::vector<Case>{{0, true, 0}, {1, false, 1}}) {
    SCOPED_TRACE(c.fail_rate);
    constexpr absl::Time kT0 = absl::FromUnixSeconds(1767225600);
    SimOptions options;
    options.start_delay = absl::Seconds(1);
    options.ready_after = absl::Seconds(2);
    options.fail_rate = c.fail_rate;
    SimCluster cluster(options, kT0);
    ASSERT_TRUE(cluster.ApplyCloneSet(kCloneSet, kT0).ok());
    ASSERT_THAT(cluster.Apply(Plan({CreatePod("web-a", 0)}, 1), kT0).created, ElementsAre("web-a"));
    const Json created = Json::parse(cluster.pod_json("web-a"));
    EXPECT_EQ(created["spec"]["nodeName"], "sim-node-1");
    EXPECT_EQ(created["status"]["conditions"][0]["type"], "PodScheduled");
    const auto phase_ready = [&] {
      const Json pod = Json::parse(cluster.pod_json("web-a"));
      std::string ready;
      for (const Json& cond : pod["status"].value("conditions", Json::array())) {
        if (cond["type"] == "Ready") ready = cond["status"];
      }
      return pod["status"].value("phase", "") + "/" + ready + "@" + pod["metadata"].value("resourceVersion", "");
    };
    const std::string v0 = created["metadata"]["resourceVersion"];
    const auto at = [&](int bump) { return std::to_string(std::stoi(v0) + bump); };
    ASSERT_TRUE(cluster.Advance(kT0).ok());
    EXPECT_EQ(phase_ready(), "Pending/False@" + at(1));
    EXPECT_EQ(cluster.NextTransition(kT0), kT0 + absl::Seconds(1));
    ASSERT_TRUE(cluster.Advance(kT0 + absl::Seconds(1)).ok());
    EXPECT_EQ(phase_ready(), "Running/False@" + at(2));
    if (c.ready_at_end) {
      EXPECT_EQ(cluster.NextTransition(kT0 + absl::Seconds(1)), kT0 + absl::Seconds(3));
      ASSERT_TRUE(cluster.Advance(kT0 + absl::Seconds(3)).ok());
      EXPECT_EQ(phase_ready(), "Running/True@" + at(3));
    } else {
      EXPECT_EQ(cluster.NextTransition(kT0 + absl::Seconds(1)), std::nullopt);
      ASSERT_TRUE(cluster.Advance(kT0 + absl::Seconds(60)).ok());
      EXPECT_EQ(phase_ready(), "Running/False@" + at(2));
    }
    EXPECT_EQ(cluster.failed_starts(), c.failed_starts);
    const Json pod = Json::parse(cluster.pod_json("web-a"));
    EXPECT_EQ(pod["status"]["podIP"], "10.244.0.1");
    EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"], "2026-01-01T00:00:01Z");
  }
}

// A resize is the executor's pods/resize request; the model's kubelet then accepts it (PodResizeInProgress) and,
// after its actuation delay, runs the container with the new resources.
TEST(SimKubeletTest, AResizeIsTakenUpByTheModel) {
  constexpr absl::Time kT0 = absl::FromUnixSeconds(1767225600);
  SimOptions options;
  options.start_delay = options.ready_after = absl::ZeroDuration();
  SimCluster cluster(options, kT0);
  ASSERT_TRUE(cluster.ApplyCloneSet(kCloneSet, kT0).ok());
  pb::Action create = CreatePod("web-a", 0);
  Json pod = Json::parse(create.create_pod().pod_json());
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "100m"}}}};
  create.mutable_create_pod()->set_pod_json(pod.dump());
  ASSERT_THAT(cluster.Apply(Plan({create}, 1), kT0).created, ElementsAre("web-a"));
  ASSERT_TRUE(cluster.Advance(kT0).ok());
  const auto status = [&] { return Json::parse(cluster.pod_json("web-a"))["status"]; };
  ASSERT_EQ(status()["containerStatuses"][0]["resources"]["requests"]["cpu"], "100m");

  pb::Action resize;
  resize.mutable_resize_pod()->set_name("web-a");
  pb::ResizePod::ContainerResources* want = resize.mutable_resize_pod()->add_containers();
  want->set_name("main");
  (*want->mutable_requests())["cpu"] = "200m";
  const AppliedPlan applied = cluster.Apply(Plan({resize}, 1), kT0 + absl::Seconds(1));
  EXPECT_EQ(applied.writes, 2);  // the resize and the status
  EXPECT_EQ(Json::parse(cluster.pod_json("web-a"))["spec"]["containers"][0]["resources"]["requests"]["cpu"], "200m");
  ASSERT_TRUE(cluster.Advance(kT0 + absl::Seconds(1)).ok());
  EXPECT_EQ(status()["containerStatuses"][0]["allocatedResources"]["cpu"], "200m");
  EXPECT_EQ(status()["containerStatuses"][0]["resources"]["requests"]["cpu"], "100m");
  const std::optional<absl::Time> applied_at = cluster.NextTransition(kT0 + absl::Seconds(1));
  ASSERT_TRUE(applied_at.has_value());
  ASSERT_TRUE(cluster.Advance(*applied_at).ok());
  EXPECT_EQ(status()["containerStatuses"][0]["resources"]["requests"]["cpu"], "200m");
}

TEST(SimSnapshotTest, IsTheExecutorsRequest) {
  const absl::Time now = absl::FromUnixSeconds(1767225600);
  SimCluster cluster(SimOptions{}, now);
  ASSERT_TRUE(cluster.ApplyCloneSet(kCloneSet, now).ok());
  cluster.Apply(Plan({CreatePod("web-b", 0), CreatePod("web-a", 0)}, 2), now);
  const planapi::RequestWithPods a = cluster.Snapshot(now);
  const planapi::RequestWithPods b = cluster.Snapshot(now);
  // The seed is the state's (the same state, the same instance ids), the pods go as a table, sorted by name, and
  // no Nodes without a topology spread.
  EXPECT_EQ(a.request.random_seed(), b.request.random_seed());
  std::vector<pb::Pod> pods;
  for (const pb::Pod* p : a.Pods()) pods.push_back(*p);
  EXPECT_EQ(a.request.random_seed(), planapi::PlanSeed(cluster.clone_set(), pods));
  EXPECT_TRUE(a.request.has_pod_table());
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].metadata().name(), "web-a");
  EXPECT_EQ(a.request.nodes_size(), 0);
  EXPECT_TRUE(a.request.accept_in_place_batches());
}

}  // namespace
}  // namespace cloneset::clonesetctl
