// One executor reconcile of a CloneSet of 10 000 and 100 000 pods (./run bench reconcile), from a cache filled
// through the executor's real decode path: the pods are served as the API server sends them (a paged LIST of pod
// JSON) to an InformerCache, which decodes and indexes them as in production. The planner runs in this process,
// called as over the wire (the request serialized, parsed onto an arena, planned, the response serialized and
// parsed back; no transport). Writes go to a recording client.
//
//  * BM_ReconcileIdle: every pod updated and ready, the status what the planner computes: snapshot -> request ->
//    plan -> no write (the benchmark fails if a reconcile writes anything).
//  * BM_ReconcileUntilFirstWrite: a CloneSet mid-rollout (planner/bench/rollout_snapshot.h); the time from the
//    start of the reconcile until its first write is sent. The recording client then gives up the shard, so the
//    rest of the plan is not applied (the executor checks the shard before every write).
//  * the breakdown of one reconcile: BM_Snapshot (cache -> PlanRequest, the pod table assembled from the rows the
//    cache keeps, executor/pod_rows.h; BM_SnapshotFromScratch copies and encodes every pod instead), BM_Serialize
//    (the request's bytes as the gRPC client sends them: a cached table's bytes as they are; BM_SerializeWhole
//    serializes the whole message instead), BM_ParseRequest (the planner side parsing them onto an arena), BM_PlanInProcess (the
//    plan itself) and BM_PlanWire (the whole planner call: serialize, parse, plan, the response back). Apply's
//    share until the first write is what BM_ReconcileUntilFirstWrite adds to BM_Snapshot and BM_PlanWire.
//  * BM_ApplyPrepExpandWhole / BM_ApplyPrepFirstStage: Apply's work on the mid-rollout plan before its first write,
//    the plan expanded and scheduled whole (before) against the applier's first stage over the batched plan.
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/time_format.h"
#include "base/testing/fake_clock.h"
#include "benchmark/benchmark.h"
#include "executor/expectations.h"
#include "executor/informer_cache.h"
#include "executor/interfaces.h"
#include "executor/reconciler.h"
#include "google/protobuf/arena.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "kube/rest_client.h"
#include "nlohmann/json.hpp"
#include "planner/bench/rollout_snapshot.h"
#include "planner/client/grpc_planner_client.h"
#include "planapi/in_place_batches.h"
#include "planapi/plan_schedule.h"
#include "planner/plan.h"

// The allocator options of the cloneset-executor binary's neighbour, the planner (planner/service/main.cc), so the
// in-process plan is timed as the service runs it.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}

