// The simulator against the real in-process Store with a FakeClock: pods get scheduled, started and made ready
// within the simulated delays; in-place image changes, graceful deletion, faults and PVC binding end to end.
#include "base/testing/fake_clock.h"
#include "devcluster/nodes/simulator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "devcluster/nodes/pvc_binder.h"
#include "grpcpp/grpcpp.h"
#include "runtime/v1/cri.grpc.pb.h"

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

json Pod(const std::string& name, const std::string& image, json extra_spec = json::object()) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"containers", json::array({{{"name", "app"},
                                             {"image", image},
                                             {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}})}}}};
  pod["spec"].update(extra_spec);
  return pod;
}

DeleteOptions Grace(int64_t seconds) {
  DeleteOptions o;
  o.grace_period_seconds = seconds;
  return o;
}

std::string Condition(const json& pod, const std::string& type) {
  if (!pod.is_object() || !pod.contains("status")) return "";
  for (const auto& c : pod["status"].value("conditions", json::array())) {
    if (c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

class SimulatorTest : public ::testing::Test {
 protected:
  void StartSim(SimulatorConfig config) {
    config.timing.start_delay = seconds(1);
    config.timing.ready_delay = seconds(2);
    config.timing.max_grace = seconds(5);
    config.heartbeat_interval = seconds(0);
    config.poll_interval = milliseconds(2);
    sim_ = std::make_unique<NodeSimulator>(&store_, &clock_, std::move(config));
    ASSERT_TRUE(sim_->Start().ok());
  }
  void TearDown() override {
    if (sim_) sim_->Stop();
  }
  // Whether `pred` holds once the simulator has acted on everything so far: checked after each of its idle passes
  // (no sleeping), within a bound in real time that holds on a loaded machine.
  bool Eventually(const std::function<bool()>& pred, absl::Duration within = absl::Seconds(60)) {
    const absl::Time deadline = absl::Now() + within;
    while (!pred()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration() || !sim_->AwaitIdle(left)) return pred();
    }
    return true;
  }
  // Waits until the simulator has caught up and `pred` holds for the stored pod (null: the pod is gone).
  json WaitPod(const std::string& name, const std::function<bool(const json&)>& pred) {
    json last;
    const bool held = Eventually([&] {
      auto got = store_.Get(kPods, "default", name);
      last = got.ok() ? *got : json();
      return pred(last);
    });
    if (!held) ADD_FAILURE() << "timed out waiting for pod " << name << "; last: " << last.dump();
    return last;
  }
  // True when a FailedScheduling event with `message` names pod `name` (events are written by the simulator's thread).
  bool HasFailedScheduling(const std::string& name, const std::string& message) {
    return Eventually([&] {
      auto events = store_.ListObjects(kEvents, {});
      if (!events.ok()) return false;
      for (const json& e : *events) {
        if (e.value("reason", "") == "FailedScheduling" && e.value("message", "") == message &&
            e["involvedObject"].value("name", "") == name)
          return true;
      }
      return false;
    });
  }
  // Waits until the simulator has acted on everything written and on the clock's time so far (a pass that began
  // after this call found nothing left to do): a negative check after it sees what the simulator decided, not a
  // guess that it had time to decide.
  void Settle() { ASSERT_TRUE(sim_->AwaitIdle(absl::Seconds(60))) << "the simulator never went idle"; }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  std::unique_ptr<NodeSimulator> sim_;
};

TEST_F(SimulatorTest, CreatesNodesWithCapacityLabelsAndZones) {
  SimulatorConfig c;
  c.nodes = 4;
  c.shape.cpu = "4";
  StartSim(c);
  auto nodes = store_.ListObjects(kNodes, {});
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 4u);
  const json& n1 = nodes->at(1);
  EXPECT_EQ(n1["metadata"]["name"], "devcluster-node-1");
  EXPECT_EQ(n1["metadata"]["labels"]["kubernetes.io/hostname"], "devcluster-node-1");
  EXPECT_EQ(n1["metadata"]["labels"]["topology.kubernetes.io/zone"], "devcluster-zone-b");
  EXPECT_EQ(nodes->at(3)["metadata"]["labels"]["topology.kubernetes.io/zone"], "devcluster-zone-a");
  EXPECT_EQ(n1["status"]["allocatable"]["cpu"], "4");
  EXPECT_EQ(Condition(n1, "Ready"), "True");
}

TEST_F(SimulatorTest, PodIsScheduledStartedAndReadyWithinTheFakeClockBudget) {
  SimulatorConfig c;
  c.images.default_pull_time = seconds(3);
  StartSim(c);
  ASSERT_TRUE(store_.Create(kPods, Pod("web-0", "nginx:1.25")).ok());
  json pod = WaitPod("web-0", [](const json& p) { return p["status"].value("phase", "") == "Pending" &&
                                                          !p["spec"].value("nodeName", "").empty() &&
                                                          p["status"].contains("containerStatuses"); });
  EXPECT_EQ(pod["spec"]["nodeName"], "devcluster-node-0");  // all empty: lowest name wins
  EXPECT_EQ(Condition(pod, "PodScheduled"), "True");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating");
  EXPECT_EQ(pod["status"]["hostIP"], "172.16.0.2");
  EXPECT_EQ(pod["status"]["podIP"], "10.64.0.1");
  clock_.Advance(seconds(3) + seconds(1));  // pull + start
  pod = WaitPod("web-0", [](const json& p) { return p["status"].value("phase", "") == "Running"; });
  EXPECT_EQ(Condition(pod, "Ready"), "False");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["imageID"], ImageIdFor("nginx:1.25"));
  clock_.Advance(seconds(2));
  pod = WaitPod("web-0", [](const json& p) { return Condition(p, "Ready") == "True"; });
  EXPECT_EQ(Condition(pod, "ContainersReady"), "True");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["ready"], true);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["restartCount"], 0);

  // Same image on the same node: already present, so only start + ready delays.
  ASSERT_TRUE(store_.Create(kPods, Pod("web-1", "nginx:1.25", {{"nodeName", "devcluster-node-0"}})).ok());
  WaitPod("web-1", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(3));
  WaitPod("web-1", [](const json& p) { return Condition(p, "Ready") == "True"; });
}

