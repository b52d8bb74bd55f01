// Benchmarks of the embedded cluster (docs/performance.md, "Embedded cluster"):
//   BM_StoreWrite          single-object updates through the Store (no HTTP)
//   BM_HttpWrite/threads   merge-patch PATCH requests over loopback HTTP, keep-alive clients
//   BM_WatchFanout/W/P     W open watch streams on pods with P pods stored; latency from write to event at
//                          every watcher
//   BM_Rss100kPods         RSS after storing 100 000 realistic pods and 1 000 nodes
#include <benchmark/benchmark.h>
#include <httplib.h>

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "devcluster/api_server.h"
#include "devcluster/http_server.h"
#include "devcluster/store.h"

namespace cd = cloneset::devcluster;
using nlohmann::json;

namespace {

json Pod(int i) {
  static const json kTemplate = json::parse(R"({
    "metadata":{"namespace":"default","labels":{"app":"video-transcoder","controller-revision-hash":"video-transcoder-7064986167"},
      "ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"video-transcoder",
        "uid":"0b5a2a4e-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}]},
    "spec":{"containers":[{"name":"transcoder","image":"my-registry/video-transcoder:v1.2.0",
        "env":[{"name":"WORKSPACE_PATH","value":"/workspace"}],"ports":[{"containerPort":8080}],
        "resources":{"requests":{"cpu":"1","memory":"2Gi"},"limits":{"cpu":"2","memory":"4Gi"}},
        "volumeMounts":[{"name":"data","mountPath":"/workspace"}]}],
      "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data"}}]},
    "status":{"phase":"Running","podIP":"10.64.0.1",
      "conditions":[{"type":"Ready","status":"True"},{"type":"ContainersReady","status":"True"}],
      "containerStatuses":[{"name":"transcoder","ready":true,"restartCount":0,"image":"my-registry/video-transcoder:v1.2.0",
        "imageID":"sha256:0123456789abcdef","state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}})");
  json p = kTemplate;
  p["metadata"]["name"] = absl::StrCat("video-transcoder-", i);
  p["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"] = absl::StrCat("id", i);
  p["spec"]["nodeName"] = absl::StrCat("devcluster-node-", i % 1000);
  p["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = absl::StrCat("data-", i);
  return p;
}

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

// First in the file, so it runs first: RSS growth is only visible while the heap has not grown before.
void BM_Rss100kPods(benchmark::State& state) {
  for (auto _ : state) {
    long before = RssKb();
    auto store = std::make_unique<cd::Store>(&cloneset::base::RealClock::Get());
    for (int i = 0; i < 1000; ++i)
      (void)store->Create(cd::kNodes, {{"metadata", {{"name", absl::StrCat("devcluster-node-", i)}}},
                                       {"status", {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}}}}}});
    for (int i = 0; i < state.range(0); ++i) (void)store->Create(cd::kPods, Pod(i));
    long after = RssKb();
    state.counters["rss_MiB"] = (after - before) / 1024.0;
    state.counters["pods"] = static_cast<double>(store->ObjectCount(cd::kPods));
    state.counters["bytes/pod(json)"] = static_cast<double>(Pod(1).dump().size());
    // Listing everything (kubectl get pods -A -o json) must not blow up either.
    auto t0 = std::chrono::steady_clock::now();
    auto list = store->List(cd::kPods, {});
    state.counters["list_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(list);
  }
}
BENCHMARK(BM_Rss100kPods)->Arg(100000)->Iterations(1)->Unit(benchmark::kSecond);

void BM_StoreWrite(benchmark::State& state) {
  cd::Store store(&cloneset::base::RealClock::Get());
  (void)store.Create(cd::kPods, Pod(0));
  int64_t n = 0;
  for (auto _ : state) {
    auto r = store.Mutate(cd::kPods, "default", "video-transcoder-0", false, [&](json& p) {
      p["metadata"]["labels"]["n"] = std::to_string(++n);
      return absl::OkStatus();
    });
    if (!r.ok()) state.SkipWithError("write failed");
  }
  state.counters["writes/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StoreWrite)->UseRealTime();

struct Server {
  cd::Store store{&cloneset::base::RealClock::Get()};
  cd::ApiServer api{&store, cd::ApiServerOptions{}};
  cd::HttpServer http{&api, &store, nullptr, Options()};
  static cd::HttpServerOptions Options() {
    cd::HttpServerOptions o;
    o.threads = 300;
    return o;
  }
  Server() {
    if (!http.Start().ok()) std::abort();
  }
};

double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// The machine is shared: record the 1-minute load average next to every wall-clock number.
double LoadAverage() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

// Clients run in this process too. Each client thread reports its own CPU time, so the server's share is the
// process CPU time minus the clients'. "writes/s@2cpu" is the rate two cores would sustain at the measured server
// CPU cost per write: the CPU-normalised number that a loaded, shared machine can still measure.
void BM_HttpWrite(benchmark::State& state) {
  static Server* server = new Server();
  const int threads = state.range(0);
  for (int i = 0; i < threads; ++i) (void)server->store.Create(cd::kPods, Pod(100000 + i));
  int64_t total = 0;
  double server_cpu = 0;
  for (auto _ : state) {
    std::atomic<int64_t> ok{0};
    std::atomic<int64_t> client_cpu_ns{0};
    std::vector<std::thread> workers;
    const double cpu0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const double mine0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
        {
          httplib::Client cli("127.0.0.1", server->http.port());
          cli.set_keep_alive(true);
          cli.set_tcp_nodelay(true);
          std::string path = absl::StrCat("/api/v1/namespaces/default/pods/video-transcoder-", 100000 + t);
          for (int i = 0; i < 500; ++i) {
            std::string body = absl::StrCat(R"({"metadata":{"labels":{"n":")", i, R"("}}})");
            auto r = cli.Patch(path.c_str(), body, "application/merge-patch+json");
            if (r && r->status == 200) ++ok;
          }
        }
        client_cpu_ns += static_cast<int64_t>((CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - mine0) * 1e9);
      });
    }
    for (auto& w : workers) w.join();
    server_cpu += CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0 - client_cpu_ns.load() / 1e9;
    total += ok;
  }
  state.counters["writes/s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
  const double us_per_write = total > 0 ? server_cpu * 1e6 / total : 0;
  state.counters["server_cpu_us/write"] = us_per_write;
  state.counters["writes/s@2cpu"] = us_per_write > 0 ? 2e6 / us_per_write : 0;
  state.counters["load1"] = LoadAverage();
}
BENCHMARK(BM_HttpWrite)->Arg(1)->Arg(4)->Arg(16)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

// W concurrent HTTP watches on pods while the store holds P pods; each iteration writes one pod and measures, at
// every watcher, the time from the start of the write to the arrival of the event's last byte.
void BM_WatchFanout(benchmark::State& state) {
  const int watchers = state.range(0);
  const int pods = state.range(1);
  Server server;
  for (int i = 0; i < pods; ++i) (void)server.store.Create(cd::kPods, Pod(i));
  (void)server.store.Create(cd::kPods, Pod(pods));  // the pod the benchmark writes
  const std::string target = absl::StrCat("video-transcoder-", pods);
  std::atomic<int64_t> written_ns{0};
  std::atomic<int> received{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<double> latencies_us;
  std::vector<std::thread> clients;
  const std::string rv = std::to_string(server.store.CurrentResourceVersion());
  for (int w = 0; w < watchers; ++w) {
    clients.emplace_back([&] {
      httplib::Client cli("127.0.0.1", server.http.port());
      cli.set_read_timeout(10, 0);  // never outlive the benchmark (the server stops its streams at shutdown)
      cli.Get(absl::StrCat("/api/v1/namespaces/default/pods?watch=true&resourceVersion=", rv).c_str(),
              [&](const char* data, size_t len) {
                auto now = std::chrono::steady_clock::now().time_since_epoch().count();
                int events = static_cast<int>(std::count(data, data + len, '\n'));  // one line per event
                if (events > 0) {
                  std::lock_guard<std::mutex> l(mu);
                  latencies_us.push_back((now - written_ns.load()) / 1000.0);
                }
                received += events;
                return !stop.load();
              });
    });
  }
  auto connect_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (server.store.WatcherCount(cd::kPods) < static_cast<size_t>(watchers) &&
         std::chrono::steady_clock::now() < connect_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const size_t connected = server.store.WatcherCount(cd::kPods);
  int events = 0, late = 0;
  const double cpu0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  for (auto _ : state) {
    if (connected < static_cast<size_t>(watchers)) {
      state.SkipWithError("not every watch connected within 60 s");
      break;
    }
    int before = received.load();
    written_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    (void)server.store.Mutate(cd::kPods, "default", target, false, [&](json& o) {
      o["metadata"]["labels"]["n"] = std::to_string(events);
      return absl::OkStatus();
    });
    ++events;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (received.load() < before + watchers && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (received.load() < before + watchers) ++late;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let the watchers go idle between writes
  }
  const double cpu = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  stop = true;
  server.http.Stop();  // ends every stream; the clients' Get calls return
  for (auto& c : clients) c.join();
  std::sort(latencies_us.begin(), latencies_us.end());
  if (!latencies_us.empty()) {
    state.counters["p50_us"] = latencies_us[latencies_us.size() / 2];
    state.counters["p99_us"] = latencies_us[latencies_us.size() * 99 / 100];
    state.counters["max_us"] = latencies_us.back();
  }
  state.counters["deliveries"] = static_cast<double>(latencies_us.size());
  state.counters["late_writes"] = late;  // writes not seen by every watcher within 2 s
  state.counters["cpu_us/delivery"] = latencies_us.empty() ? 0 : cpu * 1e6 / latencies_us.size();
  state.counters["pods"] = static_cast<double>(server.store.ObjectCount(cd::kPods));
  state.counters["load1"] = LoadAverage();
}
BENCHMARK(BM_WatchFanout)
    ->Args({200, 0})
    ->Args({200, 100000})
    ->Iterations(100)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);


}  // namespace

BENCHMARK_MAIN();
