// The executor end to end: embedded cluster + planner + executor as real processes on 127.0.0.1 port 0, driven by
// real kubectl with a fresh KUBECACHEDIR. Seed 000 (video transcoder with per-pod PVCs): 3 pods Ready with PVCs
// workspace-video-transcoder-<id>, scale to 5, in-place image update by JSON patch (names, UIDs and PVCs kept),
// scale to 2.
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "process.h"

namespace cloneset::testing {
namespace {

using json = nlohmann::json;

// The binary to start: $CLONESET_<NAME>_BIN if set, else the one this build made.
std::string Bin(const char* env, const char* built) {
  const char* v = std::getenv(env);
  return v != nullptr && *v != '\0' ? v : built;
}

class ExecutorE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubeconfig_ = dir_.path() + "/kubeconfig";
    env_ = {{"KUBECONFIG", kubeconfig_}, {"KUBECACHEDIR", dir_.path() + "/kubecache"}, {"HOME", dir_.path()}};
    ASSERT_TRUE(devcluster_.Start({Bin("CLONESET_DEVCLUSTER_BIN", DEVCLUSTER_BIN), "--listen=127.0.0.1:0", "--kubeconfig=" + kubeconfig_,
                                   "--nodes=3", "--pod_ready_delay=100ms", "--pod_start_delay=100ms",
                                   "--pod_max_grace=1s"},
                                  dir_.path() + "/devcluster.log"));
    ASSERT_NE(devcluster_.WaitForAddress("listening on", absl::Seconds(30)), "") << devcluster_.Log();
    ASSERT_TRUE(Eventually([&] { return Kubectl({"get", "--raw", "/healthz"}).exit_code == 0; }, absl::Seconds(20)));

    ASSERT_TRUE(planner_.Start({Bin("CLONESET_PLANNER_BIN", PLANNER_BIN), "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"},
                               dir_.path() + "/planner.log"));
    planner_addr_ = planner_.WaitForAddress("listening on", absl::Seconds(20));
    ASSERT_NE(planner_addr_, "") << planner_.Log();

    MustKubectl({"apply", "-f", std::string(SOURCE_DIR) + "/charts/cloneset/crds/clonesets.apps.kruise.io.yaml"});
    ASSERT_TRUE(Eventually([&] { return Kubectl({"get", "clonesets"}).exit_code == 0; }, absl::Seconds(20)));
    // `apply` rather than `create namespace`: the embedded cluster takes JSON/YAML bodies only (no protobuf).
    auto ns = Kubectl({"apply", "-f", "-"}, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloneset-system\n");
    ASSERT_EQ(ns.exit_code, 0) << ns.output;
    StartExecutor();
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "--- executor log ---\n" << executor_.Log().substr(0, 20000) << "\n";
    }
    executor_.Stop();
    planner_.Stop();
    devcluster_.Stop();
  }

  void StartExecutor() {
    ASSERT_TRUE(executor_.Start({Bin("CLONESET_EXECUTOR_BIN", EXECUTOR_BIN), "--kubeconfig=" + kubeconfig_,
                                 "--planner_address=ipv4:" + planner_addr_, "--metrics_listen=127.0.0.1:0",
                                 "--health_listen=127.0.0.1:0", "--identity=e2e"},
                                dir_.path() + "/executor.log"));
    health_addr_ = executor_.WaitForAddress("listening on", absl::Seconds(20));
    ASSERT_NE(health_addr_, "") << executor_.Log();
    ASSERT_TRUE(Eventually(
        [&] { return RunCommand({"curl", "-sf", "http://" + health_addr_ + "/readyz"}, {}).exit_code == 0; },
        absl::Seconds(30)))
        << executor_.Log();
  }

