// Shared fixture of the end-to-end suites: one embedded cluster, planner and executor per test
// binary (real processes on 127.0.0.1 port 0), real kubectl with a fresh KUBECACHEDIR, a namespace per scenario,
// and a pod watcher (`kubectl get pods -w --output-watch-events -o json`) whose every event is checked against
// the scenario's availability invariant.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/stack.h"

namespace cloneset::testing {

using json = nlohmann::json;

struct PodInfo {
  std::string uid, image, instance_id, ip, revision;
  std::set<std::string> claims;  // persistentVolumeClaim claim names
  std::map<std::string, std::string> labels;
  int restart_count = 0;
  bool ready = false;
};

// What a suite's cluster runs with beyond the defaults.
struct E2eClusterOptions {
  std::vector<std::string> executor_flags;  // e.g. --feature_gates=...
  // More CRDs of charts/cloneset/crds/ (file names), applied before the executor starts.
  std::vector<std::string> crds = {};
};

// The processes (tests/support/stack.h), shared by every test of the binary.
class E2eCluster {
 public:
  // Starts devcluster (fast simulated kubelet), planner, the CloneSet CRD and the executor "e2e", and waits until
  // the executor is ready. Empty on success.
  std::string Start(const E2eClusterOptions& options = {});
  void Stop() { stack_.Stop(); }
  // Stops the executor (SIGTERM: it releases its Leases) and starts it again with the flags of Start and the
  // credentials of `kubeconfig` ("" = the stack's executor identity), waiting until it is ready. Empty on success.
  std::string RestartExecutor(const std::string& kubeconfig);
  const std::string& dir() const { return stack_.dir(); }
  std::string ExecutorLog() const { return stack_.ExecutorLog(kExecutor); }
  const Stack& stack() const { return stack_; }
  Stack& stack() { return stack_; }

 private:
  static constexpr char kExecutor[] = "e2e";
  Stack stack_;
  E2eClusterOptions options_;
};

// Pod events of one namespace, replayed after the fact: every event is checked.
class PodWatch {
 public:
  PodWatch(const E2eCluster& cluster, const std::string& ns, const std::string& selector);
  ~PodWatch();
  // Waits until the watch has delivered at least `initial` ADDED events (its initial list).
  bool WaitStarted(size_t initial, absl::Duration timeout);
  struct Stats {
    size_t events = 0;
    int min_ready = 1 << 30;        // fewest Ready, not terminating pods at any event
    int max_not_ready = 0;          // most not-Ready, not terminating pods at any event
    int max_active = 0;             // most non-terminating pods at any event
    std::set<std::string> uids_seen;
    std::string trace;  // one line per event after the initial list, for failure messages
  };
  // Stops the watch and replays its events.
  Stats Finish();

 private:
  std::string path_;
  size_t initial_ = 0;
  Process process_;
};

class E2eTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() { StartCluster({}); }
  static void TearDownTestSuite();
  // The cluster of the binary, started once; a suite that needs other executor flags calls this from its own
  // SetUpTestSuite.
  static void StartCluster(const E2eClusterOptions& options);

 protected:
  void SetUp() override;
  void TearDown() override;

  CommandResult Kubectl(std::vector<std::string> args, const std::string& input = "");
  void MustKubectl(const std::vector<std::string>& args, const std::string& input = "");
  // kubectl apply -n ns_ -f - <<yaml
  void Apply(const std::string& yaml) { MustKubectl({"apply", "-n", ns_, "-f", "-"}, yaml); }
  json GetJson(const std::vector<std::string>& what);
  bool Eventually(const std::function<bool()>& f, absl::Duration timeout = absl::Seconds(60));

  // Active (not terminating) pods with label app=<app>, by name.
  std::map<std::string, PodInfo> Pods(const std::string& app);
  int Terminating(const std::string& app);
  bool AllReady(const std::string& app, size_t n, const std::string& image);
  std::map<std::string, json> Pvcs();
  json CloneSet(const std::string& name) { return GetJson({"clonesets.apps.kruise.io", name}); }
  // reason -> messages of the namespace's Events.
  std::multimap<std::string, std::string> Events();
  std::string Describe(const std::string& app);
  std::unique_ptr<PodWatch> Watch(const std::string& app, size_t initial);

  static E2eCluster* cluster_;
  std::string ns_;
};

// A CloneSet manifest with one container "main" and label app=<name>; `extra_spec` is YAML appended to spec
// (indented by two spaces by the caller).
std::string CloneSetYaml(const std::string& name, int replicas, const std::string& image,
                         const std::string& extra_spec = "", const std::string& pod_extra = "");

}  // namespace cloneset::testing
