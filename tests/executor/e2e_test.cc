// Seed 000 end to end (the video transcoder with per-pod PVCs), with real kubectl against the real processes:
// PVC names, instance ids and owners; scale 3 -> 5 -> 2; the in-place image update by JSON patch keeping pod
// names, UIDs, IPs and PVCs; and the seed's literal merge patch of `containers`, which replaces the whole list
// (not an image-only change) so the pods are recreated with an Event saying why.
#include <string>

#include "absl/strings/str_cat.h"
#include "e2e_fixture.h"

namespace cloneset::testing {
namespace {

constexpr char kApp[] = "video-transcoder";
constexpr char kImage1[] = "my-registry/video-transcoder:v1.2.0";
constexpr char kImage2[] = "my-registry/video-transcoder:v1.3.0";

class Seed000Test : public E2eTest {
 protected:
  void ApplySeed() {
    const std::string seed = std::string(SOURCE_DIR) + "/tests/data/seed000/";
    for (const char* f : {"storageclass.yaml", "configmap.yaml", "service.yaml", "cloneset.yaml"}) {
      MustKubectl({"apply", "-n", ns_, "-f", seed + f});
    }
    ASSERT_TRUE(Eventually([&] { return AllReady(kApp, 3, kImage1); })) << Describe(kApp);
  }
  std::string CloneSetUid() { return CloneSet(kApp)["metadata"].value("uid", ""); }
};

TEST_F(Seed000Test, PvcsScaleInPlaceJsonPatchScaleIn) {
  ApplySeed();
  const std::string owner_uid = CloneSetUid();
  ASSERT_FALSE(owner_uid.empty());
  // Per-pod PVCs <vct>-<cloneset>-<instance id>, labelled with the instance id, owned by the CloneSet.
  auto pvcs = Pvcs();
  for (const auto& [name, p] : Pods(kApp)) {
    ASSERT_FALSE(p.instance_id.empty()) << name;
    EXPECT_EQ(name, absl::StrCat(kApp, "-", p.instance_id));
    const std::string claim = absl::StrCat("workspace-", kApp, "-", p.instance_id);
    EXPECT_EQ(p.claims, std::set<std::string>{claim}) << name;
    ASSERT_TRUE(pvcs.count(claim)) << claim;
    const json& meta = pvcs[claim]["metadata"];
    EXPECT_EQ(meta["labels"].value("apps.kruise.io/cloneset-instance-id", ""), p.instance_id);
    ASSERT_EQ(meta.value("ownerReferences", json::array()).size(), 1u) << meta.dump();
    EXPECT_EQ(meta["ownerReferences"][0].value("uid", ""), owner_uid);
    EXPECT_EQ(meta["ownerReferences"][0].value("kind", ""), "CloneSet");
  }

  {  // Scale 3 -> 5: the 3 stay available all along.
    auto watch = Watch(kApp, 3);
    MustKubectl({"scale", "-n", ns_, "clonesets.apps.kruise.io/video-transcoder", "--replicas=5"});
    ASSERT_TRUE(Eventually([&] { return AllReady(kApp, 5, kImage1); })) << Describe(kApp);
    const auto st = watch->Finish();
    EXPECT_GE(st.min_ready, 3) << st.trace;
    EXPECT_EQ(st.max_active, 5);
    EXPECT_EQ(Pvcs().size(), 5u);
  }

  {  // In-place image update by JSON patch: same pods (names, UIDs, IPs, PVCs), one restart each.
    const auto before = Pods(kApp);
    auto watch = Watch(kApp, 5);
    MustKubectl({"patch", "-n", ns_, "clonesets.apps.kruise.io/video-transcoder", "--type=json", "-p",
                 absl::StrCat(R"([{"op":"replace","path":"/spec/template/spec/containers/0/image","value":")", kImage2,
                              "\"}]")});
    ASSERT_TRUE(Eventually([&] { return AllReady(kApp, 5, kImage2); }, absl::Seconds(90))) << Describe(kApp);
    const auto after = Pods(kApp);
    ASSERT_EQ(after.size(), before.size());
    for (const auto& [name, p] : before) {
      ASSERT_TRUE(after.count(name)) << name << " was recreated";
      const PodInfo& q = after.at(name);
      EXPECT_EQ(q.uid, p.uid) << name;
      EXPECT_EQ(q.ip, p.ip) << name;
      EXPECT_FALSE(q.ip.empty()) << name;
      EXPECT_EQ(q.claims, p.claims) << name;
      EXPECT_EQ(q.restart_count, p.restart_count + 1) << name;
      EXPECT_NE(q.revision, p.revision) << name;
    }
    const auto st = watch->Finish();
    EXPECT_GE(st.min_ready, 4) << "maxUnavailable 1 exceeded\n" << st.trace;
    EXPECT_EQ(st.uids_seen.size(), 5u) << "a pod was created";
    EXPECT_TRUE(Eventually([&] {
      const json s = CloneSet(kApp).value("status", json::object());
      return s.value("updatedReadyReplicas", 0) == 5 && s.value("readyReplicas", 0) == 5;
    })) << CloneSet(kApp).dump();
  }

  {  // Scale 5 -> 2: pvcRetentionPolicy Retain keeps the scaled-in pods' PVCs.
    auto watch = Watch(kApp, 5);
    MustKubectl({"patch", "-n", ns_, "clonesets.apps.kruise.io/video-transcoder", "--type=merge", "-p",
                 R"({"spec":{"replicas":2}})"});
    ASSERT_TRUE(Eventually([&] { return AllReady(kApp, 2, kImage2); })) << Describe(kApp);
    EXPECT_GE(watch->Finish().min_ready, 2);
    EXPECT_EQ(Pvcs().size(), 5u);
  }
}

// The seed's literal `kubectl patch --type='merge'` of containers replaces the whole list (env, probes,
// resources and mounts are gone): not image-only, so InPlaceIfPossible recreates the pods, one at a time.
TEST_F(Seed000Test, LiteralMergePatchOfContainersRecreatesWithEvent) {
  ApplySeed();
  const auto before = Pods(kApp);
  auto watch = Watch(kApp, 3);
  MustKubectl({"patch", "-n", ns_, "cloneset", "video-transcoder", "--type=merge", "-p",
               R"({"spec":{"template":{"spec":{"containers":[{"name":"transcoder","image":"my-registry/video-transcoder:v1.2.1"}]}}}})"});
  ASSERT_TRUE(Eventually([&] { return AllReady(kApp, 3, "my-registry/video-transcoder:v1.2.1"); }, absl::Seconds(90)))
      << Describe(kApp);
  for (const auto& [name, p] : Pods(kApp)) {
    for (const auto& [old_name, q] : before) EXPECT_NE(p.uid, q.uid) << name << " was not recreated";
    EXPECT_EQ(p.restart_count, 0) << name;
  }
  const auto st = watch->Finish();
  EXPECT_GE(st.min_ready, 2) << "maxUnavailable 1 exceeded\n" << st.trace;
  EXPECT_EQ(st.uids_seen.size(), 6u);
  EXPECT_TRUE(Eventually([&] {
    for (const auto& [reason, message] : Events()) {
      if (reason == "InPlaceUpdateNotPossible" && message.find("recreated") != std::string::npos) return true;
    }
    return false;
  }, absl::Seconds(10))) << Kubectl({"get", "events", "-n", ns_}).output;
}

}  // namespace
}  // namespace cloneset::testing
