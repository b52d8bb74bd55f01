#include "base/testing/fake_clock.h"
#include "devcluster/table_workloads.h"

#include <gtest/gtest.h>

#include "devcluster/resources.h"
#include "devcluster/table.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using std::chrono::seconds;

ResourceType TypeOf(const std::string& id) {
  for (const auto& t : BuiltinResourceTypes())
    if (t.Id() == id) return t;
  ADD_FAILURE() << "no built-in type " << id;
  return {};
}

struct Case {
  std::string id;
  std::string object;  // metadata.creationTimestamp is 2026-01-01T00:00:00Z, printed 65s later
  std::string cells;
};

TEST(WorkloadTableTest, RowsMatchKubectlPrinters) {
  const std::vector<Case> cases = {
      {"deployments.apps",
       R"({"spec":{"replicas":2,"selector":{"matchLabels":{"app":"planner"}},
           "template":{"spec":{"containers":[{"name":"planner","image":"p:1"},{"name":"side","image":"s:2"}]}}},
          "status":{"readyReplicas":1,"updatedReplicas":2,"availableReplicas":1}})",
       R"(["x","1/2",2,1,"65s","planner,side","p:1,s:2","app=planner"])"},
      // No controller fills the status here: a stored Deployment prints 0 ready of its default 1 replica.
      {"deployments.apps", R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}})",
       R"(["x","0/1",0,0,"65s","c","i","<none>"])"},
      {"daemonsets.apps",
       R"({"spec":{"selector":{"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]},
           "template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"},"containers":[{"name":"agent","image":"a:1"}]}}},
          "status":{"desiredNumberScheduled":3,"currentNumberScheduled":3,"numberReady":2,"updatedNumberScheduled":3,"numberAvailable":2}})",
       R"j(["x",3,3,2,3,2,"kubernetes.io/os=linux","65s","agent","a:1","tier in (a,b)"])j"},
      {"serviceaccounts", R"({"secrets":[{"name":"t"}]})", R"(["x","1","65s"])"},
      {"roles.rbac.authorization.k8s.io", R"({"rules":[]})", R"(["x","2026-01-01T00:00:00Z"])"},
      {"clusterrolebindings.rbac.authorization.k8s.io",
       R"({"roleRef":{"kind":"ClusterRole","name":"exec"},"subjects":[{"kind":"ServiceAccount","name":"sa","namespace":"ns"},
           {"kind":"User","name":"u"},{"kind":"Group","name":"g1"},{"kind":"Group","name":"g2"}]})",
       R"(["x","ClusterRole/exec","65s","u","g1, g2","ns/sa"])"},
      {"poddisruptionbudgets.policy", R"({"spec":{"minAvailable":1},"status":{"disruptionsAllowed":1}})",
       R"(["x","1","N/A",1,"65s"])"},
      {"poddisruptionbudgets.policy", R"({"spec":{"maxUnavailable":"25%"}})", R"(["x","N/A","25%",0,"65s"])"},
      {"networkpolicies.networking.k8s.io", R"({"spec":{"podSelector":{"matchLabels":{"a":"b"}}}})",
       R"(["x","a=b","65s"])"},
      {"networkpolicies.networking.k8s.io", R"({"spec":{"podSelector":{}}})", R"(["x","<none>","65s"])"},
      {"horizontalpodautoscalers.autoscaling",
       R"({"spec":{"scaleTargetRef":{"kind":"Deployment","name":"planner"},"minReplicas":2,"maxReplicas":6,
           "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}},
                      {"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}}]},
          "status":{"currentReplicas":2,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":40}}}]}})",
       R"(["x","Deployment/planner","cpu: 40%/70%, memory: <unknown>/1Gi","2","6","2","65s"])"},
  };
  const auto now = absl::ToChronoTime(base::testing::FakeClock::k2026) + seconds(65);
  for (const auto& c : cases) {
    json o = json::parse(c.object);
    o["metadata"] = {{"name", "x"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}};
    ResourceType t = TypeOf(c.id);
    json table = BuildTable(t, {o}, now, "7", "", false);
    EXPECT_EQ(table["rows"][0]["cells"], json::parse(c.cells)) << c.id << " " << c.object;
    EXPECT_EQ(table["columnDefinitions"].size(), table["rows"][0]["cells"].size()) << c.id;
    EXPECT_EQ(table["columnDefinitions"][0]["name"], "Name") << c.id;
  }
}

TEST(WorkloadTableTest, OtherKindsAreNotHandledHere) {
  EXPECT_FALSE(WorkloadTableColumns("pods").has_value());
  EXPECT_FALSE(WorkloadTableCells("configmaps", json::object(), absl::ToChronoTime(base::testing::FakeClock::k2026))
                   .has_value());
}

}  // namespace
}  // namespace cloneset::devcluster
