#include "planner/pod_factory.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;
using namespace ::cloneset::planner::testing;  // NOLINT

const char kTemplate[] = R"({"metadata":{"labels":{"app":"demo"},"annotations":{"a":"b"},"finalizers":["f/x"]},
  "spec":{"containers":[{"name":"main","image":"nginx"}],"readinessGates":[{"conditionType":"Other"}],
  "volumes":[{"name":"data","emptyDir":{}},{"name":"cfg","configMap":{"name":"c"}}]}})";

struct Built {
  pb::PlanRequest request;
  PlanContext ctx;
  Json pod;
  std::vector<Json> pvcs;
};

std::unique_ptr<Built> Build(CloneSetBuilder cs, const std::vector<pb::PersistentVolumeClaim>& pvcs = {},
                             bool short_hash = false) {
  auto b = std::make_unique<Built>();
  b->request = Request(cs, {}, pvcs);
  b->request.mutable_feature_gates()->set_clone_set_short_hash(short_hash);
  ResolvedSpec spec;
  b->ctx = MakeContext(b->request, spec, "cs-5d8f7", "cs-5d8f7");
  absl::StatusOr<NewPod> pod = BuildPod(b->ctx, kTemplate, "cs-5d8f7", "abcde");
  EXPECT_TRUE(pod.ok()) << pod.status();
  if (!pod.ok()) return b;
  b->pod = Json::parse(pod->pod_json);
  for (const auto& p : pod->pvc_jsons) b->pvcs.push_back(Json::parse(p));
  return b;
}

TEST(BuildPod, MetadataShape) {
  auto b = Build(CloneSetBuilder());
  const Json& m = b->pod["metadata"];
  EXPECT_EQ(b->pod["apiVersion"], "v1");
  EXPECT_EQ(b->pod["kind"], "Pod");
  EXPECT_EQ(m["name"], "cs-abcde");
  EXPECT_EQ(m["generateName"], "cs-");
  EXPECT_EQ(m["namespace"], "default");
  EXPECT_EQ(m["labels"], Json({{"app", "demo"},
                               {"controller-revision-hash", "cs-5d8f7"},
                               {"pod-template-hash", "5d8f7"},
                               {"apps.kruise.io/cloneset-instance-id", "abcde"},
                               {"app.kruise.io/instance", "cs"},
                               {"lifecycle.apps.kruise.io/state", "Normal"}}));
  EXPECT_EQ(m["annotations"], Json({{"a", "b"}, {"lifecycle.apps.kruise.io/timestamp", "2027-01-14T08:00:00Z"}}));
  EXPECT_EQ(m["finalizers"], Json::array({"f/x"}));
  EXPECT_EQ(m["ownerReferences"], Json::array({{{"apiVersion", "apps.kruise.io/v1alpha1"},
                                                {"kind", "CloneSet"},
                                                {"name", "cs"},
                                                {"uid", kCloneSetUid},
                                                {"controller", true},
                                                {"blockOwnerDeletion", true}}}));
}

TEST(BuildPod, ShortHashGate) {
  auto b = Build(CloneSetBuilder(), {}, /*short_hash=*/true);
  EXPECT_EQ(b->pod["metadata"]["labels"]["controller-revision-hash"], "5d8f7");
}

