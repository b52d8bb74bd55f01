// The client's own CPU per HTTP request on loopback (the executor's CPU per pod during a rollout is
// mostly its requests and its watch). A trivial cpp-httplib server in this process answers every request with a
// fixed body (a ~2.5 KB pod for a PATCH, as the API server returns the written pod; a ~0.8 KB event for a POST);
// the benchmark's "CPU" column is the calling thread's CPU time only, so it is the client's cost per request
// (request building, syscalls, response parsing, the pool and the metrics) without the server's.
// Run: build-*/bin/kube_rest_client_bench   (docs/performance.md, "The executor's requests and watch")
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "httplib.h"
#include "kube/buffered_tls_client.h"
#include "kube/rest_client.h"
#include "kube/testing/test_certs.h"
#include "kube/watch_stream.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"

namespace cloneset::kube {
namespace {

std::string PodJson() {
  nlohmann::json c = {{"name", "main"},
                      {"image", "registry.local/app:v2"},
                      {"ports", {{{"containerPort", 8080}, {"protocol", "TCP"}}}},
                      {"resources", {{"requests", {{"cpu", "250m"}, {"memory", "256Mi"}}}}}};
  nlohmann::json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "big-abcde"},
        {"namespace", "default"},
        {"uid", "0a1b2c3d-0000-4000-8000-000000000001"},
        {"resourceVersion", "123456"},
        {"labels", {{"app", "big"}, {"apps.kruise.io/cloneset-instance-id", "abcde"},
                    {"controller-revision-hash", "big-7d9f8c"}}},
        {"annotations", {{"apps.kruise.io/inplace-update-state", std::string(300, 'x')}}},
        {"ownerReferences", {{{"apiVersion", "apps.kruise.io/v1alpha1"}, {"kind", "CloneSet"}, {"name", "big"},
                              {"uid", "cs-uid"}, {"controller", true}, {"blockOwnerDeletion", true}}}}}},
      {"spec", {{"containers", {c}}, {"nodeName", "node-1"}, {"readinessGates", {{{"conditionType", "InPlaceUpdateReady"}}}}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "10.0.0.1"},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}}, {{"type", "InPlaceUpdateReady"}, {"status", "True"}}}},
        {"containerStatuses", {{{"name", "main"}, {"ready", true}, {"restartCount", 1},
                                {"image", "registry.local/app:v2"}, {"imageID", std::string(80, 'd')}}}}}}};
  return pod.dump();
}

