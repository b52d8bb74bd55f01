// Update strategies end to end (seeds 001, 003, 004): partition canary, ReCreate with a PVC, InPlaceOnly
// rejecting a non-image change, the in-place grace period, image plus volumeClaimTemplates recreating the pod,
// paused, scaleStrategy.maxUnavailable with minReadySeconds, OnDelete, and maxSurge raised during a rollout. Each
// also checks, on every pod event, that no more pods were unavailable than maxUnavailable allows.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/time_format.h"
#include "e2e_fixture.h"

namespace cloneset::testing {
namespace {

constexpr char kVct1Gi[] =
    "  volumeClaimTemplates:\n  - metadata: {name: data}\n"
    "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";

std::string Strategy(const std::string& type, const std::string& more = "") {
  return absl::StrCat("  updateStrategy:\n    type: ", type, "\n    maxUnavailable: 1\n", more);
}

class UpdateTest : public E2eTest {
 protected:
  void SetImage(const std::string& app, const std::string& image) {
    MustKubectl({"patch", "-n", ns_, "clonesets.apps.kruise.io/" + app, "--type=json", "-p",
                 absl::StrCat(R"([{"op":"replace","path":"/spec/template/spec/containers/0/image","value":")", image,
                              "\"}]")});
  }
  // Patches written in v1alpha1's shape (updateStrategy.partition): kubectl's default version is v1beta1.
  void MergePatch(const std::string& app, const std::string& patch) {
    MustKubectl({"patch", "-n", ns_, "clonesets.v1alpha1.apps.kruise.io/" + app, "--type=merge", "-p", patch});
  }
  int OnImage(const std::string& app, const std::string& image) {
    int n = 0;
    for (const auto& [_, p] : Pods(app)) n += p.image == image;
    return n;
  }
};

TEST_F(UpdateTest, PartitionCanaryThenFullRollout) {
  Apply(CloneSetYaml("canary", 4, "img:v1", Strategy("InPlaceIfPossible", "    partition: 3\n")));
  ASSERT_TRUE(Eventually([&] { return AllReady("canary", 4, "img:v1"); })) << Describe("canary");
  const auto before = Pods("canary");
  auto watch = Watch("canary", 4);
  SetImage("canary", "img:v2");
  // partition 3: exactly one pod moves to the new revision, and stays the only one.
  ASSERT_TRUE(Eventually([&] {
    const json s = CloneSet("canary").value("status", json::object());
    return OnImage("canary", "img:v2") == 1 && s.value("updatedReadyReplicas", 0) == 1;
  })) << Describe("canary");
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(OnImage("canary", "img:v2"), 1);
  EXPECT_EQ(OnImage("canary", "img:v1"), 3);
  MergePatch("canary", R"({"spec":{"updateStrategy":{"partition":0}}})");
  ASSERT_TRUE(Eventually([&] { return AllReady("canary", 4, "img:v2"); })) << Describe("canary");
  for (const auto& [name, p] : Pods("canary")) EXPECT_EQ(before.at(name).uid, p.uid) << name;
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 3) << "maxUnavailable 1 exceeded\n" << st.trace;
  EXPECT_EQ(st.uids_seen.size(), 4u);
}

TEST_F(UpdateTest, ReCreateWithPvc) {
  Apply(CloneSetYaml("recreate", 3, "img:v1", Strategy("ReCreate") + kVct1Gi));
  ASSERT_TRUE(Eventually([&] { return AllReady("recreate", 3, "img:v1"); })) << Describe("recreate");
  const auto before = Pods("recreate");
  auto watch = Watch("recreate", 3);
  SetImage("recreate", "img:v2");
  ASSERT_TRUE(Eventually([&] { return AllReady("recreate", 3, "img:v2"); }, absl::Seconds(90))) << Describe("recreate");
  const auto after = Pods("recreate");
  const auto pvcs = Pvcs();
  EXPECT_EQ(pvcs.size(), 3u);
  for (const auto& [name, p] : after) {
    EXPECT_FALSE(before.count(name) && before.at(name).uid == p.uid) << name << " was not recreated";
    ASSERT_EQ(p.claims.size(), 1u) << name;
    EXPECT_TRUE(pvcs.count(*p.claims.begin())) << name;
  }
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 2) << "maxUnavailable 1 exceeded\n" << st.trace;
  EXPECT_EQ(st.uids_seen.size(), 6u);
}

