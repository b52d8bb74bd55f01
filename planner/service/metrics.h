// The planner service's Prometheus metrics (naming per Prometheus practice: base units, _total counters).
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace cloneset::planner::service {

class ServiceMetrics {
 public:
  explicit ServiceMetrics(prometheus::Registry& registry);

  // `result`: "ok", "invalid_argument", "resource_exhausted" or "error".
  void ObservePlan(double seconds, const std::string& result, const v1::PlanRequest& request,
                   const v1::PlanResponse* response);
  // `result`: "valid", "invalid" or "error".
  void ObserveValidate(const std::string& result);
  void ObserveComputeRevision(const std::string& result);

  // Metric label for a status code ("ok", "invalid_argument", ...).
  static std::string ResultLabel(int grpc_code);
  // Metric label for an action kind ("create_pod", "patch_pod", ...).
  static std::string ActionType(const v1::Action& action);

 private:
  prometheus::Histogram& plan_duration_;
  prometheus::Family<prometheus::Counter>& plans_;
  prometheus::Family<prometheus::Counter>& actions_;
  prometheus::Histogram& snapshot_pods_;
  prometheus::Family<prometheus::Counter>& validate_;
  prometheus::Family<prometheus::Counter>& compute_revision_;
  absl::flat_hash_map<std::string, prometheus::Counter*> action_counters_;
};

}  // namespace cloneset::planner::service