class Server {
 public:
  static constexpr int kWatchEvents = 1000;
  Server()
      : pod_(PodJson()),
        event_(std::string(800, 'e')),
        watch_event_(R"({"type":"MODIFIED","object":)" + pod_ + "}\n") {
    auto answer = [this](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.method == "POST" ? event_ : pod_, "application/json");
    };
    server_.set_tcp_nodelay(true);  // as the embedded cluster does: no delayed-ACK wait between headers and body
    server_.set_keep_alive_max_count(100000);  // as the embedded cluster: one connection for the whole run
    server_.Patch(".*", answer);
    server_.Post(".*", answer);
    server_.Get("/watch", [this](const httplib::Request& req, httplib::Response& res) {
      const bool paced = req.has_param("paced");
      res.set_chunked_content_provider("application/json", [this, paced, sent = 0](size_t, httplib::DataSink& sink) mutable {
        if (sent == kWatchEvents) {
          sink.done();
          return true;
        }
        // Paced: one event at a time, as a rollout's writes arrive (each read then holds one event).
        if (paced) std::this_thread::sleep_for(std::chrono::microseconds(200));
        ++sent;
        return sink.write(watch_event_.data(), watch_event_.size());
      });
    });
    server_.Get(".*", answer);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~Server() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  const std::string pod_, event_, watch_event_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

ClientConfig Config(const Server& server) {
  ClientConfig c;
  c.server = server.url();
  c.source = "bench";
  return c;
}

// range(0) = 1: with the executor's metrics registry (a counter and a latency histogram per request).
void BM_LoopbackPatch(benchmark::State& state) {
  Server server;
  prometheus::Registry registry;
  RestClientOptions opts;
  if (state.range(0) == 1) opts.registry = &registry;
  auto client = NewHttpRestClient(Config(server), opts);
  if (!client.ok()) {
    state.SkipWithError(std::string(client.status().message()).c_str());
    return;
  }
  const std::string body = R"({"metadata":{"resourceVersion":"123455"},"spec":{"containers":[{"name":"main",)"
                           R"("image":"registry.local/app:v2"}]}})";
  size_t bytes = 0;
  for (auto _ : state) {
    auto r = (*client)->Patch("/api/v1/namespaces/default/pods/big-abcde", PatchType::kStrategicMerge, body);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    bytes += r->size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_LoopbackPatch)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_LoopbackPost(benchmark::State& state) {
  Server server;
  auto client = NewHttpRestClient(Config(server), {});
  if (!client.ok()) {
    state.SkipWithError(std::string(client.status().message()).c_str());
    return;
  }
  const std::string body(700, 'b');
  for (auto _ : state) {
    auto r = (*client)->Create("/api/v1/namespaces/default/events", body);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(r->size());
  }
}
BENCHMARK(BM_LoopbackPost)->Unit(benchmark::kMicrosecond)->UseRealTime();

// A watch stream of 1 000 MODIFIED pod events, one chunk each, read, split and parsed as the informer does up to
// the pod decode (which is not counted). range(0) = 1: paced (the server waits 200 us before each event, so each read
// holds one event and the reading thread wakes once per event, as in a rollout); 0: as fast as the server writes.
void BM_LoopbackWatch(benchmark::State& state) {
  Server server;
  auto client = NewHttpRestClient(Config(server), {});
  if (!client.ok()) {
    state.SkipWithError(std::string(client.status().message()).c_str());
    return;
  }
  const std::string path = state.range(0) == 1 ? "/watch?paced=1" : "/watch";
  int64_t events = 0;
  for (auto _ : state) {
    JsonObjectSplitter splitter;
    absl::Status s = (*client)->Watch(
        path,
        [&](std::string_view data) {
          return splitter.Feed(data, [&](std::string_view obj) {
            auto ev = ParseWatchEvent(obj);
            if (!ev.ok()) return false;
            ++events;
            return true;
          });
        },
        nullptr);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(events);
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_LoopbackWatch)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same over TLS, httplib's own TLS client against ours (BufferedSslClient), in one run: a GET answered with
// the pod and the headers kube-apiserver sends (~330 bytes of them: Audit-Id, the priority-and-fairness uids,
// Cache-Control, Date), and a watch of 1 000 pod events. httplib reads the status line, the headers and every
// chunk-size line one byte per read; on TLS each of those bytes was an SSL_read of its own.
class TlsServer {
 public:
  explicit TlsServer(const testing::TestPki& pki)
      : pod_(PodJson()),
        watch_event_(R"({"type":"MODIFIED","object":)" + pod_ + "}\n"),
        server_(testing::NewTlsServer(pki)) {
    server_->set_tcp_nodelay(true);
    server_->set_keep_alive_max_count(100000);
    server_->Get("/pod", [this](const httplib::Request&, httplib::Response& res) {
      res.set_header("Audit-Id", "6f1d3c1e-2b0a-4d8e-9c67-1f0e2d3c4b5a");
      res.set_header("Cache-Control", "no-cache, private");
      res.set_header("X-Kubernetes-Pf-Flowschema-Uid", "0d5e9c3a-7b61-4f5e-8a3d-2c1b0a998877");
      res.set_header("X-Kubernetes-Pf-Prioritylevel-Uid", "4a3b2c1d-0e9f-4a8b-b7c6-d5e4f3a2b1c0");
      res.set_header("Date", "Wed, 02 Dec 2026 01:00:00 GMT");
      res.set_content(pod_, "application/json");
    });
    server_->Get("/watch", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json", [this, sent = 0](size_t, httplib::DataSink& sink) mutable {
        if (sent == Server::kWatchEvents) {
          sink.done();
          return true;
        }
        ++sent;
        return sink.write(watch_event_.data(), watch_event_.size());
      });
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  ~TlsServer() {
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  const std::string pod_, watch_event_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
};

template <typename TlsClient>
std::unique_ptr<TlsClient> NewTlsClient(const testing::TestPki& pki, int port) {
  auto c = std::make_unique<TlsClient>("127.0.0.1", port);
  c->set_ca_cert_store(testing::NewCaStore(pki.ca_pem));
  c->enable_server_certificate_verification(true);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  return c;
}

template <typename TlsClient>
void BM_TlsGet(benchmark::State& state) {
  const testing::TestPki pki = testing::GenerateTestPki();
  TlsServer server(pki);
  auto client = NewTlsClient<TlsClient>(pki, server.port());
  for (auto _ : state) {
    auto r = client->Get("/pod");
    if (!r || r->status != 200) {
      state.SkipWithError("GET /pod failed");
      return;
    }
    benchmark::DoNotOptimize(r->body.size());
  }
}
BENCHMARK(BM_TlsGet<httplib::SSLClient>)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_TlsGet<BufferedSslClient>)->Unit(benchmark::kMicrosecond)->UseRealTime();

template <typename TlsClient>
void BM_TlsWatch(benchmark::State& state) {
  const testing::TestPki pki = testing::GenerateTestPki();
  TlsServer server(pki);
  auto client = NewTlsClient<TlsClient>(pki, server.port());
  int64_t events = 0;
  for (auto _ : state) {
    JsonObjectSplitter splitter;
    auto r = client->Get("/watch", [&](const char* data, size_t n) {
      return splitter.Feed(std::string_view(data, n), [&](std::string_view obj) {
        ++events;
        return !obj.empty();
      });
    });
    if (!r || r->status != 200) {
      state.SkipWithError("GET /watch failed");
      return;
    }
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_TlsWatch<httplib::SSLClient>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TlsWatch<BufferedSslClient>)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace cloneset::kube

BENCHMARK_MAIN();
