// cloneset-executor: the in-cluster CloneSet controller. Watches CloneSets and what they own, asks the planner
// for the next plan and applies it to the API server (see reconciler.h), sharded over replicas (shards.h).
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/daemon_main.h"
#include "base/endpoints.h"
#include "base/log.h"
#include "base/signals.h"
#include "executor/event_queue.h"
#include "executor/expectations.h"
#include "executor/informer_cache.h"
#include "executor/metrics.h"
#include "executor/readyz.h"
#include "executor/reconciler.h"
#include "executor/shards.h"
#include "executor/retry_backoff.h"
#include "executor/worker.h"
#include "executor/write_limit.h"
#include "kruise/keys.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"
#include "kube/workqueue.h"
#include "planner/client/grpc_planner_client.h"
#include "planapi/feature_gates.h"
#include "prometheus/registry.h"
#include "imagepull/coordinator_loop.h"  // image pre-download coordinator

ABSL_FLAG(std::string, kubeconfig, "", "kubeconfig file; empty: $KUBECONFIG, ~/.kube/config, then in-cluster");
ABSL_FLAG(std::string, planner_address, "dns:///127.0.0.1:7070",
          "gRPC target of the planner; a DNS name resolving to several replicas is balanced round-robin");
ABSL_FLAG(std::string, planner_tls_ca, "", "PEM CA of the planner's certificate (enables TLS)");
ABSL_FLAG(std::string, planner_tls_cert, "", "PEM client certificate for mTLS to the planner");
ABSL_FLAG(std::string, planner_tls_key, "", "PEM key of --planner_tls_cert");
ABSL_FLAG(int32_t, shards, 1, "Number of shards (one Lease each); CloneSets map to fnv(namespace/name) mod N");
ABSL_FLAG(std::string, lease_namespace, "cloneset-system", "Namespace of the shard and membership Leases");
ABSL_FLAG(std::string, cloneset_api_version, cloneset::executor::kCloneSetApiVersion,
          "Version CloneSets are read and written in: apps.kruise.io/v1beta1, the CRD's storage version (no "
          "conversion webhook on the way), or apps.kruise.io/v1alpha1 for a cluster whose CRD serves only that");
ABSL_FLAG(std::string, identity, "", "Lease holder identity (default: hostname_pid)");
ABSL_FLAG(int32_t, workers, 4, "Concurrent reconciles (different CloneSets)");
ABSL_FLAG(int32_t, apply_parallelism, 4,
          "API writes of one CloneSet's plan in flight at once (independent pods; 1 = one at a time, in plan order)");
ABSL_FLAG(bool, planner_pod_table, true,
          "Send a CloneSet's pods to the planner as PlanRequest.pod_table (compact, fast to parse); false sends "
          "PlanRequest.pods, for a planner that predates the pod table");
ABSL_FLAG(bool, planner_in_place_batches, true,
          "Let the planner start runs of in-place updates as one StartInPlaceUpdates action (expanded here into the "
          "same per-pod writes); false asks for per-pod actions");
ABSL_FLAG(double, qps, 0, "Client-side API request rate limit; 0 = unlimited (server-side priority and fairness)");
ABSL_FLAG(int32_t, burst, 0, "Client-side burst with --qps");
ABSL_FLAG(double, api_write_qps, 200,
          "Overall limit on the executor's writes to the API server (creates, patches, deletes, events), per second; "
          "0 = unlimited (also spelled --api-write-qps)");
ABSL_FLAG(int32_t, api_write_burst, 400, "Writes allowed at once above --api_write_qps (also spelled --api-write-burst)");
ABSL_FLAG(absl::Duration, retry_backoff_base, absl::Milliseconds(5),
          "A CloneSet whose reconcile failed waits this long before the next attempt, doubling per failure in a row "
          "(also spelled --retry-backoff-base); watch events do not cut the wait short, a spec change does");
ABSL_FLAG(absl::Duration, retry_backoff_max, absl::Minutes(2),
          "The longest wait of --retry_backoff_base's back-off (also spelled --retry-backoff-max)");
