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
#include <set>
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
  // Real backend: control-plane component `component` restarted in place (Stack::RestartControlPlane). ASSERTs.
  void RestartControlPlane(const std::string& component, bool kill) const {
    ASSERT_EQ(stack_.RestartControlPlane(component, kill), "");
  }
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
  bool claims = true;         // a volumeClaimTemplate "data" mounted by the pods
  int partition = 0;          // updateStrategy.partition: pods kept on an older revision
};
std::string WorkloadYaml(const Workload& w, const std::string& image);

// What the invariants of one CloneSet allow: while its spec changes, the union of the old spec's and the new one's.
struct PodBounds {
  int max_active = 0;  // active (not terminating) pods at most
  int min_ready = 0;   // Ready and active pods at least, once armed
  int arm_at = 0;      // armed once this many pods are Ready and active
  bool disarm = false;  // as a marker's action: disarm at the marker (a scale-up, a pod deleted by hand)
};
PodBounds BoundsOf(const Workload& w);  // {replicas, replicas - maxUnavailable, replicas}

// Watches pods in every namespace (kubectl get pods -A -w) and replays the events per namespace, as they arrive.
class InvariantWatch {
 public:
  InvariantWatch(const FaultStack& stack, std::vector<Workload> workloads);
  ~InvariantWatch();
  bool WaitStarted(size_t initial_events, absl::Duration timeout);
  // Creates a marker pod in `default` and returns at once: at its first event (every event before it happened
  // before this call, every write after this call comes after it) the bounds of each namespace in `bounds` become
  // the given ones, and later violations there name `label`. Empty on success, else what failed.
  std::string Mark(const std::string& label, const std::map<std::string, PodBounds>& bounds);
  // Keeps the watch going across an API server restart: when kubectl exited, watches again from the last
  // resourceVersion seen, or, when the API server no longer has it (410 Gone), from a fresh list of every pod
  // (the invariants are then checked on that list, the events in between are not seen). Empty on success.
  std::string Supervise();
  // The violations replayed so far (the events the watch printed up to now), as Finish words them.
  std::vector<std::string> Violations();
  // "<n> events, <k> watch restarts, <r> relists".
  std::string Summary() const;
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

  // Replays the complete JSON values the segments gained since the last call.
  void Advance();
  void Replay(const json& event);
  void Check(const std::string& ns, const std::string& where);
  std::string StartSegment(const std::vector<std::string>& kubectl_args);

  const FaultStack* stack_;
  std::vector<std::string> segments_;  // watch output files in order: one per kubectl watch (or relist)
  size_t reading_ = 0;                 // the segment Advance reads next, from offset_
  std::streamoff offset_ = 0;
  size_t segment_values_ = 0;          // JSON values read from the newest segment
  std::map<std::string, Workload> workloads_;
  Process process_;
  // Replay state.
  std::map<std::string, std::map<std::string, json>> pods_;  // ns -> uid -> pod
  std::map<std::string, PodBounds> bounds_;
  std::map<std::string, std::string> since_;  // ns -> label of the last marker that changed its bounds
  std::set<std::string> armed_;
  std::set<std::string> seen_default_;        // names of pods seen in `default` (sentinels, markers)
  std::map<std::string, std::pair<std::string, std::map<std::string, PodBounds>>> markers_;  // pod -> label, bounds
  std::vector<std::string> violations_;
  size_t events_ = 0;
  std::string last_rv_;
  bool gone_ = false;  // the last watch ended with 410 Gone
  int marks_ = 0, restarts_ = 0, relists_ = 0;
};

// The end state of `w` once settled: replicas active Ready pods on `image`, none terminating, unique instance
// ids, every claim of a pod present (none lost), every PVC owned by the CloneSet (none orphaned) and, without
// PVC reuse, exactly the pods' claims (with reuse, an extra one must carry an instance id no pod has: kept for
// the next pod, as upstream does when a pod vanished between its deletion and its PVC's), status caught up.
// Empty = settled.
std::string Unsettled(const FaultStack& stack, const Workload& w, const std::string& image);
// With w.partition > 0: at least replicas - partition pods (not all) on `image`, the others on any image.
// Polls Unsettled for every workload until all are settled; returns the last complaint ("" = all settled).
std::string WaitSettled(const FaultStack& stack, const std::vector<Workload>& ws, const std::string& image,
                        absl::Duration timeout);

}  // namespace cloneset::testing
