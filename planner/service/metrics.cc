#include "planner/service/metrics.h"

#include "absl/strings/ascii.h"
#include "planapi/pod_table.h"

namespace cloneset::planner::service {

ServiceMetrics::ServiceMetrics(prometheus::Registry& registry)
    : plan_duration_(prometheus::BuildHistogram()
                         .Name("cloneset_planner_plan_duration_seconds")
                         .Help("Time to compute one plan, excluding transport.")
                         .Register(registry)
                         .Add({}, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                                          0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                                          1, 2.5})),
      plans_(prometheus::BuildCounter()
                 .Name("cloneset_planner_plans_total")
                 .Help("Plan calls by result.")
                 .Register(registry)),
      actions_(prometheus::BuildCounter()
                   .Name("cloneset_planner_actions_total")
                   .Help("Actions returned in plans, by action type; an in-place batch counts as its per-pod "
                         "patch_pod_status and patch_pod actions.")
                   .Register(registry)),
      snapshot_pods_(prometheus::BuildHistogram()
                         .Name("cloneset_planner_snapshot_pods")
                         .Help("Pods in the snapshot of each Plan request.")
                         .Register(registry)
                         .Add({}, prometheus::Histogram::BucketBoundaries{0, 1, 10, 100, 1000, 10000, 100000})),
      validate_(prometheus::BuildCounter()
                    .Name("cloneset_planner_validate_total")
                    .Help("Validate calls by result (valid, invalid, error).")
                    .Register(registry)),
      compute_revision_(prometheus::BuildCounter()
                            .Name("cloneset_planner_compute_revision_total")
                            .Help("ComputeRevision calls by result.")
                            .Register(registry)) {
  // Pre-create the series so dashboards see zeros instead of gaps.
  for (const char* r : {"ok", "invalid_argument", "resource_exhausted", "error"}) plans_.Add({{"result", r}});
  for (const char* r : {"valid", "invalid", "error"}) validate_.Add({{"result", r}});
  const auto* oneof = v1::Action::descriptor()->FindOneofByName("kind");
  for (int i = 0; i < oneof->field_count(); ++i) {
    const std::string& name = oneof->field(i)->name();
    if (name == "start_in_place_updates") continue;  // counted as its per-pod actions (ObservePlan)
    action_counters_[name] = &actions_.Add({{"type", name}});
  }
}

std::string ServiceMetrics::ResultLabel(int grpc_code) {
  switch (grpc_code) {
    case 0: return "ok";
    case 3: return "invalid_argument";
    case 8: return "resource_exhausted";
    default: return "error";
  }
}

std::string ServiceMetrics::ActionType(const v1::Action& action) {
  const auto* field = v1::Action::descriptor()->FindFieldByNumber(action.kind_case());
  return field == nullptr ? "unspecified" : field->name();
}

void ServiceMetrics::ObservePlan(double seconds, const std::string& result, const v1::PlanRequest& request,
                                 const v1::PlanResponse* response) {
  plan_duration_.Observe(seconds);
  plans_.Add({{"result", result}}).Increment();
  snapshot_pods_.Observe(static_cast<double>(planapi::PodsInRequest(request)));
  if (response == nullptr) return;
  for (const v1::Action& action : response->actions()) {
    if (action.has_start_in_place_updates()) {
      // A batch counts as the per-pod actions it stands for (what the executor applies), so the series mean the
      // same whether or not the caller asked for batches.
      const v1::StartInPlaceUpdates& batch = action.start_in_place_updates();
      const auto targets = static_cast<double>(batch.targets_size());
      if (batch.has_status_patch()) action_counters_["patch_pod_status"]->Increment(targets);
      action_counters_["patch_pod"]->Increment(targets);
      continue;
    }
    auto it = action_counters_.find(ActionType(action));
    if (it != action_counters_.end()) it->second->Increment();
  }
}

void ServiceMetrics::ObserveValidate(const std::string& result) { validate_.Add({{"result", result}}).Increment(); }

void ServiceMetrics::ObserveComputeRevision(const std::string& result) {
  compute_revision_.Add({{"result", result}}).Increment();
}

}  // namespace cloneset::planner::service
