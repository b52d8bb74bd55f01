// The executor's Prometheus metrics (controller-runtime's names, so upstream's dashboards and alerts work, plus
// ours). All methods are thread-safe; a null ExecutorMetrics* means metrics are off (tests).
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "kube/series_cache.h"
#include "planapi/feature_gates.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace cloneset::executor {

class ExecutorMetrics {
 public:
  explicit ExecutorMetrics(prometheus::Registry& registry);

  void Reconciled(std::string_view result, double seconds);  // result: success, error, requeue, requeue_after
  void PlannerCall(double seconds);
  void PlannerError(std::string_view code);
  void Action(std::string_view type, std::string_view result);
  // cloneset_executor_refused_writes_total{verb,resource,reason}: a write the API server refused (WriteRefused),
  // reason planapi::RefusalCause ("QuotaExceeded", "NamespaceTerminating", "PodSecurity", "AdmissionDenied",
  // "Invalid", ...).
  void RefusedWrite(std::string_view verb, std::string_view resource, std::string_view reason);
  void ExpectationsPending(size_t n);
  void ExpectationLeaked();
  void Shards(int owned, int total);
  // cloneset_executor_feature_gate{name,stage}: 1 or 0 for each gate the planner honours, as Kubernetes components
  // export kubernetes_feature_enabled{name,stage}. Set once at start.
  void FeatureGates(const std::vector<planapi::GateState>& gates);
  // Per-CloneSet gauges from the cached object; Forget removes them when the CloneSet is gone.
  void ObserveCloneSet(const planner::v1::CloneSet& cs, bool progress_deadline_exceeded);
  void ForgetCloneSet(const std::string& ns, const std::string& name);

  double actions_total(std::string_view type, std::string_view result) const;  // for tests
  double leaked_total() const;
  double refused_writes_total(std::string_view verb, std::string_view resource, std::string_view reason) const;

 private:
  prometheus::Family<prometheus::Counter>& reconcile_total_;
  prometheus::Counter& reconcile_errors_;
  prometheus::Histogram& reconcile_time_;
  prometheus::Histogram& planner_duration_;
  prometheus::Family<prometheus::Counter>& planner_errors_;
  prometheus::Family<prometheus::Counter>& actions_;
  prometheus::Family<prometheus::Counter>& refused_writes_;
  prometheus::Gauge& expectations_pending_;
  prometheus::Counter& expectations_leaked_;
  prometheus::Gauge& shards_owned_;
  prometheus::Gauge& shards_total_;
  prometheus::Family<prometheus::Gauge>& feature_gates_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> per_cloneset_;

  // Series looked up in their families once and kept (a family's Add builds and hashes a label map per call, and
  // these are updated per reconcile and per write): result -> reconcile counter, "type\x1fresult" -> action
  // counter, "namespace/name" -> the CloneSet's gauges in kPerCloneSet order (metrics.cc).
  kube::SeriesCache<prometheus::Counter*> reconciled_;
  mutable kube::SeriesCache<prometheus::Counter*> action_series_;
  static constexpr size_t kCloneSetGauges = 9;
  kube::SeriesCache<std::array<prometheus::Gauge*, kCloneSetGauges>> cloneset_series_;
  prometheus::Counter& ActionCounter(std::string_view type, std::string_view result) const;
};

}  // namespace cloneset::executor