namespace cloneset::executor {
namespace {

using json = nlohmann::json;
using ::cloneset::planner::client::PlanRequestBuffer;

std::string Rfc3339(const google::protobuf::Timestamp& ts) {
  return base::FormatTime(absl::FromUnixSeconds(ts.seconds()));
}

// The pod as the API server serves it: the fields the decoder reads plus the usual ones it skips (volumes,
// resources, IPs, QoS, container state), so the decode pays for a realistic document.
json PodJson(const pb::Pod& pod) {
  const pb::ObjectMeta& m = pod.metadata();
  json meta = {{"name", m.name()},
               {"namespace", m.namespace_()},
               {"uid", m.uid()},
               {"resourceVersion", m.resource_version()},
               {"creationTimestamp", Rfc3339(m.creation_timestamp())},
               {"labels", json::object()},
               {"generateName", "bench-"}};
  for (const auto& [k, v] : m.labels()) meta["labels"][k] = v;
  if (!m.annotations().empty()) {
    for (const auto& [k, v] : m.annotations()) meta["annotations"][k] = v;
  }
  for (const auto& o : m.owner_references()) {
    meta["ownerReferences"].push_back({{"apiVersion", o.api_version()},
                                       {"kind", o.kind()},
                                       {"name", o.name()},
                                       {"uid", o.uid()},
                                       {"controller", o.controller()},
                                       {"blockOwnerDeletion", o.block_owner_deletion()}});
  }
  json spec = {{"nodeName", pod.node_name()},
               {"restartPolicy", "Always"},
               {"terminationGracePeriodSeconds", 30},
               {"dnsPolicy", "ClusterFirst"},
               {"serviceAccountName", "default"},
               {"schedulerName", "default-scheduler"},
               {"volumes", json::array({{{"name", "kube-api-access-x1"},
                                         {"projected", {{"defaultMode", 420},
                                                        {"sources", json::array({{{"serviceAccountToken",
                                                                                   {{"expirationSeconds", 3607},
                                                                                    {"path", "token"}}}}})}}}}})}};
  for (const auto& g : pod.readiness_gates()) spec["readinessGates"].push_back({{"conditionType", g}});
  for (const auto& c : pod.containers()) {
    spec["containers"].push_back(
        {{"name", c.name()},
         {"image", c.image()},
         {"imagePullPolicy", "IfNotPresent"},
         {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}},
         {"terminationMessagePath", "/dev/termination-log"},
         {"terminationMessagePolicy", "File"},
         {"volumeMounts", json::array({{{"name", "kube-api-access-x1"},
                                        {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                                        {"readOnly", true}}})}});
  }
  json status = {{"phase", pod.phase()}, {"hostIP", "10.0.0.1"}, {"podIP", "10.1.0.1"}, {"qosClass", "Burstable"},
                 {"startTime", Rfc3339(m.creation_timestamp())}};
  for (const auto& c : pod.conditions()) {
    json cj = {{"type", c.type()}, {"status", c.status()}, {"lastProbeTime", nullptr}};
    if (c.has_last_transition_time()) cj["lastTransitionTime"] = Rfc3339(c.last_transition_time());
    if (!c.reason().empty()) cj["reason"] = c.reason();
    status["conditions"].push_back(cj);
  }
  for (const auto& s : pod.container_statuses()) {
    status["containerStatuses"].push_back(
        {{"name", s.name()},
         {"image", s.image()},
         {"imageID", s.image_id()},
         {"containerID", s.container_id()},
         {"ready", s.ready()},
         {"started", true},
         {"restartCount", s.restart_count()},
         {"state", {{"running", {{"startedAt", Rfc3339(m.creation_timestamp())}}}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}, {"status", status}};
}

// The API server for the informers (a paged LIST of the pods, nothing else, and watches that stay open until the
// informer stops) and the recorder of the reconcile's writes.
class BenchApiServer final : public kube::RestClient {
 public:
  explicit BenchApiServer(const std::vector<const pb::Pod*>& pods) {
    for (const pb::Pod* p : pods) pod_json_.push_back(PodJson(*p).dump());
  }

  absl::StatusOr<kube::HttpResponse> Do(std::string_view, std::string_view, std::string_view,
                                        std::string_view) override {
    return absl::UnimplementedError("the benchmark's API server answers the typed calls only");
  }
  absl::Status Watch(std::string_view, const std::function<bool(std::string_view)>&,
                     kube::CancelToken* cancel) override {
    auto stopped = std::make_shared<absl::Notification>();
    if (!cancel->OnCancel([stopped] { stopped->Notify(); })) return absl::OkStatus();
    stopped->WaitForNotification();
    cancel->ClearOnCancel();
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> List(std::string_view path, const kube::ListOptions& opts) override {
    if (path != "/api/v1/pods") return std::string(R"({"metadata":{"resourceVersion":"1"},"items":[]})");
    const size_t begin = opts.continue_token.empty() ? 0 : std::stoul(opts.continue_token);
    const size_t end = opts.limit > 0 ? std::min(pod_json_.size(), begin + static_cast<size_t>(opts.limit))
                                      : pod_json_.size();
    std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5000000")";
    if (end < pod_json_.size()) absl::StrAppend(&body, R"(,"continue":")", end, "\"");
    body += R"(},"items":[)";
    for (size_t i = begin; i < end; ++i) {
      if (i > begin) body += ',';
      body += pod_json_[i];
    }
    body += "]}";
    return body;
  }
  absl::StatusOr<std::string> Get(std::string_view) override { return Written(); }
  absl::StatusOr<std::string> Create(std::string_view, std::string_view) override { return Written(); }
  absl::StatusOr<std::string> Update(std::string_view, std::string_view) override { return Written(); }
  absl::StatusOr<std::string> Patch(std::string_view, kube::PatchType, std::string_view) override {
    return Written();
  }
  absl::StatusOr<std::string> Delete(std::string_view, std::string_view) override { return Written(); }

  // Starts recording: the first write's time, and the shard given up at it.
  void Arm() {
    writes_ = 0;
    owned_ = true;
  }
  bool owned() const { return owned_.load(); }
  int writes() const { return writes_.load(); }
  absl::Time first_write() const { return first_write_; }

 private:
  std::string Written() {
    if (writes_++ == 0) {
      first_write_ = absl::Now();
      owned_ = false;
    }
    return R"({"metadata":{"resourceVersion":"9999999"}})";
  }

  std::vector<std::string> pod_json_;
  std::atomic<int> writes_{0};
  std::atomic<bool> owned_{true};
  absl::Time first_write_;
};

// The informer cache's pods; the CloneSet and its revisions as the benchmark built them (they are a handful of
// objects; the pods are what scales).
class BenchCache final : public ClusterCache {
 public:
  BenchCache(InformerCache& pods, std::shared_ptr<const pb::CloneSet> cs, std::vector<pb::ControllerRevision> revs)
      : pods_(pods), cs_(std::move(cs)), revisions_(std::move(revs)) {}
  std::shared_ptr<const pb::CloneSet> GetCloneSet(const std::string&) override { return cs_; }
  std::vector<pb::Pod> PodsOwnedBy(const std::string& ns, const std::string& uid) override {
    return pods_.PodsOwnedBy(ns, uid);
  }
  planapi::SnapshotPods PodSnapshot(const std::string& ns, const std::string& uid, bool with_table) override {
    return pods_.PodSnapshot(ns, uid, with_table);
  }
  std::vector<pb::PersistentVolumeClaim> PvcsOwnedBy(const std::string&, const std::string&) override { return {}; }
  std::vector<pb::ControllerRevision> RevisionsOwnedBy(const std::string&, const std::string&) override {
    return revisions_;
  }
  Observed Lookup(ObjectKind kind, const std::string& ns, const std::string& name) override {
    return pods_.Lookup(kind, ns, name);
  }
  absl::StatusOr<std::vector<pb::Pod>> ListPodsFresh(const std::string&, const std::string&) override {
    return absl::UnimplementedError("no expectation leaks in the benchmark");
  }
  std::vector<pb::Node> NodesNamed(const std::vector<std::string>&) override { return {}; }
  bool HasSynced() override { return true; }

 private:
  InformerCache& pods_;
  std::shared_ptr<const pb::CloneSet> cs_;
  std::vector<pb::ControllerRevision> revisions_;
};

class NoEvents final : public EventSink {
 public:
  void Event(const pb::CloneSet&, std::string_view, std::string_view, std::string_view) override {}
};

[[noreturn]] void Die(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::abort();
}

// The arena the planner side parses a request and builds its response on, as the service does
// (planner/service/arena_allocator.h).
google::protobuf::ArenaOptions PlannerArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 << 10;
  options.max_block_size = 8 << 20;
  return options;
}

// The planner side of a call: the request's bytes parsed onto an arena, as the service parses them
// (planner/service/planner_service.cc: a grpc::ByteBuffer read through its slices, no flattening copy).
bool ParseRequest(const grpc::ByteBuffer& bytes, pb::PlanRequest* request) {
  grpc::ByteBuffer copy(bytes);  // shares the slices; the reader needs a mutable buffer
  grpc::ProtoBufferReader reader(&copy);
  return reader.status().ok() && request->ParseFromZeroCopyStream(&reader);
}

// The planner in this process, called as over the wire: the request's bytes made as the executor's gRPC client
// sends them (planner/client/grpc_planner_client.cc: RequestWithPods::Serialize, a kept pod table's bytes as they
// are, in a grpc::ByteBuffer), parsed onto an arena as the service parses them, planned, and the response serialized and
// parsed back. The executor's side pays what it pays with the gRPC client except the transport, and the planner's
// side what the service pays.
class WirePlanner final : public PlannerClient {
 public:
  absl::StatusOr<pb::PlanResponse> Plan(const pb::PlanRequest& request) override {
    planapi::RequestBytes bytes;
    bytes.head = request.SerializeAsString();
    return PlanBytes(request, std::move(bytes));
  }
  absl::StatusOr<pb::PlanResponse> PlanBytes(const pb::PlanRequest&, planapi::RequestBytes bytes) override {
    const grpc::ByteBuffer buffer = PlanRequestBuffer(std::move(bytes));
    google::protobuf::Arena arena(PlannerArenaOptions());
    auto* parsed = google::protobuf::Arena::CreateMessage<pb::PlanRequest>(&arena);
    if (!ParseRequest(buffer, parsed)) return absl::InternalError("the request does not parse");
    auto* response = google::protobuf::Arena::CreateMessage<pb::PlanResponse>(&arena);
    if (absl::Status s = planner::PlanInto(*parsed, response); !s.ok()) return s;
    pb::PlanResponse out;
    if (!out.ParseFromString(response->SerializeAsString())) return absl::InternalError("the response does not parse");
    return out;
  }
  absl::StatusOr<pb::ValidateResponse> Validate(const pb::ValidateRequest& request) override {
    return planner::Validate(request);
  }
  bool Healthy() override { return true; }
};

// A CloneSet of `pods` pods in the executor's cache, and a Reconciler over it.
struct Scenario {
  std::string key;
  std::shared_ptr<pb::CloneSet> cs;
  std::unique_ptr<BenchApiServer> api;
  std::unique_ptr<InformerCache> informers;
  std::unique_ptr<BenchCache> cache;
  // The snapshot's time (planner/bench/rollout_snapshot.h builds its pods around it): the idle status converged
  // at this time stays what the planner computes.
  base::testing::FakeClock clock;
  NoEvents events;
  WirePlanner planner;
  Expectations expectations{absl::Minutes(5)};
  std::unique_ptr<Reconciler> reconciler;
};

// Mid-rollout (idle = false) as planner/bench/rollout_snapshot.h builds it; idle: every pod at the update
// revision and ready, partition 0, and the status the planner computes for that, as after the last write.
// The process's resident memory in KiB (VmRSS), to show what the cache costs per pod.
int64_t RssKib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

std::unique_ptr<Scenario> MakeScenario(int32_t pods, bool idle) {
  auto request = planner::bench::MidRolloutRequest(pods);
  if (!request.ok()) Die("snapshot", request.status());
  if (idle) {
    const pb::Pod& updated = request->pods(0);  // the first half is at the update revision
    for (pb::Pod& p : *request->mutable_pods()) {
      auto& labels = *p.mutable_metadata()->mutable_labels();
      labels["controller-revision-hash"] = updated.metadata().labels().at("controller-revision-hash");
      labels["pod-template-hash"] = updated.metadata().labels().at("pod-template-hash");
      p.mutable_containers(0)->set_image(updated.containers(0).image());
      p.mutable_container_statuses(0)->set_image(updated.containers(0).image());
      p.mutable_container_statuses(0)->set_image_id(updated.container_statuses(0).image_id());
      p.mutable_container_statuses(0)->set_ready(true);
      p.mutable_conditions(0)->set_status("True");
    }
    pb::CloneSet* cs = request->mutable_clone_set();
    cs->mutable_spec()->mutable_update_strategy()->mutable_partition()->set_int_value(0);
    cs->mutable_status()->set_current_revision(cs->status().update_revision());
    // Converge the status: what the planner writes, and then nothing.
    for (int round = 0; round < 3; ++round) {
      auto plan = planner::Plan(*request);
      if (!plan.ok()) Die("idle plan", plan.status());
      if (plan->has_status()) *cs->mutable_status() = plan->status();
      cs->mutable_status()->set_observed_generation(cs->metadata().generation());
    }
  }
  auto s = std::make_unique<Scenario>();
  s->cs = std::make_shared<pb::CloneSet>(request->clone_set());
  s->clock.Set(absl::FromUnixSeconds(request->now().seconds()));
  s->key = s->cs->metadata().namespace_() + "/" + s->cs->metadata().name();
  std::vector<const pb::Pod*> pointers;
  for (const pb::Pod& p : request->pods()) pointers.push_back(&p);
  s->api = std::make_unique<BenchApiServer>(pointers);
  const int64_t rss_before = RssKib();
  const absl::Time fill_start = absl::Now();
  s->informers = std::make_unique<InformerCache>(*s->api, [](const std::string&) {});
  s->informers->Start();
  while (!s->informers->HasSynced()) absl::SleepFor(absl::Milliseconds(10));
  std::fprintf(stderr, "cache of %d pods (%s): filled in %.0f ms, RSS +%ld KiB (%.0f bytes per pod)\n", pods,
               idle ? "idle" : "mid-rollout", absl::ToDoubleMilliseconds(absl::Now() - fill_start),
               RssKib() - rss_before, 1024.0 * static_cast<double>(RssKib() - rss_before) / pods);
  if (s->informers->pods() != static_cast<size_t>(pods)) {
    std::fprintf(stderr, "the cache holds %zu pods, expected %d\n", s->informers->pods(), pods);
    std::abort();
  }
  s->cache = std::make_unique<BenchCache>(*s->informers, s->cs,
                                          std::vector<pb::ControllerRevision>(request->revisions().begin(),
                                                                              request->revisions().end()));
  ReconcilerDeps deps{.cache = s->cache.get(),
                      .planner = &s->planner,
                      .client = s->api.get(),
                      .events = &s->events,
                      .expectations = &s->expectations,
                      .clock = &s->clock};
  BenchApiServer* api = s->api.get();
  deps.owns = [api](const std::string&) { return api->owned(); };
  s->reconciler = std::make_unique<Reconciler>(std::move(deps));
  return s;
}

Scenario& ScenarioFor(int32_t pods, bool idle) {
  static auto* scenarios = new std::map<std::pair<int32_t, bool>, std::unique_ptr<Scenario>>();
  auto& s = (*scenarios)[{pods, idle}];
  if (s == nullptr) s = MakeScenario(pods, idle);
  return *s;
}

// One reconcile; returns the time from its start until its first write (or its end when it wrote nothing).
absl::Duration ReconcileOnce(Scenario& s, benchmark::State& state) {
  s.api->Arm();
  s.expectations.Forget(s.key);
  const absl::Time start = absl::Now();
  const ReconcileResult r = s.reconciler->Reconcile(s.key);
  const absl::Time end = absl::Now();
  if (!r.error.ok()) state.SkipWithError(r.error.ToString().c_str());
  return s.api->writes() > 0 ? s.api->first_write() - start : end - start;
}

void BM_ReconcileIdle(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), true);
  ReconcileOnce(s, state);  // validation is cached per generation: the first reconcile of a generation pays it
  if (s.api->writes() > 0) {
    state.SkipWithError("the idle CloneSet's reconcile wrote to the API server");
    return;
  }
  for (auto _ : state) {
    ReconcileOnce(s, state);
    if (s.api->writes() > 0) state.SkipWithError("the idle CloneSet's reconcile wrote to the API server");
  }
  state.counters["pods"] = static_cast<double>(state.range(0));
}

void BM_ReconcileUntilFirstWrite(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), false);
  ReconcileOnce(s, state);
  if (s.api->writes() == 0) {
    state.SkipWithError("the mid-rollout reconcile wrote nothing");
    return;
  }
  for (auto _ : state) state.SetIterationTime(absl::ToDoubleSeconds(ReconcileOnce(s, state)));
  state.counters["pods"] = static_cast<double>(state.range(0));
}