TEST_F(SimulatorTest, SpreadsToLeastLoadedAndReportsUnschedulable) {
  SimulatorConfig c;
  c.nodes = 2;
  c.shape.cpu = "2";
  StartSim(c);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(store_.Create(kPods, Pod("p" + std::to_string(i), "busybox")).ok());
    WaitPod("p" + std::to_string(i), [](const json& p) { return !p["spec"].value("nodeName", "").empty(); });
  }
  std::map<std::string, int> per_node;
  for (int i = 0; i < 4; ++i) {
    per_node[store_.Get(kPods, "default", "p" + std::to_string(i))->at("spec")["nodeName"]]++;
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"devcluster-node-0", 2}, {"devcluster-node-1", 2}}));
  ASSERT_TRUE(store_.Create(kPods, Pod("p4", "busybox")).ok());
  json pod = WaitPod("p4", [](const json& p) { return Condition(p, "PodScheduled") == "False"; });
  EXPECT_EQ(pod["spec"].value("nodeName", ""), "");
  for (const auto& cond : pod["status"]["conditions"]) {
    if (cond["type"] == "PodScheduled") {
      EXPECT_EQ(cond["reason"], "Unschedulable");
      EXPECT_EQ(cond["message"], "0/2 nodes are available: 2 Insufficient cpu.");
    }
  }
  // Freeing capacity lets it schedule.
  ASSERT_TRUE(store_.Delete(kPods, "default", "p0", Grace(0)).ok());
  WaitPod("p4", [](const json& p) { return !p["spec"].value("nodeName", "").empty(); });
}