ABSL_FLAG(double, retry_backoff_jitter, 0.2,
          "Up to this fraction of each back-off wait is taken off at random, so that CloneSets refused together do "
          "not retry together; in [0, 1) (also spelled --retry-backoff-jitter)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:8080",
          "Prometheus /metrics address (port 0 = any); it answers /healthz and /readyz too. Empty: the "
          "--health_listen address serves /metrics");
ABSL_FLAG(std::string, health_listen, "127.0.0.1:8081",
          "/healthz and /readyz address (port 0 = any); it answers /metrics too, and the same address as "
          "--metrics_listen is one listener. Empty: the --metrics_listen address serves the probes");
ABSL_FLAG(absl::Duration, expectation_timeout, absl::Minutes(5),
          "How long a CloneSet waits for the cache to show the executor's writes before re-listing");
ABSL_FLAG(absl::Duration, readyz_failure_bound, absl::Seconds(10),
          "/readyz fails once every request to the API server, or to the planner, has failed for longer than this");
ABSL_FLAG(absl::Duration, lease_duration, absl::Seconds(15), "Shard Lease duration");
ABSL_FLAG(absl::Duration, renew_deadline, absl::Seconds(10), "Stop writing for a shard not renewed for this long");
ABSL_FLAG(absl::Duration, retry_period, absl::Seconds(2), "Lease acquire/renew period");
ABSL_FLAG(std::string, feature_gates, "",
          "Upstream OpenKruise's feature gates as kruise-manager takes them (also spelled --feature-gates): "
          "Name=true,Other=false; the CloneSet gates go to the planner with every plan request, the others are "
          "accepted with a warning; an unknown gate or a bad value stops the executor (docs/semantics.md 0.2)");
ABSL_FLAG(bool, cloneset_scaling_exclude_preparing_delete, false,
          "Upstream's --cloneset-scaling-exclude-preparing-delete (also spelled so): pods in PreparingDelete do "
          "not count as replicas when scaling, for every CloneSet");

namespace cloneset::executor {
namespace {

constexpr char kVersion[] = "0.1.0";

using base::LogLevel;

// The executor's lines: the process logger (base/log.h), fields beside msg.
void Log(base::LogLevel level, std::string_view msg, const base::LogFields& fields = {}) {
  base::ProcessLogger().Log(level, msg, fields);
}

class RecorderSink final : public EventSink {
 public:
  explicit RecorderSink(kube::EventRecorder& r) : recorder_(r) {}
  void Event(const pb::CloneSet& cs, std::string_view type, std::string_view reason,
             std::string_view message) override {
    kube::ObjectReference ref{cs.api_version().empty() ? kruise::kV1alpha1 : cs.api_version(),
                              "CloneSet",
                              cs.metadata().namespace_(),
                              cs.metadata().name(),
                              cs.metadata().uid(),
                              cs.metadata().resource_version()};
    if (auto s = recorder_.Event(ref, type, reason, message); !s.ok()) {
      Log(LogLevel::kWarn, "event not recorded", {{"reason", std::string(reason)}, {"error", s.ToString()}});
    }
  }

 private:
  kube::EventRecorder& recorder_;
};

std::string DefaultIdentity() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, "_", getpid());
}