TEST_F(UpdateTest, InPlaceOnlyRejectsNonImageChange) {
  Apply(CloneSetYaml("inplaceonly", 2, "img:v1", Strategy("InPlaceOnly")));
  ASSERT_TRUE(Eventually([&] { return AllReady("inplaceonly", 2, "img:v1"); })) << Describe("inplaceonly");
  const auto before = Pods("inplaceonly");
  auto watch = Watch("inplaceonly", 2);
  // An env change cannot be applied in place: InPlaceOnly must not recreate, it reports why.
  Apply(CloneSetYaml("inplaceonly", 2, "img:v1", Strategy("InPlaceOnly"), "        env: [{name: MODE, value: fast}]\n"));
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [reason, message] : Events()) {
      if (reason == "FailedUpdatePodInPlace" && message.find("InPlaceOnly") != std::string::npos) return true;
    }
    return false;
  })) << Kubectl({"get", "events", "-n", ns_}).output;
  absl::SleepFor(absl::Seconds(2));
  const auto after = Pods("inplaceonly");
  ASSERT_EQ(after.size(), 2u);
  for (const auto& [name, p] : before) {
    ASSERT_TRUE(after.count(name)) << name;
    EXPECT_EQ(after.at(name).uid, p.uid);
    EXPECT_EQ(after.at(name).revision, p.revision);
  }
  const auto st = watch->Finish();
  EXPECT_EQ(st.min_ready, 2);
  EXPECT_EQ(st.uids_seen.size(), 2u);
}

TEST_F(UpdateTest, InPlaceGracePeriodSeconds) {
  const std::string strategy = Strategy("InPlaceIfPossible", "    inPlaceUpdateStrategy: {gracePeriodSeconds: 3}\n");
  Apply(CloneSetYaml("grace", 1, "img:v1", strategy));
  ASSERT_TRUE(Eventually([&] { return AllReady("grace", 1, "img:v1"); })) << Describe("grace");
  const auto before = Pods("grace");
  const absl::Time start = absl::Now();
  SetImage("grace", "img:v2");
  // The pod is marked for the update (not ready) at once, but its image changes only after the grace period.
  absl::Time changed = absl::InfiniteFuture();
  ASSERT_TRUE(Eventually([&] {
    if (OnImage("grace", "img:v2") == 0) return false;
    changed = absl::Now();
    return true;
  }, absl::Seconds(30))) << Describe("grace");
  EXPECT_GE(changed - start, absl::Milliseconds(2500)) << "the image changed before gracePeriodSeconds";
  ASSERT_TRUE(Eventually([&] { return AllReady("grace", 1, "img:v2"); })) << Describe("grace");
  EXPECT_EQ(Pods("grace").begin()->second.uid, before.begin()->second.uid);
}

// Seed 004: the image and the volumeClaimTemplates change together, so the pod is recreated with a new PVC of
// the new size.
TEST_F(UpdateTest, ImageAndVolumeClaimTemplatesChangeRecreates) {
  Apply(CloneSetYaml("vct", 2, "img:v1", Strategy("InPlaceIfPossible") + kVct1Gi));
  ASSERT_TRUE(Eventually([&] { return AllReady("vct", 2, "img:v1"); })) << Describe("vct");
  const auto before = Pods("vct");
  const auto pvcs_before = Pvcs();
  auto watch = Watch("vct", 2);
  std::string vct2 = kVct1Gi;
  vct2.replace(vct2.find("1Gi"), 3, "2Gi");
  Apply(CloneSetYaml("vct", 2, "img:v2", Strategy("InPlaceIfPossible") + vct2));
  ASSERT_TRUE(Eventually([&] { return AllReady("vct", 2, "img:v2"); }, absl::Seconds(90))) << Describe("vct");
  const auto pvcs = Pvcs();
  for (const auto& [name, p] : Pods("vct")) {
    for (const auto& [_, q] : before) EXPECT_NE(p.uid, q.uid) << name << " was updated in place";
    ASSERT_EQ(p.claims.size(), 1u);
    const std::string claim = *p.claims.begin();
    ASSERT_TRUE(pvcs.count(claim)) << claim;
    EXPECT_EQ(pvcs.at(claim)["spec"]["resources"]["requests"].value("storage", ""), "2Gi") << claim;
    if (pvcs_before.count(claim)) {
      EXPECT_NE(pvcs_before.at(claim)["metadata"].value("uid", ""), pvcs.at(claim)["metadata"].value("uid", ""));
    }
  }
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 1) << "maxUnavailable 1 exceeded\n" << st.trace;
}

