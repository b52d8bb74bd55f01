// Size: the table tests of PlanScale, a section per step of semantics §4 (diff, creation, deletion order, instance
// ids, PVC cleanup) over one set of fixtures; split, each half would lose the fixtures and the step it builds on.
#include "planner/scale.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace ::cloneset::planner::testing;  // NOLINT

const absl::Time kHourAgo = Now() - absl::Hours(1);

// Holds the request so the context's pointers stay valid.
struct Scenario {
  pb::PlanRequest request;
  PlanContext ctx;
  mutable PlanBuilder plan;
  ScaleOutcome outcome;

  Scenario(const pb::PlanRequest& req, const ResolvedSpec& spec, const std::string& cur = "cs-old",
           const std::string& upd = "cs-new")
      : request(req) {
    ctx = MakeContext(request, spec, cur, upd);
    ctx.current_template_json = TemplateJson("app:old");
    ctx.update_template_json = TemplateJson("app:new");
  }
  Scenario& Scale() {
    outcome = PlanScale(ctx, plan);
    return *this;
  }
  // "id@revision#batch" per CreatePod.
  std::vector<std::string> Created() const {
    std::vector<std::string> out;
    for (const auto& a : plan.response()->actions()) {
      if (a.has_create_pod()) {
        out.push_back(a.create_pod().instance_id() + "@" + a.create_pod().revision() + "#" +
                      std::to_string(a.create_pod().batch()));
      }
    }
    return out;
  }
  std::vector<int> Batches() const {
    std::vector<int> out;
    for (const auto& a : plan.response()->actions()) {
      if (a.has_create_pod()) out.push_back(a.create_pod().batch());
    }
    return out;
  }
  std::vector<std::string> CreatedIds() const {
    std::vector<std::string> out;
    for (const auto& a : plan.response()->actions()) {
      if (a.has_create_pod()) out.push_back(a.create_pod().instance_id());
    }
    return out;
  }
  std::vector<std::string> Revisions() const {
    std::vector<std::string> out;
    for (const auto& a : plan.response()->actions()) {
      if (a.has_create_pod()) out.push_back(a.create_pod().revision());
    }
    return out;
  }
  // "name[pvc,pvc]" per DeletePod.
  std::vector<std::string> Deleted() const {
    std::vector<std::string> out;
    for (const auto& a : plan.response()->actions()) {
      if (!a.has_delete_pod()) continue;
      std::string s = a.delete_pod().name() + "[";
      for (int i = 0; i < a.delete_pod().pvc_names_size(); ++i) {
        s += (i ? "," : "") + a.delete_pod().pvc_names(i);
      }
      out.push_back(s + "]");
    }
    return out;
  }
  // "name:state" per lifecycle PatchPod.
  std::vector<std::string> Lifecycles() const {
    std::vector<std::string> out;
    for (const auto& a : plan.response()->actions()) {
      if (a.has_patch_pod() && a.patch_pod().set_labels().contains(kLifecycleStateLabel)) {
        out.push_back(a.patch_pod().name() + ":" + a.patch_pod().set_labels().at(kLifecycleStateLabel));
      }
    }
    return out;
  }
  std::vector<std::string> Events() const {
    std::vector<std::string> out;
    for (const auto& e : plan.response()->events()) out.push_back(e.reason() + ": " + e.message());
    return out;
  }
};

ResolvedSpec Spec(int32_t replicas, int32_t max_unavailable = 1) {
  ResolvedSpec s;
  s.replicas = replicas;
  s.max_unavailable = max_unavailable;
  s.pvc_reuse = false;
  return s;
}

pb::Pod Old(const std::string& name) { return PodBuilder(name).Revision("cs-old").Node("n1").Ready(kHourAgo); }
pb::Pod New(const std::string& name) { return PodBuilder(name).Revision("cs-new").Node("n1").Ready(kHourAgo); }

bool IsSorted(const std::vector<std::string>& v) { return std::is_sorted(v.begin(), v.end()); }

// ---------------------------------------------------------------------------------------------------------------
// Scale out

TEST(ScaleOut, SlowStartBatchesOfOneTwoFour) {
  Scenario s(Request(CloneSetBuilder().Replicas(7)), Spec(7));
  s.Scale();
  EXPECT_TRUE(s.outcome.scaling);
  EXPECT_THAT(s.Batches(), ElementsAre(1, 2, 2, 3, 3, 3, 3));
  EXPECT_THAT(s.Revisions(), ElementsAre("cs-new", "cs-new", "cs-new", "cs-new", "cs-new", "cs-new", "cs-new"));
  EXPECT_TRUE(IsSorted(s.CreatedIds()));
  EXPECT_EQ(s.plan.summary()->scale_up(), 7);
  EXPECT_EQ(s.plan.summary()->phase(), "scale-out");
  EXPECT_EQ(s.plan.response()->events_size(), 7);
  EXPECT_EQ(s.plan.response()->events(0).reason(), "SuccessfulCreate");
  EXPECT_EQ(s.plan.response()->events(0).message(), "succeed to create pod cs-" + s.CreatedIds()[0]);
  for (const auto& a : s.plan.response()->actions()) EXPECT_TRUE(a.stop_on_error());
}

TEST(ScaleOut, BatchesForTenPods) {
  Scenario s(Request(CloneSetBuilder().Replicas(10)), Spec(10));
  s.Scale();
  EXPECT_THAT(s.Batches(), ElementsAre(1, 2, 2, 3, 3, 3, 3, 4, 4, 4));
}

