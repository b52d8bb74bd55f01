// Watches only this node's pods (fieldSelector spec.nodeName=<node>) and reports finished in-place updates
// (DecideReadiness) with a resourceVersion-guarded pods/status patch, an Event on the pod and metrics.
#pragma once

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "agent/readiness.h"
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

  kube::RestClient& client_;
  const Options opts_;
  const base::Clock& clock_;
  prometheus::Family<prometheus::Counter>* reports_ = nullptr;
  prometheus::Histogram* latency_ = nullptr;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> queued_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  kube::Informer<pb::Pod> informer_;
  std::thread worker_;
};

}  // namespace cloneset::agent