  CommandResult Kubectl(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), "kubectl");
    return RunCommand(args, env_, input);
  }
  void MustKubectl(const std::vector<std::string>& args) {
    auto r = Kubectl(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  template <typename F>
  bool Eventually(F&& f, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (f()) return true;
      absl::SleepFor(absl::Milliseconds(250));
    }
    return f();
  }
  json GetJson(const std::vector<std::string>& what) {
    std::vector<std::string> args = {"get"};
    args.insert(args.end(), what.begin(), what.end());
    args.push_back("-o");
    args.push_back("json");
    auto r = Kubectl(args);
    if (r.exit_code != 0) return json::object();
    return json::parse(r.output, nullptr, false);
  }

  struct PodInfo {
    std::string uid, image, instance_id, claim;
    bool ready = false;
  };
  // Active pods of the CloneSet by name.
  std::map<std::string, PodInfo> Pods() {
    std::map<std::string, PodInfo> out;
    json list = GetJson({"pods", "-l", "app=video-transcoder"});
    if (!list.contains("items")) return out;
    for (const auto& p : list["items"]) {
      if (p["metadata"].contains("deletionTimestamp")) continue;
      PodInfo info;
      info.uid = p["metadata"].value("uid", "");
      info.image = p["spec"]["containers"][0].value("image", "");
      info.instance_id = p["metadata"]["labels"].value("apps.kruise.io/cloneset-instance-id", "");
      for (const auto& v : p["spec"].value("volumes", json::array())) {
        if (v.value("name", "") == "workspace" && v.contains("persistentVolumeClaim")) {
          info.claim = v["persistentVolumeClaim"].value("claimName", "");
        }
      }
      for (const auto& c : p.value("status", json::object()).value("conditions", json::array())) {
        if (c.value("type", "") == "Ready" && c.value("status", "") == "True") info.ready = true;
      }
      out[p["metadata"].value("name", "")] = info;
    }
    return out;
  }
  bool AllReady(size_t n, const std::string& image) {
    auto pods = Pods();
    if (pods.size() != n) return false;
    for (const auto& [name, p] : pods) {
      if (!p.ready || p.image != image) return false;
    }
    return true;
  }
  std::set<std::string> PvcNames() {
    std::set<std::string> out;
    json list = GetJson({"pvc"});
    for (const auto& p : list.value("items", json::array())) out.insert(p["metadata"].value("name", ""));
    return out;
  }

  TempDir dir_;
  std::string kubeconfig_, planner_addr_, health_addr_;
  std::map<std::string, std::string> env_;
  Process devcluster_, planner_, executor_;
};

constexpr char kImage1[] = "my-registry/video-transcoder:v1.2.0";
constexpr char kImage2[] = "my-registry/video-transcoder:v1.3.0";

TEST_F(ExecutorE2eTest, Seed000ScaleInPlaceUpdateScaleIn) {
  const std::string seed = std::string(SOURCE_DIR) + "/tests/data/seed000/";
  for (const char* f : {"storageclass.yaml", "configmap.yaml", "service.yaml", "cloneset.yaml"}) {
    MustKubectl({"apply", "-f", seed + f});
  }
  ASSERT_TRUE(Eventually([&] { return AllReady(3, kImage1); }, absl::Seconds(60))) << Kubectl({"get", "pods"}).output;

  // Per-pod PVCs named <vct>-<cloneset>-<instance id>, mounted by their pod.
  auto pods = Pods();
  for (const auto& [name, p] : pods) {
    ASSERT_FALSE(p.instance_id.empty()) << name;
    EXPECT_EQ(name, "video-transcoder-" + p.instance_id);
    EXPECT_EQ(p.claim, "workspace-video-transcoder-" + p.instance_id) << name;
    EXPECT_TRUE(PvcNames().count(p.claim)) << p.claim;
  }

  MustKubectl({"scale", "clonesets.apps.kruise.io/video-transcoder", "--replicas=5"});
  ASSERT_TRUE(Eventually([&] { return AllReady(5, kImage1); }, absl::Seconds(60))) << Kubectl({"get", "pods"}).output;
  EXPECT_EQ(PvcNames().size(), 5u);

  // In-place image update: a JSON patch of the image only.
  const auto before = Pods();
  MustKubectl({"patch", "clonesets.apps.kruise.io/video-transcoder", "--type=json", "-p",
               std::string(R"([{"op":"replace","path":"/spec/template/spec/containers/0/image","value":")") +
                   kImage2 + "\"}]"});
  ASSERT_TRUE(Eventually([&] { return AllReady(5, kImage2); }, absl::Seconds(120)))
      << Kubectl({"get", "pods", "-o", "wide"}).output;
  const auto after = Pods();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [name, p] : before) {
    ASSERT_TRUE(after.count(name)) << name << " was recreated";
    EXPECT_EQ(after.at(name).uid, p.uid) << name;
    EXPECT_EQ(after.at(name).claim, p.claim) << name;
  }
  json cs = GetJson({"clonesets.apps.kruise.io", "video-transcoder"});
  EXPECT_TRUE(Eventually(
      [&] {
        cs = GetJson({"clonesets.apps.kruise.io", "video-transcoder"});
        const json st = cs.value("status", json::object());
        return st.value("updatedReadyReplicas", 0) == 5 && st.value("readyReplicas", 0) == 5;
      },
      absl::Seconds(30)))
      << cs.dump();

  MustKubectl({"scale", "clonesets.apps.kruise.io/video-transcoder", "--replicas=2"});
  ASSERT_TRUE(Eventually([&] { return AllReady(2, kImage2); }, absl::Seconds(60))) << Kubectl({"get", "pods"}).output;
  // pvcRetentionPolicy: Retain keeps the scaled-in pods' PVCs.
  EXPECT_EQ(PvcNames().size(), 5u);

  // Graceful shutdown exits 0.
  EXPECT_EQ(executor_.Stop(), 0);
}

}  // namespace
}  // namespace cloneset::testing