TEST(ScaleOut, InstanceIdsAreFiveLettersFromTheAlphabet) {
  Scenario s(Request(CloneSetBuilder().Replicas(20)), Spec(20));
  s.Scale();
  const std::vector<std::string> ids = s.CreatedIds();
  ASSERT_EQ(ids.size(), 20u);
  for (const auto& id : ids) {
    EXPECT_EQ(id.size(), 5u);
    EXPECT_EQ(id.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << id;
  }
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 20u);
}

TEST(ScaleOut, IdsAreDeterministicPerSeedAndUid) {
  pb::PlanRequest req = Request(CloneSetBuilder().Replicas(3));
  Scenario a(req, Spec(3)), b(req, Spec(3));
  a.Scale();
  b.Scale();
  EXPECT_EQ(a.CreatedIds(), b.CreatedIds());
  req.set_random_seed(43);
  Scenario c(req, Spec(3));
  c.Scale();
  EXPECT_NE(a.CreatedIds(), c.CreatedIds());
  pb::PlanRequest other_uid = Request(CloneSetBuilder().Replicas(3));
  other_uid.mutable_clone_set()->mutable_metadata()->set_uid("another-uid");
  Scenario d(other_uid, Spec(3));
  d.Scale();
  EXPECT_NE(a.CreatedIds(), d.CreatedIds());
}

TEST(ScaleOut, IdsAvoidExistingPodsAndPvcs) {
  // Every id of a live pod, a terminating pod and a PVC is taken; new ids differ from all of them.
  pb::PlanRequest req = Request(CloneSetBuilder().Replicas(3), {New("cs-bbbbb"), PodBuilder("cs-ccccc").Revision("cs-new").Deleting(Now())},
                                {PvcBuilder("data-cs-ddddd", "ddddd")});
  Scenario s(req, Spec(3));
  s.Scale();
  for (const auto& id : s.CreatedIds()) {
    EXPECT_NE(id, "bbbbb");
    EXPECT_NE(id, "ccccc");
    EXPECT_NE(id, "ddddd");
  }
  EXPECT_EQ(s.CreatedIds().size(), 2u);
}

// §4.3: R 5->8, partition 3, 3 old + 2 new: 3 new pods at the update revision.
TEST(ScaleOut, PartitionSatisfiedNewPodsGetUpdateRevision) {
  ResolvedSpec spec = Spec(8, 2);
  spec.partition = 3;
  Scenario s(Request(CloneSetBuilder().Replicas(8), {Old("cs-o1"), Old("cs-o2"), Old("cs-o3"), New("cs-n1"), New("cs-n2")}),
             spec);
  s.Scale();
  EXPECT_THAT(s.Revisions(), ElementsAre("cs-new", "cs-new", "cs-new"));
}

// R 4, partition 3, 1 old + 1 new: scaleUpNumOld 2 >= 2 creations: all at the current revision.
TEST(ScaleOut, PartitionNeedsOldPods) {
  ResolvedSpec spec = Spec(4);
  spec.partition = 3;
  Scenario s(Request(CloneSetBuilder().Replicas(4), {Old("cs-o1"), New("cs-n1")}), spec);
  s.Scale();
  EXPECT_THAT(s.Revisions(), ElementsAre("cs-old", "cs-old"));
  nlohmann::json pod = nlohmann::json::parse(s.plan.response()->actions(0).create_pod().pod_json());
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "app:old");
}

// R 5, partition 3, 1 new: 4 creations, 3 current (smallest ids) + 1 update.
TEST(ScaleOut, MixedRevisionsCurrentGetsSmallestIds) {
  ResolvedSpec spec = Spec(5);
  spec.partition = 3;
  Scenario s(Request(CloneSetBuilder().Replicas(5), {New("cs-n1")}), spec);
  s.Scale();
  EXPECT_THAT(s.Revisions(), ElementsAre("cs-old", "cs-old", "cs-old", "cs-new"));
  EXPECT_TRUE(IsSorted(s.CreatedIds()));
  nlohmann::json last = nlohmann::json::parse(s.plan.response()->actions(3).create_pod().pod_json());
  EXPECT_EQ(last["spec"]["containers"][0]["image"], "app:new");
}

TEST(ScaleOut, LimitedByScaleMaxUnavailableToZero) {
  ResolvedSpec spec = Spec(3);
  spec.scale_max_unavailable = 1;
  Scenario s(Request(CloneSetBuilder().Replicas(3), {PodBuilder("cs-a").Revision("cs-new").NotReady()}), spec, "cs-new");
  s.Scale();
  EXPECT_FALSE(s.outcome.scaling);
  EXPECT_THAT(s.Created(), IsEmpty());
  EXPECT_THAT(s.Events(), ElementsAre("ScaleUpLimited: scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 0"));
  EXPECT_EQ(s.plan.response()->events(0).type(), pb::WARNING);
}

TEST(ScaleOut, LimitedByScaleMaxUnavailablePartially) {
  ResolvedSpec spec = Spec(4);
  spec.scale_max_unavailable = 2;
  Scenario s(Request(CloneSetBuilder().Replicas(4), {PodBuilder("cs-a").Revision("cs-new").NotReady()}), spec, "cs-new");
  s.Scale();
  EXPECT_TRUE(s.outcome.scaling);
  EXPECT_EQ(s.Created().size(), 1u);
  EXPECT_EQ(s.Events()[0], "ScaleUpLimited: scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 1");
  EXPECT_EQ(s.plan.summary()->scale_up_limited_to(), 1);
}

