// Deletion and lifecycle end to end (seeds 001, 002, 003): podsToDelete and the specified-delete label, lifecycle
// hooks with the test acting as the hook owner, PVC reuse after an external pod delete, and deleting the
// CloneSet cascading to its pods and PVCs. Each checks availability on every pod event.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "e2e_fixture.h"

namespace cloneset::testing {
namespace {

constexpr char kVct[] =
    "  volumeClaimTemplates:\n  - metadata: {name: data}\n"
    "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
constexpr char kHook[] = "example.io/unready-blocker";

class LifecycleTest : public E2eTest {
 protected:
  void MergePatch(const std::string& kind_name, const std::string& patch) {
    MustKubectl({"patch", "-n", ns_, kind_name, "--type=merge", "-p", patch});
  }
  void ExpectPvcReusedAfterExternalPodDelete(const std::string& name, const std::string& scale_strategy);
};

TEST_F(LifecycleTest, PodsToDeleteAndSpecifiedDeleteLabel) {
  Apply(CloneSetYaml("victims", 4, "img:v1", "  updateStrategy: {maxUnavailable: 1}\n"));
  ASSERT_TRUE(Eventually([&] { return AllReady("victims", 4, "img:v1"); })) << Describe("victims");
  auto before = Pods("victims");
  const std::string victim = before.begin()->first;
  auto watch = Watch("victims", 4);
  MergePatch("clonesets.apps.kruise.io/victims",
             absl::StrCat(R"({"spec":{"replicas":3,"scaleStrategy":{"podsToDelete":[")", victim, R"("]}}})"));
  ASSERT_TRUE(Eventually([&] { return AllReady("victims", 3, "img:v1") && !Pods("victims").count(victim); }))
      << Describe("victims");
  for (const auto& [name, p] : Pods("victims")) EXPECT_EQ(before.at(name).uid, p.uid) << name;
  // The deleted pod's name is cleaned out of podsToDelete.
  EXPECT_TRUE(Eventually([&] {
    return CloneSet("victims")["spec"].value("scaleStrategy", json::object()).value("podsToDelete", json::array()).empty();
  }, absl::Seconds(20))) << CloneSet("victims").dump();

  // The label: the pod is deleted and replaced, replicas unchanged.
  before = Pods("victims");
  const std::string labelled = before.begin()->first;
  MustKubectl({"label", "-n", ns_, "pod", labelled, "apps.kruise.io/specified-delete=true"});
  ASSERT_TRUE(Eventually([&] { return AllReady("victims", 3, "img:v1") && !Pods("victims").count(labelled); }))
      << Describe("victims");
  size_t kept = 0;
  for (const auto& [name, p] : Pods("victims")) kept += before.count(name) && before.at(name).uid == p.uid;
  EXPECT_EQ(kept, 2u);
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 2) << "maxUnavailable 1 exceeded\n" << st.trace;
  EXPECT_LE(st.max_active, 4);
}

// Seed 001's hook-owner controller: finalizer example.io/unready-blocker on every pod; the test removes it from
// PreparingUpdate/PreparingDelete pods and puts it back on Updated pods.
TEST_F(LifecycleTest, LifecycleHooksDrivenByTheHookOwner) {
  const std::string hooks = absl::StrCat("  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}\n",
                                         "  lifecycle:\n    preDelete: {finalizersHandler: [", kHook,
                                         "]}\n    inPlaceUpdate: {finalizersHandler: [", kHook, "]}\n");
  auto manifest = [&](const std::string& image, int replicas) {
    std::string y = CloneSetYaml("hooked", replicas, image, hooks);
    y.replace(y.find("      labels:\n"), 14, absl::StrCat("      finalizers: [", kHook, "]\n      labels:\n"));
    return y;
  };
  Apply(manifest("img:v1", 2));
  ASSERT_TRUE(Eventually([&] { return AllReady("hooked", 2, "img:v1"); })) << Describe("hooked");
  auto state = [&](const std::string& name) { return Pods("hooked")[name].labels["lifecycle.apps.kruise.io/state"]; };
  for (const auto& [name, _] : Pods("hooked")) EXPECT_TRUE(Eventually([&] { return state(name) == "Normal"; })) << name;

  auto watch = Watch("hooked", 2);
  Apply(manifest("img:v2", 2));
  // The first pod waits in PreparingUpdate, not updated, until its hook is released.
  std::string first;
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [name, p] : Pods("hooked")) {
      if (p.labels.count("lifecycle.apps.kruise.io/state") && p.labels.at("lifecycle.apps.kruise.io/state") == "PreparingUpdate") first = name;
    }
    return !first.empty();
  })) << Describe("hooked");
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(state(first), "PreparingUpdate");
  EXPECT_EQ(Pods("hooked")[first].image, "img:v1") << "updated before the hook was released";

  // The hook owner: release PreparingUpdate, re-arm Updated, until both pods run v2 and are Normal.
  auto drive = [&] {
    bool done = true;
    for (const auto& [name, p] : Pods("hooked")) {
      const std::string s = p.labels.count("lifecycle.apps.kruise.io/state") ? p.labels.at("lifecycle.apps.kruise.io/state") : "";
      if (s == "PreparingUpdate" || s == "PreparingDelete") {
        Kubectl({"patch", "-n", ns_, "pod", name, "--type=merge", "-p", R"({"metadata":{"finalizers":null}})"});
      } else if (s == "Updated") {
        Kubectl({"patch", "-n", ns_, "pod", name, "--type=merge", "-p",
                 absl::StrCat(R"({"metadata":{"finalizers":[")", kHook, R"("]}})")});
      }
      done = done && s == "Normal" && p.image == "img:v2" && p.ready;
    }
    return done;
  };
  ASSERT_TRUE(Eventually(drive, absl::Seconds(90))) << Describe("hooked");
  EXPECT_EQ(watch->Finish().min_ready, 1);  // maxUnavailable 1 of 2

  // Scale in: the pod waits in PreparingDelete until the hook owner releases it.
  MergePatch("clonesets.apps.kruise.io/hooked", R"({"spec":{"replicas":1}})");
  std::string leaving;
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [name, p] : Pods("hooked")) {
      if (p.labels.count("lifecycle.apps.kruise.io/state") && p.labels.at("lifecycle.apps.kruise.io/state") == "PreparingDelete") leaving = name;
    }
    return !leaving.empty();
  })) << Describe("hooked");
  absl::SleepFor(absl::Seconds(1));
  ASSERT_TRUE(Pods("hooked").count(leaving)) << "deleted before the hook was released";
  MustKubectl({"patch", "-n", ns_, "pod", leaving, "--type=merge", "-p", R"({"metadata":{"finalizers":null}})"});
  ASSERT_TRUE(Eventually([&] { return Pods("hooked").size() == 1 && !Pods("hooked").count(leaving); }))
      << Describe("hooked");
  // Let the remaining pod go, so the namespace can be cleaned up.
  for (const auto& [name, _] : Pods("hooked")) {
    Kubectl({"patch", "-n", ns_, "pod", name, "--type=merge", "-p", R"({"metadata":{"finalizers":null}})"});
  }
}