// The request as a reconcile assembles it from the cache: the pods shared with it, their table from its rows.
RequestWithPods Snapshot(Scenario& s) {
  const pb::CloneSet& cs = *s.cs;
  const std::string& ns = cs.metadata().namespace_();
  return s.reconciler->BuildRequest(s.key, cs,
                                    s.cache->PodSnapshot(ns, cs.metadata().uid(), s.reconciler->SendsPodTable()));
}

void BM_Snapshot(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  for (auto _ : state) {
    RequestWithPods snapshot = Snapshot(s);
    benchmark::DoNotOptimize(snapshot);
  }
  state.counters["request_bytes"] = static_cast<double>(Snapshot(s).request.ByteSizeLong());
}

// What a reconcile did before the cache kept the rows (and what it still does after an expectation leak, from a
// fresh LIST): every pod copied out of the cache, sorted, and encoded into the table from scratch.
void BM_SnapshotFromScratch(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  const pb::CloneSet& cs = *s.cs;
  for (auto _ : state) {
    RequestWithPods snapshot = s.reconciler->BuildRequest(
        s.key, cs, s.cache->PodsOwnedBy(cs.metadata().namespace_(), cs.metadata().uid()));
    benchmark::DoNotOptimize(snapshot);
  }
  const RequestWithPods scratch =
      s.reconciler->BuildRequest(s.key, cs, s.cache->PodsOwnedBy(cs.metadata().namespace_(), cs.metadata().uid()));
  // The pod tables and seeds, not the whole requests: protobuf maps (the revisions' labels, copied for each
  // request) serialize in an order that differs from copy to copy.
  const RequestWithPods rows = Snapshot(s);
  if (scratch.request.pod_table().SerializeAsString() != rows.request.pod_table().SerializeAsString() ||
      scratch.request.random_seed() != rows.request.random_seed()) {
    state.SkipWithError("the request from the cache's rows differs from the one encoded from scratch");
  }
}