TEST(ScaleOut, ScaleOutHappensBeforeSpecifiedDelete) {
  Scenario s(Request(CloneSetBuilder().Replicas(3), {PodBuilder("cs-a").Revision("cs-new").Node("n1").Ready(kHourAgo).SpecifiedDelete()}),
             Spec(3), "cs-new");
  s.Scale();
  EXPECT_EQ(s.Created().size(), 2u);
  EXPECT_THAT(s.Deleted(), IsEmpty());
}

TEST(ScaleOut, SurgeCreatesReplacementForSpecifiedDelete) {
  ResolvedSpec spec = Spec(2, 0);
  spec.max_surge = 1;
  Scenario s(Request(CloneSetBuilder().Replicas(2), {New("cs-a"), PodBuilder("cs-b").Revision("cs-new").Node("n1").Ready(kHourAgo).SpecifiedDelete()}),
             spec, "cs-new");
  s.Scale();
  EXPECT_EQ(s.Created().size(), 1u);
  EXPECT_THAT(s.Deleted(), IsEmpty());
}

// ---------------------------------------------------------------------------------------------------------------
// Instance ids and PVCs

TEST(InstanceIds, ReusesPvcIdsWhenReuseIsOn) {
  ResolvedSpec spec = Spec(2);
  spec.pvc_reuse = true;
  Scenario s(Request(CloneSetBuilder().Replicas(2).Vct(VctJson("data")), {New("cs-aaaaa")},
                     {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-zzzzz", "zzzzz")}),
             spec, "cs-new");
  s.Scale();
  ASSERT_THAT(s.CreatedIds(), ElementsAre("zzzzz"));
  const auto& create = s.plan.response()->actions(0).create_pod();
  EXPECT_EQ(create.pvc_jsons_size(), 0);  // the PVC exists and is mounted again
  nlohmann::json pod = nlohmann::json::parse(create.pod_json());
  EXPECT_EQ(pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "data-cs-zzzzz");
}

TEST(InstanceIds, NoReuseWhenReuseIsOff) {
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {}, {PvcBuilder("data-cs-zzzzz", "zzzzz")}),
             Spec(1), "cs-new");
  s.Scale();
  ASSERT_EQ(s.CreatedIds().size(), 1u);
  EXPECT_NE(s.CreatedIds()[0], "zzzzz");
  EXPECT_EQ(s.plan.response()->actions(0).create_pod().pvc_jsons_size(), 1);
}

TEST(InstanceIds, RetainReusesIdsEvenWithReuseOff) {
  ResolvedSpec spec = Spec(2);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder().Replicas(2).Vct(VctJson("data")), {},
                     {PvcBuilder("data-cs-kkkkk", "kkkkk"), PvcBuilder("data-cs-hhhhh", "hhhhh")}),
             spec, "cs-new");
  s.Scale();
  EXPECT_THAT(s.CreatedIds(), ElementsAre("hhhhh", "kkkkk"));
}

TEST(InstanceIds, RetainReusesOnlyAsManyAsNeededThenGenerates) {
  ResolvedSpec spec = Spec(2);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder().Replicas(2).Vct(VctJson("data")), {}, {PvcBuilder("data-cs-kkkkk", "kkkkk")}),
             spec, "cs-new");
  s.Scale();
  const auto ids = s.CreatedIds();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_TRUE(ids[0] == "kkkkk" || ids[1] == "kkkkk");
}

// A pod deleted by someone else (kubectl delete pod) under the default policy: its PVC stays for reuse. Upstream
// reuses the id while the old pod is still terminating and the create fails with AlreadyExists; taking a fresh id
// instead would leave the PVC without a pod. The replacement waits for the id and then takes it back.
TEST(InstanceIds, ReuseWaitsForTheTerminatingPodThenTakesItsId) {
  ResolvedSpec spec = Spec(1);
  spec.pvc_reuse = true;
  Scenario terminating(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")),
                               {PodBuilder("cs-zzzzz").Revision("cs-new").Deleting(Now())},
                               {PvcBuilder("data-cs-zzzzz", "zzzzz")}),
                       spec, "cs-new");
  terminating.Scale();
  EXPECT_THAT(terminating.CreatedIds(), IsEmpty());
  EXPECT_THAT(terminating.plan.summary()->blocked_reasons(),
              ElementsAre("instance zzzzz waits for its terminating pod to reuse its PVCs"));
  EXPECT_EQ(terminating.plan.requeue(), absl::Seconds(5));

  Scenario gone(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {}, {PvcBuilder("data-cs-zzzzz", "zzzzz")}),
                spec, "cs-new");
  gone.Scale();
  EXPECT_THAT(gone.CreatedIds(), ElementsAre("zzzzz"));
  EXPECT_EQ(gone.plan.response()->actions(0).create_pod().pvc_jsons_size(), 0);  // the same PVC, mounted again
}

// With reuse off the controller deleted the PVCs with the pod (or cleanup moves them to it): nothing to wait for.
TEST(InstanceIds, NoWaitWithoutReuse) {
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")),
                     {PodBuilder("cs-zzzzz").Revision("cs-new").Deleting(Now())}, {PvcBuilder("data-cs-zzzzz", "zzzzz")}),
             Spec(1), "cs-new");
  s.Scale();
  ASSERT_EQ(s.CreatedIds().size(), 1u);
  EXPECT_NE(s.CreatedIds()[0], "zzzzz");
  EXPECT_EQ(s.plan.summary()->blocked_reasons_size(), 0);
}

