// The condition the planner asks for is the condition the pod ends up with: PatchPodStatus -> the executor's
// strategic merge patch body (snapshot::ActionToPatch) -> the API server's merge (devcluster, merging condition
// items by type and keeping fields a patch omits, as kube-apiserver does) -> the pod decoded for the next snapshot.
// Regression: InPlaceUpdateReady=True kept the False phase's reason "StartInPlaceUpdate", so every later plan
// asked for the True condition again (11.5 writes per pod for an in-place update instead of 3).
#include <string>

#include "kube/object_patch.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/patch.h"
#include "snapshot/snapshot.h"

namespace cloneset::testing {
namespace {

using json = nlohmann::json;
namespace pb = ::cloneset::planner::v1;

pb::Condition Cond(const std::string& type, const std::string& status, const std::string& reason,
                   const std::string& message, int64_t seconds) {
  pb::Condition c;
  c.set_type(type);
  c.set_status(status);
  c.set_reason(reason);
  c.set_message(message);
  c.mutable_last_transition_time()->set_seconds(seconds);
  return c;
}

json PodWithConditions(const json& conditions) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "cs-x"}, {"namespace", "ns"}, {"uid", "u1"}, {"resourceVersion", "5"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "img:v2"}}}},
                    {"readinessGates", {{{"conditionType", "InPlaceUpdateReady"}}}}}},
          {"status", {{"phase", "Running"}, {"conditions", conditions}}}};
}

struct Case {
  std::string name;
  json before;         // status.conditions on the server
  pb::Condition want;  // what the plan sets
};

TEST(StatusRoundTrip, ServerEndsWithExactlyThePlannedCondition) {
  const json in_place_false = {{"type", "InPlaceUpdateReady"},
                               {"status", "False"},
                               {"reason", "StartInPlaceUpdate"},
                               {"lastTransitionTime", "2027-01-15T07:00:00Z"}};
  const json ready_true = {{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", "2027-01-15T06:00:00Z"}};
  const Case cases[] = {
      {"true clears the start reason", json::array({ready_true, in_place_false}),
       Cond("InPlaceUpdateReady", "True", "", "", 1800000000)},
      {"false sets the start reason",
       json::array({ready_true, {{"type", "InPlaceUpdateReady"}, {"status", "True"}, {"message", "old"},
                                 {"lastTransitionTime", "2027-01-15T06:00:00Z"}}}),
       Cond("InPlaceUpdateReady", "False", "StartInPlaceUpdate", "", 1800000000)},
      {"ready false with reason and message", json::array({ready_true, in_place_false}),
       Cond("Ready", "False", "ReadinessGatesNotReady", "gate not True", 1800000000)},
      {"new condition", json::array({ready_true}), Cond("InPlaceUpdateReady", "True", "", "", 1800000000)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::Action action;
    pb::PatchPodStatus* patch = action.mutable_patch_pod_status();
    patch->set_name("cs-x");
    patch->set_resource_version("5");
    *patch->add_set_conditions() = c.want;
    auto req = snapshot::ActionToPatch(action, "ns", "cs", "apps.kruise.io/v1alpha1");
    ASSERT_TRUE(req.ok()) << req.status();
    ASSERT_EQ(req->content_type, snapshot::kStrategicMergePatch);
    auto merged = kube::ApplyStrategicMergePatch(PodWithConditions(c.before), json::parse(req->body));
    ASSERT_TRUE(merged.ok()) << merged.status();
    auto pod = snapshot::PodFromJson(merged->dump());
    ASSERT_TRUE(pod.ok()) << pod.status();
    const pb::Condition* got = nullptr;
    for (const auto& cond : pod->conditions()) {
      if (cond.type() == c.want.type()) got = &cond;
    }
    ASSERT_NE(got, nullptr);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*got, c.want))
        << "got " << got->ShortDebugString() << "\nwant " << c.want.ShortDebugString();
    EXPECT_EQ(pod->conditions_size(), static_cast<int>(c.before.size()) + (c.name == "new condition" ? 1 : 0));
  }
}

}  // namespace
}  // namespace cloneset::testing
