// In-place resize end to end on the embedded cluster (the executor with the InPlaceWorkloadVerticalScaling gate,
// the pods/resize subresource, the simulated kubelet): a cpu/memory change keeps every pod (same UID, same
// container, no restart) and keeps them ready; a resize the node cannot fit blocks the rollout and is reported on
// the CloneSet (condition ResizePending, Warning event) until the template is rolled back; a Deferred resize
// (the devcluster's fault annotation) likewise; a change of the QoS class recreates the pods.
//
// Embedded cluster only: the real backend's kwok nodes report no container resources, so kube-apiserver refuses
// every resize there ("Pod running on node without support for resize"); the real-node test
// (tests/real/real_node_resize_test.sh) resizes on a real kubelet.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "e2e_fixture.h"

namespace cloneset::testing {
namespace {

// requests cpu 100m memory 64Mi, limits cpu 200m memory 128Mi (Burstable), InPlaceIfPossible, maxUnavailable 1.
std::string ResizeYaml(const std::string& name, int replicas, const std::string& requests, const std::string& limits,
                       const std::string& pod_annotations = "") {
  return absl::StrCat("apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: ", name,
                      "\nspec:\n  replicas: ", replicas, "\n  selector:\n    matchLabels:\n      app: ", name,
                      "\n  updateStrategy:\n    type: InPlaceIfPossible\n    maxUnavailable: 1\n",
                      "  template:\n    metadata:\n      labels:\n        app: ", name, "\n", pod_annotations,
                      "    spec:\n      containers:\n      - name: main\n        image: img:v1\n",
                      "        resources:\n          requests: ", requests, "\n          limits: ", limits, "\n");
}

constexpr char kRequests[] = "{cpu: 100m, memory: 64Mi}";
constexpr char kLimits[] = "{cpu: 200m, memory: 128Mi}";

// What a resize must keep and change, per pod.
struct PodState {
  std::string uid, container_id, spec_cpu_limit, status_cpu_limit, lifecycle;
  int restarts = 0;
  bool ready = false;
  std::string pending_reason;  // PodResizePending's reason when True
};

class ResizeTest : public E2eTest {
 public:
  static void SetUpTestSuite() {
    StartCluster({.executor_flags = {"--feature_gates=InPlaceWorkloadVerticalScaling=true"}, .crds = {}});
  }