// Every claim the new pod mounts is listed for the executor's check, the existing ones too; only the missing
// ones are POSTed.
TEST(InstanceIds, CreatePodListsEveryClaim) {
  ResolvedSpec spec = Spec(2);
  spec.pvc_reuse = true;
  Scenario s(Request(CloneSetBuilder().Replicas(2).Vct(VctJson("data")).Vct(VctJson("logs")), {},
                     {PvcBuilder("data-cs-zzzzz", "zzzzz")}),
             spec, "cs-new");
  s.Scale();
  ASSERT_EQ(s.CreatedIds().size(), 2u);
  for (const auto& a : s.plan.response()->actions()) {
    const auto& c = a.create_pod();
    EXPECT_THAT(c.claim_names(), ElementsAre("data-cs-" + c.instance_id(), "logs-cs-" + c.instance_id()));
    EXPECT_EQ(c.pvc_jsons_size(), c.instance_id() == "zzzzz" ? 1 : 2) << c.instance_id();
  }
}

TEST(InstanceIds, NoReuseWhileFailedPodExists) {
  ResolvedSpec spec = Spec(1);
  spec.pvc_reuse = true;
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")),
                     {PodBuilder("cs-zzzzz").Revision("cs-new").Phase("Failed")}, {PvcBuilder("data-cs-zzzzz", "zzzzz")}),
             spec, "cs-new");
  s.Scale();
  ASSERT_EQ(s.CreatedIds().size(), 1u);
  EXPECT_NE(s.CreatedIds()[0], "zzzzz");
}

TEST(InstanceIds, AvailableIdsZero) {
  Scenario s(Request(CloneSetBuilder()), Spec(1));
  EXPECT_THAT(AvailableInstanceIds(s.ctx, 0), IsEmpty());
}

// ---------------------------------------------------------------------------------------------------------------
// PVC cleanup and release

TEST(PvcCleanup, KeepsActiveMovesInactiveDeletesOrphans) {
  Scenario s(Request(CloneSetBuilder(), {New("cs-aaaaa"), PodBuilder("cs-bbbbb").Revision("cs-new").Phase("Failed")},
                     {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-bbbbb", "bbbbb"),
                      PvcBuilder("data-cs-ccccc", "ccccc"), PvcBuilder("data-cs-ddddd", "ddddd").Deleting(Now())}),
             Spec(1), "cs-new");
  PlanPvcCleanupAndRelease(s.ctx, s.plan);
  const auto& actions = s.plan.response()->actions();
  ASSERT_EQ(actions.size(), 2);
  EXPECT_EQ(actions[0].update_pvc_owner().name(), "data-cs-bbbbb");
  EXPECT_EQ(actions[0].update_pvc_owner().remove_owner_uid(), kCloneSetUid);
  EXPECT_EQ(actions[0].update_pvc_owner().add_owner().kind(), "Pod");
  EXPECT_EQ(actions[0].update_pvc_owner().add_owner().api_version(), "v1");
  EXPECT_EQ(actions[0].update_pvc_owner().add_owner().name(), "cs-bbbbb");
  EXPECT_EQ(actions[0].update_pvc_owner().add_owner().uid(), "uid-cs-bbbbb");
  EXPECT_TRUE(actions[0].update_pvc_owner().add_owner().controller());
  EXPECT_EQ(actions[1].delete_pvc().name(), "data-cs-ccccc");
  EXPECT_EQ(actions[1].delete_pvc().uid(), "uid-data-cs-ccccc");
}

TEST(PvcCleanup, NothingWhenReuseIsOn) {
  ResolvedSpec spec = Spec(1);
  spec.pvc_reuse = true;
  Scenario s(Request(CloneSetBuilder(), {}, {PvcBuilder("data-cs-ccccc", "ccccc")}), spec, "cs-new");
  PlanPvcCleanupAndRelease(s.ctx, s.plan);
  EXPECT_EQ(s.plan.response()->actions_size(), 0);
}

TEST(PvcCleanup, NothingWhenRetained) {
  ResolvedSpec spec = Spec(1);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder(), {PodBuilder("cs-bbbbb").Deleting(Now())},
                     {PvcBuilder("data-cs-bbbbb", "bbbbb"), PvcBuilder("data-cs-ccccc", "ccccc")}),
             spec, "cs-new");
  PlanPvcCleanupAndRelease(s.ctx, s.plan);
  EXPECT_EQ(s.plan.response()->actions_size(), 0);
}

TEST(PvcCleanup, ReleasesPodsThatNoLongerMatch) {
  Scenario s(Request(CloneSetBuilder(), {New("cs-aaaaa"), New("cs-bbbbb")}), Spec(1), "cs-new");
  s.ctx.pods = {&s.request.pods(0)};
  s.ctx.released_pods = {&s.request.pods(1)};
  PlanPvcCleanupAndRelease(s.ctx, s.plan);
  ASSERT_EQ(s.plan.response()->actions_size(), 1);
  const auto& patch = s.plan.response()->actions(0).patch_pod();
  EXPECT_EQ(patch.name(), "cs-bbbbb");
  EXPECT_EQ(patch.purpose(), "release");
  EXPECT_THAT(patch.remove_owner_uids(), ElementsAre(kCloneSetUid));
}