TEST_F(UpdateTest, PausedStopsTheRolloutNotTheScaling) {
  Apply(CloneSetYaml("paused", 2, "img:v1", Strategy("InPlaceIfPossible", "    paused: true\n")));
  ASSERT_TRUE(Eventually([&] { return AllReady("paused", 2, "img:v1"); })) << Describe("paused");
  const auto before = Pods("paused");
  auto watch = Watch("paused", 2);
  SetImage("paused", "img:v2");
  MergePatch("paused", R"({"spec":{"replicas":3}})");
  ASSERT_TRUE(Eventually([&] { return Pods("paused").size() == 3 && Terminating("paused") == 0; })) << Describe("paused");
  absl::SleepFor(absl::Seconds(2));
  for (const auto& [name, p] : before) {
    EXPECT_EQ(Pods("paused").at(name).image, "img:v1") << name << " was updated while paused";
  }
  MergePatch("paused", R"({"spec":{"updateStrategy":{"paused":false}}})");
  ASSERT_TRUE(Eventually([&] { return AllReady("paused", 3, "img:v2"); })) << Describe("paused");
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 1) << "maxUnavailable 1 exceeded\n" << st.trace;
}

// Seed 003: scaleStrategy.maxUnavailable 1 with minReadySeconds: a scale-up creates the next pod only once the
// previous one has been available (Ready for minReadySeconds).
TEST_F(UpdateTest, ScaleMaxUnavailableWithMinReadySeconds) {
  Apply(CloneSetYaml("minready", 1, "img:v1", "  minReadySeconds: 2\n  scaleStrategy: {maxUnavailable: 1}\n"));
  ASSERT_TRUE(Eventually([&] { return AllReady("minready", 1, "img:v1"); })) << Describe("minready");
  auto watch = Watch("minready", 1);
  MergePatch("minready", R"({"spec":{"replicas":4}})");
  ASSERT_TRUE(Eventually([&] { return AllReady("minready", 4, "img:v1"); }, absl::Seconds(60))) << Describe("minready");
  const auto st = watch->Finish();
  EXPECT_LE(st.max_not_ready, 1) << "more than scaleStrategy.maxUnavailable pods unavailable";
  // Each new pod was created no earlier than minReadySeconds after the previous one became Ready.
  struct Times { absl::Time created, ready; };
  std::vector<Times> times;
  for (const auto& p : GetJson({"pods", "-l", "app=minready"})["items"]) {
    Times t;
    absl::StatusOr<absl::Time> created = base::ParseTime(p["metadata"].value("creationTimestamp", ""));
    ASSERT_TRUE(created.ok()) << created.status();
    t.created = *created;
    for (const auto& c : p["status"]["conditions"]) {
      if (c.value("type", "") == "Ready") {
        absl::StatusOr<absl::Time> ready = base::ParseTime(c.value("lastTransitionTime", ""));
        ASSERT_TRUE(ready.ok()) << ready.status();
        t.ready = *ready;
      }
    }
    times.push_back(t);
  }
  std::sort(times.begin(), times.end(), [](const Times& a, const Times& b) { return a.created < b.created; });
  for (size_t i = 1; i < times.size(); ++i) {
    // Second-granular timestamps: allow one second of rounding.
    EXPECT_GE(times[i].created - times[i - 1].ready, absl::Seconds(1)) << "pod " << i;
  }
}

