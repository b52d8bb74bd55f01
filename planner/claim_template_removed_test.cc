// A volumeClaimTemplate removed while pods are still created from an older revision whose template uses it
// (semantics §1.5): the scale-out goes on, each such pod with an emptyDir in place of the removed claim.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/testing/both_encodings.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

namespace t = testing;
using Json = nlohmann::json;

constexpr char kOld[] = "cs-rev-1";
constexpr char kNew[] = "cs-rev-2";

// Revision 1 mounts the claims "data" and "logs"; revision 2 (the spec now) mounts only "data", and "logs" is no
// longer a claim template.
std::string TemplateMounting(const std::string& image, const std::vector<std::string>& volumes) {
  Json mounts = Json::array();
  for (const std::string& v : volumes) mounts.push_back({{"name", v}, {"mountPath", "/" + v}});
  Json tmpl = {{"metadata", {{"labels", {{"app", "demo"}}}}},
               {"spec", {{"containers", Json::array({{{"name", "main"}, {"image", image}, {"volumeMounts", mounts}}})}}}};
  return tmpl.dump();
}

pb::PlanRequest ScaleOutWithPartition(int32_t replicas, int32_t partition) {
  const std::string old_template = TemplateMounting("nginx:1.25", {"data", "logs"});
  const std::string new_template = TemplateMounting("nginx:1.26", {"data"});
  pb::CloneSet cs = t::CloneSetBuilder()
                        .Replicas(replicas)
                        .Partition(t::Int(partition))
                        .Template(new_template)
                        .Vct(t::VctJson("data"))
                        .Status(kOld, kNew);
  std::vector<pb::Pod> pods;
  std::vector<pb::PersistentVolumeClaim> pvcs;
  for (const char* id : {"p0", "p1"}) {
    pods.push_back(t::PodBuilder(std::string("cs-") + id)
                       .Revision(kOld)
                       .Label(kPodTemplateHashLabel, std::string(ShortHash(kOld)))
                       .Lifecycle(kStateNormal)
                       .Node("node-1")
                       .Ready(t::Now() - absl::Hours(1)));
    for (const char* vct : {"data", "logs"}) pvcs.push_back(t::PvcBuilder(std::string(vct) + "-cs-" + id, id));
  }
  return t::Request(cs, pods, pvcs,
                    {t::RevisionBuilder(kOld, 1).Template(old_template),
                     t::RevisionBuilder(kNew, 2).Template(new_template)});
}

TEST(ClaimTemplateRemovedTest, ScaleOutOnTheOldRevisionGoesOn) {
  // Replicas 2 -> 4 with the partition holding every pod on revision 1.
  absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(ScaleOutWithPartition(4, 4));
  ASSERT_TRUE(resp.ok()) << resp.status();
  int created = 0;
  for (const pb::Action& a : resp->actions()) {
    if (a.kind_case() != pb::Action::kCreatePod) continue;
    ++created;
    EXPECT_EQ(a.create_pod().revision(), kOld);
    const Json pod = Json::parse(a.create_pod().pod_json());
    const std::string id = a.create_pod().instance_id();
    EXPECT_EQ(pod["spec"]["volumes"],
              Json::parse(R"([{"name":"data","persistentVolumeClaim":{"claimName":"data-cs-)" + id +
                          R"(","readOnly":false}},{"name":"logs","emptyDir":{}}])"));
    ASSERT_EQ(a.create_pod().claim_names_size(), 1);
    EXPECT_EQ(a.create_pod().claim_names(0), "data-cs-" + id);
    ASSERT_EQ(a.create_pod().pvc_jsons_size(), 1);
    EXPECT_EQ(Json::parse(a.create_pod().pvc_jsons(0))["metadata"]["name"], "data-cs-" + id);
  }
  EXPECT_EQ(created, 2);
  int warnings = 0;
  for (const pb::Event& e : resp->events()) {
    if (e.reason() != "VolumeClaimTemplateRemoved") continue;
    ++warnings;
    EXPECT_EQ(e.type(), pb::WARNING);
    EXPECT_TRUE(absl::StrContains(e.message(), kOld)) << e.message();
    EXPECT_TRUE(absl::StrContains(e.message(), "logs")) << e.message();
  }
  EXPECT_EQ(warnings, 1) << "one event per revision and plan";
}

TEST(ClaimTemplateRemovedTest, PodsOfTheCurrentTemplateNeedNoStandIn) {
  // Partition 2: the two new pods go to revision 2, which does not use "logs".
  absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(ScaleOutWithPartition(4, 2));
  ASSERT_TRUE(resp.ok()) << resp.status();
  int created = 0;
  for (const pb::Action& a : resp->actions()) {
    if (a.kind_case() != pb::Action::kCreatePod) continue;
    ++created;
    EXPECT_EQ(a.create_pod().revision(), kNew);
    EXPECT_FALSE(absl::StrContains(a.create_pod().pod_json(), "emptyDir")) << a.create_pod().pod_json();
  }
  EXPECT_EQ(created, 2);
  for (const pb::Event& e : resp->events()) EXPECT_NE(e.reason(), "VolumeClaimTemplateRemoved");
}

}  // namespace
}  // namespace cloneset::planner