TEST(PvcCleanup, NoReleaseWhileCloneSetIsDeleting) {
  CloneSetBuilder cs;
  *cs.mutable_clone_set()->mutable_metadata()->mutable_deletion_timestamp() = Ts(Now());
  Scenario s(Request(cs, {New("cs-bbbbb")}), Spec(1), "cs-new");
  s.ctx.released_pods = {&s.request.pods(0)};
  s.ctx.pods.clear();
  PlanPvcCleanupAndRelease(s.ctx, s.plan);
  EXPECT_EQ(s.plan.response()->actions_size(), 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Missing claims of live pods

std::vector<std::string> CreatedPvcs(const Scenario& s) {
  std::vector<std::string> out;
  for (const auto& a : s.plan.response()->actions()) {
    if (!a.has_create_pvc()) continue;
    const nlohmann::json pvc = nlohmann::json::parse(a.create_pvc().pvc_json());
    out.push_back(a.create_pvc().pod_name() + ":" + pvc["metadata"].value("name", "") + ":" +
                  pvc["metadata"]["labels"].value(kInstanceIdLabel, ""));
  }
  return out;
}

TEST(MissingClaims, LivePodGetsItsMissingClaimBack) {
  struct Case {
    std::string name;
    bool reuse;
    std::vector<pb::Pod> pods;
    std::vector<pb::PersistentVolumeClaim> pvcs;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"claim there", false, {New("cs-aaaaa")}, {PvcBuilder("data-cs-aaaaa", "aaaaa")}, {}},
      {"claim gone", false, {New("cs-aaaaa"), New("cs-bbbbb")}, {PvcBuilder("data-cs-aaaaa", "aaaaa")},
       {"cs-bbbbb:data-cs-bbbbb:bbbbb"}},
      {"claim gone, reuse on", true, {New("cs-bbbbb")}, {}, {"cs-bbbbb:data-cs-bbbbb:bbbbb"}},
      // Only live pods: a terminating one is not given its claim back.
      {"terminating pod", false, {PodBuilder("cs-ccccc").Revision("cs-new").Deleting(Now())}, {}, {}},
      // A terminating claim is not in the snapshot: re-created (AlreadyExists until it is gone).
      {"claim terminating", false, {New("cs-aaaaa")}, {PvcBuilder("data-cs-aaaaa", "aaaaa").Deleting(Now())},
       {"cs-aaaaa:data-cs-aaaaa:aaaaa"}},
  };
  for (const auto& c : cases) {
    ResolvedSpec spec = Spec(static_cast<int32_t>(c.pods.size()));
    spec.pvc_reuse = c.reuse;
    Scenario s(Request(CloneSetBuilder().Replicas(static_cast<int32_t>(c.pods.size())).Vct(VctJson("data")), c.pods,
                       c.pvcs),
               spec, "cs-new");
    PlanMissingClaims(s.ctx, s.plan);
    EXPECT_EQ(CreatedPvcs(s), c.want) << c.name;
    EXPECT_EQ(s.plan.response()->actions_size(), static_cast<int>(c.want.size())) << c.name;
    EXPECT_EQ(s.plan.response()->events_size(), static_cast<int>(c.want.size())) << c.name;
    for (const auto& e : s.plan.response()->events()) {
      EXPECT_EQ(e.type(), pb::WARNING) << c.name;
      EXPECT_EQ(e.reason(), "MissingPVC") << c.name;
      EXPECT_EQ(e.message(), "pod " + e.involved_pod() + " mounts data-" + e.involved_pod() +
                                 " which does not exist: creating it again from the volumeClaimTemplate")
          << c.name;
    }
  }
}

TEST(MissingClaims, TheClaimIsTheOneCreatePodWouldHaveMade) {
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {}), Spec(1), "cs-new");
  s.Scale();
  ASSERT_EQ(s.CreatedIds().size(), 1u);
  const std::string id = s.CreatedIds()[0];
  const std::string want = s.plan.response()->actions(0).create_pod().pvc_jsons(0);
  Scenario repair(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {New("cs-" + id)}), Spec(1), "cs-new");
  PlanMissingClaims(repair.ctx, repair.plan);
  ASSERT_EQ(repair.plan.response()->actions_size(), 1);
  // The lifecycle timestamp is in the pod only, so the PVC documents are byte for byte the same.
  EXPECT_EQ(repair.plan.response()->actions(0).create_pvc().pvc_json(), want);
}

