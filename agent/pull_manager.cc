#include "agent/pull_manager.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "agent/docker_auth.h"
#include "agent/puller.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace cloneset::agent {

using imagepull::NodeImage;
using imagepull::PullPhase;
using imagepull::PullReport;
using imagepull::PullRequest;

namespace {
// The agent's process logger (main sets component cloneset-agent).
void Log(base::LogLevel level, std::string_view msg, const base::LogFields& fields) {
  base::ProcessLogger().Log(level, msg, fields);
}
}  // namespace

PullPlan DecidePulls(const NodeImage& node, const std::set<std::string>& running_uids, int max_concurrent,
                     absl::Time now) {
  PullPlan plan;
  int busy = static_cast<int>(running_uids.size());
  for (const PullRequest& req : node.requests) {
    const PullReport* prev = node.ReportFor(req.job_uid);
    PullReport r = prev != nullptr ? *prev : PullReport{.job = req.job, .job_uid = req.job_uid, .image = req.image};
    if (!imagepull::IsTerminal(r.phase) && !running_uids.contains(req.job_uid)) {
      if (busy < max_concurrent) {
        plan.start.push_back(req);
        ++busy;
        r.phase = PullPhase::kPulling;
        r.start_time = now;  // this run's timeout starts now (also after a restart)
      } else {
        r.phase = PullPhase::kPending;  // queued behind the node's cap
        r.start_time = absl::InfinitePast();
      }
    }
    plan.reports.push_back(std::move(r));
  }
  return plan;
}

PullMetrics::PullMetrics(prometheus::Registry* registry) {
  if (registry == nullptr) return;
  auto& pulls = prometheus::BuildCounter()
                    .Name("cloneset_agent_image_pulls_total")
                    .Help("Pre-download pulls by result (success, already_present, failure)")
                    .Register(*registry);
  success = &pulls.Add({{"result", "success"}});
  already_present = &pulls.Add({{"result", "already_present"}});
  failure = &pulls.Add({{"result", "failure"}});
  duration = &prometheus::BuildHistogram()
                  .Name("cloneset_agent_image_pull_duration_seconds")
                  .Help("Duration of pre-download pulls, retries included")
                  .Register(*registry)
                  .Add({}, prometheus::Histogram::BucketBoundaries{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800});
  in_flight = &prometheus::BuildGauge()
                   .Name("cloneset_agent_image_pulls_in_flight")
                   .Help("Pulls running on this node now")
                   .Register(*registry)
                   .Add({});
  bytes = &prometheus::BuildCounter()
               .Name("cloneset_agent_image_pull_bytes_total")
               .Help("Bytes of pulled images as the runtime reports their size")
               .Register(*registry)
               .Add({});
}

PullManager::PullManager(NodeImageApi& api, ImageService& cri, Options options)
    : api_(api),
      cri_(cri),
      opts_(options),
      clock_(opts_.clock != nullptr ? *opts_.clock : base::RealClock::Get()),
      metrics_(opts_.registry) {}

PullManager::~PullManager() { Stop(); }

int PullManager::running() const {
  absl::MutexLock l(&mu_);
  return static_cast<int>(running_.size());
}

absl::Status PullManager::Sync() {
  absl::MutexLock w(&write_mu_);
  auto node = api_.Get();
  if (absl::IsNotFound(node.status())) return absl::OkStatus();
  if (!node.ok()) return node.status();
  PullPlan plan;
  {
    absl::MutexLock l(&mu_);
    if (stopping_) return absl::OkStatus();
    plan = DecidePulls(*node, running_, opts_.max_concurrent, clock_.Now());
    for (const PullRequest& r : plan.start) running_.insert(r.job_uid);
  }
  absl::Status s = absl::OkStatus();
  if (plan.reports != node->reports) s = api_.WriteReports(*node, plan.reports);
  if (!s.ok()) {
    absl::MutexLock l(&mu_);
    for (const PullRequest& r : plan.start) running_.erase(r.job_uid);
    return s;  // nothing started: the next sync re-reads and decides again
  }
  absl::MutexLock l(&mu_);
  for (const PullRequest& r : plan.start) workers_.emplace_back([this, r] { Work(r); });
  return absl::OkStatus();
}

bool PullManager::SleepUnlessStopped(absl::Duration d) {
  absl::MutexLock l(&mu_);
  return !clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), d);
}