// kubectl delete pod of a CloneSet with a volumeClaimTemplate: the pod's PVC stays (the controller did not delete
// the pod), and the replacement waits for the terminating pod and takes its id back: same name, new UID, the same
// PVC object, no PVC left without a pod (docs/compatibility.md "Scale"). `scale_strategy` is the policy's YAML.
void LifecycleTest::ExpectPvcReusedAfterExternalPodDelete(const std::string& name, const std::string& scale_strategy) {
  Apply(CloneSetYaml(name, 2, "img:v1", "  updateStrategy: {maxUnavailable: 1}\n" + scale_strategy + kVct));
  ASSERT_TRUE(Eventually([&] { return AllReady(name, 2, "img:v1"); })) << Describe(name);
  const auto before = Pods(name);
  const auto pvcs_before = Pvcs();
  ASSERT_EQ(pvcs_before.size(), 2u);
  const std::string gone = before.begin()->first;
  auto watch = Watch(name, 2);
  MustKubectl({"delete", "-n", ns_, "pod", gone, "--wait=false"});
  ASSERT_TRUE(Eventually([&] {
    auto pods = Pods(name);
    return AllReady(name, 2, "img:v1") && pods.count(gone) && pods[gone].uid != before.at(gone).uid;
  })) << Describe(name) << Kubectl({"get", "pvc", "-n", ns_}).output;
  const auto pvcs = Pvcs();
  EXPECT_EQ(pvcs.size(), 2u) << Kubectl({"get", "pvc", "-n", ns_}).output;
  const std::string claim = *before.at(gone).claims.begin();
  EXPECT_EQ(Pods(name)[gone].claims, before.at(gone).claims);
  ASSERT_TRUE(pvcs.count(claim));
  EXPECT_EQ(pvcs.at(claim)["metadata"].value("uid", ""), pvcs_before.at(claim)["metadata"].value("uid", ""));
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 1);
  EXPECT_EQ(st.uids_seen.size(), 3u);
}

TEST_F(LifecycleTest, PvcReusedAfterExternalPodDelete) {
  // Seed 000's pvcRetentionPolicy Retain.
  ExpectPvcReusedAfterExternalPodDelete("reuse", "  scaleStrategy: {pvcRetentionPolicy: Retain}\n");
}

TEST_F(LifecycleTest, PvcReusedAfterExternalPodDeleteDefaultPolicy) {
  // Seed 001: the default policy (Delete, PVC reuse on for v1alpha1) gave the replacement a new id and a new PVC
  // and left data-vol-<old pod> without a pod.
  ExpectPvcReusedAfterExternalPodDelete("reuse-default", "");
}

TEST_F(LifecycleTest, DeletingTheCloneSetCascadesToPodsAndPvcs) {
  Apply(CloneSetYaml("doomed", 2, "img:v1", kVct));
  ASSERT_TRUE(Eventually([&] { return AllReady("doomed", 2, "img:v1"); })) << Describe("doomed");
  ASSERT_EQ(Pvcs().size(), 2u);
  // kubectl's default background propagation: the CloneSet goes at once and the garbage collector removes its
  // pods and PVCs; a reconcile racing the collector must not create a pod for the vanished CloneSet.
  MustKubectl({"delete", "-n", ns_, "clonesets.apps.kruise.io", "doomed", "--wait=false"});
  EXPECT_TRUE(Eventually([&] {
    return GetJson({"pods", "-l", "app=doomed"}).value("items", json::array()).empty() &&
           GetJson({"pvc"}).value("items", json::array()).empty() &&
           GetJson({"clonesets.apps.kruise.io"}).value("items", json::array()).empty();
  })) << Describe("doomed") << Kubectl({"get", "pvc", "-n", ns_}).output;
}

}  // namespace
}  // namespace cloneset::testing