TEST(MissingClaims, NothingWithoutClaimTemplatesOrWhileTheCloneSetIsDeleted) {
  Scenario plain(Request(CloneSetBuilder().Replicas(1), {New("cs-aaaaa")}), Spec(1), "cs-new");
  PlanMissingClaims(plain.ctx, plain.plan);
  EXPECT_EQ(plain.plan.response()->actions_size(), 0);
  CloneSetBuilder cs = CloneSetBuilder().Replicas(1).Vct(VctJson("data"));
  *cs.mutable_clone_set()->mutable_metadata()->mutable_deletion_timestamp() = Ts(Now());
  Scenario deleting(Request(cs, {New("cs-aaaaa")}), Spec(1), "cs-new");
  PlanMissingClaims(deleting.ctx, deleting.plan);
  EXPECT_EQ(deleting.plan.response()->actions_size(), 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Deletion

TEST(PreDelete, PreparingDeletePodsAreDeletedWithTheirPvcs) {
  Scenario s(Request(CloneSetBuilder().Replicas(2).Vct(VctJson("data")),
                     {New("cs-aaaaa"), New("cs-bbbbb"), PodBuilder("cs-ccccc").Revision("cs-new").Lifecycle(kStatePreparingDelete)},
                     {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-ccccc", "ccccc")}),
             Spec(2), "cs-new");
  s.Scale();
  EXPECT_TRUE(s.outcome.scaling);
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-ccccc[data-cs-ccccc]"));
  EXPECT_THAT(s.Events(), ElementsAre("SuccessfulDelete: succeed to delete pod cs-ccccc"));
  EXPECT_EQ(s.plan.summary()->phase(), "pre-delete");
}

TEST(PreDelete, ReplicasBackUpRegretsPreparingDelete) {
  // replicas 3, 3 pods of which 1 PreparingDelete: d = 3 - 3 + 1 = 1 -> back to PreparingNormal.
  Scenario s(Request(CloneSetBuilder().Replicas(3),
                     {New("cs-a"), New("cs-b"), PodBuilder("cs-c").Revision("cs-new").Lifecycle(kStatePreparingDelete)}),
             Spec(3), "cs-new");
  s.Scale();
  EXPECT_TRUE(s.outcome.scaling);
  EXPECT_THAT(s.Lifecycles(), ElementsAre("cs-c:PreparingNormal"));
  EXPECT_THAT(s.Deleted(), IsEmpty());
}

TEST(PreDelete, SpecifiedPodsAreNotRegretted) {
  Scenario s(Request(CloneSetBuilder().Replicas(3),
                     {New("cs-a"), New("cs-b"),
                      PodBuilder("cs-c").Revision("cs-new").Lifecycle(kStatePreparingDelete).SpecifiedDelete()}),
             Spec(3), "cs-new");
  s.Scale();
  EXPECT_THAT(s.Lifecycles(), IsEmpty());
}

TEST(PreDelete, HookedPodGoesToPreparingDeleteInsteadOfDeletion) {
  CloneSetBuilder cs;
  cs.Replicas(1);
  (*cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_pre_delete()->mutable_labels_handler())["hold"] = "true";
  Scenario s(Request(cs, {New("cs-a"), PodBuilder("cs-b").Revision("cs-new").Node("n1").Phase("Pending").Label("hold", "true")}),
             Spec(1), "cs-new");
  s.Scale();
  EXPECT_TRUE(s.outcome.scaling);
  EXPECT_THAT(s.Lifecycles(), ElementsAre("cs-b:PreparingDelete"));
  EXPECT_THAT(s.Deleted(), IsEmpty());
}

TEST(SpecifiedDelete, ReadyPodsWithinDeleteReadyLimit) {
  // 3 ready pods, 2 labelled, replicas 3, maxUnavailable 1: deleteReadyLimit 1 -> only the first goes.
  Scenario s(Request(CloneSetBuilder().Replicas(3),
                     {PodBuilder("cs-a").Revision("cs-new").Node("n1").Ready(kHourAgo).SpecifiedDelete(),
                      PodBuilder("cs-b").Revision("cs-new").Node("n1").Ready(kHourAgo).SpecifiedDelete(), New("cs-c")}),
             Spec(3, 1), "cs-new");
  // Scale-out would run first (replicas 3, 1 non-deleted pod counts)? curTotal 3 = expTotal: no.
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-a[]"));
  EXPECT_EQ(s.plan.summary()->phase(), "specified-delete");
}

TEST(SpecifiedDelete, NotReadyPodsIgnoreTheLimit) {
  Scenario s(Request(CloneSetBuilder().Replicas(3),
                     {PodBuilder("cs-a").Revision("cs-new").Node("n1").NotReady().SpecifiedDelete(),
                      PodBuilder("cs-b").Revision("cs-new").Node("n1").NotReady().SpecifiedDelete(), New("cs-c")}),
             Spec(3, 0), "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-a[]", "cs-b[]"));
}

TEST(SpecifiedDelete, PodsToDeleteListCounts) {
  ResolvedSpec spec = Spec(2);
  spec.pods_to_delete = {"cs-b"};
  Scenario s(Request(CloneSetBuilder().Replicas(2).PodsToDelete({"cs-b"}), {New("cs-a"), New("cs-b"), New("cs-c")}),
             spec, "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-b[]"));
}

TEST(SpecifiedDelete, NoBudgetNoDeletion) {
  // maxUnavailable 0 and no surplus: a ready labelled pod stays until a replacement exists.
  Scenario s(Request(CloneSetBuilder().Replicas(2), {New("cs-a"), PodBuilder("cs-b").Revision("cs-new").Node("n1").Ready(kHourAgo).SpecifiedDelete()}),
             Spec(2, 0), "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), IsEmpty());
  EXPECT_FALSE(s.outcome.scaling);
}

TEST(ScaleIn, DeletesWorstPodsFirst) {
  Scenario s(Request(CloneSetBuilder().Replicas(2),
                     {New("cs-a"), PodBuilder("cs-b").Revision("cs-new").Phase("Pending").Node("n2"),
                      PodBuilder("cs-c").Revision("cs-new"), New("cs-d")}),
             Spec(2), "cs-new");
  s.Scale();
  EXPECT_TRUE(s.outcome.scaling);
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-c[]", "cs-b[]"));  // unscheduled, then Pending
  EXPECT_EQ(s.plan.summary()->phase(), "scale-in");
  EXPECT_EQ(s.plan.summary()->scale_down(), 2);
}

TEST(ScaleIn, PrefersOldRevision) {
  Scenario s(Request(CloneSetBuilder().Replicas(2), {Old("cs-a"), Old("cs-b"), New("cs-c"), New("cs-d")}), Spec(2));
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-a[]", "cs-b[]"));
}

TEST(ScaleIn, DeletionCostDecides) {
  Scenario s(Request(CloneSetBuilder().Replicas(2),
                     {PodBuilder("cs-a").Revision("cs-new").Node("n1").Ready(kHourAgo).DeletionCost("100"),
                      PodBuilder("cs-b").Revision("cs-new").Node("n2").Ready(kHourAgo).DeletionCost("-1"),
                      PodBuilder("cs-c").Revision("cs-new").Node("n3").Ready(kHourAgo).DeletionCost("5")}),
             Spec(2), "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-b[]"));
}

TEST(ScaleIn, DeletesPvcsOfTheInstance) {
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")).Vct(VctJson("logs")),
                     {New("cs-aaaaa"), PodBuilder("cs-bbbbb").Revision("cs-new")},
                     {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-bbbbb", "bbbbb"),
                      PvcBuilder("logs-cs-bbbbb", "bbbbb")}),
             Spec(1), "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-bbbbb[data-cs-bbbbb,logs-cs-bbbbb]"));
}

