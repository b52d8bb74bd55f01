// clonesetctl as a user runs it: error cases and output of simulate, status and plan against a real embedded
// cluster and planner, and simulate's prediction against a real rollout (devcluster + planner + executor).
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "nlohmann/json.hpp"
#include "tests/support/stack.h"
#include "clonesetctl/live.h"
#include "tools/demo/demo.h"

namespace cloneset::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

const std::string kSeed = std::string(SOURCE_DIR) + "/tests/data/seed000/";

CommandResult Ctl(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), CLONESETCTL_BIN);
  return RunCommand(args, env);
}

std::string WriteFile(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ClonesetctlCli, UsageAndFileErrors) {
  EXPECT_EQ(Ctl({}).exit_code, 2);
  auto r = Ctl({"simulate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("simulate needs -f"));
  r = Ctl({"simulate", "-f", "/nonexistent.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("cannot read /nonexistent.yaml"));
  r = Ctl({"simulate", "-f", kSeed + "cloneset.yaml", "-o", "yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("-o must be table or json"));
  r = Ctl({"status"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("status needs a CloneSet NAME"));
}

TEST(ClonesetctlCli, InvalidManifestNamesTheField) {
  TempDir dir;
  std::ifstream in(kSeed + "cloneset.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("maxUnavailable: 1"), 17, "maxUnavailable: 150");
  text.replace(text.find("partition: 0"), 12, "partition: -2");
  auto r = Ctl({"simulate", "-f", WriteFile(dir, "bad.yaml", text)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("spec.updateStrategy.partition"));
}

TEST(ClonesetctlCli, SimulateJsonWithRepeatedSet) {
  auto r = Ctl({"simulate", "-f", kSeed + "cloneset.yaml", "--set", "replicas=5", "--set",
                "image=my-registry/video-transcoder:v1.2.1", "--set=partition=3", "--ready-after", "2s", "-o",
                "json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j["outcome"], "partition");
  EXPECT_EQ(j["final"]["updated"], 2);
  EXPECT_EQ(j["final"]["desired"], 5);
  EXPECT_EQ(j["peakUnavailable"], 2);  // the 2 new pods until they are ready
  EXPECT_EQ(j["steps"][0]["created"].size(), 2u);
  EXPECT_EQ(j["changes"].size(), 3u);
}

// --feature-gates as kruise-manager takes it: the simulation plans as an executor started so (pre-download adds an
// ImagePullJob and the revision's label to the writes); an unknown gate or a bad value is a usage error naming it.
TEST(ClonesetctlCli, FeatureGates) {
  const std::vector<std::string> simulate = {"simulate", "-f", kSeed + "cloneset.yaml", "--set", "replicas=5",
                                             "--set", "image=my-registry/video-transcoder:v1.2.1", "-o", "json"};
  const auto writes = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = simulate;
    args.insert(args.end(), more.begin(), more.end());
    const CommandResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json j = json::parse(r.output, nullptr, false);
    return j.is_object() ? j.value("apiWrites", -1) : -1;
  };
  const int plain = writes({});
  ASSERT_GT(plain, 0);
  EXPECT_EQ(writes({"--feature-gates=PreDownloadImageForInPlaceUpdate=true"}), plain + 2);
  EXPECT_EQ(writes({"--feature-gates", "PreDownloadImageForInPlaceUpdate=true,PodWebhook=false"}), plain + 2);
  // Without kruise-daemon, kruise-manager turns pre-download off.
  EXPECT_EQ(writes({"--feature-gates=KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true"}), plain);

  auto r = Ctl({"simulate", "-f", kSeed + "cloneset.yaml", "--feature-gates=CloneSetShortHash=true,NoSuchGate=true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unrecognized feature gate: NoSuchGate"));
  r = Ctl({"plan", "cs", "--feature_gates=CloneSetShortHash=maybe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("invalid value of CloneSetShortHash=maybe"));
}

// An embedded cluster and a planner (tests/support/stack.h), no executor unless a test starts one: the plan shows
// what would happen. The simulated kubelet takes 200 ms to start a pod and 1 s to make it Ready.
class ClonesetctlLive : public ::testing::Test {
 protected:
  void SetUp() override {
    StackOptions options;
    options.pod_ready_delay = "1s";
    options.pod_start_delay = "200ms";
    ASSERT_EQ(stack_.Start(options), "");
    kubeconfig_ = stack_.kubeconfig();
    planner_addr_ = stack_.planner_address();
    env_ = stack_.env();
    env_["CLONESET_PLANNER"] = "";  // unset for clonesetctl: each test names its planner
  }
  CommandResult Kubectl(std::vector<std::string> args) { return stack_.Kubectl(std::move(args)); }
  bool Eventually(const std::function<bool()>& f, absl::Duration timeout = absl::Seconds(30)) {
    return Poll(f, timeout, absl::Milliseconds(100));
  }

  Stack stack_;
  std::string kubeconfig_, planner_addr_;
  std::map<std::string, std::string> env_;
};

TEST_F(ClonesetctlLive, StatusAndPlanErrors) {
  auto r = Ctl({"status", "nope"}, env_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("CloneSet default/nope not found"));
  ASSERT_EQ(Kubectl({"apply", "-f", kSeed + "cloneset.yaml"}).exit_code, 0);
  r = Ctl({"plan", "video-transcoder", "--planner", "127.0.0.1:1"}, env_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("planner at 127.0.0.1:1 is unreachable"));
  // No planner named: a usage error naming the flag and the variable, not a guess.
  r = Ctl({"plan", "video-transcoder"}, env_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("plan needs the planner's address: --planner HOST:PORT, or CLONESET_PLANNER"));
  const std::string dead = stack_.dir() + "/dead.kubeconfig";
  {
    std::ifstream in(kubeconfig_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("server: ");
    text.replace(at, text.find('\n', at) - at, "server: https://127.0.0.1:1");
    std::ofstream(dead) << text;
  }
  r = Ctl({"status", "video-transcoder", "--kubeconfig", dead}, env_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("cannot reach the cluster at https://127.0.0.1:1"));
}

TEST_F(ClonesetctlLive, PlanShowsTheCreationsWithoutDoingThem) {
  ASSERT_EQ(Kubectl({"apply", "-f", kSeed + "cloneset.yaml"}).exit_code, 0);
  std::map<std::string, std::string> env = env_;
  env["CLONESET_PLANNER"] = planner_addr_;  // as `./run up` exports it
  auto r = Ctl({"plan", "video-transcoder"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("create ControllerRevision"));
  size_t creates = 0;
  for (size_t at = r.output.find(". create pod video-transcoder-"); at != std::string::npos;
       at = r.output.find(". create pod video-transcoder-", at + 1)) {
    ++creates;
  }
  EXPECT_EQ(creates, 3u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1 new PVC"));
  auto pods = Kubectl({"get", "pods", "-o", "name"});
  EXPECT_EQ(pods.output.find("video-transcoder"), std::string::npos) << "plan must not write";
  r = Ctl({"status", "video-transcoder"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pods 0"));
}

// simulate's prediction matches a real rollout on the embedded cluster: the same batches and the same
// peak unavailable count.
TEST_F(ClonesetctlLive, SimulatePredictsTheRealRollout) {
  ASSERT_EQ(stack_.StartExecutor("c1"), "");  // its shard Leases go to cloneset-system, which the stack made
  const std::string manifest = stack_.dir() + "/cs.yaml";
  std::ofstream(manifest) << R"(apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
spec:
  replicas: 5
  selector:
    matchLabels: {app: web}
  updateStrategy:
    type: InPlaceIfPossible
    maxUnavailable: 2
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
)";
  auto predicted = Ctl({"simulate", "-f", manifest, "--set", "image=nginx:1.26", "--ready-after", "1s",
                        "--start-delay", "200ms", "-o", "json"});
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  const json p = json::parse(predicted.output);
  std::vector<int> predicted_batches;
  for (const json& s : p["steps"]) {
    if (!s["updatedInPlace"].empty()) predicted_batches.push_back(static_cast<int>(s["updatedInPlace"].size()));
  }

  ASSERT_EQ(Kubectl({"apply", "-f", manifest}).exit_code, 0);
  auto config = kube::LoadKubeconfigFile(kubeconfig_);
  ASSERT_TRUE(config.ok()) << config.status();
  auto client = kube::NewHttpRestClient(*config);
  ASSERT_TRUE(client.ok());
  auto fetch = [&] { return clonesetctl::FetchCloneSet(**client, config->server, "default", "web"); };
  auto settled = [&](const std::string& image) {
    auto live = fetch();
    if (!live.ok() || live->pods.size() != 5) return false;
    for (const auto& [_, f] : demo::FactsOf(*live)) {
      if (!f.ready || f.image != image) return false;
    }
    return true;
  };
  ASSERT_TRUE(Eventually([&] { return settled("nginx:1.25"); }, absl::Seconds(60)))
      << Kubectl({"get", "pods"}).output << stack_.ExecutorLog("c1").substr(0, 5000);
  ASSERT_EQ(Kubectl({"patch", "clonesets.apps.kruise.io/web", "--type=json", "-p",
                     R"([{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26"}])"})
                .exit_code, 0);
  // Observe: when each pod's image changed (batches are separated by >= the 1.2 s restart), and unavailability.
  std::map<std::string, absl::Time> changed_at;
  int peak_unavailable = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  while (absl::Now() < deadline) {
    auto live = fetch();
    if (!live.ok()) continue;
    const auto facts = demo::FactsOf(*live);
    int available = 0;
    for (const auto& [name, f] : facts) {
      available += f.ready ? 1 : 0;
      if (f.image == "nginx:1.26" && !changed_at.count(name)) changed_at[name] = absl::Now();
    }
    peak_unavailable = std::max(peak_unavailable, 5 - available);
    if (changed_at.size() == 5 && available == 5) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  std::vector<absl::Time> times;
  for (const auto& [_, t] : changed_at) times.push_back(t);
  std::sort(times.begin(), times.end());
  std::vector<int> real_batches;
  for (size_t i = 0; i < times.size(); ++i) {
    if (i == 0 || times[i] - times[i - 1] > absl::Milliseconds(600)) real_batches.push_back(0);
    ++real_batches.back();
  }
  EXPECT_EQ(real_batches, predicted_batches) << predicted.output;
  EXPECT_EQ(peak_unavailable, p["peakUnavailable"].get<int>());
  EXPECT_EQ(p["peakUnavailable"], 2);
}

}  // namespace
}  // namespace cloneset::testing
