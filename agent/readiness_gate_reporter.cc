#include "agent/readiness_gate_reporter.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "snapshot/snapshot.h"

namespace cloneset::agent {
namespace {
std::string KeyOf(const pb::Pod& pod) { return absl::StrCat(pod.metadata().namespace_(), "/", pod.metadata().name()); }
}  // namespace

ReadinessReporter::ReadinessReporter(kube::RestClient& client, Options options)
    : client_(client),
      opts_(std::move(options)),
      clock_(opts_.clock != nullptr ? *opts_.clock : base::RealClock::Get()),
      informer_(client,
                kube::InformerOptions{.path = "/api/v1/pods", .field_selector = "spec.nodeName=" + opts_.node,
                                      .resync_period = absl::Seconds(30)},
                [](std::string_view json) { return snapshot::PodFromJson(json); },  // the whole-pod overload
                {.on_add = [this](const auto& p) { Enqueue(KeyOf(*p)); },
                 .on_update = [this](const auto&, const auto& p) { Enqueue(KeyOf(*p)); },
                 .on_delete = nullptr}) {
  if (opts_.registry != nullptr) {
    reports_ = &prometheus::BuildCounter()
                    .Name("cloneset_agent_readiness_reports_total")
                    .Help("InPlaceUpdateReady reports by result (success, conflict, error)")
                    .Register(*opts_.registry);
    latency_ = &prometheus::BuildHistogram()
                    .Name("cloneset_agent_readiness_report_latency_seconds")
                    .Help("From the in-place update's start (state updateTimestamp) to the agent's report")
                    .Register(*opts_.registry)
                    .Add({}, prometheus::Histogram::BucketBoundaries{0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600});
    restarts_total_ = &prometheus::BuildCounter()
                           .Name("cloneset_agent_container_restarts_total")
                           .Help("Containers stopped through CRI so that an env-from-metadata in-place update "
                                 "takes effect, by result (success, error)")
                           .Register(*opts_.registry);
  }
}

ReadinessReporter::~ReadinessReporter() { Stop(); }

void ReadinessReporter::Enqueue(const std::string& key) {
  absl::MutexLock l(&mu_);
  if (queued_.insert(key).second) queue_.push_back(key);
}

void ReadinessReporter::Start() {
  informer_.Start();
  worker_ = std::thread([this] { Run(); });
  if (opts_.runtime != nullptr) restart_worker_ = std::thread([this] { RunRestarts(); });
}

void ReadinessReporter::Stop() {
  {
    absl::MutexLock l(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  informer_.Stop();
  if (worker_.joinable()) worker_.join();
  if (restart_worker_.joinable()) restart_worker_.join();
}

void ReadinessReporter::Run() {
  while (true) {
    std::string key;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(this, &ReadinessReporter::HasWork));
      if (stopping_) return;
      key = queue_.front();
      queue_.pop_front();
      queued_.erase(key);
    }
    Handle(key);
  }
}

void ReadinessReporter::Handle(const std::string& key) {
  auto pod = informer_.Get(key);
  if (pod == nullptr) return;
  if (opts_.runtime != nullptr) {
    const EnvRestartDecision restarts = DecideEnvRestarts(*pod);
    if (!restarts.restarts.empty()) QueueRestarts(*pod, restarts);
  }
  const absl::Time now = clock_.Now();
  ReadinessDecision d = DecideReadiness(*pod, now);
  if (!d.report) return;
  auto res = client_.Patch(absl::StrCat("/api/v1/namespaces/", pod->metadata().namespace_(), "/pods/",
                                        pod->metadata().name(), "/status"),
                           kube::PatchType::kStrategicMerge, ReadinessPatch(*pod, now));
  std::string result = "success";
  if (!res.ok()) result = kube::IsConflict(res.status()) ? "conflict" : "error";
  if (reports_ != nullptr) reports_->Add({{"result", result}}).Increment();
  if (!res.ok()) {
    // A conflict means a newer pod version is on its way through the watch; it is decided again then.
    if (result == "error") {
      base::ProcessLogger().Warn("readiness report", {{"pod", key}, {"error", res.status().ToString()}});
    }
    return;
  }
  if (latency_ != nullptr) latency_->Observe(absl::ToDoubleSeconds(d.update_duration));
  if (opts_.events != nullptr) {
    kube::ObjectReference ref{.api_version = "v1", .kind = "Pod", .namespace_ = pod->metadata().namespace_(),
                              .name = pod->metadata().name(), .uid = pod->metadata().uid()};
    (void)opts_.events->Event(ref, "Normal", "InPlaceUpdateReady",
                              absl::StrCat("in-place update completed in ",
                                           absl::FormatDuration(absl::Trunc(d.update_duration, absl::Milliseconds(1))),
                                           " (reported by cloneset-agent on ", opts_.node, ")"));
  }
}

void ReadinessReporter::QueueRestarts(const pb::Pod& pod, const EnvRestartDecision& decision) {
  constexpr size_t kRememberedStops = 4096;
  kube::ObjectReference ref{.api_version = "v1", .kind = "Pod", .namespace_ = pod.metadata().namespace_(),
                            .name = pod.metadata().name(), .uid = pod.metadata().uid()};
  absl::MutexLock l(&mu_);
  for (const ContainerRestart& c : decision.restarts) {
    if (!stopped_.insert(c.container_id).second) continue;
    stopped_order_.push_back(c.container_id);
    if (stopped_order_.size() > kRememberedStops) {
      stopped_.erase(stopped_order_.front());
      stopped_order_.pop_front();
    }
    restarts_.push_back({ref, c, clock_.Now() + opts_.restart_delay});
  }
}

void ReadinessReporter::RunRestarts() {
  while (true) {
    PendingRestart next;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(this, &ReadinessReporter::HasRestarts));
      if (stopping_) return;
      next = std::move(restarts_.front());
      restarts_.pop_front();
    }
    const std::string key = absl::StrCat(next.pod.namespace_, "/", next.pod.name);
    {
      absl::MutexLock l(&mu_);
      // Queued in order, so each waits at most the delay; a stop ends the wait at once.
      const absl::Duration wait = next.not_before - clock_.Now();
      if (wait > absl::ZeroDuration() && mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait)) return;
    }
    // Still wanted? The pod may have gone, restarted or moved on meanwhile.
    const auto pod = informer_.Get(key);
    bool wanted = false;
    if (pod != nullptr && pod->metadata().uid() == next.pod.uid) {
      for (const ContainerRestart& c : DecideEnvRestarts(*pod).restarts) {
        wanted = wanted || c.container_id == next.container.container_id;
      }
    }
    if (!wanted) continue;
    if (opts_.events != nullptr) {
      (void)opts_.events->Event(next.pod, "Normal", "RestartingContainer",
                                absl::StrCat("restarting container ", next.container.container,
                                             ": its env reads pod metadata that an in-place update changed "
                                             "(cloneset-agent on ", opts_.node, ")"));
    }
    const absl::Status s = opts_.runtime->StopContainer(next.container.container_id, opts_.stop_timeout);
    if (restarts_total_ != nullptr) restarts_total_->Add({{"result", s.ok() ? "success" : "error"}}).Increment();
    if (s.ok()) {
      base::ProcessLogger().Info("stopped container for an env-from-metadata update",
                                 {{"pod", key}, {"container", next.container.container}});
      continue;
    }
    base::ProcessLogger().Warn("stopping container for an env-from-metadata update",
                               {{"pod", key}, {"container", next.container.container}, {"error", s.ToString()}});
    // Unimplemented (a runtime without StopContainer) will not change: the id stays remembered and is not retried.
    // Other errors are retried at the pod's next event or the informer's resync.
    if (!absl::IsUnimplemented(s)) {
      absl::MutexLock l(&mu_);
      stopped_.erase(next.container.container_id);
    }
  }
}

}  // namespace cloneset::agent
