// The stack the end-to-end suites start: a Kubernetes API server, a planner and any number of executors, all real
// processes on 127.0.0.1 port 0, driven through real kubectl with its own KUBECONFIG, KUBECACHEDIR and HOME in a
// temporary directory that goes away with the stack. Each suite passes what it needs different (kubelet delays,
// devcluster fault flags, executor flags); the start-up sequence is the same for all.
//
// The API server is chosen by the environment variable CLONESET_E2E_BACKEND (docs/testing.md, "Backends"):
//  - "embedded" (or unset): the embedded cluster (devcluster) with its simulated kubelet;
//  - "real": a real control plane from `./run up --cluster real --executors 0 --planners 0 --no-agents` with its
//    RUN_DIR inside the stack's directory (kube-apiserver, etcd, controller manager, scheduler, kwok nodes), torn
//    down by `./run down --purge`. The executors then run with the chart's executor identity
//    ($RUN_DIR/kubeconfig-executor) when that file exists, kubectl with the admin kubeconfig.
//    With CLONESET_E2E_REAL_RUN_DIR set, a control plane already running there (ctest's fixture
//    real_control_plane, tests/real/shared_control_plane.sh) is used instead of a new one: Start and Stop reset it
//    to the state `./run up` left (no CloneSets, no test namespaces, a clean default namespace, no shard Leases), so
//    tests that share it one after another each find the same cluster.
// ctest registers each suite once per backend (labels e2e and e2e-real), with the same test code.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tests/support/process.h"

namespace cloneset::testing {

using json = nlohmann::json;

// Calls `f` every `every` until it returns true or `timeout` passed; then once more.
bool Poll(const std::function<bool()>& f, absl::Duration timeout, absl::Duration every = absl::Milliseconds(200));

// The pod's Ready condition is True.
bool IsReady(const json& pod);

// The JSON values of a file written by a `kubectl ... -w -o json` run, up to the first one cut off by its stop.
std::vector<json> ReadJsonValues(const std::string& path);

enum class Backend { kEmbedded, kReal };

// CLONESET_E2E_BACKEND: kEmbedded when unset or "embedded", kReal for "real"; else an error naming the variable.
std::string BackendFromEnv(Backend* backend);

struct StackOptions {
  // The simulated kubelet of the embedded cluster (3 nodes): short by default, so the suites' time goes into the
  // controller's work. On the real backend kwok plays the kubelet with the fixed times of
  // tools/go/kwok/pod-stages.yaml (start 200-500 ms, in-place restart 500-1000 ms) and these are not used.
  std::string pod_ready_delay = "100ms";
  std::string pod_start_delay = "100ms";
  // Added after the above. Embedded only: Start fails on the real backend when this is not empty (a test that needs
  // them is not registered for the real backend, see docs/testing.md).
  std::vector<std::string> devcluster_flags;
  // Applied together with the lease namespace cloneset-system: more YAML documents ending in "---\n", or "".
  std::string setup_yaml;
};

struct ExecutorOptions {
  std::vector<std::string> flags;  // added after the loopback endpoints, the planner address and the identity
  bool wait_ready = false;         // also wait (30 s) until /readyz answers 200
  std::string kubeconfig = "";     // "" = executor_kubeconfig(); e.g. a fault proxy's (tests/fault_proxy)
};

class Stack {
 public:
  Stack() = default;
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  ~Stack() { Stop(); }

  // Starts the API server of the backend (CLONESET_E2E_BACKEND), the planner, the CloneSet CRD (waits until it is
  // served) and the setup objects. Empty on success, else what failed.
  std::string Start(const StackOptions& options = {});
  // Executors, planner: SIGTERM, SIGKILL after `grace`; then the devcluster the same way, or `./run down --purge`.
  void Stop(absl::Duration grace = absl::Seconds(15));

  Backend backend() const { return backend_; }
  bool real() const { return backend_ == Backend::kReal; }
  // Creates namespace `ns` and, on the real backend, waits until its `default` ServiceAccount exists (the
  // controller manager creates it; until then the API server refuses pods in it). Empty on success.
  std::string CreateNamespace(const std::string& ns) const;