 protected:
  std::map<std::string, PodState> States(const std::string& app) {
    std::map<std::string, PodState> out;
    for (const json& p : GetJson({"pods", "-l", "app=" + app}).value("items", json::array())) {
      if (p["metadata"].contains("deletionTimestamp")) continue;
      PodState s;
      s.uid = p["metadata"].value("uid", "");
      s.lifecycle = p["metadata"].value("labels", json::object()).value("lifecycle.apps.kruise.io/state", "");
      s.spec_cpu_limit = p["spec"]["containers"][0]["resources"]["limits"].value("cpu", "");
      const json status = p.value("status", json::object());
      for (const json& cs : status.value("containerStatuses", json::array())) {
        s.container_id = cs.value("containerID", "");
        s.restarts = cs.value("restartCount", 0);
        s.status_cpu_limit = cs.value("resources", json::object()).value("limits", json::object()).value("cpu", "");
      }
      for (const json& c : status.value("conditions", json::array())) {
        if (c.value("type", "") == "PodResizePending" && c.value("status", "") == "True") {
          s.pending_reason = c.value("reason", "");
        }
      }
      s.ready = IsReady(p);
      out[p["metadata"].value("name", "")] = s;
    }
    return out;
  }
  // The CloneSet's ResizePending condition ({} when absent).
  json ResizePending(const std::string& name) {
    for (const json& c : CloneSet(name).value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "ResizePending") return c;
    }
    return json::object();
  }
  bool RolledOut(const std::string& name, int replicas) {
    const json s = CloneSet(name).value("status", json::object());
    return s.value("updatedReadyReplicas", 0) == replicas && s.value("availableReplicas", 0) == replicas &&
           s.value("currentRevision", "") == s.value("updateRevision", "x");
  }
  bool HasEvent(const std::string& reason, const std::string& part) {
    for (const auto& [r, message] : Events()) {
      if (r == reason && message.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(ResizeTest, CpuAndMemoryChangeResizesEveryPodInPlace) {
  Apply(ResizeYaml("resize", 3, kRequests, kLimits));
  ASSERT_TRUE(Eventually([&] { return AllReady("resize", 3, "img:v1") && RolledOut("resize", 3); }))
      << Describe("resize");
  const auto before = States("resize");
  auto watch = Watch("resize", 3);
  Apply(ResizeYaml("resize", 3, "{cpu: 150m, memory: 96Mi}", "{cpu: 300m, memory: 128Mi}"));
  ASSERT_TRUE(Eventually([&] {
    const auto now = States("resize");
    for (const auto& [name, s] : now) {
      if (s.status_cpu_limit != "300m" || s.lifecycle != "Normal") return false;
    }
    return now.size() == 3 && RolledOut("resize", 3);
  })) << Describe("resize");
  const auto after = States("resize");
  for (const auto& [name, s] : before) {
    ASSERT_TRUE(after.count(name)) << name;
    const PodState& a = after.at(name);
    EXPECT_EQ(a.uid, s.uid) << name;
    EXPECT_EQ(a.container_id, s.container_id) << name << ": the container was not restarted";
    EXPECT_EQ(a.restarts, s.restarts) << name;
    EXPECT_EQ(a.spec_cpu_limit, "300m") << name;
  }
  const auto st = watch->Finish();
  EXPECT_EQ(st.min_ready, 3) << "a resize keeps the pods ready\n" << st.trace;
  EXPECT_EQ(st.uids_seen.size(), 3u);
  EXPECT_TRUE(HasEvent("SuccessfulUpdatePodInPlace", "in-place"));
  EXPECT_TRUE(ResizePending("resize").empty());
}

TEST_F(ResizeTest, InfeasibleResizeBlocksTheRolloutUntilRolledBack) {
  Apply(ResizeYaml("toobig", 2, kRequests, kLimits));
  ASSERT_TRUE(Eventually([&] { return AllReady("toobig", 2, "img:v1") && RolledOut("toobig", 2); }))
      << Describe("toobig");
  const auto before = States("toobig");
  // 64 cpus: more than any simulated node has (8).
  Apply(ResizeYaml("toobig", 2, "{cpu: '64', memory: 64Mi}", "{cpu: '64', memory: 128Mi}"));
  ASSERT_TRUE(Eventually([&] { return ResizePending("toobig").value("reason", "") == "Infeasible"; }))
      << Describe("toobig");
  const json condition = ResizePending("toobig");
  EXPECT_EQ(condition.value("status", ""), "True");
  EXPECT_NE(condition.value("message", "").find("Node didn't have enough capacity: cpu, requested: 64000"),
            std::string::npos)
      << condition.dump();
  EXPECT_TRUE(Eventually([&] { return HasEvent("PodResizeInfeasible", "Node didn't have enough capacity"); }));
  // maxUnavailable 1: the other pod waits; nothing is recreated.
  absl::SleepFor(absl::Seconds(2));
  const auto blocked = States("toobig");
  int pending = 0, untouched = 0;
  for (const auto& [name, s] : blocked) {
    EXPECT_EQ(s.uid, before.at(name).uid) << name;
    pending += s.pending_reason == "Infeasible" && s.lifecycle == "Updating";
    untouched += s.spec_cpu_limit == "200m" && s.pending_reason.empty();
  }
  EXPECT_EQ(pending, 1) << Describe("toobig");
  EXPECT_EQ(untouched, 1) << Describe("toobig");
  // Rolled back: the pod is resized back, the condition goes, the CloneSet is rolled out with the same pods.
  Apply(ResizeYaml("toobig", 2, kRequests, kLimits));
  ASSERT_TRUE(Eventually([&] { return ResizePending("toobig").empty() && RolledOut("toobig", 2); }))
      << Describe("toobig");
  for (const auto& [name, s] : States("toobig")) {
    EXPECT_EQ(s.uid, before.at(name).uid) << name;
    EXPECT_EQ(s.status_cpu_limit, "200m") << name;
    EXPECT_EQ(s.restarts, 0) << name;
  }
}

TEST_F(ResizeTest, DeferredResizeIsReported) {
  Apply(ResizeYaml("deferred", 1, kRequests, kLimits,
                   "      annotations:\n        devcluster.cloneset.io/fault: resize-deferred\n"));
  ASSERT_TRUE(Eventually([&] { return AllReady("deferred", 1, "img:v1") && RolledOut("deferred", 1); }))
      << Describe("deferred");
  Apply(ResizeYaml("deferred", 1, kRequests, "{cpu: 250m, memory: 128Mi}",
                   "      annotations:\n        devcluster.cloneset.io/fault: resize-deferred\n"));
  ASSERT_TRUE(Eventually([&] { return ResizePending("deferred").value("reason", "") == "Deferred"; }))
      << Describe("deferred");
  EXPECT_TRUE(Eventually([&] { return HasEvent("PodResizeDeferred", "resize-deferred"); }));
  const auto states = States("deferred");
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states.begin()->second.status_cpu_limit, "200m");
  EXPECT_EQ(states.begin()->second.lifecycle, "Updating");
}

TEST_F(ResizeTest, QosClassChangeRecreatesThePods) {
  Apply(ResizeYaml("qos", 1, kRequests, kLimits));
  ASSERT_TRUE(Eventually([&] { return AllReady("qos", 1, "img:v1") && RolledOut("qos", 1); })) << Describe("qos");
  const std::string uid = States("qos").begin()->second.uid;
  // requests = limits: Burstable -> Guaranteed, which no resize may do.
  Apply(ResizeYaml("qos", 1, kLimits, kLimits));
  ASSERT_TRUE(Eventually([&] {
    const auto now = States("qos");
    return now.size() == 1 && now.begin()->second.uid != uid && now.begin()->second.ready && RolledOut("qos", 1);
  })) << Describe("qos");
  EXPECT_TRUE(HasEvent("InPlaceUpdateNotPossible", "QoS class from Burstable to Guaranteed"));
}

}  // namespace
}  // namespace cloneset::testing