TEST_F(SimulatorTest, InPlaceImageChangeRestartsOnlyThatContainer) {
  SimulatorConfig c;
  c.nodes = 1;
  StartSim(c);
  json pod = Pod("web", "nginx:1");
  pod["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy:1"}});
  pod["spec"]["readinessGates"] = json::array({{{"conditionType", "InPlaceUpdateReady"}}});
  ASSERT_TRUE(store_.Create(kPods, pod).ok());
  WaitPod("web", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(3));
  json got = WaitPod("web", [](const json& p) { return Condition(p, "ContainersReady") == "True"; });
  // The gate's condition is missing: not Ready.
  EXPECT_EQ(Condition(got, "Ready"), "False");
  ASSERT_TRUE(store_.Mutate(kPods, "default", "web", true, [](json& p) {
                      p["status"]["conditions"].push_back(
                          {{"type", "InPlaceUpdateReady"}, {"status", "True"}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}});
                      return absl::OkStatus();
                    }).ok());
  got = WaitPod("web", [](const json& p) { return Condition(p, "Ready") == "True"; });
  std::string sidecar_id = got["status"]["containerStatuses"][1]["containerID"];

  ASSERT_TRUE(store_.Mutate(kPods, "default", "web", false, [](json& p) {
                      p["spec"]["containers"][0]["image"] = "nginx:2";
                      return absl::OkStatus();
                    }).ok());
  // The restart is under way once the old container is counted as finished (its image shows until the new one
  // runs, as with a real kubelet).
  got = WaitPod("web", [](const json& p) { return p["status"]["containerStatuses"][0]["restartCount"] == 1; });
  EXPECT_EQ(Condition(got, "Ready"), "False");
  EXPECT_EQ(got["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_EQ(got["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"], "Completed");
  EXPECT_EQ(got["status"]["containerStatuses"][1]["restartCount"], 0);
  EXPECT_EQ(got["status"]["containerStatuses"][1]["containerID"], sidecar_id);
  clock_.Advance(seconds(3));
  got = WaitPod("web", [](const json& p) { return Condition(p, "Ready") == "True"; });
  EXPECT_EQ(got["status"]["containerStatuses"][0]["image"], "nginx:2");
  EXPECT_EQ(got["status"]["containerStatuses"][0]["imageID"], ImageIdFor("nginx:2"));
}

// pods/resize end to end: the kubelet admits the new requests (PodResizeInProgress), applies them later without
// restarting the container, and holds back what the node cannot fit (PodResizePending).
TEST_F(SimulatorTest, InPlaceResizeThroughTheResizeSubresource) {
  SimulatorConfig c;
  c.nodes = 1;
  c.shape.cpu = "4";
  c.timing.resize.actuate = seconds(1);
  c.timing.resize.retry = seconds(2);
  StartSim(c);
  ASSERT_TRUE(store_.Create(kPods, Pod("web", "nginx:1")).ok());
  WaitPod("web", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(3));
  json got = WaitPod("web", [](const json& p) { return Condition(p, "Ready") == "True"; });
  const json app = got["status"]["containerStatuses"][0];
  EXPECT_EQ(app["resources"], json({{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}));
  EXPECT_EQ(app["allocatedResources"], json({{"cpu", "1"}, {"memory", "1Gi"}}));
  EXPECT_EQ(got["status"]["qosClass"], "Burstable");
  const auto resize = [&](const std::string& cpu) {
    return store_.Mutate(
        kPods, "default", "web", false,
        [&](json& p) {
          p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
          return absl::OkStatus();
        },
        WriteOptions{.pod_resize = true});
  };
  ASSERT_TRUE(resize("2").ok());
  got = WaitPod("web", [](const json& p) { return Condition(p, "PodResizeInProgress") == "True"; });
  EXPECT_EQ(got["status"]["containerStatuses"][0]["allocatedResources"]["cpu"], "2");
  EXPECT_EQ(got["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"], "1") << "not applied yet";
  clock_.Advance(seconds(2));
  got = WaitPod("web", [](const json& p) { return Condition(p, "PodResizeInProgress").empty(); });
  EXPECT_EQ(got["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"], "2");
  EXPECT_EQ(got["status"]["containerStatuses"][0]["restartCount"], 0);
  EXPECT_EQ(got["status"]["containerStatuses"][0]["containerID"], app["containerID"]);
  EXPECT_EQ(Condition(got, "Ready"), "True");

  // More than the node has: Infeasible, in the kubelet's words; the container keeps its resources.
  ASSERT_TRUE(resize("5").ok());
  got = WaitPod("web", [](const json& p) { return Condition(p, "PodResizePending") == "True"; });
  json pending;
  for (const json& cond : got["status"]["conditions"]) {
    if (cond["type"] == "PodResizePending") pending = cond;
  }
  EXPECT_EQ(pending["reason"], "Infeasible");
  EXPECT_EQ(pending["message"], "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000");
  EXPECT_EQ(pending["observedGeneration"], got["metadata"]["generation"]);
  EXPECT_EQ(got["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"], "2");

  // Within the node, but not beside another pod: Deferred, retried, and accepted once the other pod is gone.
  json other = Pod("other", "nginx:1");
  other["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1500m";
  ASSERT_TRUE(store_.Create(kPods, other).ok());
  WaitPod("other", [](const json& p) { return p["spec"].contains("nodeName"); });
  ASSERT_TRUE(resize("3").ok());
  got = WaitPod("web", [](const json& p) {
    for (const json& cond : p["status"].value("conditions", json::array())) {
      if (cond["type"] == "PodResizePending" && cond["reason"] == "Deferred") return true;
    }
    return false;
  });
  ASSERT_TRUE(store_.Delete(kPods, "default", "other", Grace(0)).ok());
  WaitPod("other", [](const json& p) { return p.is_null(); });
  clock_.Advance(seconds(2));
  got = WaitPod("web", [](const json& p) { return Condition(p, "PodResizeInProgress") == "True"; });
  EXPECT_EQ(Condition(got, "PodResizePending"), "");
  clock_.Advance(seconds(2));
  got = WaitPod("web", [](const json& p) { return Condition(p, "PodResizeInProgress").empty(); });
  EXPECT_EQ(got["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"], "3");
}

TEST_F(SimulatorTest, ResizeFaultAnnotationHoldsTheResizeBack) {
  SimulatorConfig c;
  c.nodes = 1;
  StartSim(c);
  json pod = Pod("web", "nginx:1");
  pod["metadata"]["annotations"] = {{std::string(kFaultAnnotation), "resize-deferred"}};
  ASSERT_TRUE(store_.Create(kPods, pod).ok());
  WaitPod("web", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(3));
  WaitPod("web", [](const json& p) { return Condition(p, "Ready") == "True"; });
  ASSERT_TRUE(store_
                  .Mutate(
                      kPods, "default", "web", false,
                      [](json& p) {
                        p["spec"]["containers"][0]["resources"]["requests"]["memory"] = "2Gi";
                        return absl::OkStatus();
                      },
                      WriteOptions{.pod_resize = true})
                  .ok());
  json got = WaitPod("web", [](const json& p) { return Condition(p, "PodResizePending") == "True"; });
  for (const json& cond : got["status"]["conditions"]) {
    if (cond["type"] != "PodResizePending") continue;
    EXPECT_EQ(cond["reason"], "Deferred");
    EXPECT_EQ(cond["message"],
              "resize held back by the pod annotation devcluster.cloneset.io/fault (resize-deferred)");
  }
  EXPECT_EQ(got["status"]["containerStatuses"][0]["resources"]["requests"]["memory"], "1Gi");
}

TEST_F(SimulatorTest, GracefulDeletionWaitsForTheCappedGracePeriod) {
  SimulatorConfig c;
  c.nodes = 1;
  StartSim(c);
  ASSERT_TRUE(store_.Create(kPods, Pod("victim", "busybox")).ok());
  WaitPod("victim", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(3));
  WaitPod("victim", [](const json& p) { return Condition(p, "Ready") == "True"; });
  auto deleted = store_.Delete(kPods, "default", "victim", Grace(30));
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  WaitPod("victim", [](const json& p) { return p.is_object() && p["metadata"].contains("deletionTimestamp"); });
  Settle();
  clock_.Advance(seconds(4));
  Settle();
  EXPECT_TRUE(store_.Get(kPods, "default", "victim").ok()) << "removed before the 5 s cap";
  clock_.Advance(seconds(1));
  WaitPod("victim", [](const json& p) { return p.is_null(); });
}

// AwaitIdle returns only once the simulator has done everything the writes and the clock so far call for: a pod
// created just before it is already bound and creating its container, and after the clock passes the start delay
// it is already Running, with no polling in between.
TEST_F(SimulatorTest, AwaitIdleReturnsOnceTheSimulatorHasActed) {
  SimulatorConfig c;
  c.nodes = 1;
  StartSim(c);
  ASSERT_TRUE(store_.Create(kPods, Pod("web-0", "busybox")).ok());
  ASSERT_TRUE(sim_->AwaitIdle(absl::Seconds(60)));
  json pod = *store_.Get(kPods, "default", "web-0");
  EXPECT_EQ(pod["spec"].value("nodeName", ""), "devcluster-node-0");
  ASSERT_TRUE(pod["status"].contains("containerStatuses")) << pod.dump();
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating");
  clock_.Advance(seconds(1));
  ASSERT_TRUE(sim_->AwaitIdle(absl::Seconds(60)));
  pod = *store_.Get(kPods, "default", "web-0");
  EXPECT_EQ(pod["status"].value("phase", ""), "Running");
  EXPECT_EQ(Condition(pod, "Ready"), "False");
  clock_.Advance(seconds(2));
  ASSERT_TRUE(sim_->AwaitIdle(absl::Seconds(60)));
  EXPECT_EQ(Condition(*store_.Get(kPods, "default", "web-0"), "Ready"), "True");
  sim_->Stop();
  EXPECT_FALSE(sim_->AwaitIdle(absl::Seconds(60))) << "a stopped simulator is never idle again";
}

TEST_F(SimulatorTest, FaultsByFlagAndAnnotation) {
  SimulatorConfig c;
  c.nodes = 2;
  c.images.fail_pulls = std::regex("broken");
  c.images.fail_pattern = "broken";
  c.not_ready_nodes = std::regex("devcluster-node-1");
  StartSim(c);
  json node1;
  EXPECT_TRUE(Eventually([&] {
    node1 = *store_.Get(kNodes, "", "devcluster-node-1");
    return Condition(node1, "Ready") == "Unknown";
  })) << node1.dump();
  ASSERT_TRUE(store_.Create(kPods, Pod("bad", "repo/broken:1")).ok());
  json pod = WaitPod("bad", [](const json& p) { return p["status"].contains("containerStatuses"); });
  EXPECT_EQ(pod["spec"]["nodeName"], "devcluster-node-0");  // the NotReady node is avoided
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ErrImagePull");
  clock_.Advance(seconds(10));
  pod = WaitPod("bad", [](const json& p) {
    return p["status"]["containerStatuses"][0]["state"]["waiting"].value("reason", "") == "ImagePullBackOff";
  });
  EXPECT_EQ(pod["status"]["phase"], "Pending");

  json crash = Pod("crash", "busybox");
  crash["metadata"]["annotations"] = {{std::string(kFaultAnnotation), "crash-loop"}};
  ASSERT_TRUE(store_.Create(kPods, crash).ok());
  WaitPod("crash", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(1) + seconds(1) + milliseconds(1));  // start, run 1 s, crash
  pod = WaitPod("crash", [](const json& p) {
    return p["status"]["containerStatuses"][0]["state"]["waiting"].value("reason", "") == "CrashLoopBackOff";
  });
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_EQ(Condition(pod, "Ready"), "False");
}

TEST_F(SimulatorTest, ClaimsBindToProvisionedVolumes) {
  SimulatorConfig c;
  c.nodes = 1;
  c.default_storage_class = "";  // this test brings its own (Immediate) default class
  StartSim(c);
  json sc = {{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "StorageClass"},
             {"metadata", {{"name", "standard"}, {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
             {"provisioner", "devcluster.io/hostpath"}};
  ASSERT_TRUE(store_.Create(kStorageClasses, sc).ok());
  json pvc = {{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", "data-0"}, {"namespace", "default"}}},
              {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "5Gi"}}}}}}}};
  auto created = store_.Create(kPersistentVolumeClaims, pvc);
  ASSERT_TRUE(created.ok()) << created.status();
  std::string uid = (*created)["metadata"]["uid"];
  json got;
  Eventually([&] {
    got = *store_.Get(kPersistentVolumeClaims, "default", "data-0");
    return got["status"].value("phase", "") == "Bound";
  });
  EXPECT_EQ(got["status"]["phase"], "Bound");
  EXPECT_EQ(got["spec"]["volumeName"], "pvc-" + uid);
  EXPECT_EQ(got["spec"]["storageClassName"], "standard");
  EXPECT_EQ(got["status"]["capacity"]["storage"], "5Gi");
  auto pv = store_.Get(kPersistentVolumes, "", "pvc-" + uid);
  ASSERT_TRUE(pv.ok());
  EXPECT_EQ((*pv)["spec"]["claimRef"]["name"], "data-0");
  EXPECT_EQ((*pv)["status"]["phase"], "Bound");
}

// A pod whose claim does not exist stays Pending with kube-scheduler's FailedScheduling event and never runs;
// once the claim exists it is scheduled and started.
TEST_F(SimulatorTest, PodWithoutItsClaimStaysPendingUntilTheClaimExists) {
  SimulatorConfig c;
  c.nodes = 1;
  StartSim(c);
  json pod = Pod("web-0", "busybox", {{"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-0"}}}}}}});
  ASSERT_TRUE(store_.Create(kPods, pod).ok());
  const std::string want = "0/1 nodes are available: persistentvolumeclaim \"data-0\" not found. not found";
  json got = WaitPod("web-0", [](const json& p) { return Condition(p, "PodScheduled") == "False"; });
  EXPECT_EQ(got["spec"].value("nodeName", ""), "");
  EXPECT_EQ(got["status"].value("phase", ""), "Pending");
  for (const auto& cond : got["status"]["conditions"]) {
    if (cond["type"] == "PodScheduled") {
      EXPECT_EQ(cond["message"], want);
    }
  }
  EXPECT_TRUE(HasFailedScheduling("web-0", want)) << "no FailedScheduling event naming the claim";
  // However long it waits, it does not start.
  clock_.Advance(seconds(30));
  Settle();
  got = *store_.Get(kPods, "default", "web-0");
  EXPECT_EQ(got["spec"].value("nodeName", ""), "");
  EXPECT_FALSE(got["status"].contains("containerStatuses"));

  json pvc = {{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", "data-0"}, {"namespace", "default"}}},
              {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  ASSERT_TRUE(store_.Create(kPersistentVolumeClaims, pvc).ok());
  WaitPod("web-0", [](const json& p) {
    return !p["spec"].value("nodeName", "").empty() && p["status"].contains("containerStatuses");
  });
  clock_.Advance(seconds(60));  // pull + start
  WaitPod("web-0", [](const json& p) { return p["status"].value("phase", "") == "Running"; });
}

json Claim(const std::string& name, std::optional<std::string> cls) {
  json pvc = {{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  if (cls) pvc["spec"]["storageClassName"] = *cls;
  return pvc;
}

json PodWithClaim(const std::string& name, const std::string& claim) {
  return Pod(name, "busybox", {{"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}});
}


// Like a real cluster: a pod whose claim exists but is not Bound stays Pending with kube-scheduler's event and
// never runs (before, it was scheduled and ran Ready as soon as the claim existed); a claim naming no class gets
// the default class "standard" the simulator creates (WaitForFirstConsumer: provisioned for the node picked for
// its pod), and then its pod runs.
TEST_F(SimulatorTest, PodStaysPendingUntilItsClaimIsBound) {
  SimulatorConfig c;
  c.nodes = 1;
  StartSim(c);
  auto standard = store_.Get(kStorageClasses, "", "standard");
  ASSERT_TRUE(standard.ok()) << standard.status();
  EXPECT_EQ((*standard)["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"], "true");
  EXPECT_EQ((*standard)["volumeBindingMode"], "WaitForFirstConsumer");

  json local = {{"apiVersion", "storage.k8s.io/v1"},
                {"kind", "StorageClass"},
                {"metadata", {{"name", "local"}}},
                {"provisioner", "kubernetes.io/no-provisioner"}};
  ASSERT_TRUE(store_.Create(kStorageClasses, local).ok());
  ASSERT_TRUE(store_.Create(kPersistentVolumeClaims, Claim("data-0", "local")).ok());
  ASSERT_TRUE(store_.Create(kPods, PodWithClaim("web-0", "data-0")).ok());
  const std::string want = "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found";
  json got = WaitPod("web-0", [](const json& p) { return Condition(p, "PodScheduled") == "False"; });
  EXPECT_EQ(got["status"].value("phase", ""), "Pending");
  EXPECT_TRUE(HasFailedScheduling("web-0", want)) << "no FailedScheduling event: " << want;
  clock_.Advance(seconds(60));
  Settle();
  got = *store_.Get(kPods, "default", "web-0");
  EXPECT_EQ(got["spec"].value("nodeName", ""), "");
  EXPECT_FALSE(got["status"].contains("containerStatuses"));
  EXPECT_EQ((*store_.Get(kPersistentVolumeClaims, "default", "data-0"))["status"].value("phase", ""), "Pending");

  // The default class: bound for the pod's node, then the pod runs.
  ASSERT_TRUE(store_.Create(kPersistentVolumeClaims, Claim("data-1", std::nullopt)).ok());
  ASSERT_TRUE(store_.Create(kPods, PodWithClaim("web-1", "data-1")).ok());
  got = WaitPod("web-1", [](const json& p) { return !p["spec"].value("nodeName", "").empty(); });
  json claim = *store_.Get(kPersistentVolumeClaims, "default", "data-1");
  EXPECT_EQ(claim["status"].value("phase", ""), "Bound");
  EXPECT_EQ(claim["spec"].value("storageClassName", ""), "standard");
  EXPECT_EQ(claim["metadata"]["annotations"].value(kSelectedNodeAnnotation, ""), got["spec"]["nodeName"]);
  clock_.Advance(seconds(60));
  WaitPod("web-1", [](const json& p) { return p["status"].value("phase", "") == "Running"; });
}

// Without a default class (--default-storage-class=""), a claim naming no class stays Pending forever and so
// does its pod, as on a real cluster without one.
TEST_F(SimulatorTest, WithoutADefaultClassAClaimWithoutClassWaitsForever) {
  SimulatorConfig c;
  c.nodes = 1;
  c.default_storage_class = "";
  StartSim(c);
  auto classes = store_.ListObjects(kStorageClasses, {});
  ASSERT_TRUE(classes.ok());
  EXPECT_TRUE(classes->empty());
  ASSERT_TRUE(store_.Create(kPersistentVolumeClaims, Claim("data-0", std::nullopt)).ok());
  ASSERT_TRUE(store_.Create(kPods, PodWithClaim("web-0", "data-0")).ok());
  WaitPod("web-0", [](const json& p) { return Condition(p, "PodScheduled") == "False"; });
  EXPECT_TRUE(HasFailedScheduling("web-0",
                                  "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"));
  clock_.Advance(seconds(60));
  Settle();
  EXPECT_EQ((*store_.Get(kPods, "default", "web-0"))["spec"].value("nodeName", ""), "");
  EXPECT_EQ((*store_.Get(kPersistentVolumeClaims, "default", "data-0"))["status"].value("phase", ""), "Pending");
}

TEST_F(SimulatorTest, CriSocketSharesTheKubeletImageStore) {
  auto dir = std::filesystem::temp_directory_path() / ("d2sim-" + std::to_string(::getpid()));
  SimulatorConfig c;
  c.nodes = 1;
  c.run_dir = dir.string();
  c.images.default_pull_time = seconds(30);
  StartSim(c);
  std::string sock = sim_->CriSocket("devcluster-node-0");
  ASSERT_EQ(sock, dir.string() + "/nodes/devcluster-node-0/cri.sock");
  auto stub = ::runtime::v1::ImageService::NewStub(grpc::CreateChannel("unix://" + sock, grpc::InsecureChannelCredentials()));
  // Pre-pull through CRI (blocks until the fake clock passes the pull time).
  std::thread puller([&] {
    grpc::ClientContext ctx;
    ::runtime::v1::PullImageRequest req;
    req.mutable_image()->set_image("model:v2");
    ::runtime::v1::PullImageResponse resp;
    EXPECT_TRUE(stub->PullImage(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.image_ref(), ImageIdFor("model:v2"));
  });
  // The pull is in flight once its handler waits on the clock (the simulator's own thread does not).
  ASSERT_TRUE(clock_.AwaitDeadlineAfter(clock_.Now(), absl::Seconds(60)));
  EXPECT_EQ(sim_->Images("devcluster-node-0")->InFlight(), 1);
  clock_.Advance(seconds(30));
  puller.join();
  // The pod's image is already present: ready after start + ready delays only.
  ASSERT_TRUE(store_.Create(kPods, Pod("m", "model:v2")).ok());
  WaitPod("m", [](const json& p) { return p["status"].contains("containerStatuses"); });
  clock_.Advance(seconds(3));
  WaitPod("m", [](const json& p) { return Condition(p, "Ready") == "True"; });
  sim_->Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
