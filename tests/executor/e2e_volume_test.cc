// A volumeClaimTemplate's storage grown end to end (semantics §4.11), on both backends: with a StorageClass that
// allows volume expansion every live claim's spec.resources.requests.storage follows the template and no pod is
// recreated (same UIDs), and a later image change still updates the pods in place (the claim-template hash followed
// the growth); with a class that does not, the claims stay, the pods stay, and the CloneSet says so (condition
// VolumeExpansionHeld, Warning VolumeExpansionNotAllowed). The real control plane accepts the expansion without a
// driver that grows volumes: the claims' spec changes, their status capacity does not, so only the spec is checked.
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "e2e_fixture.h"

namespace cloneset::testing {
namespace {

constexpr char kImage1[] = "img:v1";
constexpr char kImage2[] = "img:v2";

class VolumeExpansionTest : public E2eTest {
 protected:
  void TearDown() override {
    if (!class_.empty()) Kubectl({"delete", "storageclass", class_, "--ignore-not-found", "--wait=false"});
    E2eTest::TearDown();
  }
  // A StorageClass of the backends' provisioner, named after the test's namespace (classes are cluster-wide).
  void MakeClass(bool allow_expansion) {
    class_ = ns_ + "-class";
    MustKubectl({"apply", "-f", "-"},
                absl::StrCat("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: ", class_,
                             "\nprovisioner: cloneset.test/hostpath-provisioner\nreclaimPolicy: Delete\n",
                             "allowVolumeExpansion: ", allow_expansion ? "true" : "false", "\n"));
  }
  // Two pods, InPlaceIfPossible, each with a claim "data" of 1Gi of the test's class, mounted at /data.
  void ApplyCloneSet(const std::string& name) {
    const std::string spec = absl::StrCat(
        "  updateStrategy:\n    type: InPlaceIfPossible\n    maxUnavailable: 1\n",
        "  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      accessModes: [ReadWriteOnce]\n",
        "      storageClassName: ", class_, "\n      resources:\n        requests:\n          storage: 1Gi\n");
    const std::string mounts = "        volumeMounts:\n        - name: data\n          mountPath: /data\n";
    Apply(CloneSetYaml(name, 2, kImage1, spec, mounts));
    ASSERT_TRUE(Eventually([&] { return AllReady(name, 2, kImage1); }, absl::Seconds(120))) << Describe(name);
    ASSERT_TRUE(Eventually([&] { return Bound(2); }, absl::Seconds(120))) << Kubectl({"get", "pvc", "-n", ns_}).output;
  }
  bool Bound(size_t n) {
    size_t bound = 0;
    for (const auto& [name, pvc] : Pvcs()) bound += pvc.value("status", json::object()).value("phase", "") == "Bound";
    return bound == n;
  }
  // claim name -> spec.resources.requests.storage
  std::map<std::string, std::string> Requests() {
    std::map<std::string, std::string> out;
    for (const auto& [name, pvc] : Pvcs()) out[name] = pvc["spec"]["resources"]["requests"].value("storage", "");
    return out;
  }
  void GrowTemplate(const std::string& name, const std::string& storage) {
    MustKubectl({"patch", "-n", ns_, "clonesets.apps.kruise.io", name, "--type=json", "-p",
                 absl::StrCat(R"([{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/)",
                              R"(storage","value":")", storage, R"("}])")});
  }
  json Condition(const std::string& name, const std::string& type) {
    for (const json& c : CloneSet(name).value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return json::object();
  }
  static std::map<std::string, std::string> Uids(const std::map<std::string, PodInfo>& pods) {
    std::map<std::string, std::string> out;
    for (const auto& [name, p] : pods) out[name] = p.uid;
    return out;
  }

  std::string class_;
};

TEST_F(VolumeExpansionTest, ClaimsGrowInPlaceAndTheNextImageChangeStaysInPlace) {
  constexpr char kName[] = "grow";
  MakeClass(true);
  ApplyCloneSet(kName);
  const auto uids = Uids(Pods(kName));
  ASSERT_EQ(uids.size(), 2u);

  auto watch = Watch(kName, 2);
  GrowTemplate(kName, "2Gi");
  ASSERT_TRUE(Eventually([&] {
    const auto requests = Requests();
    return requests.size() == 2 && requests.begin()->second == "2Gi" && requests.rbegin()->second == "2Gi";
  })) << Kubectl({"get", "pvc", "-n", ns_, "-o", "yaml"}).output;
  EXPECT_EQ(Uids(Pods(kName)), uids) << "no pod is recreated for a claim that grows";
  EXPECT_EQ(Events().count("ExpandingPVC"), 2u);
  EXPECT_TRUE(Condition(kName, "VolumeExpansionHeld").empty());

  // The template change that follows is not a claim-template change: the pods are updated in place.
  MustKubectl({"patch", "-n", ns_, "clonesets.apps.kruise.io", kName, "--type=json", "-p",
               absl::StrCat(R"([{"op":"replace","path":"/spec/template/spec/containers/0/image","value":")", kImage2,
                            R"("}])")});
  ASSERT_TRUE(Eventually([&] { return AllReady(kName, 2, kImage2); }, absl::Seconds(120))) << Describe(kName);
  EXPECT_EQ(Uids(Pods(kName)), uids) << "updated in place, not recreated";
  const auto st = watch->Finish();
  EXPECT_EQ(st.uids_seen.size(), 2u) << st.trace;
  for (const auto& [claim, storage] : Requests()) EXPECT_EQ(storage, "2Gi") << claim;
}

TEST_F(VolumeExpansionTest, AClassWithoutExpansionHoldsTheClaimsAndSaysSo) {
  constexpr char kName[] = "held";
  MakeClass(false);
  ApplyCloneSet(kName);
  const auto uids = Uids(Pods(kName));
  GrowTemplate(kName, "2Gi");
  ASSERT_TRUE(Eventually([&] { return Condition(kName, "VolumeExpansionHeld").value("status", "") == "True"; }))
      << Describe(kName);
  const json held = Condition(kName, "VolumeExpansionHeld");
  EXPECT_EQ(held.value("reason", ""), "ExpansionNotAllowed");
  EXPECT_NE(held.value("message", "").find("does not allow volume expansion"), std::string::npos) << held.dump();
  ASSERT_TRUE(Eventually([&] { return Events().count("VolumeExpansionNotAllowed") >= 1; })) << Describe(kName);
  for (const auto& [claim, storage] : Requests()) EXPECT_EQ(storage, "1Gi") << claim;
  EXPECT_EQ(Uids(Pods(kName)), uids);
  EXPECT_EQ(Events().count("ExpandingPVC"), 0u);

  // The class allows it now: the claims grow and the condition goes.
  MustKubectl({"patch", "storageclass", class_, "--type=merge", "-p", R"({"allowVolumeExpansion":true})"});
  ASSERT_TRUE(Eventually([&] {
    const auto requests = Requests();
    return requests.size() == 2 && requests.begin()->second == "2Gi" && requests.rbegin()->second == "2Gi";
  })) << Kubectl({"get", "pvc", "-n", ns_, "-o", "yaml"}).output;
  ASSERT_TRUE(Eventually([&] { return Condition(kName, "VolumeExpansionHeld").empty(); })) << Describe(kName);
  EXPECT_EQ(Uids(Pods(kName)), uids);
}

}  // namespace
}  // namespace cloneset::testing