void PullManager::Work(PullRequest req) {
  if (metrics_.in_flight) metrics_.in_flight->Increment();
  const absl::Time start = clock_.Now();
  std::optional<RegistryAuth> auth;
  std::string auth_error;
  for (const std::string& secret : req.pull_secrets) {
    // Only the request's namespace (the CloneSet's), only the named Secrets: the agent's Role allows no more.
    auto body = api_.GetSecret(req.secret_namespace, secret);
    if (!body.ok()) {
      auth_error = body.status().ToString();
      continue;
    }
    auto a = AuthFromSecret(*body, req.image);
    if (!a.ok()) auth_error = a.status().ToString();
    else if (a->has_value()) {
      auth = **a;
      break;
    }
  }
  if (!auth_error.empty() && !auth.has_value()) {
    Log(base::LogLevel::kWarn, "no usable pull secret, pulling anonymously", {{"image", req.image}, {"error", auth_error}});
  }
  PullResult result = PullWithRetries(cri_, req.image, auth, absl::Seconds(req.timeout_seconds), clock_,
                                      [this](absl::Duration d) { return SleepUnlessStopped(d); });
  if (metrics_.in_flight) metrics_.in_flight->Decrement();
  bool stopping;
  {
    absl::MutexLock l(&mu_);
    stopping = stopping_;
  }
  if (stopping && !result.ok) {  // abandoned: the next agent re-runs it
    absl::MutexLock l(&mu_);
    running_.erase(req.job_uid);
    return;
  }
  if (metrics_.duration) metrics_.duration->Observe(absl::ToDoubleSeconds(clock_.Now() - start));
  if (result.ok && result.already_present && metrics_.already_present) metrics_.already_present->Increment();
  if (result.ok && !result.already_present && metrics_.success) {
    metrics_.success->Increment();
    metrics_.bytes->Increment(static_cast<double>(result.size));
  }
  if (!result.ok && metrics_.failure) metrics_.failure->Increment();
  Log(result.ok ? base::LogLevel::kInfo : base::LogLevel::kWarn, result.ok ? "pulled" : "pull failed",
      {{"image", req.image}, {"job", req.job}, {"attempts", int64_t{result.attempts}},
       {"already_present", result.already_present}, {"message", result.message}});
  PullReport report{.job = req.job,
                    .job_uid = req.job_uid,
                    .image = req.image,
                    .phase = result.ok ? PullPhase::kSucceeded : PullPhase::kFailed,
                    .image_id = result.image_id,
                    .message = result.message,
                    .attempts = result.attempts,
                    .start_time = start,
                    .completion_time = clock_.Now()};
  for (int i = 0; i < 10; ++i) {
    absl::Status s = Report(report);
    if (s.ok()) break;
    Log(base::LogLevel::kWarn, "writing the pull report", {{"error", s.ToString()}});
    if (!SleepUnlessStopped(Backoff(i + 1))) break;
  }
  {
    absl::MutexLock l(&mu_);
    running_.erase(req.job_uid);
  }
  Notify();  // a slot is free
}

absl::Status PullManager::Report(const PullReport& report) {
  absl::MutexLock w(&write_mu_);
  auto node = api_.Get();
  if (!node.ok()) return node.status();
  if (node->RequestFor(report.job_uid) == nullptr) return absl::OkStatus();  // job gone meanwhile
  std::vector<PullReport> reports;
  bool found = false;
  for (const PullRequest& req : node->requests) {
    if (req.job_uid == report.job_uid) {
      reports.push_back(report);
      found = true;
    } else if (const PullReport* r = node->ReportFor(req.job_uid)) {
      reports.push_back(*r);
    }
  }
  if (!found) reports.push_back(report);
  return api_.WriteReports(*node, reports);
}

void PullManager::Notify() {
  absl::MutexLock l(&mu_);
  notified_ = true;
}

void PullManager::Start() {
  loop_ = std::thread([this] {
    while (true) {
      {
        absl::MutexLock l(&mu_);
        clock_.AwaitWithTimeout(&mu_, absl::Condition(this, &PullManager::Woken), opts_.resync);
        if (stopping_) return;
        notified_ = false;
      }
      if (absl::Status s = Sync(); !s.ok()) {
        Log(base::LogLevel::kWarn, "sync of the node's pull requests", {{"error", s.ToString()}});
      }
    }
  });
}

void PullManager::Stop() {
  std::vector<std::thread> workers;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    workers.swap(workers_);
  }
  if (loop_.joinable()) loop_.join();
  for (std::thread& t : workers) t.join();
}

}  // namespace cloneset::agent
