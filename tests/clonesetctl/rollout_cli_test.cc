// `clonesetctl rollout ...`, `completion` and `--help` as a user runs them, against the embedded cluster
// (tests/support/stack.h): exact outputs and exit codes. The status tests write the CloneSet's status themselves
// (no executor), so every state is exact; history and undo run with an executor, on real ControllerRevisions.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "nlohmann/json.hpp"
#include "tests/support/stack.h"

namespace cloneset::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kCloneSet[] = R"(apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  annotations:
    kubernetes.io/change-cause: "create with nginx:1.25"
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  updateStrategy:
    type: InPlaceIfPossible
    partition: PARTITION
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
)";

class ClonesetctlRollout : public ::testing::Test {
 protected:
  void SetUp() override {
    StackOptions options;
    options.pod_ready_delay = "300ms";
    options.pod_start_delay = "100ms";
    ASSERT_EQ(stack_.Start(options), "");
    env_ = stack_.env();
    env_["CLONESET_PLANNER"] = "";  // unset for clonesetctl: each test names its planner
    auto config = kube::LoadKubeconfigFile(stack_.kubeconfig());
    ASSERT_TRUE(config.ok()) << config.status();
    auto client = kube::NewHttpRestClient(*config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  CommandResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), CLONESETCTL_BIN);
    return RunCommand(args, env_);
  }
  // A command whose stderr is wanted separately: "<stdout>" plus "stderr:\n<stderr>" and the exit code.
  CommandResult CtlSplit(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "\"$0\" \"$@\" 2>\"$ERR\"; code=$?; cat \"$ERR\" | sed 's/^/stderr: /'; exit $code",
                                     CLONESETCTL_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto env = env_;
    env["ERR"] = stack_.dir() + "/stderr.txt";
    CommandResult r = RunCommand(argv, env);
    // RunCommand appends the (here empty) stderr of sh after a marker when the exit code is not 0.
    const std::string marker = "\n--- stderr ---\n";
    if (absl::EndsWith(r.output, marker)) r.output.resize(r.output.size() - marker.size());
    return r;
  }

  void Apply(int partition) {
    std::string text = kCloneSet;
    text.replace(text.find("PARTITION"), 9, std::to_string(partition));
    const std::string path = stack_.dir() + "/web.yaml";
    std::ofstream(path) << text;
    auto r = stack_.Kubectl({"apply", "-f", path});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  // Replaces the CloneSet's status (what the executor would write) through the status subresource.
  void SetStatus(const nlohmann::json& status) {
    const std::string path = "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets/web";
    auto body = client_->Get(path);
    ASSERT_TRUE(body.ok()) << body.status();
    nlohmann::json cs = nlohmann::json::parse(*body);
    cs["status"] = status;
    cs["status"]["observedGeneration"] = cs["metadata"]["generation"];
    auto put = client_->Update(path + "/status", cs.dump());
    ASSERT_TRUE(put.ok()) << put.status();
  }

  static nlohmann::json Status(int replicas, int updated, int updated_available) {
    return {{"replicas", replicas},
            {"updatedReplicas", updated},
            {"updatedAvailableReplicas", updated_available},
            {"updateRevision", "web-1"},
            {"currentRevision", "web-1"}};
  }

  // Starts clonesetctl in the background; its output, then "exit=<code>", lands in `log`.
  void StartCtl(Process& p, const std::string& log, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env"};
    for (const auto& [k, v] : env_) argv.push_back(k + "=" + v);
    for (const char* a : {"/bin/sh", "-c", "\"$0\" \"$@\"; echo exit=$?", CLONESETCTL_BIN}) argv.push_back(a);
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_TRUE(p.Start(argv, log));
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  Stack stack_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<kube::RestClient> client_;
};

constexpr char kWaiting1of3[] =
    "Waiting for CloneSet \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n";

TEST_F(ClonesetctlRollout, StatusWatchesUntilDone) {
  Apply(0);
  SetStatus(Status(3, 1, 1));
  auto r = CtlSplit({"rollout", "status", "web", "--watch=false"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, kWaiting1of3);

  const std::string log = stack_.dir() + "/status.log";
  Process p;
  StartCtl(p, log, {"rollout", "status", "web", "--timeout", "60s"});
  ASSERT_TRUE(Poll([&] { return ReadFile(log) == kWaiting1of3; }, absl::Seconds(20))) << ReadFile(log);
  SetStatus(Status(3, 3, 2));
  SetStatus(Status(3, 3, 3));
  ASSERT_TRUE(Poll([&] { return absl::StrContains(ReadFile(log), "exit="); }, absl::Seconds(20))) << ReadFile(log);
  // Each version of the CloneSet seen through the watch, in order (a watch delivers every one).
  EXPECT_EQ(ReadFile(log), absl::StrCat(kWaiting1of3,
                                        "Waiting for CloneSet \"web\" rollout to finish: 2 of 3 updated replicas are "
                                        "available...\n"
                                        "CloneSet \"web\" successfully rolled out\n"
                                        "exit=0\n"));
}

TEST_F(ClonesetctlRollout, StatusTimesOut) {
  Apply(0);
  SetStatus(Status(3, 1, 1));
  const absl::Time start = absl::Now();
  auto r = CtlSplit({"rollout", "status", "web", "--timeout", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, absl::StrCat(kWaiting1of3, "stderr: error: timed out waiting for the condition\n"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(ClonesetctlRollout, StatusHeldByThePartition) {
  Apply(2);
  SetStatus(Status(3, 1, 1));
  auto r = CtlSplit({"rollout", "status", "web", "--partition-ok", "--timeout", "10s"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "CloneSet \"web\" partition 2 reached: 1 of 3 updated, held by the partition\n");
  r = CtlSplit({"rollout", "status", "web", "--timeout", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output,
            "Waiting for CloneSet \"web\" rollout to finish: partition 2 reached: 1 of 3 updated, held by the "
            "partition (clonesetctl rollout next web, or --partition-ok)...\n"
            "stderr: error: timed out waiting for the condition\n");
}

TEST_F(ClonesetctlRollout, StatusFailsOnDeadlineInvalidAndMissing) {
  Apply(0);
  nlohmann::json st = Status(3, 1, 1);
  st["conditions"] = {{{"type", "Progressing"},
                       {"status", "False"},
                       {"reason", "ProgressDeadlineExceeded"},
                       {"message", "CloneSet revision web-1 has timed out progressing"},
                       {"lastUpdateTime", "2026-01-01T00:00:00Z"},
                       {"lastTransitionTime", "2026-01-01T00:00:00Z"}}};
  SetStatus(st);
  auto r = CtlSplit({"rollout", "status", "web"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "stderr: error: CloneSet \"web\" exceeded its progress deadline\n");
  // `status` shows every condition, a False one too (it showed only True ones with a message).
  r = Ctl({"status", "web"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("\nCondition Progressing=False (ProgressDeadlineExceeded): CloneSet revision web-1 "
                                  "has timed out progressing\n"));
  st["conditions"] = {{{"type", "Invalid"},
                       {"status", "True"},
                       {"reason", "InvalidSpec"},
                       {"message", "spec.template.spec.containers: Required value"},
                       {"lastTransitionTime", "2026-01-01T00:00:00Z"}}};
  SetStatus(st);
  r = CtlSplit({"rollout", "status", "web"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "stderr: error: CloneSet \"web\" is invalid: spec.template.spec.containers: Required value\n");
  // `status` shows the condition too.
  r = Ctl({"status", "web"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("\nCondition Invalid=True (InvalidSpec): spec.template.spec.containers: Required "
                                  "value\n"));
  r = CtlSplit({"rollout", "status", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "stderr: error: CloneSet default/nope not found\n");
  r = CtlSplit({"rollout", "status"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "stderr: error: rollout status needs a CloneSet NAME (clonesetctl rollout --help)\n");
}

TEST_F(ClonesetctlRollout, PauseResumeRestartNext) {
  Apply(2);
  auto get = [&](const std::string& jsonpath) {
    // v1alpha1's shape (updateStrategy.paused): kubectl's default version is v1beta1.
    return stack_.Kubectl({"get", "clonesets.v1alpha1.apps.kruise.io", "web", "-o", "jsonpath={" + jsonpath + "}"})
        .output;
  };
  struct Step {
    std::vector<std::string> args;
    int exit_code;
    std::string output;
  };
  const std::vector<Step> steps = {
      {{"rollout", "pause", "web"}, 0, "cloneset.apps.kruise.io/web paused\n"},
      {{"rollout", "pause", "web"}, 1, "stderr: error: clonesets.apps.kruise.io \"web\" is already paused\n"},
      {{"rollout", "restart", "web"}, 1, "stderr: error: can't restart paused cloneset (run rollout resume first)\n"},
      {{"rollout", "resume", "web"}, 0, "cloneset.apps.kruise.io/web resumed\n"},
      {{"rollout", "resume", "web"}, 1, "stderr: error: clonesets.apps.kruise.io \"web\" is not paused\n"},
      {{"rollout", "restart", "web"}, 0, "cloneset.apps.kruise.io/web restarted\n"},
      {{"rollout", "next", "web"}, 0, "cloneset.apps.kruise.io/web partition 2 -> 1\n"},
      {{"rollout", "next", "web", "--step", "5"}, 0, "cloneset.apps.kruise.io/web partition 1 -> 0\n"},
      {{"rollout", "next", "web"}, 1, "stderr: error: CloneSet \"web\" is not held by a partition (partition is 0)\n"},
      {{"rollout", "bogus", "web"}, 1,
       "stderr: error: unknown rollout command \"bogus\" (status, history, undo, pause, resume, restart, next)\n"},
  };
  for (const Step& s : steps) {
    auto r = CtlSplit(s.args);
    EXPECT_EQ(r.exit_code, s.exit_code) << s.args[1];
    EXPECT_EQ(r.output, s.output) << s.args[1];
    if (s.args[1] == "pause" && s.exit_code == 0) {
      EXPECT_EQ(get(".spec.updateStrategy.paused"), "true");
    }
    if (s.args[1] == "resume" && s.exit_code == 0) {
      EXPECT_EQ(get(".spec.updateStrategy.paused"), "false");
    }
  }
  EXPECT_THAT(get(".spec.template.metadata.annotations"), HasSubstr("kubectl.kubernetes.io/restartedAt"));
  EXPECT_EQ(get(".spec.updateStrategy.partition"), "0");
  EXPECT_EQ(get(".spec.template.spec.containers[0].image"), "nginx:1.25");  // the rest of the spec is kept
}

// history and undo on the revisions a real executor and planner write; `kubectl cloneset ...` as the plugin.
TEST_F(ClonesetctlRollout, HistoryAndUndo) {
  ASSERT_EQ(stack_.StartExecutor("c1"), "");
  Apply(0);
  auto wait = [&] {
    auto r = CtlSplit({"rollout", "status", "web", "--timeout", "60s"});
    EXPECT_EQ(r.exit_code, 0) << r.output << stack_.ExecutorLogTails(3000);
    EXPECT_TRUE(absl::EndsWith(r.output, "CloneSet \"web\" successfully rolled out\n")) << r.output;
  };
  wait();
  ASSERT_EQ(stack_.Kubectl({"annotate", "clonesets.apps.kruise.io", "web", "--overwrite",
                            "kubernetes.io/change-cause=image nginx:1.26"}).exit_code, 0);
  // The canary workflow: partition 2 of 3, new image, wait for the canary, see what holds it, continue.
  ASSERT_EQ(stack_.Kubectl({"patch", "clonesets.v1alpha1.apps.kruise.io", "web", "--type=json", "-p",
                            R"([{"op":"replace","path":"/spec/updateStrategy/partition","value":2},)"
                            R"({"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26"}])"})
                .exit_code, 0);
  auto r = CtlSplit({"rollout", "status", "web", "--partition-ok", "--timeout", "60s"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(absl::EndsWith(r.output, "CloneSet \"web\" partition 2 reached: 1 of 3 updated, held by the partition\n"))
      << r.output;
  r = Ctl({"plan", "web", "--planner", stack_.planner_address()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\nHeld: partition 2: 1 of 3 pods updated, the partition keeps the other 2 "
                                  "(clonesetctl rollout next web)\n"));
  r = CtlSplit({"rollout", "next", "web", "--step", "2"});
  EXPECT_EQ(r.output, "cloneset.apps.kruise.io/web partition 2 -> 0\n");
  wait();
  r = CtlSplit({"rollout", "history", "web"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output,
            "cloneset.apps.kruise.io/web\n"
            "REVISION  CHANGE-CAUSE\n"
            "1         create with nginx:1.25\n"
            "2         image nginx:1.26\n");
  r = CtlSplit({"rollout", "history", "web", "--revision", "2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("cloneset.apps.kruise.io/web with revision #2\nChange cause: image nginx:1.26\n"));
  EXPECT_THAT(r.output, HasSubstr("Changes from revision #1:\n  ~ spec.containers[name=main].image: nginx:1.25 -> "
                                  "nginx:1.26\n"));
  r = CtlSplit({"rollout", "history", "web", "--revision", "9"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "stderr: error: unable to find the specified revision 9 in history\n");
  r = CtlSplit({"rollout", "undo", "web", "--to-revision", "9"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "stderr: error: unable to find specified revision 9 in history\n");
  r = CtlSplit({"rollout", "undo", "web", "--to-revision", "2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "cloneset.apps.kruise.io/web skipped rollback (current template already matches revision 2)\n");

  // Through kubectl's plugin mechanism: kubectl-cloneset on the PATH.
  const std::string bin = stack_.dir() + "/bin";
  std::filesystem::create_directories(bin);
  std::filesystem::create_symlink(CLONESETCTL_BIN, bin + "/kubectl-cloneset");
  auto env = env_;
  env["PATH"] = bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  std::filesystem::create_symlink(CLONESETCTL_BIN, bin + "/kubectl_complete-cloneset");
  r = RunCommand({"kubectl", "__complete", "cloneset", "rollout", "st"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("status\n")) << "kubectl's plugin completion through kubectl_complete-cloneset";
  r = RunCommand({"kubectl", "cloneset", "rollout", "undo", "web"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "cloneset.apps.kruise.io/web rolled back to revision 1\n");
  wait();
  auto pods = stack_.GetJson({"pods", "-l", "app=web"});
  ASSERT_EQ(pods["items"].size(), 3u);
  for (const auto& pod : pods["items"]) EXPECT_EQ(pod["spec"]["containers"][0]["image"], "nginx:1.25");
  r = CtlSplit({"rollout", "history", "web"});
  EXPECT_EQ(r.exit_code, 0);
  // As upstream: rolling back reuses revision 1's ControllerRevision and makes it the newest (number 3).
  EXPECT_EQ(r.output,
            "cloneset.apps.kruise.io/web\n"
            "REVISION  CHANGE-CAUSE\n"
            "2         image nginx:1.26\n"
            "3         create with nginx:1.25\n");
}

TEST_F(ClonesetctlRollout, MigrateDeployment) {
  ASSERT_EQ(stack_.StartExecutor("c1"), "");
  const std::string path = stack_.dir() + "/deploy.yaml";
  std::ofstream(path) << R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
)";
  ASSERT_EQ(stack_.Kubectl({"apply", "-f", path}).exit_code, 0);
  const std::string plan =
      "Migrating deployment/web (namespace default, 3 replicas) to cloneset.apps.kruise.io/web:\n"
      "  1. create cloneset.apps.kruise.io/web with 0 replicas, the Deployment's selector and pod template\n"
      "  2. scale deployment 3 -> 1 and cloneset 0 -> 2, wait until 2 CloneSet pods are available\n"
      "  3. scale deployment 1 -> 0 and cloneset 2 -> 3, wait until 3 CloneSet pods are available\n"
      "  4. done: deployment/web is left with 0 replicas (delete it with `kubectl delete deployment web -n "
      "default`)\n";
  auto r = CtlSplit({"migrate", "deployment/web", "--dry-run", "--max-unavailable", "2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, plan + "(dry run: nothing changed)\n");
  EXPECT_EQ(stack_.Kubectl({"get", "clonesets.apps.kruise.io", "-o", "name"}).output, "");

  r = CtlSplit({"migrate", "deployment/web", "--max-unavailable", "2", "--timeout", "60s"});
  EXPECT_EQ(r.exit_code, 0) << r.output << stack_.ExecutorLogTails(3000);
  EXPECT_EQ(r.output, plan +
                          "cloneset.apps.kruise.io/web created\n"
                          "deployment 1, cloneset 2 available\n"
                          "deployment 0, cloneset 3 available\n"
                          "deployment/web migrated to cloneset.apps.kruise.io/web (3 replicas)\n");
  EXPECT_EQ(stack_.Kubectl({"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"}).output, "0");
  auto cs = stack_.GetJson({"clonesets.apps.kruise.io", "web"});
  EXPECT_EQ(cs["status"]["availableReplicas"], 3);
  EXPECT_EQ(cs["spec"]["selector"]["matchLabels"]["app"], "web");
  // Again: nothing left to move.
  r = CtlSplit({"migrate", "deployment/web"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output,
            "Migrating deployment/web (namespace default, 3 replicas) to cloneset.apps.kruise.io/web:\n"
            "  1. done: deployment/web is left with 0 replicas (delete it with `kubectl delete deployment web -n "
            "default`)\n"
            "deployment/web migrated to cloneset.apps.kruise.io/web (3 replicas)\n");
  r = CtlSplit({"migrate", "web"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "stderr: error: migrate needs deployment/NAME (clonesetctl migrate --help)\n");
  r = CtlSplit({"migrate", "deployment/nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "stderr: error: deployment default/nope not found\n");
}

// `status -w` on a terminal redraws in place: under tmux the pane shows one view, the newest; without a terminal
// each new view is printed after the previous one.
TEST_F(ClonesetctlRollout, StatusWatchRedrawsInPlaceOnATerminal) {
  Apply(0);
  nlohmann::json st = Status(3, 0, 0);
  st["updateRevision"] = "web-rev0";
  SetStatus(st);
  const std::string socket = stack_.dir() + "/tmux.sock";
  std::string command = "exec env";
  for (const auto& [k, v] : env_) command += " " + k + "='" + v + "'";
  command += absl::StrCat(" ", CLONESETCTL_BIN, " status web -w --interval 100ms");
  // The tmux server keeps the descriptors it was started with: without the redirections RunCommand would wait for
  // the end of a stdout the server never closes.
  auto r = RunCommand({"/bin/sh", "-c", "exec tmux \"$@\" </dev/null >/dev/null 2>&1", "tmux", "-S", socket,
                       "new-session", "-d", "-s", "live", "-x", "150", "-y", "40", command},
                      {});
  ASSERT_EQ(r.exit_code, 0) << "tmux is needed (./run deps installs it): " << r.output;
  struct KillServer {
    std::string socket;
    ~KillServer() { RunCommand({"/bin/sh", "-c", "exec tmux -S \"$0\" kill-server >/dev/null 2>&1", socket}, {}); }
  } kill_server{socket};
  auto pane = [&] { return RunCommand({"tmux", "-S", socket, "capture-pane", "-p", "-t", "live"}, {}).output; };
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_TRUE(Poll([&] { return absl::StrContains(pane(), "update revision web-rev0"); }, absl::Seconds(20)))
      << pane();
  for (int i = 1; i <= 3; ++i) {
    st["updateRevision"] = absl::StrCat("web-rev", i);
    SetStatus(st);
    const std::string want = absl::StrCat("update revision web-rev", i);
    EXPECT_TRUE(Poll([&] { return absl::StrContains(pane(), want); }, absl::Seconds(20))) << pane();
  }
  const std::string last = pane();
  EXPECT_EQ(count(last, "CloneSet default/web"), 1) << last;
  EXPECT_EQ(count(last, "update revision web-rev"), 1) << last;

  // No terminal: the views follow each other.
  const std::string log = stack_.dir() + "/plain.log";
  Process p;
  StartCtl(p, log, {"status", "web", "-w", "--interval", "100ms"});
  ASSERT_TRUE(Poll([&] { return absl::StrContains(ReadFile(log), "web-rev3"); }, absl::Seconds(20)));
  st["updateRevision"] = "web-rev4";
  SetStatus(st);
  ASSERT_TRUE(Poll([&] { return absl::StrContains(ReadFile(log), "web-rev4"); }, absl::Seconds(20)));
  p.Stop();
  const std::string plain = ReadFile(log);
  EXPECT_EQ(count(plain, "CloneSet default/web"), 2) << plain;
  EXPECT_EQ(plain.find('\033'), std::string::npos) << "no terminal escapes without a terminal";
}

TEST(ClonesetctlHelp, EveryCommandsHelpExitsZero) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"help"}, {"status", "--help"}, {"plan", "--help"}, {"simulate", "--help"},
           {"rollout", "--help"}, {"rollout", "status", "--help"}, {"help", "rollout"}, {"completion", "--help"},
           {"migrate", "--help"}}) {
    std::vector<std::string> argv = {CLONESETCTL_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv, {});
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << r.output;
    EXPECT_THAT(r.output, HasSubstr("usage: ")) << args[0];
    EXPECT_THAT(r.output, ::testing::Not(HasSubstr("No flags matched"))) << args[0];
  }
  auto r = RunCommand({CLONESETCTL_BIN, "status", "--help"}, {});
  EXPECT_THAT(r.output, HasSubstr("usage: clonesetctl status NAME [-n NAMESPACE] [-w]"));
  r = RunCommand({CLONESETCTL_BIN, "rollout", "--help"}, {});
  EXPECT_THAT(r.output, HasSubstr("clonesetctl rollout undo NAME [--to-revision N]"));
}

// The other binaries answer --help the same way (base/flag_usage.h), instead of absl's exit 1 "No flags matched".
TEST(ClonesetctlHelp, BinariesHelpExitsZero) {
  for (const std::string& bin : {std::string(DEVCLUSTER_BIN), std::string(PLANNER_BIN), std::string(EXECUTOR_BIN),
                                 std::string(AGENT_BIN)}) {
    for (const char* flag : {"--help", "-h", "--helpfull"}) {
      auto r = RunCommand({bin, flag}, {});
      EXPECT_EQ(r.exit_code, 0) << bin << " " << flag << " " << r.output;
      EXPECT_THAT(r.output, HasSubstr("cloneset-")) << bin;
      EXPECT_THAT(r.output, HasSubstr("\nFlags:\n  --")) << bin;
      EXPECT_THAT(r.output, ::testing::Not(HasSubstr("No flags matched"))) << bin;
      EXPECT_THAT(r.output, ::testing::Not(HasSubstr("--flagfile"))) << bin << ": absl's own flags are not listed";
    }
  }
  EXPECT_THAT(RunCommand({DEVCLUSTER_BIN, "--help"}, {}).output, HasSubstr("--nodes="));
  EXPECT_THAT(RunCommand({PLANNER_BIN, "--help"}, {}).output, HasSubstr("--listen="));
  EXPECT_THAT(RunCommand({EXECUTOR_BIN, "--help"}, {}).output, HasSubstr("--planner_address="));
  EXPECT_THAT(RunCommand({AGENT_BIN, "--help"}, {}).output, HasSubstr("--node_name="));
}

TEST(ClonesetctlCompletion, BashCompletesCommandsAndVerbs) {
  TempDir dir;
  const std::string script = dir.path() + "/complete.sh";
  std::ofstream(script) << "source <(\"$CTL\" completion bash)\n"
                           "COMP_WORDS=(\"$CTL\" rollout re); COMP_CWORD=2; _clonesetctl; echo \"${COMPREPLY[*]}\"\n"
                           "COMP_WORDS=(\"$CTL\" ro); COMP_CWORD=1; _clonesetctl; echo \"${COMPREPLY[*]}\"\n"
                           "COMP_WORDS=(\"$CTL\" rollout status web --p); COMP_CWORD=4; _clonesetctl; "
                           "echo \"${COMPREPLY[*]}\"\n"
                           "complete -p kubectl-cloneset\n";
  auto r = RunCommand({"/bin/bash", script}, {{"CTL", CLONESETCTL_BIN}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "restart resume\nrollout\n--partition-ok\ncomplete -o default -F _clonesetctl kubectl-cloneset\n");
  r = RunCommand({CLONESETCTL_BIN, "completion", "fish"}, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("completion needs a shell: bash or zsh"));
}

// zsh: the script registers itself with compdef and hands compadd the candidates (compadd stubbed to print them,
// as completion widgets only run in an interactive shell).
TEST(ClonesetctlCompletion, ZshCompletesCommandsAndVerbs) {
  TempDir dir;
  const std::string script = dir.path() + "/complete.zsh";
  std::ofstream(script) << "autoload -U compinit; compinit -u -d \"$TMPDIR/zcompdump\"\n"
                           "source <(\"$CTL\" completion zsh)\n"
                           "print -r -- \"registered: $_comps[clonesetctl] $_comps[kubectl-cloneset]\"\n"
                           "compadd() { [[ $1 == -a ]] && print -rl -- \"${(@P)2}\"; }\n"
                           "words=(\"$CTL\" rollout re); CURRENT=3; _clonesetctl\n"
                           "words=(\"$CTL\" rollout status web --p); CURRENT=5; _clonesetctl\n";
  auto r = RunCommand({"zsh", "-f", script}, {{"CTL", CLONESETCTL_BIN}, {"TMPDIR", dir.path()}});
  ASSERT_NE(r.exit_code, 127) << "zsh is needed (./run deps installs it)";
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "registered: _clonesetctl _clonesetctl\nrestart\nresume\n--partition-ok\n");
}

// Names come from the cluster: `__complete rollout status ""` lists the namespace's CloneSets.
TEST_F(ClonesetctlRollout, CompletionListsCloneSets) {
  Apply(0);
  auto r = Ctl({"__complete", "rollout", "status", ""});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "web\n:4\n");
  r = Ctl({"__complete", "-n", "other", "rollout", "status", ""});
  EXPECT_EQ(r.output, ":4\n");
}

}  // namespace
}  // namespace cloneset::testing
