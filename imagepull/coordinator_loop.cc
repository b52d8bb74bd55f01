#include "imagepull/coordinator_loop.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log.h"
#include "common/update_order.h"
#include "imagepull/coordinator.h"
#include "kube/api_status.h"
#include "kube/informer.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "snapshot/snapshot.h"

namespace cloneset::imagepull {
namespace {

using Json = nlohmann::json;

// On the executor's process logger; "component" tells the coordinator's lines from the reconciles'.
void LogError(std::string_view what, const absl::Status& s) {
  base::ProcessLogger().Warn(what, {{"component", std::string("imagepull-coordinator")}, {"error", s.ToString()}});
}

// Items of a LIST body, each re-serialised for the per-object decoders.
absl::StatusOr<std::vector<std::string>> Items(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array()) {
    if (j.is_object() && j.contains("items") && j["items"].is_null()) return std::vector<std::string>{};
    return absl::InvalidArgumentError("LIST answer has no items array");
  }
  std::vector<std::string> out;
  for (const Json& item : j["items"]) out.push_back(item.dump());
  return out;
}

// The owning CloneSet (found = false when it is gone).
absl::StatusOr<OwnerState> ReadOwner(kube::RestClient& client, const PullJob& job) {
  // A job without a controlling CloneSet (made by hand) is never "over": it stays until deleted.
  if (job.owner_name.empty()) return OwnerState{.found = true};
  std::string version = job.owner_api_version.empty() ? kGroupVersion : job.owner_api_version;
  auto body = client.Get(absl::StrCat("/apis/", version, "/namespaces/", job.namespace_, "/clonesets/", job.owner_name));
  if (absl::IsNotFound(body.status())) return OwnerState{};
  if (!body.ok()) return body.status();
  return ParseOwnerState(*body);
}

}  // namespace

Coordinator::Coordinator(kube::RestClient& client, CoordinatorOptions options)
    : client_(client), opts_(std::move(options)), clock_(opts_.clock ? *opts_.clock : base::RealClock::Get()) {
  if (opts_.registry != nullptr) {
    rounds_ = &prometheus::BuildCounter()
                   .Name("cloneset_imagepull_coordinator_rounds_total")
                   .Help("Pre-download coordinator rounds by result")
                   .Register(*opts_.registry);
    nodes_gauge_ = &prometheus::BuildGauge()
                        .Name("cloneset_imagepull_nodes")
                        .Help("Nodes of all ImagePullJobs by pull phase, as of the last coordinator round")
                        .Register(*opts_.registry);
  }
}

Coordinator::~Coordinator() { Stop(); }

