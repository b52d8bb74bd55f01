#include "executor/metrics.h"

namespace cloneset::executor {
namespace {

const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
const char* const kPerCloneSet[] = {
    "cloneset_spec_replicas", "cloneset_status_replicas", "cloneset_status_ready_replicas",
    "cloneset_status_available_replicas", "cloneset_status_updated_replicas",
    "cloneset_status_updated_ready_replicas", "cloneset_status_updated_available_replicas",
    "cloneset_rollout_progress_deadline_exceeded", "cloneset_rollout_paused"};

}  // namespace

ExecutorMetrics::ExecutorMetrics(prometheus::Registry& r)
    : reconcile_total_(prometheus::BuildCounter()
                           .Name("controller_runtime_reconcile_total")
                           .Help("Reconciliations per controller and result")
                           .Register(r)),
      reconcile_errors_(prometheus::BuildCounter()
                            .Name("controller_runtime_reconcile_errors_total")
                            .Help("Reconciliations that returned an error")
                            .Register(r)
                            .Add({{"controller", "cloneset"}})),
      reconcile_time_(prometheus::BuildHistogram()
                          .Name("controller_runtime_reconcile_time_seconds")
                          .Help("Time per reconciliation")
                          .Register(r)
                          .Add({{"controller", "cloneset"}}, kLatencyBuckets)),
      planner_duration_(prometheus::BuildHistogram()
                            .Name("cloneset_executor_planner_call_duration_seconds")
                            .Help("Latency of Plan calls to the planner, retries included")
                            .Register(r)
                            .Add({}, kLatencyBuckets)),
      planner_errors_(prometheus::BuildCounter()
                          .Name("cloneset_executor_planner_errors_total")
                          .Help("Failed planner calls by gRPC code")
                          .Register(r)),
      actions_(prometheus::BuildCounter()
                   .Name("cloneset_executor_actions_total")
                   .Help("Plan actions applied, by type and result")
                   .Register(r)),
      refused_writes_(prometheus::BuildCounter()
                          .Name("cloneset_executor_refused_writes_total")
                          .Help("Writes the API server refused (4xx a retry cannot change), by verb, resource and "
                                "reason (QuotaExceeded, NamespaceTerminating, PodSecurity, AdmissionDenied, "
                                "Invalid, or the API server's reason)")
                          .Register(r)),
      expectations_pending_(prometheus::BuildGauge()
                                .Name("cloneset_executor_expectations_pending")
                                .Help("CloneSets waiting for the cache to show the executor's writes")
                                .Register(r)
                                .Add({})),
      expectations_leaked_(prometheus::BuildCounter()
                               .Name("cloneset_executor_expectations_leaked_total")
                               .Help("Expectations that timed out (the CloneSet was re-read with a fresh LIST)")
                               .Register(r)
                               .Add({})),
      shards_owned_(prometheus::BuildGauge()
                        .Name("cloneset_executor_shards_owned")
                        .Help("Shard leases this replica holds")
                        .Register(r)
                        .Add({})),
      shards_total_(prometheus::BuildGauge()
                        .Name("cloneset_executor_shards_configured")
                        .Help("Number of shards (--shards)")
                        .Register(r)
                        .Add({})),
      feature_gates_(prometheus::BuildGauge()
                         .Name("cloneset_executor_feature_gate")
                         .Help("1 when the upstream feature gate is on for this executor's plans (--feature_gates), "
                               "else 0; stage: ALPHA, BETA")
                         .Register(r)) {
  for (const char* name : kPerCloneSet) {
    per_cloneset_[name] = &prometheus::BuildGauge().Name(name).Help("Per-CloneSet rollout state").Register(r);
  }
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    reconcile_total_.Add({{"controller", "cloneset"}, {"result", result}});
  }
}