// OnDelete (v1alpha1): a template change moves no pod; a pod deleted by someone else comes back on the new
// revision, and so do pods added by a scale-up; a scale-down takes the old revision's pods first.
TEST_F(UpdateTest, OnDeleteMovesOnlyDeletedPods) {
  Apply(CloneSetYaml("ondelete", 3, "img:v1", "  updateStrategy:\n    type: OnDelete\n"));
  ASSERT_TRUE(Eventually([&] { return AllReady("ondelete", 3, "img:v1"); })) << Describe("ondelete");
  const auto before = Pods("ondelete");
  SetImage("ondelete", "img:v2");
  ASSERT_TRUE(Eventually([&] {
    const json cs = CloneSet("ondelete");
    const json s = cs.value("status", json::object());
    return s.value("observedGeneration", 0) == cs["metadata"].value("generation", -1) &&
           s.value("updateRevision", "") != s.value("currentRevision", "") &&
           s.value("expectedUpdatedReplicas", 0) == 3 && s.value("updatedReplicas", -1) == 0;
  })) << Describe("ondelete");
  absl::SleepFor(absl::Seconds(2));
  const auto unchanged = Pods("ondelete");
  ASSERT_EQ(unchanged.size(), 3u);
  for (const auto& [name, p] : before) {
    ASSERT_TRUE(unchanged.count(name)) << name;
    EXPECT_EQ(unchanged.at(name).uid, p.uid) << name << " was replaced without being deleted";
    EXPECT_EQ(unchanged.at(name).image, "img:v1") << name << " was updated without being deleted";
  }
  const std::string victim = before.begin()->first;
  MustKubectl({"delete", "pod", "-n", ns_, victim, "--wait=false"});
  ASSERT_TRUE(Eventually([&] {
    const auto now = Pods("ondelete");
    return now.size() == 3 && !now.count(victim) && OnImage("ondelete", "img:v2") == 1 &&
           CloneSet("ondelete")["status"].value("updatedReadyReplicas", 0) == 1;
  })) << Describe("ondelete");
  for (const auto& [name, p] : Pods("ondelete")) {
    if (p.image == "img:v1") {
      EXPECT_EQ(before.at(name).uid, p.uid) << name;
    }
  }
  MergePatch("ondelete", R"({"spec":{"replicas":4}})");
  ASSERT_TRUE(Eventually([&] { return Pods("ondelete").size() == 4 && OnImage("ondelete", "img:v2") == 2; }))
      << Describe("ondelete");
  MergePatch("ondelete", R"({"spec":{"replicas":2}})");
  ASSERT_TRUE(Eventually([&] {
    const json s = CloneSet("ondelete").value("status", json::object());
    return AllReady("ondelete", 2, "img:v2") && s.value("currentRevision", "") == s.value("updateRevision", "");
  })) << Describe("ondelete");
}

// maxSurge raised while a rollout is held: ReCreate, maxUnavailable 0, and minReadySeconds 30, so a new pod is
// Ready at once but available (and an old pod deletable) only 30 s later. Raised from 1 to 2 in that window, the
// second new pod comes at once, and no old pod goes before the new ones are available.
TEST_F(UpdateTest, MaxSurgeRaisedDuringARolloutTakesEffect) {
  const std::string spec =
      "  minReadySeconds: 30\n  updateStrategy:\n    type: ReCreate\n    maxUnavailable: 0\n    maxSurge: 1\n";
  Apply(CloneSetYaml("surge", 2, "img:v1", spec));
  ASSERT_TRUE(Eventually([&] {
    return AllReady("surge", 2, "img:v1") &&
           CloneSet("surge").value("status", json::object()).value("availableReplicas", 0) == 2;
  }, absl::Seconds(90))) << Describe("surge");
  const auto before = Pods("surge");
  auto watch = Watch("surge", 2);
  SetImage("surge", "img:v2");
  ASSERT_TRUE(Eventually([&] { return OnImage("surge", "img:v2") == 1; })) << Describe("surge");
  const absl::Time first_new = absl::Now();
  MergePatch("surge", R"({"spec":{"updateStrategy":{"maxSurge":2}}})");
  ASSERT_TRUE(Eventually([&] { return OnImage("surge", "img:v2") == 2; }, absl::Seconds(20))) << Describe("surge");
  // Still inside the first new pod's minReadySeconds: both old pods are there.
  EXPECT_LT(absl::Now() - first_new, absl::Seconds(30)) << "too slow to tell the surge from the rollout";
  for (const auto& [name, p] : before) {
    EXPECT_TRUE(Pods("surge").count(name)) << name << " went before the new pods were available";
  }
  ASSERT_TRUE(Eventually([&] { return AllReady("surge", 2, "img:v2"); }, absl::Seconds(120))) << Describe("surge");
  const auto st = watch->Finish();
  EXPECT_EQ(st.max_active, 4) << "maxSurge 2 over 2 replicas\n" << st.trace;
  EXPECT_GE(st.min_ready, 2) << "maxUnavailable 0 exceeded\n" << st.trace;
}

}  // namespace
}  // namespace cloneset::testing