absl::Status Run(const base::Daemon& daemon) {
  // Upstream's gates, refused before anything starts: an executor that would plan differently from what it was
  // told must not run.
  const absl::StatusOr<planapi::FeatureGateSettings> gates = planapi::ParseFeatureGates(
      absl::GetFlag(FLAGS_feature_gates), absl::GetFlag(FLAGS_cloneset_scaling_exclude_preparing_delete));
  if (!gates.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid feature gates: the executor does not start: ", gates.status().message()));
  }
  for (const std::string& warning : gates->warnings) {
    Log(LogLevel::kWarn, "feature gate accepted without effect", {{"flag", "feature_gates"}, {"detail", warning}});
  }
  Log(LogLevel::kInfo, "feature gates", {{"gates", planapi::DescribeGates(*gates)}});

  auto config = kube::LoadClientConfig(kube::ConfigSources::FromEnvironment(absl::GetFlag(FLAGS_kubeconfig)));
  if (!config.ok()) {
    return base::StartupError("no cluster configuration (--kubeconfig)", config.status());
  }
  auto registry = std::make_shared<prometheus::Registry>();
  kube::RestClientOptions rest_opts;
  rest_opts.qps = absl::GetFlag(FLAGS_qps) > 0 ? absl::GetFlag(FLAGS_qps) : -1;
  rest_opts.burst = std::max(1, absl::GetFlag(FLAGS_burst));
  // The identity in the comment part lets API server request logs tell replicas apart (fault tests check that
  // no two replicas write for one CloneSet at once); the product token, the metrics label, stays the same.
  const std::string identity =
      absl::GetFlag(FLAGS_identity).empty() ? DefaultIdentity() : absl::GetFlag(FLAGS_identity);
  rest_opts.user_agent = absl::StrCat("cloneset-executor/", kVersion, " (", identity, ")");
  rest_opts.registry = registry.get();
  auto http_client = kube::NewHttpRestClient(*config, rest_opts);
  if (!http_client.ok()) {
    return base::StartupError("cannot create API client", http_client.status());
  }
  // Every API request's outcome feeds /readyz (readyz.h): a lost API server makes the executor not ready.
  ContactTracker api_contact(&base::RealClock::Get());
  ContactTracker planner_contact(&base::RealClock::Get());
  absl::StatusOr<std::unique_ptr<kube::RestClient>> client =
      NewTrackedRestClient(*std::move(http_client), &api_contact);
  PlannerContact planner_outcomes(&planner_contact);
  ::cloneset::planner::client::GrpcPlannerOptions planner_opts;
  planner_opts.address = absl::GetFlag(FLAGS_planner_address);
  planner_opts.tls_ca = absl::GetFlag(FLAGS_planner_tls_ca);
  planner_opts.tls_cert = absl::GetFlag(FLAGS_planner_tls_cert);
  planner_opts.tls_key = absl::GetFlag(FLAGS_planner_tls_key);
  planner_opts.health_probe = true;  // /readyz knows the planner before the first reconcile calls it
  planner_opts.observer = &planner_outcomes;
  auto planner = ::cloneset::planner::client::NewGrpcPlannerClient(planner_opts);
  if (!planner.ok()) {
    return base::StartupError("cannot create planner client", planner.status());
  }
  const RetryBackoffOptions backoff_opts{.base = absl::GetFlag(FLAGS_retry_backoff_base),
                                         .cap = absl::GetFlag(FLAGS_retry_backoff_max),
                                         .jitter = absl::GetFlag(FLAGS_retry_backoff_jitter)};
  if (absl::Status s = ValidateBackoff(backoff_opts); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid back-off: ", s.message()));
  }
  if (absl::GetFlag(FLAGS_api_write_qps) < 0 || absl::GetFlag(FLAGS_api_write_burst) < 1) {
    return absl::InvalidArgumentError("--api_write_qps must be >= 0 and --api_write_burst >= 1");
  }
  const int shard_count = absl::GetFlag(FLAGS_shards);
  if (shard_count < 1) {
    return absl::InvalidArgumentError("--shards must be >= 1");
  }

  ExecutorMetrics metrics(*registry);
  metrics.FeatureGates(gates->honoured);
  kube::WorkQueue queue({.name = "cloneset", .registry = registry.get()});
  const std::string cloneset_api_version = absl::GetFlag(FLAGS_cloneset_api_version);
  if (cloneset_api_version != kruise::kV1beta1 && cloneset_api_version != kruise::kV1alpha1) {
    return absl::InvalidArgumentError(absl::StrCat("--cloneset_api_version must be ", kruise::kV1beta1, " or ",
                                                   kruise::kV1alpha1, ", got \"", cloneset_api_version, "\""));
  }
  InformerCache cache(**client, [&queue](const std::string& key) { queue.Add(key); }, absl::Hours(10),
                      cloneset_api_version);
  ShardOptions shard_opts;
  shard_opts.shards = shard_count;
  shard_opts.lease_namespace = absl::GetFlag(FLAGS_lease_namespace);
  shard_opts.identity = identity;
  shard_opts.lease_duration = absl::GetFlag(FLAGS_lease_duration);
  shard_opts.renew_deadline = absl::GetFlag(FLAGS_renew_deadline);
  shard_opts.retry_period = absl::GetFlag(FLAGS_retry_period);
  shard_opts.registry = registry.get();
  ShardManager shards(**client, shard_opts, [&](int shard, bool gained) {
    // Not gained: a worker skipped one of its keys while the Lease's renew deadline had passed (shards.h).
    Log(LogLevel::kInfo, gained ? "shard acquired" : "shard held again after a lapse: its CloneSets enqueued",
        {{"shard", int64_t{shard}}});
    for (const auto& key : cache.CloneSetKeys()) {
      if (ShardOf(key, shard_count) == shard) queue.Add(key);
    }
  });
  kube::EventRecorderOptions ev_opts;
  ev_opts.host = shard_opts.identity;
  // Reconciles and events write through the overall write limit (write_limit.h); the shard Leases do not: their
  // renewals must not queue behind pod writes.
  WriteRateLimitedRestClient write_client(**client, absl::GetFlag(FLAGS_api_write_qps),
                                          absl::GetFlag(FLAGS_api_write_burst), base::RealClock::Get());
  kube::EventRecorder recorder(write_client, ev_opts);
  RecorderSink recorder_sink(recorder);
  // The plans' events are written by a thread of their own (event_queue.h): a plan's per-pod events do not hold
  // the CloneSet's next plan. 10 000 waiting events (a few MB) before a worker waits for the writes.
  QueuedEventSink sink(recorder_sink, 10000);
  Expectations expectations(absl::GetFlag(FLAGS_expectation_timeout));
  const pb::FeatureGates& feature_gates = gates->gates;
  // The resize subresource (Kubernetes 1.32 and later), asked once: without it resources changes recreate pods.
  bool serves_pod_resize = true;
  if (feature_gates.in_place_workload_vertical_scaling()) {
    const absl::StatusOr<bool> served = kube::ServesResource(**client, "/api/v1", "pods/resize");
    if (served.ok()) serves_pod_resize = *served;
    if (!served.ok() || !serves_pod_resize) {
      Log(LogLevel::kWarn,
          served.ok() ? "the API server does not serve pods/resize: resources changes recreate pods"
                      : "cannot read the API server's discovery: pods/resize is assumed until a resize answers 404",
          {{"gate", "InPlaceWorkloadVerticalScaling"}, {"error", served.ok() ? "" : served.status().ToString()}});
    }
  }
  absl::Mutex jitter_mu;
  absl::BitGen jitter_gen;
  RetryBackoff backoff(backoff_opts, [&] {
    absl::MutexLock l(&jitter_mu);
    return absl::Uniform(jitter_gen, 0.0, 1.0);
  });
  Reconciler reconciler({.cache = &cache,
                         .planner = planner->get(),
                         .client = &write_client,
                         .events = &sink,
                         .expectations = &expectations,
                         .clock = &base::RealClock::Get(),
                         .metrics = &metrics,
                         .owns = [&shards](const std::string& key) { return shards.Owns(key); },
                         .apply_parallelism = std::max(1, absl::GetFlag(FLAGS_apply_parallelism)),
                         .planner_pod_table = absl::GetFlag(FLAGS_planner_pod_table),
                         .planner_in_place_batches = absl::GetFlag(FLAGS_planner_in_place_batches),
                         .feature_gates = feature_gates,
                         .serves_pod_resize = serves_pod_resize,
                         .pod_table_fallback = [](const std::string& key, const absl::Status& error) {
                           Log(LogLevel::kWarn, "pods sent as objects instead of a pod table (logged once per cause)",
                               {{"key", key}, {"error", error.ToString()}});
                         },
                         .backoff = &backoff});

  // Endpoints first, so probes answer while the caches sync.
  std::atomic<bool> stopping{false};
  auto endpoints = base::ServeDaemonEndpoints(
      absl::GetFlag(FLAGS_metrics_listen), absl::GetFlag(FLAGS_health_listen), registry,
      [] { return std::string(); },
      [&]() -> std::string {
        return ReadinessProblem({.stopping = stopping,
                                 .caches_synced = cache.HasSynced(),
                                 .api_server = api_contact.Get(),
                                 .planner = planner_contact.Get()},
                                absl::Now(), absl::GetFlag(FLAGS_readyz_failure_bound));
      });
  if (!endpoints.ok()) return endpoints.status();

  cache.Start();
  shards.Start();
  // Image pre-download: one coordinator per cluster, on whichever executor holds shard 0 (docs/architecture.md).
  imagepull::Coordinator predownload(**client, {.watch_jobs = true, .events = &recorder, .registry = registry.get()});
  predownload.Start([&shards] { return shards.OwnsShard(0); });
  std::thread gauges([&] {
    bool nodes_logged = false;
    bool classes_logged = false;
    while (!stopping) {
      if (!nodes_logged) {
        // Once: without Nodes (typically no RBAC for them) the spread ranker of scale-in is not available.
        if (absl::Status s = cache.NodesError(); !s.ok()) {
          Log(LogLevel::kWarn,
              "cannot list nodes; scale-in of CloneSets with topologySpreadConstraints ranks by node only",
              {{"error", s.ToString()}});
          nodes_logged = true;
        }
      }
      if (!classes_logged) {
        // Once: without StorageClasses no claim is expanded when a volumeClaimTemplate grows (semantics §4.11).
        if (absl::Status s = cache.StorageClassesError(); !s.ok()) {
          Log(LogLevel::kWarn, "cannot list storageclasses; claims are not expanded when a volumeClaimTemplate grows",
              {{"error", s.ToString()}});
          classes_logged = true;
        }
      }
      metrics.Shards(shards.owned(), shard_count);
      metrics.ExpectationsPending(expectations.pending_keys());
      absl::SleepFor(absl::Milliseconds(500));
    }
  });
  const WorkerDeps worker{.queue = &queue,
                          .reconcile = [&](const std::string& key) { return reconciler.Reconcile(key); },
                          .synced = [&] { return cache.HasSynced(); },
                          .clock = &base::RealClock::Get(),
                          .metrics = &metrics,
                          .failed = [](const std::string& key, const absl::Status& error) {
                            Log(LogLevel::kWarn, "reconcile failed", {{"key", key}, {"error", error.ToString()}});
                          }};
  std::vector<std::thread> workers;
  for (int i = 0; i < std::max(1, absl::GetFlag(FLAGS_workers)); ++i) {
    workers.emplace_back([&] { RunWorker(worker); });
  }
  Log(LogLevel::kInfo, "started", {{"identity", shard_opts.identity}, {"shards", int64_t{shard_count}},
                                   {"planner", planner_opts.address}, {"server", config->server}});

  const std::unique_ptr<base::ShutdownDeadline> deadline = daemon.WaitForStop();
  stopping = true;
  queue.ShutDown();  // workers finish the reconcile (and its writes) in flight
  for (auto& w : workers) w.join();
  sink.Stop();  // the events of the last plans are written before the shard is released
  predownload.Stop();
  shards.Stop(/*release=*/true);
  cache.Stop();
  gauges.join();
  (*endpoints)->Stop();
  deadline->Disarm();
  Log(LogLevel::kInfo, "stopped");
  return absl::OkStatus();
}

}  // namespace
}  // namespace cloneset::executor

int main(int argc, char** argv) {
  cloneset::base::DaemonSpec spec;
  spec.usage = "cloneset-executor: applies CloneSet plans from the planner to the API server.";
  spec.flag_dirs = {"executor/"};
  // kruise-manager's spellings, so that its flags carry over as they are, and the dashed spelling of the flags that
  // bound the executor's load on the API server, as kube components spell theirs.
  spec.aliases = {{"feature-gates", "feature_gates"},
                  {"cloneset-scaling-exclude-preparing-delete", "cloneset_scaling_exclude_preparing_delete"},
                  {"api-write-qps", "api_write_qps"},
                  {"api-write-burst", "api_write_burst"},
                  {"retry-backoff-base", "retry_backoff_base"},
                  {"retry-backoff-max", "retry_backoff_max"},
                  {"retry-backoff-jitter", "retry_backoff_jitter"}};
  // The Deployment's terminationGracePeriodSeconds: the reconciles in flight finish and the Leases are released.
  spec.shutdown_grace = absl::Seconds(30);
  return cloneset::base::DaemonMain(argc, argv, spec, cloneset::executor::Run);
}