  // The first start picks a free port; restarts reuse it, so the executors' --planner_address stays valid.
  // Empty on success. Every start logs to its own planner-<n>.log.
  std::string StartPlanner();
  void KillPlanner();  // SIGKILL, reaped
  // Executor `identity`; waits for its health address. Empty on success. Logs to executor-<identity>-<n>.log.
  std::string StartExecutor(const std::string& identity, const ExecutorOptions& options = {});
  void KillExecutor(const std::string& identity);  // SIGKILL, reaped
  // SIGTERM (the executor releases its shard Leases, so a successor takes them at once), SIGKILL after `grace`.
  void StopExecutor(const std::string& identity, absl::Duration grace = absl::Seconds(15));
  // Runs executor `identity` as StartExecutor would and waits up to `timeout` for it to exit by itself: for flags
  // it must refuse. The exit code (-1 when it still ran after `timeout`: then stopped) and its log.
  CommandResult RunExecutorToExit(const std::string& identity, const ExecutorOptions& options,
                                  absl::Duration timeout);
  bool ExecutorRunning(const std::string& identity);
  std::string ExecutorHealth(const std::string& identity) const { return health_.at(identity); }
  std::string ExecutorLog(const std::string& identity) const;  // "" for an identity never started
  // "--- executor <id> (tail) ---" and the last `max_chars` of its log, for every executor.
  std::string ExecutorLogTails(size_t max_chars) const;
  // Real backend: restarts control-plane component `component` (etcd, kube-apiserver, ...) in place, on its ports
  // and data, through `./run restart --cluster real` (SIGKILL first with `kill`, else SIGTERM); returns once etcd
  // is healthy or kube-apiserver ready again. Empty on success, else what failed (always on the embedded backend,
  // whose cluster keeps no state across a restart here).
  std::string RestartControlPlane(const std::string& component, bool kill) const;
  // The embedded cluster's log, or on the real backend the tail of kube-apiserver's and kwok's logs.
  std::string DevclusterLog() const;

  CommandResult Kubectl(std::vector<std::string> args, const std::string& input = "") const;
  json GetJson(std::vector<std::string> args) const;  // kubectl get <args> -o json; {} on failure
  // Starts `kubectl <args>` in the background with its stdout (not its stderr) in `out_path`: for watches.
  bool StartKubectl(Process& process, const std::vector<std::string>& args, const std::string& out_path) const;

  const std::string& dir() const { return dir_.path(); }
  const std::string& kubeconfig() const { return kubeconfig_; }  // the admin's (kubectl, the tests)
  // The executors' credentials: the chart's executor ServiceAccount on the real backend, else kubeconfig().
  const std::string& executor_kubeconfig() const { return executor_kubeconfig_; }
  const std::string& planner_address() const { return planner_addr_; }  // host:port
  const std::map<std::string, std::string>& env() const { return env_; }

 private:
  std::string StartReal(const StackOptions& options);
  // The executor's command line: the stack's endpoints and identity, then options.flags.
  std::vector<std::string> ExecutorArgv(const std::string& identity, const ExecutorOptions& options) const;
  // The shared control plane (CLONESET_E2E_REAL_RUN_DIR) back to the state ./run up left. Empty on success.
  std::string ResetShared() const;

  TempDir dir_;
  Backend backend_ = Backend::kEmbedded;
  std::string run_dir_;  // the real backend's RUN_DIR; "" while it is not up
  std::string shared_run_dir_;  // CLONESET_E2E_REAL_RUN_DIR while this stack uses the shared control plane
  std::string kubeconfig_;
  std::string executor_kubeconfig_;
  std::map<std::string, std::string> env_;
  Process devcluster_;
  Process reaper_;  // real backend: `./run down --purge` should the test process die without Stop
  Process planner_;
  std::string planner_addr_;
  int planner_starts_ = 0;
  std::map<std::string, std::unique_ptr<Process>> executors_;
  std::map<std::string, std::string> health_;
  std::map<std::string, int> executor_starts_;
};

}  // namespace cloneset::testing