absl::StatusOr<RoundStats> Coordinator::RunOnce() {
  RoundStats stats;
  const absl::Time now = clock_.Now();
  auto jobs_body = client_.List(absl::StrCat(kApiPrefix, "/imagepulljobs"), {});
  if (absl::IsNotFound(jobs_body.status())) {  // CRD not installed: pre-download is off
    stats.crd_missing = true;
    return stats;
  }
  if (!jobs_body.ok()) return jobs_body.status();
  auto job_items = Items(*jobs_body);
  if (!job_items.ok()) return job_items.status();
  auto nodes_body = client_.List(absl::StrCat(kApiPrefix, "/nodeimages"), {});
  std::map<std::string, NodeImage> node_images;
  if (nodes_body.ok()) {
    auto items = Items(*nodes_body);
    if (!items.ok()) return items.status();
    for (const std::string& item : *items) {
      auto ni = ParseNodeImage(item);
      if (ni.ok()) node_images[ni->node] = *std::move(ni);
      else LogError("skipping NodeImage", ni.status());
    }
  } else if (!absl::IsNotFound(nodes_body.status())) {
    return nodes_body.status();
  }

  std::set<std::string> live_uids;
  std::map<std::string, std::vector<PullRequest>> added;  // node -> new requests
  std::map<PullPhase, double> phase_counts;
  std::vector<std::pair<std::string, std::string>> status_writes;  // path, merge patch
  for (const std::string& item : *job_items) {
    auto parsed = ParsePullJob(item);
    if (!parsed.ok()) {
      LogError("skipping ImagePullJob", parsed.status());
      ++stats.errors;
      continue;
    }
    const PullJob& job = *parsed;
    if (job.deleting) continue;  // its requests go away with it
    auto owner = ReadOwner(client_, job);
    if (!owner.ok()) {
      LogError("reading the job's CloneSet", owner.status());
      live_uids.insert(job.uid);  // keep its requests until we know
      ++stats.errors;
      continue;
    }
    if (RolloutOver(job, *owner)) {
      // Cleanup (semantics §8): the job goes, and with it (below) its requests on every node.
      Json pre = {{"preconditions", {{"uid", job.uid}}}};
      auto del = client_.Delete(absl::StrCat(kApiPrefix, "/namespaces/", job.namespace_, "/imagepulljobs/", job.name),
                                pre.dump());
      if (!del.ok() && !absl::IsNotFound(del.status())) {
        LogError("deleting a finished ImagePullJob", del.status());
        live_uids.insert(job.uid);
        ++stats.errors;
      } else {
        ++stats.deleted;
      }
      continue;
    }
    live_uids.insert(job.uid);
    ++stats.jobs;
    JobInputs in{.job = &job, .updated_ready = UpdatedReadyFor(job, *owner), .now = now, .strategy = owner->strategy};
    kube::ListOptions lo;
    lo.label_selector = job.pod_selector.String();
    auto pods_body = client_.List(absl::StrCat("/api/v1/namespaces/", job.namespace_, "/pods"), lo);
    if (!pods_body.ok()) {
      LogError("listing pods", pods_body.status());
      ++stats.errors;
      continue;
    }
    auto pod_items = Items(*pods_body);
    if (!pod_items.ok()) continue;
    for (const std::string& p : *pod_items) {
      absl::StatusOr<pb::Pod> pod = snapshot::PodFromJson(p);
      if (pod.ok() && job.pod_selector.Matches(pod->metadata().labels())) in.pods.push_back(*std::move(pod));
    }
    for (const auto& [node, ni] : node_images) {
      NodeView view;
      if (const PullRequest* r = ni.RequestFor(job.uid)) view.request = *r;
      if (const PullReport* r = ni.ReportFor(job.uid)) view.report = *r;
      if (view.request || view.report) in.nodes[node] = std::move(view);
    }
    JobDecision d = DecideJob(in);
    for (const std::string& node : d.assign) added[node].push_back(RequestFor(job, now));
    stats.assigned += static_cast<int>(d.assign.size());
    for (const NodePullStatus& n : d.status.nodes) phase_counts[n.phase] += 1;

    if (!(d.status == job.status)) {
      Json patch = {{"metadata", {{"resourceVersion", job.resource_version}}}, {"status", JobStatusJson(d.status)}};
      status_writes.push_back({absl::StrCat(kApiPrefix, "/namespaces/", job.namespace_, "/imagepulljobs/", job.name,
                                            "/status"),
                               patch.dump()});
    }
    if (opts_.events != nullptr && !job.owner_name.empty()) {
      kube::ObjectReference ref{.api_version = job.owner_api_version,
                                .kind = job.owner_kind.empty() ? "CloneSet" : job.owner_kind,
                                .namespace_ = job.namespace_,
                                .name = job.owner_name,
                                .uid = job.owner_uid};
      for (const JobEvent& e : d.events) (void)opts_.events->Event(ref, e.type, e.reason, e.message);
    }
  }

  // Node specs: add the new requests, drop those of vanished jobs.
  std::set<std::string> touched;
  for (const auto& [node, ni] : node_images) touched.insert(node);
  for (const auto& [node, reqs] : added) touched.insert(node);
  for (const std::string& node : touched) {
    auto it = node_images.find(node);
    const std::vector<PullRequest> current = it == node_images.end() ? std::vector<PullRequest>{} : it->second.requests;
    auto add_it = added.find(node);
    const std::vector<PullRequest> desired =
        DesiredRequests(current, live_uids, add_it == added.end() ? std::vector<PullRequest>{} : add_it->second);
    if (desired == current) continue;
    const std::string path = absl::StrCat(kApiPrefix, "/nodeimages/", node);
    absl::Status s;
    if (it == node_images.end()) {
      Json obj = {{"apiVersion", kGroupVersion},
                  {"kind", "NodeImage"},
                  {"metadata", {{"name", node}, {"labels", {{"app.kubernetes.io/managed-by", "cloneset-executor"}}}}},
                  {"spec", {{"pulls", RequestsJson(desired)}}}};
      s = client_.Create(absl::StrCat(kApiPrefix, "/nodeimages"), obj.dump()).status();
    } else if (desired.empty()) {
      Json pre = {{"preconditions", {{"resourceVersion", it->second.resource_version}}}};
      s = client_.Delete(path, pre.dump()).status();
      if (absl::IsNotFound(s)) s = absl::OkStatus();
    } else {
      Json patch = {{"metadata", {{"resourceVersion", it->second.resource_version}}},
                    {"spec", {{"pulls", RequestsJson(desired)}}}};
      s = client_.Patch(path, kube::PatchType::kMerge, patch.dump()).status();
    }
    if (s.ok()) ++stats.node_writes;
    else {
      LogError(absl::StrCat("writing NodeImage ", node), s);
      ++stats.errors;
    }
  }
  // Statuses after the requests: a crash in between leaves a request the next round reports, never a status
  // claiming a pull nobody asked for.
  for (const auto& [path, patch] : status_writes) {
    auto w = client_.Patch(path, kube::PatchType::kMerge, patch);
    if (w.ok()) {
      ++stats.status_writes;
    } else {
      LogError("writing ImagePullJob status", w.status());
      ++stats.errors;
    }
  }
  if (nodes_gauge_ != nullptr) {
    for (PullPhase p : {PullPhase::kPending, PullPhase::kPulling, PullPhase::kSucceeded, PullPhase::kFailed}) {
      nodes_gauge_->Add({{"phase", std::string(PhaseName(p))}}).Set(phase_counts[p]);
    }
  }
  return stats;
}

