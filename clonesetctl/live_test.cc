// `clonesetctl plan` shows what the planner would do for the request the executor sends: the same request, byte
// for byte, for the same objects at the same time and the same --feature-gates.
#include "clonesetctl/live.h"

#include <string>
#include <vector>

#include "base/testing/fake_clock.h"
#include "executor/reconciler.h"
#include "executor/testing/mocks.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "planapi/feature_gates.h"

namespace cloneset::clonesetctl {
namespace {

using ::testing::_;
using ::testing::NiceMock;
using ::testing::Return;

constexpr char kSpread[] =
    R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone"}],"containers":[{"name":"main"}]}})";

pb::Pod Pod(const std::string& name, const std::string& rv, const std::string& node) {
  pb::Pod p;
  p.mutable_metadata()->set_name(name);
  p.mutable_metadata()->set_namespace_("ns");
  p.mutable_metadata()->set_resource_version(rv);
  p.mutable_metadata()->mutable_creation_timestamp()->set_seconds(1700000000);
  p.set_node_name(node);
  return p;
}

pb::PersistentVolumeClaim Pvc(const std::string& name, bool terminating) {
  pb::PersistentVolumeClaim pvc;
  pvc.mutable_metadata()->set_name(name);
  pvc.mutable_metadata()->set_namespace_("ns");
  if (terminating) pvc.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(1700000100);
  return pvc;
}

pb::Node Node(const std::string& name, const std::string& zone) {
  pb::Node n;
  n.set_name(name);
  (*n.mutable_labels())["zone"] = zone;
  return n;
}

struct Case {
  std::string name;
  std::string template_json;
  std::string feature_gates;  // both started so
};

class PlanRequestTest : public ::testing::TestWithParam<Case> {};

TEST_P(PlanRequestTest, IsTheExecutorsRequest) {
  LiveCloneSet live;
  live.clone_set.set_api_version("apps.kruise.io/v1alpha1");
  live.clone_set.mutable_metadata()->set_name("cs");
  live.clone_set.mutable_metadata()->set_namespace_("ns");
  live.clone_set.mutable_metadata()->set_uid("uid-1");
  live.clone_set.mutable_metadata()->set_resource_version("100");
  live.clone_set.mutable_spec()->set_template_json(GetParam().template_json);
  live.pods = {Pod("cs-a", "11", "n1"), Pod("cs-b", "12", "n2")};  // FetchCloneSet sorts by name
  live.pvcs = {Pvc("data-cs-a", false), Pvc("data-cs-b", false), Pvc("data-cs-old", true)};
  live.pvcs[0].set_storage_class_name("fast");
  live.storage_classes.resize(2);  // every class of the cluster; the request carries those its claims name
  live.storage_classes[0].set_name("slow");
  live.storage_classes[1].set_name("fast");
  live.storage_classes[1].set_allow_volume_expansion(true);
  live.revisions.emplace_back().mutable_metadata()->set_name("cs-abc");
  live.nodes = {Node("n1", "a"), Node("n2", "b"), Node("n3", "c")};  // every node of the cluster

  NiceMock<executor::testing::MockClusterCache> cache;
  ON_CALL(cache, PvcsOwnedBy("ns", "uid-1")).WillByDefault(Return(live.pvcs));
  ON_CALL(cache, RevisionsOwnedBy("ns", "uid-1")).WillByDefault(Return(live.revisions));
  ON_CALL(cache, StorageClasses()).WillByDefault(Return(live.storage_classes));
  ON_CALL(cache, NodesNamed(_)).WillByDefault([&live](const std::vector<std::string>& names) {
    std::vector<pb::Node> out;
    for (const std::string& name : names) {
      for (const pb::Node& n : live.nodes) {
        if (n.name() == name) out.push_back(n);
      }
    }
    return out;
  });
  base::testing::FakeClock clock;
  clock.Set(absl::FromUnixNanos(1767225600123456789));
  const absl::StatusOr<planapi::FeatureGateSettings> gates = planapi::ParseFeatureGates(GetParam().feature_gates);
  ASSERT_TRUE(gates.ok()) << gates.status();
  executor::Reconciler reconciler({.cache = &cache, .clock = &clock, .feature_gates = gates->gates});
  const executor::RequestWithPods executor = reconciler.BuildRequest("ns/cs", live.clone_set, live.pods);

  const planapi::RequestWithPods ours = PlanRequestFor(live, clock.Now(), gates->gates);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ours.request.feature_gates(), gates->gates));
  EXPECT_EQ(ours.request.random_seed(), executor.request.random_seed());
  EXPECT_EQ(ours.request.pvcs_size(), 2) << "a terminating PVC is not sent";
  ASSERT_EQ(ours.request.storage_classes_size(), 1);
  EXPECT_EQ(ours.request.storage_classes(0).name(), "fast");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ours.request, executor.request))
      << "clonesetctl: " << ours.request.ShortDebugString() << "\nexecutor: " << executor.request.ShortDebugString();
}

INSTANTIATE_TEST_SUITE_P(Templates, PlanRequestTest,
                         ::testing::Values(Case{"spread", kSpread, ""},
                                           Case{"plain", R"({"spec":{"containers":[]}})", ""},
                                           Case{"gates", R"({"spec":{"containers":[]}})",
                                                "CloneSetShortHash=true,InPlaceUpdateEnvFromMetadata=false"}),
                         [](const auto& info) { return info.param.name; });

// A claim whose request is above its capacity (an expansion the storage driver has not finished) says so in the
// PVC column; one at its capacity shows its name only.
TEST(RenderStatus, ClaimsWaitingForExpansion) {
  LiveCloneSet live;
  live.clone_set.mutable_metadata()->set_name("cs");
  live.clone_set.mutable_metadata()->set_namespace_("ns");
  for (const char* id : {"aaaaa", "bbbbb"}) {
    pb::Pod pod = Pod(std::string("cs-") + id, "1", "n1");
    (*pod.mutable_metadata()->mutable_labels())["apps.kruise.io/cloneset-instance-id"] = id;
    live.pods.push_back(pod);
    pb::PersistentVolumeClaim pvc = Pvc(std::string("data-cs-") + id, false);
    (*pvc.mutable_metadata()->mutable_labels())["apps.kruise.io/cloneset-instance-id"] = id;
    pvc.set_storage_request("20Gi");
    pvc.set_storage_capacity(std::string(id) == "aaaaa" ? "10Gi" : "20480Mi");
    live.pvcs.push_back(pvc);
  }
  const std::string out = RenderStatus(live, absl::FromUnixSeconds(1767225600));
  EXPECT_THAT(out, ::testing::HasSubstr("data-cs-aaaaa (expanding to 20Gi)")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("data-cs-bbbbb\n")) << out;
}

// `plan` asks the planner it is told about, the flag before the environment, and has no default to guess.
TEST(PlannerAddress, FlagThenEnvironmentElseAnErrorNamingBoth) {
  struct Case {
    std::string flag, env, want;  // want "" : an error
  };
  for (const Case& c : std::vector<Case>{{"10.0.0.1:7070", "127.0.0.1:1", "10.0.0.1:7070"},
                                         {"", "dns:///planner.ns.svc:7070", "dns:///planner.ns.svc:7070"},
                                         {"", "", ""}}) {
    absl::StatusOr<std::string> got = PlannerAddress(c.flag, c.env);
    if (c.want.empty()) {
      ASSERT_FALSE(got.ok()) << *got;
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr("--planner"));
      EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr("CLONESET_PLANNER"));
    } else {
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, c.want);
    }
  }
}

}  // namespace
}  // namespace cloneset::clonesetctl