TEST(ScaleIn, RetainKeepsPvcs) {
  ResolvedSpec spec = Spec(1);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {New("cs-aaaaa"), PodBuilder("cs-bbbbb").Revision("cs-new")},
                     {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-bbbbb", "bbbbb")}),
             spec, "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-bbbbb[]"));
}

TEST(ScaleIn, SkippedWhileSpecifiedDeletePending) {
  // A hooked PreparingDelete pod stays (no write) and blocks scale-in of the surplus.
  CloneSetBuilder cs;
  cs.Replicas(1);
  (*cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_pre_delete()->mutable_labels_handler())["hold"] = "true";
  Scenario s(Request(cs, {New("cs-a"), New("cs-b"),
                          PodBuilder("cs-c").Revision("cs-new").Node("n1").Lifecycle(kStatePreparingDelete).Label("hold", "true")}),
             Spec(1), "cs-new");
  s.Scale();
  EXPECT_FALSE(s.outcome.scaling);
  EXPECT_THAT(s.Deleted(), IsEmpty());
  EXPECT_THAT(s.Lifecycles(), IsEmpty());
}

TEST(ScaleIn, ReadyBudgetLimitsReadyVictims) {
  // replicas 2, 2 unavailable + 2 ready, maxUnavailable 0: deleteReadyLimit 0 + 2 - 2 = 0; the unready go.
  Scenario s(Request(CloneSetBuilder().Replicas(2), {New("cs-a"), New("cs-b"), PodBuilder("cs-c").Revision("cs-new").Node("n1").NotReady(),
                                                     PodBuilder("cs-d").Revision("cs-new").Node("n1").NotReady()}),
             Spec(2, 0), "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-c[]", "cs-d[]"));
}

TEST(ScaleIn, PausedKeepsSurgePods) {
  ResolvedSpec spec = Spec(2, 0);
  spec.paused = true;
  Scenario s(Request(CloneSetBuilder().Replicas(2).MaxSurge(Int(1)).Paused(), {Old("cs-a"), Old("cs-b"), New("cs-c")}), spec);
  s.Scale();
  EXPECT_THAT(s.Deleted(), IsEmpty());
  EXPECT_FALSE(s.outcome.scaling);
}

TEST(ScaleIn, TopologySpreadFromUpdateTemplate) {
  // zone a holds 2 pods, zone b 1: with a zone constraint one of zone a's pods goes first even though the zone b
  // pod was ready more recently.
  pb::PlanRequest req = Request(CloneSetBuilder().Replicas(2),
                                {PodBuilder("cs-a").Revision("cs-new").Node("n1").Ready(kHourAgo - absl::Minutes(2)),
                                 PodBuilder("cs-b").Revision("cs-new").Node("n2").Ready(kHourAgo - absl::Minutes(1)),
                                 PodBuilder("cs-c").Revision("cs-new").Node("n3").Ready(kHourAgo)});
  for (const auto& [node, zone] : std::vector<std::pair<std::string, std::string>>{{"n1", "a"}, {"n2", "a"}, {"n3", "b"}}) {
    pb::Node* n = req.add_nodes();
    n->set_name(node);
    (*n->mutable_labels())["zone"] = zone;
  }
  Scenario s(req, Spec(2), "cs-new");
  s.ctx.update_template_json =
      R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"x"}],)"
      R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}})";
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-b[]"));
  // Without the constraint the same-node ranker has nothing to say: the most recently ready pod goes.
  Scenario plain(req, Spec(2), "cs-new");
  plain.Scale();
  EXPECT_THAT(plain.Deleted(), ElementsAre("cs-c[]"));
}

TEST(ScaleIn, MinReadySecondsMakesFreshPodsUnavailableVictims) {
  ResolvedSpec spec = Spec(2, 0);
  spec.min_ready_seconds = 30;
  Scenario s(Request(CloneSetBuilder().Replicas(2),
                     {New("cs-a"), New("cs-b"), PodBuilder("cs-c").Revision("cs-new").Node("n2").Ready(Now() - absl::Seconds(10))}),
             spec, "cs-new");
  s.Scale();
  // cs-c is ready but not yet available: deleted first, without budget (deleteReadyLimit 0 + 1 - 1 = 0; upstream
  // charges it to that budget and deletes nothing until it is available, kruise#1478).
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-c[]"));
}

TEST(SpecifiedDelete, ReadyButNotAvailableNeedsNoBudget) {
  ResolvedSpec spec = Spec(2, 0);
  spec.min_ready_seconds = 30;
  Scenario s(Request(CloneSetBuilder().Replicas(2),
                     {New("cs-a"), New("cs-b"),
                      PodBuilder("cs-c").Revision("cs-new").Node("n2").Ready(Now() - absl::Seconds(10)).SpecifiedDelete()}),
             spec, "cs-new");
  s.Scale();
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-c[]"));
}