// The request's bytes as the executor sends them: its fields around the cached table's bytes, in a grpc::ByteBuffer.
void BM_Serialize(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  RequestWithPods snapshot = Snapshot(s);
  for (auto _ : state) {
    grpc::ByteBuffer bytes = PlanRequestBuffer(snapshot.Serialize());
    benchmark::DoNotOptimize(bytes);
  }
}

// The request serialized whole, table included (what the executor did before it sent the cached bytes).
void BM_SerializeWhole(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  const RequestWithPods snapshot = Snapshot(s);
  for (auto _ : state) {
    std::string bytes = snapshot.request.SerializeAsString();
    benchmark::DoNotOptimize(bytes);
  }
}

void BM_PlanInProcess(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  const RequestWithPods snapshot = Snapshot(s);
  for (auto _ : state) {
    google::protobuf::Arena arena(PlannerArenaOptions());
    auto* response = google::protobuf::Arena::CreateMessage<pb::PlanResponse>(&arena);
    absl::Status st = planner::PlanInto(snapshot.request, response);
    if (!st.ok()) state.SkipWithError(st.ToString().c_str());
  }
}

// The planner call as the reconcile makes it: serialize, parse onto an arena, plan, the response back.
void BM_PlanWire(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  RequestWithPods snapshot = Snapshot(s);
  for (auto _ : state) {
    auto plan = s.planner.PlanBytes(snapshot.request, snapshot.Serialize());
    if (!plan.ok()) state.SkipWithError(plan.status().ToString().c_str());
    benchmark::DoNotOptimize(plan);
  }
}

