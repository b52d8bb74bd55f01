// Decoding cost of the informer's hot path: LIST pages and watch events.
// Run: build-*/bin/kube_watch_stream_bench
#include <benchmark/benchmark.h>

#include "kube/watch_stream.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

// A realistic ~2 KB pod (labels, owner reference, two containers, status).
nlohmann::json MakePod(int i) {
  nlohmann::json c = {{"name", "main"},
                      {"image", "registry.local/app:v" + std::to_string(i % 7)},
                      {"ports", {{{"containerPort", 8080}, {"protocol", "TCP"}}}},
                      {"env", {{{"name", "MODE"}, {"value", "prod"}}, {{"name", "SHARD"}, {"value", "x"}}}},
                      {"resources", {{"requests", {{"cpu", "250m"}, {"memory", "256Mi"}}},
                                     {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "web-" + std::to_string(i)},
            {"namespace", "ns-" + std::to_string(i % 100)},
            {"uid", "0a1b2c3d-0000-4000-8000-" + std::to_string(100000000000 + i)},
            {"resourceVersion", std::to_string(1000 + i)},
            {"labels", {{"app", "web"}, {"apps.kruise.io/cloneset-instance-id", "abcde"},
                        {"controller-revision-hash", "web-7d9f8c"}}},
            {"ownerReferences", {{{"apiVersion", "apps.kruise.io/v1alpha1"}, {"kind", "CloneSet"},
                                  {"name", "web"}, {"uid", "cs-uid"}, {"controller", true}}}}}},
          {"spec", {{"containers", {c, c}}, {"nodeName", "node-" + std::to_string(i % 50)}}},
          {"status",
           {{"phase", "Running"},
            {"podIP", "10.0.0.1"},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}, {{"type", "ContainersReady"}, {"status", "True"}}}},
            {"containerStatuses", {{{"name", "main"}, {"ready", true}, {"restartCount", 0}}}}}}};
}

void BM_ParseListPage(benchmark::State& state) {
  nlohmann::json list = {{"kind", "PodList"}, {"apiVersion", "v1"},
                         {"metadata", {{"resourceVersion", "99999"}}}, {"items", nlohmann::json::array()}};
  for (int i = 0; i < state.range(0); ++i) list["items"].push_back(MakePod(i));
  const std::string body = list.dump();
  for (auto _ : state) {
    auto page = ParseListPage(body);
    size_t keys = 0;
    for (auto item : page->items) keys += ReadObjectMeta(item)->name.size();
    benchmark::DoNotOptimize(keys);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["pods"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_ParseListPage)->Arg(500)->Arg(5000)->Unit(benchmark::kMillisecond);

void BM_SplitAndParseWatchEvents(benchmark::State& state) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) stream += nlohmann::json{{"type", "MODIFIED"}, {"object", MakePod(i)}}.dump() + "\n";
  for (auto _ : state) {
    JsonObjectSplitter splitter;
    size_t n = 0;
    for (size_t off = 0; off < stream.size(); off += 16384) {  // 16 KiB network chunks
      splitter.Feed(std::string_view(stream).substr(off, 16384), [&](std::string_view ev) {
        n += ParseWatchEvent(ev)->meta.resource_version.size();
        return true;
      });
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
}
BENCHMARK(BM_SplitAndParseWatchEvents)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cloneset::kube

BENCHMARK_MAIN();