TEST(PlanDeletePods, RecreatePathDeletesDirectlyWithPvcs) {
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {New("cs-aaaaa")}, {PvcBuilder("data-cs-aaaaa", "aaaaa")}),
             Spec(1), "cs-new");
  EXPECT_TRUE(PlanDeletePods(s.ctx, s.ctx.pods, s.plan));
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-aaaaa[data-cs-aaaaa]"));
  EXPECT_EQ(s.plan.summary()->scale_down(), 0);  // not a scale-in
  EXPECT_TRUE(s.plan.response()->actions(0).stop_on_error());
  EXPECT_EQ(s.plan.response()->actions(0).delete_pod().uid(), "uid-cs-aaaaa");
}

TEST(PlanDeletePods, RetainKeepsPvcs) {
  ResolvedSpec spec = Spec(1);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")), {New("cs-aaaaa")}, {PvcBuilder("data-cs-aaaaa", "aaaaa")}),
             spec, "cs-new");
  EXPECT_TRUE(PlanDeletePods(s.ctx, s.ctx.pods, s.plan));
  EXPECT_THAT(s.Deleted(), ElementsAre("cs-aaaaa[]"));
}

TEST(PlanDeletePods, NothingForNoPods) {
  Scenario s(Request(CloneSetBuilder()), Spec(1), "cs-new");
  EXPECT_FALSE(PlanDeletePods(s.ctx, {}, s.plan));
  EXPECT_EQ(s.plan.response()->actions_size(), 0);
}

// Seed 000 scenario: Retain, scale 3 -> 1 -> 3 gives the old pods' instance ids (and PVCs) back.
TEST(Retain, ScaleDownThenUpReusesInstancesAndPvcs) {
  ResolvedSpec down = Spec(1);
  down.retain_pvcs = true;
  down.pvc_reuse = false;
  Scenario s1(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")).RetainPvcs(),
                      {New("cs-aaaaa"), PodBuilder("cs-bbbbb").Revision("cs-new").Node("n1"), PodBuilder("cs-ccccc").Revision("cs-new").Node("n1")},
                      {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-bbbbb", "bbbbb"), PvcBuilder("data-cs-ccccc", "ccccc")}),
              down, "cs-new");
  s1.Scale();
  EXPECT_THAT(s1.Deleted(), ElementsAre("cs-bbbbb[]", "cs-ccccc[]"));
  ResolvedSpec up = down;
  up.replicas = 3;
  Scenario s2(Request(CloneSetBuilder().Replicas(3).Vct(VctJson("data")).RetainPvcs(), {New("cs-aaaaa")},
                      {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-bbbbb", "bbbbb"), PvcBuilder("data-cs-ccccc", "ccccc")}),
              up, "cs-new");
  PlanPvcCleanupAndRelease(s2.ctx, s2.plan);
  EXPECT_EQ(s2.plan.response()->actions_size(), 0);
  s2.Scale();
  EXPECT_THAT(s2.CreatedIds(), ElementsAre("bbbbb", "ccccc"));
  for (const auto& a : s2.plan.response()->actions()) EXPECT_EQ(a.create_pod().pvc_jsons_size(), 0);
}

TEST(Retain, ReplacementWaitsForTerminatingPodToFreeItsId) {
  // cs-bbbbb was deleted (ReCreate or scale-in) and is still terminating; its PVC is retained. Replicas 3 needs
  // 2 more pods: one takes the fresh-free retained id ccccc, the other waits for bbbbb instead of a fresh id.
  ResolvedSpec spec = Spec(3);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder().Replicas(3).Vct(VctJson("data")).RetainPvcs(),
                     {New("cs-aaaaa"), PodBuilder("cs-bbbbb").Revision("cs-new").Deleting(Now())},
                     {PvcBuilder("data-cs-aaaaa", "aaaaa"), PvcBuilder("data-cs-bbbbb", "bbbbb"),
                      PvcBuilder("data-cs-ccccc", "ccccc")}),
             spec, "cs-new");
  s.Scale();
  EXPECT_THAT(s.CreatedIds(), ElementsAre("ccccc"));
  EXPECT_THAT(s.plan.summary()->blocked_reasons(),
              ElementsAre("instance bbbbb waits for its terminating pod to reuse its PVCs"));
  EXPECT_EQ(s.plan.requeue(), absl::Seconds(5));
}

TEST(Retain, FailedPodDoesNotHoldItsIdForever) {
  // A Failed pod that nobody deletes would block forever: its id is skipped and a fresh one is used.
  ResolvedSpec spec = Spec(1);
  spec.retain_pvcs = true;
  Scenario s(Request(CloneSetBuilder().Replicas(1).Vct(VctJson("data")).RetainPvcs(),
                     {PodBuilder("cs-bbbbb").Revision("cs-new").Phase("Failed")}, {PvcBuilder("data-cs-bbbbb", "bbbbb")}),
             spec, "cs-new");
  s.Scale();
  ASSERT_EQ(s.CreatedIds().size(), 1u);
  EXPECT_NE(s.CreatedIds()[0], "bbbbb");
  EXPECT_EQ(s.plan.summary()->blocked_reasons_size(), 0);
}

TEST(Scale, IdleWhenNothingToDo) {
  Scenario s(Request(CloneSetBuilder().Replicas(2), {New("cs-a"), New("cs-b")}), Spec(2), "cs-new");
  s.Scale();
  EXPECT_FALSE(s.outcome.scaling);
  EXPECT_TRUE(s.outcome.error.ok());
  EXPECT_EQ(s.plan.response()->actions_size(), 0);
  EXPECT_EQ(s.plan.response()->events_size(), 0);
}

}  // namespace
}  // namespace cloneset::planner