// What the planner side pays before planning: parsing the request onto an arena.
void BM_ParseRequest(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  RequestWithPods snapshot = Snapshot(s);
  const grpc::ByteBuffer bytes = PlanRequestBuffer(snapshot.Serialize());
  for (auto _ : state) {
    google::protobuf::Arena arena(PlannerArenaOptions());
    auto* parsed = google::protobuf::Arena::CreateMessage<pb::PlanRequest>(&arena);
    benchmark::DoNotOptimize(ParseRequest(bytes, parsed));
  }
}

// What Apply did with the mid-rollout plan before its first write, the two ways: the plan expanded whole (every
// in-place batch built into per-pod actions) and scheduled whole before anything was written (what the executor
// did before the applier expanded batches as it writes, planapi/applier.h), against the applier's way now: its
// first stage found over the batched plan and only the first action built. The plan is the one the planner
// answers the reconcile's request with (batches accepted), copied per iteration in both cases.
absl::StatusOr<pb::PlanResponse> MidRolloutPlan(Scenario& s) {
  const RequestWithPods snapshot = Snapshot(s);
  return planner::Plan(snapshot.request);
}

void BM_ApplyPrepExpandWhole(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), false);
  auto plan = MidRolloutPlan(s);
  if (!plan.ok()) return state.SkipWithError(plan.status().ToString().c_str());
  for (auto _ : state) {
    pb::PlanResponse copy = *plan;
    planapi::ExpandInPlaceBatches(&copy);
    std::vector<planapi::PlanStage> stages = planapi::SchedulePlan(copy);
    benchmark::DoNotOptimize(stages);
  }
  state.counters["actions"] = static_cast<double>(planapi::ExpandedActionOrder(*plan).size());
}

