#include "devcluster/nodes/scheduler.h"

#include <map>

#include <gtest/gtest.h>

#include "devcluster/nodes/pvc_binder.h"

namespace cloneset::devcluster::nodes {
namespace {

NodeSlot Node(std::string name, int64_t cpu_used, int64_t pods, bool ready = true,
              std::vector<std::pair<std::string, std::string>> labels = {}) {
  NodeSlot n;
  n.name = std::move(name);
  n.alloc_cpu_milli = 4000;
  n.alloc_memory_bytes = 8LL << 30;
  n.alloc_pods = 3;
  n.req_cpu_milli = n.score_cpu_milli = cpu_used;
  n.score_memory_bytes = 0;
  n.pods = pods;
  n.ready = ready;
  n.labels = std::move(labels);
  return n;
}

TEST(Scheduler, RequestOfSumsContainersAndDefaultsFromLimits) {
  nlohmann::json pod = {{"spec",
                         {{"containers",
                           {{{"resources", {{"requests", {{"cpu", "250m"}, {"memory", "64Mi"}}}}}},
                            {{"resources", {{"limits", {{"cpu", "1"}}}}}},
                            {{"name", "no-resources"}}}},
                          {"initContainers", {{{"resources", {{"requests", {{"cpu", "2"}}}}}}}},
                          {"nodeSelector", {{"disk", "ssd"}}}}}};
  PodRequest r = RequestOf(pod);
  EXPECT_EQ(r.cpu_milli, 2000);  // init container max wins over 1250
  EXPECT_EQ(r.memory_bytes, 64LL << 20);
  EXPECT_EQ(r.score_cpu_milli, 250 + 1000 + 100);
  EXPECT_EQ(r.node_selector, (std::vector<std::pair<std::string, std::string>>{{"disk", "ssd"}}));
  EXPECT_EQ(RequestOf(nlohmann::json::object()).cpu_milli, 0);
  EXPECT_EQ(RequestOf({{"spec", {{"containers", {{{"resources", {{"requests", {{"cpu", "bogus"}}}}}}}}}}}).cpu_milli, 0);
}

TEST(Scheduler, PickNodeTable) {
  struct Case {
    std::string name;
    PodRequest request;
    std::vector<NodeSlot> nodes;
    std::optional<size_t> want;
    std::string message;
  };
  PodRequest small;
  small.cpu_milli = small.score_cpu_milli = 500;
  PodRequest ssd = small;
  ssd.node_selector = {{"disk", "ssd"}};
  PodRequest huge;
  huge.cpu_milli = huge.score_cpu_milli = 5000;
  std::vector<Case> cases = {
      {"least cpu wins", small, {Node("a", 2000, 1), Node("b", 1000, 1)}, 1, ""},
      {"tie -> fewer pods", small, {Node("a", 1000, 2), Node("b", 1000, 1)}, 1, ""},
      {"tie -> name", small, {Node("b", 0, 0), Node("a", 0, 0)}, 1, ""},
      {"not ready skipped", small, {Node("a", 0, 0, false), Node("b", 3000, 1)}, 1, ""},
      {"selector", ssd, {Node("a", 0, 0), Node("b", 3000, 1, true, {{"disk", "ssd"}})}, 1, ""},
      {"full pods", small, {Node("a", 0, 3)}, std::nullopt, "0/1 nodes are available: 1 Too many pods."},
      {"nothing fits",
       huge,
       {Node("a", 0, 0), Node("b", 0, 0, false), Node("c", 0, 0, true, {})},
       std::nullopt,
       "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }."},
      {"selector mismatch", ssd, {Node("a", 0, 0)}, std::nullopt,
       "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."},
      {"no nodes", small, {}, std::nullopt, "0/0 nodes are available."},
  };
  for (const auto& c : cases) {
    Placement p = PickNode(c.request, c.nodes);
    EXPECT_EQ(p.node, c.want) << c.name;
    EXPECT_EQ(p.message, c.message) << c.name;
  }
}

TEST(Scheduler, RequestOfListsTheClaimsThePodMounts) {
  nlohmann::json pod = {{"spec",
                         {{"volumes",
                           {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-web-0"}}}},
                            {{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}},
                            {{"name", "bad"}, {"persistentVolumeClaim", {{"claimName", 7}}}},
                            {{"name", "logs"}, {"persistentVolumeClaim", {{"claimName", "logs-web-0"}}}}}}}}};
  EXPECT_EQ(RequestOf(pod).claims, (std::vector<std::string>{"data-web-0", "logs-web-0"}));
  EXPECT_TRUE(RequestOf(nlohmann::json::object()).claims.empty());
}

TEST(Scheduler, CheckClaimsTable) {
  using nlohmann::json;
  const json bound = {{"metadata", {{"name", "c"}}}, {"status", {{"phase", "Bound"}}}};
  auto pending = [](std::optional<std::string> cls) {
    json c = {{"metadata", {{"name", "c"}}}, {"spec", json::object()}, {"status", {{"phase", "Pending"}}}};
    if (cls) c["spec"]["storageClassName"] = *cls;
    return c;
  };
  const json deleting = {{"metadata", {{"name", "c"}, {"deletionTimestamp", "2026-01-01T00:00:00Z"}}}};
  const json immediate = {{"metadata", {{"name", "fast"}}}, {"provisioner", "x.io/p"}};
  const json wffc = {{"metadata", {{"name", "wffc"}}}, {"provisioner", "x.io/p"},
                     {"volumeBindingMode", "WaitForFirstConsumer"}};
  const json local = {{"metadata", {{"name", "local"}}}, {"provisioner", "kubernetes.io/no-provisioner"},
                      {"volumeBindingMode", "WaitForFirstConsumer"}};
  const std::vector<json> classes = {immediate, wffc, local, DefaultStorageClassObject("standard")};
  const std::string unbound = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found";
  struct Case {
    std::string name;
    std::vector<std::string> claims;
    std::map<std::string, json> stored;
    std::vector<json> classes;
    std::optional<std::string> want;
    std::vector<std::string> awaiting = {};
  };
  const std::vector<Case> cases = {
      {"no claims", {}, {}, classes, std::nullopt},
      {"all bound", {"a", "b"}, {{"a", bound}, {"b", bound}}, classes, std::nullopt},
      {"missing", {"a", "b"}, {{"a", bound}}, classes,
       "0/3 nodes are available: persistentvolumeclaim \"b\" not found. not found"},
      {"first missing wins", {"x", "y"}, {}, classes,
       "0/3 nodes are available: persistentvolumeclaim \"x\" not found. not found"},
      {"being deleted", {"a"}, {{"a", deleting}}, classes,
       "0/3 nodes are available: persistentvolumeclaim \"a\" is being deleted. not found"},
      // The claim exists but is not Bound: a real scheduler keeps the pod Pending (before, it ran).
      {"unbound immediate", {"a", "b"}, {{"a", bound}, {"b", pending("fast")}}, classes, unbound},
      {"unbound, no class and no default", {"a"}, {{"a", pending(std::nullopt)}}, {immediate}, unbound},
      {"unbound, missing class", {"a"}, {{"a", pending("gone")}}, classes, unbound},
      {"first consumer, provisioned", {"a", "b"}, {{"a", pending("wffc")}, {"b", pending(std::nullopt)}}, classes,
       std::nullopt, {"a", "b"}},
      {"first consumer, nothing provisions", {"a", "b"}, {{"a", pending("wffc")}, {"b", pending("local")}}, classes,
       "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. no new claims to "
       "deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."},
  };
  for (const auto& c : cases) {
    ClaimsVerdict got = CheckClaims(
        c.claims, 3,
        [&](const std::string& name) -> std::optional<json> {
          auto it = c.stored.find(name);
          return it == c.stored.end() ? std::nullopt : std::optional<json>(it->second);
        },
        c.classes);
    EXPECT_EQ(got.unschedulable, c.want) << c.name;
    EXPECT_EQ(got.awaiting_node, c.awaiting) << c.name;
  }
}

TEST(Scheduler, BindingAndUnschedulableConditions) {
  nlohmann::json pod = {{"spec", nlohmann::json::object()}, {"status", {{"phase", "Pending"}}}};
  EXPECT_TRUE(ApplyUnschedulable(pod, "0/1 nodes are available.", "2026-01-01T00:00:00Z"));
  EXPECT_FALSE(ApplyUnschedulable(pod, "0/1 nodes are available.", "2026-01-01T00:00:05Z"));  // no-op
  EXPECT_EQ(pod["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_TRUE(ApplyBinding(pod, "devcluster-node-1", "2026-01-01T00:00:09Z"));
  EXPECT_EQ(pod["spec"]["nodeName"], "devcluster-node-1");
  const auto& cond = pod["status"]["conditions"][0];
  EXPECT_EQ(cond["status"], "True");
  EXPECT_EQ(cond["lastTransitionTime"], "2026-01-01T00:00:09Z");
  EXPECT_FALSE(cond.contains("reason"));
  EXPECT_FALSE(ApplyBinding(pod, "devcluster-node-1", "2026-01-01T00:00:10Z"));
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