void ExecutorMetrics::Reconciled(std::string_view result, double seconds) {
  reconciled_
      .Get(result, [&] { return &reconcile_total_.Add({{"controller", "cloneset"}, {"result", std::string(result)}}); })
      ->Increment();
  if (result == "error") reconcile_errors_.Increment();
  reconcile_time_.Observe(seconds);
}
void ExecutorMetrics::PlannerCall(double seconds) { planner_duration_.Observe(seconds); }
void ExecutorMetrics::PlannerError(std::string_view code) {
  planner_errors_.Add({{"code", std::string(code)}}).Increment();
}
prometheus::Counter& ExecutorMetrics::ActionCounter(std::string_view type, std::string_view result) const {
  std::string key(type);
  key += '\x1f';
  key += result;
  return *action_series_.Get(
      key, [&] { return &actions_.Add({{"type", std::string(type)}, {"result", std::string(result)}}); });
}
void ExecutorMetrics::Action(std::string_view type, std::string_view result) { ActionCounter(type, result).Increment(); }
double ExecutorMetrics::actions_total(std::string_view type, std::string_view result) const {
  return ActionCounter(type, result).Value();
}
void ExecutorMetrics::ExpectationsPending(size_t n) { expectations_pending_.Set(static_cast<double>(n)); }
void ExecutorMetrics::ExpectationLeaked() { expectations_leaked_.Increment(); }
double ExecutorMetrics::leaked_total() const { return expectations_leaked_.Value(); }
// Refusals are rare: the series is looked up in its family each time.
void ExecutorMetrics::RefusedWrite(std::string_view verb, std::string_view resource, std::string_view reason) {
  refused_writes_
      .Add({{"verb", std::string(verb)}, {"resource", std::string(resource)}, {"reason", std::string(reason)}})
      .Increment();
}
double ExecutorMetrics::refused_writes_total(std::string_view verb, std::string_view resource,
                                             std::string_view reason) const {
  return refused_writes_
      .Add({{"verb", std::string(verb)}, {"resource", std::string(resource)}, {"reason", std::string(reason)}})
      .Value();
}
void ExecutorMetrics::Shards(int owned, int total) {
  shards_owned_.Set(owned);
  shards_total_.Set(total);
}

void ExecutorMetrics::FeatureGates(const std::vector<planapi::GateState>& gates) {
  for (const planapi::GateState& g : gates) {
    feature_gates_.Add({{"name", g.name}, {"stage", g.stage}}).Set(g.enabled ? 1 : 0);
  }
}

void ExecutorMetrics::ObserveCloneSet(const planner::v1::CloneSet& cs, bool deadline_exceeded) {
  const std::string key = cs.metadata().namespace_() + "/" + cs.metadata().name();
  const std::array<prometheus::Gauge*, kCloneSetGauges> gauges = cloneset_series_.Get(key, [&] {
    const std::map<std::string, std::string> labels = {{"namespace", cs.metadata().namespace_()},
                                                       {"name", cs.metadata().name()}};
    std::array<prometheus::Gauge*, kCloneSetGauges> made{};
    for (size_t i = 0; i < kCloneSetGauges; ++i) made[i] = &per_cloneset_.at(kPerCloneSet[i])->Add(labels);
    return made;
  });
  // In kPerCloneSet's order.
  const auto& st = cs.status();
  const double values[] = {static_cast<double>(cs.spec().has_replicas() ? cs.spec().replicas() : 1),
                           static_cast<double>(st.replicas()),
                           static_cast<double>(st.ready_replicas()),
                           static_cast<double>(st.available_replicas()),
                           static_cast<double>(st.updated_replicas()),
                           static_cast<double>(st.updated_ready_replicas()),
                           static_cast<double>(st.updated_available_replicas()),
                           deadline_exceeded ? 1.0 : 0.0,
                           cs.spec().update_strategy().paused() ? 1.0 : 0.0};
  static_assert(std::size(values) == std::size(kPerCloneSet) && std::size(values) == kCloneSetGauges);
  for (size_t i = 0; i < gauges.size(); ++i) gauges[i]->Set(values[i]);
}

void ExecutorMetrics::ForgetCloneSet(const std::string& ns, const std::string& name) {
  cloneset_series_.Erase(ns + "/" + name);
  const std::map<std::string, std::string> labels = {{"namespace", ns}, {"name", name}};
  for (auto& [n, family] : per_cloneset_) {
    auto& g = family->Add(labels);
    family->Remove(&g);
  }
}

}  // namespace cloneset::executor
