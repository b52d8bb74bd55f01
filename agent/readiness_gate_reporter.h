// Watches only this node's pods (fieldSelector spec.nodeName=<node>) and reports finished in-place updates
// (DecideReadiness) with a resourceVersion-guarded pods/status patch, an Event on the pod and metrics. Given the
// node's container runtime, it also restarts the containers an env-from-metadata update waits for
// (DecideEnvRestarts), on a thread of their own: a stop waits for the container to exit.
#pragma once

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "agent/cri_client.h"
#include "agent/env_restart.h"
#include "agent/readiness_gate.h"
#include "base/clock.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/rest_client.h"

namespace prometheus {
class Registry;
class Counter;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace cloneset::agent {

class ReadinessReporter {
 public:
  struct Options {
    std::string node;
    kube::EventRecorder* events = nullptr;
    prometheus::Registry* registry = nullptr;
    const base::Clock* clock = nullptr;
    ContainerRuntime* runtime = nullptr;  // null: no env-from-metadata restarts
    absl::Duration stop_timeout = absl::Seconds(30);  // SIGTERM to SIGKILL of such a restart
    // How long after the agent saw the new metadata it stops the container. The kubelet resolves the env when it
    // starts the container again, from the pod as its own watch has delivered it: stopped at once, the container
    // could come back with the old values.
    absl::Duration restart_delay = absl::Seconds(2);
  };
  ReadinessReporter(kube::RestClient& client, Options options);
  ~ReadinessReporter();
  void Start();
  void Stop();
  bool HasSynced() const { return informer_.HasSynced(); }

 private:
  void Enqueue(const std::string& key);
  void Run();
  void Handle(const std::string& key);
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); }
  bool HasRestarts() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !restarts_.empty(); }
  void QueueRestarts(const pb::Pod& pod, const EnvRestartDecision& decision);
  void RunRestarts();

  kube::RestClient& client_;
  const Options opts_;
  const base::Clock& clock_;
  prometheus::Family<prometheus::Counter>* reports_ = nullptr;
  prometheus::Histogram* latency_ = nullptr;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> queued_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  struct PendingRestart {
    kube::ObjectReference pod;
    ContainerRestart container;
    absl::Time not_before;
  };
  std::deque<PendingRestart> restarts_ ABSL_GUARDED_BY(mu_);
  // Container ids already stopped or queued (a pod's events keep naming the old id until its new container
  // runs): each is stopped once. Bounded: the oldest ids are forgotten first.
  std::set<std::string> stopped_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> stopped_order_ ABSL_GUARDED_BY(mu_);
  prometheus::Family<prometheus::Counter>* restarts_total_ = nullptr;
  std::thread restart_worker_;
  kube::Informer<pb::Pod> informer_;
  std::thread worker_;
};

}  // namespace cloneset::agent