void BM_ApplyPrepFirstStage(benchmark::State& state) {
  Scenario& s = ScenarioFor(static_cast<int32_t>(state.range(0)), false);
  auto plan = MidRolloutPlan(s);
  if (!plan.ok()) return state.SkipWithError(plan.status().ToString().c_str());
  for (auto _ : state) {
    pb::PlanResponse copy = *plan;
    planapi::PlanStages stages(copy);
    planapi::PlanStage first;
    if (!stages.Next(&first)) return state.SkipWithError("the plan has no action");
    pb::Action scratch;
    benchmark::DoNotOptimize(stages.Action(first.groups[0][0], &scratch));
  }
}

// Args: pods, idle (1) or mid-rollout (0).
void Sizes(benchmark::internal::Benchmark* b) {
  for (int idle : {1, 0}) {
    for (int pods : {10000, 100000}) b->Args({pods, idle});
  }
}

BENCHMARK(BM_ReconcileIdle)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_ReconcileUntilFirstWrite)->Arg(10000)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond)
    ->MinTime(2);
BENCHMARK(BM_Snapshot)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SnapshotFromScratch)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Serialize)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SerializeWhole)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanInProcess)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseRequest)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanWire)->Apply(Sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ApplyPrepExpandWhole)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ApplyPrepFirstStage)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cloneset::executor

BENCHMARK_MAIN();