TEST(BuildPod, PreNormalHookStartsInPreparingNormal) {
  CloneSetBuilder cs;
  cs.mutable_clone_set()->mutable_spec()->mutable_lifecycle()->mutable_pre_normal()->add_finalizers_handler("x/y");
  auto b = Build(cs);
  EXPECT_EQ(b->pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"], "PreparingNormal");
}

TEST(BuildPod, ReadinessGateAppendedOnce) {
  auto b = Build(CloneSetBuilder());
  EXPECT_EQ(b->pod["spec"]["readinessGates"],
            Json::parse(R"([{"conditionType":"Other"},{"conditionType":"InPlaceUpdateReady"}])"));
}

TEST(BuildPod, PvcVolumesFirstAndCollidingTemplateVolumeDropped) {
  auto b = Build(CloneSetBuilder().Vct(VctJson("data")).Vct(VctJson("logs")));
  EXPECT_EQ(b->pod["spec"]["volumes"], Json::parse(R"([
    {"name":"data","persistentVolumeClaim":{"claimName":"data-cs-abcde","readOnly":false}},
    {"name":"logs","persistentVolumeClaim":{"claimName":"logs-cs-abcde","readOnly":false}},
    {"name":"cfg","configMap":{"name":"c"}}])"));
  EXPECT_EQ(b->pod["spec"]["containers"][0]["image"], "nginx");
}

TEST(BuildPod, PvcShape) {
  auto b = Build(CloneSetBuilder().Vct(VctJson("data")));
  ASSERT_EQ(b->pvcs.size(), 1u);
  const Json& pvc = b->pvcs[0];
  EXPECT_EQ(pvc["apiVersion"], "v1");
  EXPECT_EQ(pvc["kind"], "PersistentVolumeClaim");
  EXPECT_EQ(pvc["metadata"]["name"], "data-cs-abcde");
  EXPECT_EQ(pvc["metadata"]["namespace"], "default");
  EXPECT_EQ(pvc["metadata"]["labels"], Json({{"app", "demo"},
                                             {"apps.kruise.io/cloneset-instance-id", "abcde"},
                                             {"app.kruise.io/instance", "cs"}}));
  EXPECT_EQ(pvc["metadata"]["ownerReferences"][0]["kind"], "CloneSet");
  EXPECT_EQ(pvc["metadata"]["ownerReferences"][0]["uid"], kCloneSetUid);
  EXPECT_EQ(pvc["spec"]["resources"]["requests"]["storage"], "1Gi");
}

TEST(BuildPod, ExistingPvcsAreNotCreatedAgain) {
  auto b = Build(CloneSetBuilder().Vct(VctJson("data")).Vct(VctJson("logs")), {PvcBuilder("data-cs-abcde", "abcde")});
  ASSERT_EQ(b->pvcs.size(), 1u);
  EXPECT_EQ(b->pvcs[0]["metadata"]["name"], "logs-cs-abcde");
}

// A template that mounts "logs" and "scratch" while the claim templates now hold only "data": the removed claim
// template's volume gets an emptyDir, once, after the others; a defined volume gets none.
TEST(BuildPod, VolumeOfARemovedClaimTemplateGetsAnEmptyDir) {
  pb::PlanRequest req = Request(CloneSetBuilder().Vct(VctJson("data")));
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  const std::string tmpl = R"({"metadata":{"labels":{"app":"demo"}},"spec":{
    "initContainers":[{"name":"init","image":"busybox","volumeMounts":[{"name":"logs","mountPath":"/l"}]}],
    "containers":[{"name":"main","image":"nginx","volumeMounts":[{"name":"data","mountPath":"/d"},
      {"name":"logs","mountPath":"/l"},{"name":"cfg","mountPath":"/c"}],
      "volumeDevices":[{"name":"scratch","devicePath":"/dev/x"}]}],
    "volumes":[{"name":"cfg","configMap":{"name":"c"}}]}})";
  absl::StatusOr<PodFactory> factory = PodFactory::Create(ctx, tmpl, "cs-1");
  ASSERT_TRUE(factory.ok()) << factory.status();
  EXPECT_EQ(factory->stand_in_volumes(), (std::vector<std::string>{"logs", "scratch"}));
  const NewPod pod = factory->Build("abcde");
  EXPECT_EQ(pod.stand_in_volumes, factory->stand_in_volumes());
  EXPECT_EQ(pod.claim_names, std::vector<std::string>{"data-cs-abcde"});
  EXPECT_EQ(Json::parse(pod.pod_json)["spec"]["volumes"], Json::parse(R"([
    {"name":"data","persistentVolumeClaim":{"claimName":"data-cs-abcde","readOnly":false}},
    {"name":"cfg","configMap":{"name":"c"}},
    {"name":"logs","emptyDir":{}},
    {"name":"scratch","emptyDir":{}}])"));
}

TEST(BuildPod, NoStandInWhenEveryVolumeIsDefined) {
  pb::PlanRequest req = Request(CloneSetBuilder().Vct(VctJson("data")));
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  absl::StatusOr<PodFactory> factory = PodFactory::Create(
      ctx, R"({"spec":{"containers":[{"name":"main","image":"x","volumeMounts":[{"name":"data","mountPath":"/d"}]}]}})",
      "cs-1");
  ASSERT_TRUE(factory.ok()) << factory.status();
  EXPECT_TRUE(factory->stand_in_volumes().empty());
}

TEST(BuildPod, BadInputsNameTheField) {
  pb::PlanRequest req = Request(CloneSetBuilder().Vct("{}"));
  ResolvedSpec spec;
  PlanContext ctx = MakeContext(req, spec, "cs-1", "cs-1");
  EXPECT_EQ(BuildPod(ctx, "[]", "cs-1", "abcde").status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status st = BuildPod(ctx, TemplateJson(), "cs-1", "abcde").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("volume_claim_templates_json[0].metadata.name"), std::string::npos);
}

}  // namespace
}  // namespace cloneset::planner
