// One Plan call on a mid-rollout CloneSet of 10 .. 100 000 pods: in-process, and over gRPC on loopback against the
// service started in this process on port 0 (serialization and transport included).
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "google/protobuf/arena.h"
#include "grpcpp/grpcpp.h"
#include "planner/bench/rollout_snapshot.h"
#include "planner/plan.h"
#include "planner/pod_facts.h"
#include "planapi/pod_table.h"
#include "planner/service/default_functions.h"
#include "planner/service/planner_service.h"
#include "planner/service/server.h"
#include "prometheus/registry.h"

// The allocator options of the cloneset-planner binary (planner/service/main.cc): jemalloc without time-based
// purging, so the in-process numbers are those of the service's process. planner_bench_glibc ignores this.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}

namespace cloneset::planner::bench {
namespace {

const v1::PlanRequest& RequestFor(int32_t pods) {
  static auto* cache = new std::map<int32_t, v1::PlanRequest>();
  auto it = cache->find(pods);
  if (it == cache->end()) {
    auto request = MidRolloutRequest(pods);
    if (!request.ok()) {
      std::fprintf(stderr, "cannot build the snapshot: %s\n", std::string(request.status().message()).c_str());
      std::abort();
    }
    it = cache->emplace(pods, *std::move(request)).first;
  }
  return it->second;
}

// The same snapshot as the executor sends it: its pods as a pod table (PlanRequest.pod_table, planapi/pod_table.h),
// accepting in-place batches (PlanRequest.accept_in_place_batches: the in-place update starts come back as
// StartInPlaceUpdates actions, which the executor expands; planapi/in_place_batches.h).
const v1::PlanRequest& TableRequestFor(int32_t pods) {
  static auto* cache = new std::map<int32_t, v1::PlanRequest>();
  auto it = cache->find(pods);
  if (it == cache->end()) {
    v1::PlanRequest request = RequestFor(pods);
    absl::StatusOr<v1::PodTable> table = planapi::EncodePodTable(request.pods());
    if (!table.ok()) std::abort();
    request.clear_pods();
    *request.mutable_pod_table() = *std::move(table);
    request.set_accept_in_place_batches(true);
    it = cache->emplace(pods, std::move(request)).first;
  }
  return it->second;
}

void SetCounters(benchmark::State& state, const v1::PlanRequest& request, const v1::PlanResponse& response) {
  const auto n = static_cast<double>(planapi::PodsInRequest(request));
  state.counters["pods/s"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["request_bytes"] = static_cast<double>(request.ByteSizeLong());
  state.counters["response_bytes"] = static_cast<double>(response.ByteSizeLong());
  state.counters["actions"] = response.actions_size();
  state.SetComplexityN(planapi::PodsInRequest(request));
}

// The arena each iteration builds (in process) or parses (over gRPC) its response on. The service's per-call
// arena (planner/service/arena_allocator.h) starts the same but grows its blocks to 8 MiB; the numbers in
// docs/performance.md were measured with these 4 MiB blocks.
google::protobuf::ArenaOptions ResponseArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 << 10;
  options.max_block_size = 4 << 20;
  return options;
}

template <bool kTable>
void BM_PlanInProcess(benchmark::State& state) {
  const auto pods = static_cast<int32_t>(state.range(0));
  const v1::PlanRequest& request = kTable ? TableRequestFor(pods) : RequestFor(pods);
  const absl::StatusOr<v1::PlanResponse> first = Plan(request);  // for the counters, outside the timing
  if (!first.ok()) {
    state.SkipWithError(std::string(first.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<v1::PlanResponse> response = Plan(request);
    benchmark::DoNotOptimize(response);
  }
  SetCounters(state, request, *first);
}

// What the service does (planner_service.cc): the response lives on the call's arena, so its thousands of
// actions are neither allocated nor freed one by one.
template <bool kTable>
void BM_PlanInProcessArena(benchmark::State& state) {
  const auto pods = static_cast<int32_t>(state.range(0));
  const v1::PlanRequest& request = kTable ? TableRequestFor(pods) : RequestFor(pods);
  const google::protobuf::ArenaOptions options = ResponseArenaOptions();
  v1::PlanResponse first;
  if (absl::Status s = PlanInto(request, &first); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return;
  }
  for (auto _ : state) {
    google::protobuf::Arena arena(options);
    auto* response = google::protobuf::Arena::CreateMessage<v1::PlanResponse>(&arena);
    absl::Status status = PlanInto(request, response);
    benchmark::DoNotOptimize(status);
  }
  SetCounters(state, request, first);
}

// The floor under BM_PlanInProcess: one read of what the plan needs from every pod (labels, conditions, phase,
// readiness gates, container statuses) into the per-pod facts, and nothing else. Every plan pays at least this.
void BM_ReadPodFacts(benchmark::State& state) {
  const v1::PlanRequest& request = RequestFor(static_cast<int32_t>(state.range(0)));
  const std::vector<std::pair<std::string, std::string>> selector = {{"app", "bench"}};
  const std::string& update = request.clone_set().status().update_revision();
  const std::string& current = request.clone_set().status().current_revision();
  for (auto _ : state) {
    size_t ready = 0;
    for (const v1::Pod& pod : request.pods()) {
      size_t matched = 0;
      ready += ComputePodFacts(pod, selector, &matched, update, current).k8s_ready;
    }
    benchmark::DoNotOptimize(ready);
  }
  state.counters["pods/s"] = benchmark::Counter(static_cast<double>(request.pods_size()),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// What the service pays before planning: parsing the serialized snapshot, onto the heap (the default) or onto
// an arena (ArenaMessageAllocator, what planner_service does).
template <bool kTable>
void BM_ParseRequest(benchmark::State& state) {
  const auto pods = static_cast<int32_t>(state.range(0));
  const v1::PlanRequest& request = kTable ? TableRequestFor(pods) : RequestFor(pods);
  const bool arena = state.range(1) != 0;
  const std::string bytes = request.SerializeAsString();
  for (auto _ : state) {
    if (arena) {
      google::protobuf::Arena a;
      auto* parsed = google::protobuf::Arena::CreateMessage<v1::PlanRequest>(&a);
      benchmark::DoNotOptimize(parsed->ParseFromString(bytes));
    } else {
      v1::PlanRequest parsed;
      benchmark::DoNotOptimize(parsed.ParseFromString(bytes));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes.size()));
}

// The service, started once for all gRPC benchmarks.
struct LoopbackService {
  LoopbackService() : metrics(registry), log(service::PlannerLogOptions(&sink, service::LogLevel::kError)) {
    svc = std::make_unique<service::PlannerService>(service::DefaultPlannerFunctions(), &metrics, &log);
    service::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.max_request_bytes = 512 << 20;
    auto started = service::StartServer(options, svc.get());
    if (!started.ok()) std::abort();
    running = std::move(*started);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    stub = v1::Planner::NewStub(
        grpc::CreateCustomChannel(running.address, grpc::InsecureChannelCredentials(), args));
  }
  prometheus::Registry registry;
  service::ServiceMetrics metrics;
  std::ostringstream sink;
  service::JsonLogger log;
  std::unique_ptr<service::PlannerService> svc;
  service::RunningServer running;
  std::unique_ptr<v1::Planner::Stub> stub;
};

template <bool kTable>
void BM_PlanGrpc(benchmark::State& state) {
  static auto* loopback = new LoopbackService();
  const auto pods = static_cast<int32_t>(state.range(0));
  const v1::PlanRequest& request = kTable ? TableRequestFor(pods) : RequestFor(pods);
  // The client parses each response onto an arena, as the service does with requests: a plan of thousands of
  // actions is then freed at once instead of map entry by map entry.
  const google::protobuf::ArenaOptions options = ResponseArenaOptions();
  v1::PlanResponse last;
  bool kept = false;
  for (auto _ : state) {
    google::protobuf::Arena arena(options);
    auto* response = google::protobuf::Arena::CreateMessage<v1::PlanResponse>(&arena);
    grpc::ClientContext ctx;
    const grpc::Status st = loopback->stub->Plan(&ctx, request, response);
    if (!st.ok()) {
      state.SkipWithError(st.error_message().c_str());
      return;
    }
    if (!kept) {
      last = *response;  // for the counters
      kept = true;
    }
  }
  SetCounters(state, request, last);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Arg(10)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Complexity(benchmark::oNLogN);
}

// What a caller pays to build the table from protobuf pods (the executor encodes from its cache instead).
void BM_EncodePodTable(benchmark::State& state) {
  const v1::PlanRequest& request = RequestFor(static_cast<int32_t>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<v1::PodTable> table = planapi::EncodePodTable(request.pods());
    benchmark::DoNotOptimize(table);
  }
}

BENCHMARK_TEMPLATE(BM_PlanInProcess, false)->Name("BM_PlanInProcess")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_PlanInProcess, true)->Name("BM_PlanInProcessTable")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_PlanInProcessArena, false)->Name("BM_PlanInProcessArena")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_PlanInProcessArena, true)->Name("BM_PlanInProcessTableArena")->Apply(Sizes);
BENCHMARK(BM_EncodePodTable)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadPodFacts)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_ParseRequest, false)->Name("BM_ParseRequest")->ArgsProduct({{10000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_ParseRequest, true)->Name("BM_ParseRequestTable")->ArgsProduct({{10000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanGrpc, false)->Name("BM_PlanGrpc")->Apply(Sizes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_PlanGrpc, true)->Name("BM_PlanGrpcTable")->Apply(Sizes)->UseRealTime();

}  // namespace
}  // namespace cloneset::planner::bench

BENCHMARK_MAIN();
