// The executor's pod status patch for its own conditions is guarded by the pod's uid, not its resourceVersion
// (snapshot/patch.h). Run through the embedded cluster's store the way a PATCH is (atomic read-modify-write with
// the strategic merge, then the write's preconditions): a status write the kubelet made since the snapshot does
// not refuse it, a pod recreated under the same name (new uid) does, and a patch that must stay guarded by the
// version (KruisePodReady's merged key list) still meets a 409 after the kubelet's write.
#include <string>

#include "base/testing/fake_clock.h"
#include "kube/object_patch.h"
#include "devcluster/store.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/patch.h"

namespace cloneset::testing {
namespace {

using json = nlohmann::json;
namespace pb = ::cloneset::planner::v1;

json Pod() {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "cs-x"}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "img:v1"}}}}}}};
}

class StatusPreconditionTest : public ::testing::Test {
 protected:
  json CreatePod() {
    auto created = store_.Create(devcluster::kPods, Pod());
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *created : json();
  }
  // The kubelet's status write (pod start): moves the resourceVersion.
  void KubeletWrites() {
    auto r = store_.Mutate(devcluster::kPods, "default", "cs-x", true, [](json& o) {
      o["status"]["phase"] = "Running";
      o["status"]["conditions"] = {{{"type", "Ready"}, {"status", "True"}}};
      return absl::OkStatus();
    });
    ASSERT_TRUE(r.ok()) << r.status();
  }
  absl::StatusOr<json> PatchStatus(const pb::PatchPodStatus& patch) {
    const snapshot::ApiRequest req = snapshot::PodStatusPatchRequest("default", patch);
    EXPECT_EQ(req.content_type, snapshot::kStrategicMergePatch);
    const json body = json::parse(req.body);
    return store_.Mutate(devcluster::kPods, "default", "cs-x", true, [&](json& o) -> absl::Status {
      auto merged = kube::ApplyStrategicMergePatch(o, body);
      if (!merged.ok()) return merged.status();
      o = *std::move(merged);
      return absl::OkStatus();
    });
  }
  static pb::PatchPodStatus Patch(const json& seen, const std::string& type) {
    pb::PatchPodStatus p;
    p.set_name("cs-x");
    p.set_uid(seen["metadata"]["uid"].get<std::string>());
    p.set_resource_version(seen["metadata"]["resourceVersion"].get<std::string>());
    pb::Condition* c = p.add_set_conditions();
    c->set_type(type);
    c->set_status("False");
    return p;
  }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  devcluster::Store store_{&clock_};
};

TEST_F(StatusPreconditionTest, OwnConditionSurvivesAKubeletStatusWrite) {
  const json seen = CreatePod();  // the snapshot
  KubeletWrites();
  auto written = PatchStatus(Patch(seen, "InPlaceUpdateReady"));
  ASSERT_TRUE(written.ok()) << written.status();
  const json& conditions = (*written)["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0], json::parse(R"({"status":"True","type":"Ready"})"));  // the kubelet's, untouched
  EXPECT_EQ(conditions[1]["type"], "InPlaceUpdateReady");
  EXPECT_EQ(conditions[1]["status"], "False");
}

TEST_F(StatusPreconditionTest, RecreatedPodOfTheSameNameIsRefused) {
  const json seen = CreatePod();
  ASSERT_TRUE(store_.DeleteNow(devcluster::kPods, "default", "cs-x").ok());
  CreatePod();  // same name, new uid
  auto written = PatchStatus(Patch(seen, "InPlaceUpdateReady"));
  EXPECT_TRUE(absl::IsAborted(written.status())) << written.status();  // 409 Conflict over HTTP
  EXPECT_NE(written.status().message().find("Precondition failed: UID"), std::string::npos);
}

TEST_F(StatusPreconditionTest, SharedConditionKeepsTheVersionGuard) {
  const json seen = CreatePod();
  KubeletWrites();
  auto written = PatchStatus(Patch(seen, "KruisePodReady"));
  EXPECT_TRUE(absl::IsAborted(written.status())) << written.status();
}

}  // namespace
}  // namespace cloneset::testing