void Coordinator::Start(std::function<bool()> active) {
  if (opts_.watch_jobs) {
    kube::InformerOptions io;
    io.path = absl::StrCat(kApiPrefix, "/imagepulljobs");
    io.clock = &clock_;
    const auto wake = [this] {
      absl::MutexLock l(&mu_);
      job_event_ = true;
    };
    using JobInformer = kube::Informer<std::string>;
    JobInformer::Handlers handlers;
    handlers.on_add = [wake](const JobInformer::Ptr&) { wake(); };
    handlers.on_update = [wake](const JobInformer::Ptr&, const JobInformer::Ptr&) { wake(); };
    handlers.on_delete = [wake](const JobInformer::Ptr&) { wake(); };
    jobs_ = std::make_unique<JobInformer>(
        client_, io, [](std::string_view) -> absl::StatusOr<std::string> { return std::string(); },
        std::move(handlers));
    jobs_->Start();
  }
  thread_ = std::thread([this, active = std::move(active)] {
    // Without the ImagePullJob CRD there is nothing to coordinate: ask again now and then (the CRD may come later)
    // rather than every period.
    constexpr absl::Duration kWithoutCrd = absl::Seconds(30);
    bool crd_missing = false;
    while (true) {
      // Idle: the watched jobs are listed and there is none, so nothing to coordinate until one comes (or a round's
      // own cleanup is due: that only follows a round with jobs). Without the watch (or before its first LIST, or
      // while it fails) a round every period, as the rounds themselves find out.
      const bool idle = jobs_ != nullptr && jobs_->HasSynced() && jobs_->List().empty();
      {
        absl::MutexLock l(&mu_);
        if (idle) {
          const auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || job_event_; };
          clock_.AwaitWithDeadline(&mu_, absl::Condition(&woken), absl::InfiniteFuture());
          if (stopping_) return;
        } else if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_),
                                           crd_missing ? std::max(opts_.period, kWithoutCrd) : opts_.period)) {
          return;
        }
        job_event_ = false;
      }
      if (active && !active()) continue;
      auto r = RunOnce();
      crd_missing = r.ok() && r->crd_missing;
      if (rounds_ != nullptr) {
        rounds_->Add({{"result", r.ok() && r->errors == 0 ? "success" : "error"}}).Increment();
      }
      if (!r.ok()) LogError("coordinator round", r.status());
    }
  });
}

void Coordinator::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  if (jobs_ != nullptr) jobs_->Stop();
}

}  // namespace cloneset::imagepull
