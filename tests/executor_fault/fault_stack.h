// Harness of the executor fault tests: an API server, a planner that can be stopped and
// restarted on the same port, and any number of executors that can be SIGKILLed and restarted, all real processes
// on loopback; a pod watcher over all namespaces that checks the rollout invariants on every event; and the
// end-state checks (no duplicate pods, no orphaned or lost PVCs, the rollout finished).
//
// Both backends of tests/support/stack.h (CLONESET_E2E_BACKEND). On the embedded cluster the faults are its own
// --fault_* flags. On the real control plane the executors reach kube-apiserver through cloneset-fault-proxy
// (tests/fault_proxy) with the chart's executor identity: the proxy takes the same --fault_* flags, decides by the
// same code (devcluster/faults.h) and logs requests and injected faults as the embedded cluster does, so the tests
// read the one as the other (RequestLog, WritesBy).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/stack.h"

namespace cloneset::testing {

// The shared stack (tests/support/stack.h) with a default StorageClass, executors' failures as test failures, and
// the logs kept when the test failed.
class FaultStack {
 public:
  FaultStack() = default;
  ~FaultStack();
  // Starts the API server of the backend, the planner, the CRD, a default StorageClass and the lease namespace; on
  // the real backend also the fault proxy in front of kube-apiserver. `fault_flags` (--fault_*, --log_requests)
  // go to the devcluster, or to the proxy. Empty on success, else what failed.
  std::string Start(const std::vector<std::string>& fault_flags = {});
  bool real() const { return stack_.real(); }
  void StartPlanner() { ASSERT_EQ(stack_.StartPlanner(), ""); }  // same port after the first start
  void StopPlanner() { stack_.KillPlanner(); }                    // SIGKILL
  // Executor `identity` with extra flags; waits for its health address. ASSERTs.
  void StartExecutor(const std::string& identity, const std::vector<std::string>& flags = {}) {
    ExecutorOptions options;
    options.flags = flags;
    options.kubeconfig = proxy_kubeconfig_;  // "" on the embedded backend: the stack's
    ASSERT_EQ(stack_.StartExecutor(identity, options), "");
  }
  void KillExecutor(const std::string& identity) { stack_.KillExecutor(identity); }  // SIGKILL, reaped
  bool ExecutorRunning(const std::string& identity) { return stack_.ExecutorRunning(identity); }
  std::string ExecutorHealth(const std::string& identity) const { return stack_.ExecutorHealth(identity); }

  CommandResult Kubectl(std::vector<std::string> args, const std::string& input = "") const {
    return stack_.Kubectl(std::move(args), input);
  }
  json GetJson(std::vector<std::string> args) const { return stack_.GetJson(std::move(args)); }
  // The number of write requests from client `user_agent` (its user_agent label), leases excluded: the embedded
  // cluster's apiserver_request_total, or on the real backend the proxy's request log (kube-apiserver's metric has
  // no user_agent label).
  double WritesBy(const std::string& user_agent) const;
  // JSON lines "request" (with --log_requests) and "fault injected": the devcluster's log, or the proxy's.
  std::string RequestLog() const;
  // Creates namespace `ns`; on the real backend waits for its default ServiceAccount (pods need it). ASSERTs.
  void CreateNamespace(const std::string& ns) const { ASSERT_EQ(stack_.CreateNamespace(ns), ""); }
  std::string ExecutorLogs() const { return stack_.ExecutorLogTails(4000); }  // the tail of each executor's log
  const Stack& stack() const { return stack_; }

 private:
  Stack stack_;
  Process proxy_;                 // real backend: cloneset-fault-proxy in front of kube-apiserver
  std::string proxy_kubeconfig_;  // the executor identity's kubeconfig pointed at the proxy
};

// What one CloneSet's rollout must respect; one CloneSet "app" per namespace.
struct Workload {
  std::string ns;
  int replicas = 4;
  int max_unavailable = 1;
  std::string update_type = "InPlaceIfPossible";  // or ReCreate
  // v1alpha1 default: PVCs whose pod vanished stay for reuse by the next pod created. false sets
  // scaleStrategy.disablePVCReuse, so such PVCs are cleaned up and the end state has exactly the pods' PVCs.
  bool pvc_reuse = true;
  int min_ready_seconds = 0;  // spec.minReadySeconds: slows a rollout down to one step per this many seconds
};
std::string WorkloadYaml(const Workload& w, const std::string& image);

// Watches pods in every namespace (kubectl get pods -A -w) and replays the events per namespace.
class InvariantWatch {
 public:
  InvariantWatch(const FaultStack& stack, std::vector<Workload> workloads);
  ~InvariantWatch();
  bool WaitStarted(size_t initial_events, absl::Duration timeout);
  // Creates a pod of its own in `default` (outside every workload, so the invariants ignore it) and waits until the
  // watch printed it: kubectl has listed by then and watches from that list's resourceVersion, so no later event is
  // missed. Tests call it before the first pod of a workload can exist. Empty on success, else what failed.
  std::string WaitEstablished(absl::Duration timeout) { return AwaitSentinel("start", timeout); }
  // Stops the watch; returns one line per violated invariant (empty = all held on every event):
  // once a namespace first had `replicas` Ready pods, Ready & not terminating >= replicas - maxUnavailable;
  // never more active (not terminating) pods than replicas; never two active pods with one instance id.
  std::vector<std::string> Finish(size_t* events = nullptr);

 private:
  // Creates the sentinel pod "<this watch>-<suffix>" and waits until the watch printed it (a watch delivers in order,
  // so every event before its creation has been printed too). Empty on success, else what failed.
  std::string AwaitSentinel(const std::string& suffix, absl::Duration timeout);

  const FaultStack* stack_;
  std::string path_;
  std::map<std::string, Workload> workloads_;
  Process process_;
};

// The end state of `w` once settled: replicas active Ready pods on `image`, none terminating, unique instance
// ids, every claim of a pod present (none lost), every PVC owned by the CloneSet (none orphaned) and, without
// PVC reuse, exactly the pods' claims (with reuse, an extra one must carry an instance id no pod has: kept for
// the next pod, as upstream does when a pod vanished between its deletion and its PVC's), status caught up.
// Empty = settled.
std::string Unsettled(const FaultStack& stack, const Workload& w, const std::string& image);
// Polls Unsettled for every workload until all are settled; returns the last complaint ("" = all settled).
std::string WaitSettled(const FaultStack& stack, const std::vector<Workload>& ws, const std::string& image,
                        absl::Duration timeout);

}  // namespace cloneset::testing
