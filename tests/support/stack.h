// The stack the end-to-end suites start: an embedded cluster (devcluster), a planner and any number of
// executors, all real processes on 127.0.0.1 port 0, driven through real kubectl with its own KUBECONFIG,
// KUBECACHEDIR and HOME in a temporary directory that goes away with the stack. Each suite passes what it needs
// different (kubelet delays, devcluster fault flags, executor flags); the start-up sequence is the same for all.
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

struct StackOptions {
  // The simulated kubelet (3 nodes): short by default, so the suites' time goes into the controller's work.
  std::string pod_ready_delay = "100ms";
  std::string pod_start_delay = "100ms";
  std::vector<std::string> devcluster_flags;  // added after the above
  // Applied together with the lease namespace cloneset-system: more YAML documents ending in "---\n", or "".
  std::string setup_yaml;
};

struct ExecutorOptions {
  std::vector<std::string> flags;  // added after the loopback endpoints, the planner address and the identity
  bool wait_ready = false;         // also wait (30 s) until /readyz answers 200
};

class Stack {
 public:
  Stack() = default;
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  ~Stack() { Stop(); }

  // Starts the devcluster, the planner, the CloneSet CRD (waits until it is served) and the setup objects.
  // Empty on success, else what failed.
  std::string Start(const StackOptions& options = {});
  // Executors, planner, devcluster: SIGTERM, SIGKILL after `grace`.
  void Stop(absl::Duration grace = absl::Seconds(15));

  // The first start picks a free port; restarts reuse it, so the executors' --planner_address stays valid.
  // Empty on success. Every start logs to its own planner-<n>.log.
  std::string StartPlanner();
  void KillPlanner();  // SIGKILL, reaped
  // Executor `identity`; waits for its health address. Empty on success. Logs to executor-<identity>-<n>.log.
  std::string StartExecutor(const std::string& identity, const ExecutorOptions& options = {});
  void KillExecutor(const std::string& identity);  // SIGKILL, reaped
  bool ExecutorRunning(const std::string& identity);
  std::string ExecutorHealth(const std::string& identity) const { return health_.at(identity); }
  std::string ExecutorLog(const std::string& identity) const;  // "" for an identity never started
  // "--- executor <id> (tail) ---" and the last `max_chars` of its log, for every executor.
  std::string ExecutorLogTails(size_t max_chars) const;
  std::string DevclusterLog() const { return devcluster_.Log(); }

  CommandResult Kubectl(std::vector<std::string> args, const std::string& input = "") const;
  json GetJson(std::vector<std::string> args) const;  // kubectl get <args> -o json; {} on failure
  // Starts `kubectl <args>` in the background with its stdout (not its stderr) in `out_path`: for watches.
  bool StartKubectl(Process& process, const std::vector<std::string>& args, const std::string& out_path) const;

  const std::string& dir() const { return dir_.path(); }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& planner_address() const { return planner_addr_; }  // host:port
  const std::map<std::string, std::string>& env() const { return env_; }

 private:
  TempDir dir_;
  std::string kubeconfig_;
  std::map<std::string, std::string> env_;
  Process devcluster_;
  Process planner_;
  std::string planner_addr_;
  int planner_starts_ = 0;
  std::map<std::string, std::unique_ptr<Process>> executors_;
  std::map<std::string, std::string> health_;
  std::map<std::string, int> executor_starts_;
};

}  // namespace cloneset::testing
