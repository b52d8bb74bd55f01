#include "kube/rest_client.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "httplib.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"
#include "kube/testing/fake_apiserver.h"
#include "kube/testing/mock_rest_client.h"
#include "base/testing/fake_clock.h"
#include "kube/testing/test_certs.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace cloneset::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeApiServer;

constexpr char kPods[] = "/api/v1/namespaces/ns/pods";

std::string Pod(const std::string& name, const std::string& rv = "") {
  nlohmann::json p = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}};
  if (!rv.empty()) p["metadata"]["resourceVersion"] = rv;
  return p.dump();
}

struct Harness {
  explicit Harness(FakeApiServer::Options o = {}) : server(o) { EXPECT_TRUE(server.Start().ok()); }
  std::unique_ptr<RestClient> Client(ClientConfig cfg = {}, RestClientOptions opts = {}) {
    if (cfg.server.empty()) cfg.server = server.url();
    opts.sleep = [this](absl::Duration d) { sleeps.push_back(d); };
    auto c = NewHttpRestClient(cfg, opts);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }
  FakeApiServer server;
  std::vector<absl::Duration> sleeps;
};

// Discovery of a subresource (the executor asks whether pods/resize is served, Kubernetes 1.32 and later).
TEST(ServesResourceTest, ReadsTheGroupVersionsResourceList) {
  ::testing::StrictMock<testing::MockRestClient> client;
  EXPECT_CALL(client, Get(std::string_view("/api/v1")))
      .WillOnce(::testing::Return(std::string(
          R"({"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods"},{"name":"pods/resize"}]})")))
      .WillOnce(::testing::Return(std::string(R"({"kind":"APIResourceList","resources":[{"name":"pods"}]})")))
      .WillOnce(::testing::Return(std::string("[]")))
      .WillOnce(::testing::Return(absl::UnavailableError("connection refused")));
  EXPECT_EQ(*ServesResource(client, "/api/v1", "pods/resize"), true);
  EXPECT_EQ(*ServesResource(client, "/api/v1", "pods/resize"), false);
  EXPECT_FALSE(ServesResource(client, "/api/v1", "pods/resize").ok());
  EXPECT_TRUE(absl::IsUnavailable(ServesResource(client, "/api/v1", "pods/resize").status()));
}

TEST(HttpRestClientTest, CrudAndStatusMapping) {
  Harness h;
  auto c = h.Client();
  auto created = c->Create(kPods, Pod("a"));
  ASSERT_TRUE(created.ok()) << created.status();
  auto obj = nlohmann::json::parse(*created);
  EXPECT_EQ(obj["metadata"]["namespace"], "ns");
  const std::string rv = obj["metadata"]["resourceVersion"];

  absl::Status dup = c->Create(kPods, Pod("a")).status();
  EXPECT_TRUE(absl::IsAlreadyExists(dup)) << dup;
  EXPECT_EQ(dup.message(), "pods \"a\" already exists");

  EXPECT_TRUE(absl::IsNotFound(c->Get(std::string(kPods) + "/zz").status()));

  auto patched = c->Patch(std::string(kPods) + "/a", PatchType::kMerge,
                          R"({"metadata":{"labels":{"x":"1"},"resourceVersion":")" + rv + R"("}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(nlohmann::json::parse(*patched)["metadata"]["labels"]["x"], "1");

  absl::Status stale = c->Update(std::string(kPods) + "/a", Pod("a", rv)).status();
  EXPECT_TRUE(IsConflict(stale)) << stale;
  EXPECT_EQ(K8sReason(stale), "Conflict");

  auto list = c->List(kPods, ListOptions{.label_selector = "x=1", .limit = 10});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(nlohmann::json::parse(*list)["items"].size(), 1u);
  EXPECT_TRUE(c->Delete(std::string(kPods) + "/a").ok());
  EXPECT_TRUE(absl::IsNotFound(c->Delete(std::string(kPods) + "/a").status()));
  EXPECT_EQ(h.server.requests()[5], "GET /api/v1/namespaces/ns/pods?labelSelector=x=1&limit=10");
}

TEST(HttpRestClientTest, RetriesHonourRetryAfter) {
  struct Case {
    std::string name;
    FakeApiServer::Fault fault;
    std::string method;
    int want_status;
    std::vector<absl::Duration> want_sleeps;
  };
  const std::vector<Case> cases = {
      {"429 retry-after 2", {"", kPods, "", 429, "TooManyRequests", "2", 1}, "GET", 200, {absl::Seconds(2)}},
      {"429 retry-after capped", {"", kPods, "", 429, "TooManyRequests", "120", 1}, "GET", 200,
       {absl::Seconds(10)}},
      {"500 GET backs off", {"", kPods, "", 500, "InternalError", "", 2}, "GET", 200,
       {absl::Milliseconds(100), absl::Milliseconds(200)}},
      {"500 POST not retried", {"", kPods, "", 500, "InternalError", "", 1}, "POST", 500, {}},
      {"503 POST with retry-after", {"", kPods, "", 503, "ServiceUnavailable", "1", 1}, "POST", 201,
       {absl::Seconds(1)}},
      {"429 POST retried", {"", kPods, "", 429, "TooManyRequests", "", 1}, "POST", 201,
       {absl::Milliseconds(100)}},
      {"gives up after max", {"", kPods, "", 503, "ServiceUnavailable", "0", 10}, "GET", 503,
       {absl::ZeroDuration(), absl::ZeroDuration(), absl::ZeroDuration()}},
      {"404 not retried", {"", kPods, "", 404, "NotFound", "1", 1}, "GET", 404, {}},
  };
  for (const auto& c : cases) {
    Harness h;
    auto client = h.Client({}, RestClientOptions{.max_retries = 3});
    h.server.InjectFault(c.fault);
    auto resp = client->Do(c.method, kPods, c.method == "POST" ? Pod("p") : "");
    ASSERT_TRUE(resp.ok()) << c.name;
    EXPECT_EQ(resp->status, c.want_status) << c.name;
    EXPECT_EQ(h.sleeps, c.want_sleeps) << c.name;
  }
}

TEST(HttpRestClientTest, ClientSideRateLimit) {
  Harness h;
  base::testing::FakeClock clock;
  auto c = h.Client({}, RestClientOptions{.qps = 10, .burst = 2, .clock = &clock});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(c->Get(kPods).ok());
  EXPECT_THAT(h.sleeps, ElementsAre(absl::Milliseconds(100), absl::Milliseconds(200)));
}

TEST(HttpRestClientTest, MetricsUseControllerRuntimeNames) {
  Harness h;
  prometheus::Registry registry;
  auto c = h.Client({}, RestClientOptions{.registry = &registry});
  ASSERT_TRUE(c->Create(kPods, Pod("m")).ok());
  ASSERT_FALSE(c->Get(std::string(kPods) + "/none").ok());
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  const std::string host = h.server.url().substr(7);
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"201\",host=\"" + host +
                              "\",method=\"POST\"} 1"));
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"404\",host=\"" + host +
                              "\",method=\"GET\"} 1"));
  EXPECT_THAT(text, HasSubstr("rest_client_request_duration_seconds_count{host=\"" + host +
                              "\",verb=\"GET\"} 1"));
}

// The client keeps each series once it has looked it up (http_rest_client.cc, Record): repeats accumulate in the
// same series, a new code or verb gets a series of its own, and a watch is counted but never timed.
TEST(HttpRestClientTest, MetricsAccumulatePerSeriesAndWatchesAreNotTimed) {
  Harness h;
  prometheus::Registry registry;
  auto c = h.Client({}, RestClientOptions{.registry = &registry});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c->Create(kPods, Pod(absl::StrCat("m", i))).ok());
  ASSERT_FALSE(c->Create(kPods, Pod("m0")).ok());  // 409
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(c->Get(std::string(kPods) + "/m1").ok());
  // The watch ends at once (timeoutSeconds, an old resourceVersion): one GET counted, not in the histogram.
  ASSERT_TRUE(c->Watch(std::string(kPods) + "?watch=1&timeoutSeconds=1&resourceVersion=1000",
                       [](std::string_view) { return true; }, nullptr)
                  .ok());
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  const std::string host = h.server.url().substr(7);
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"201\",host=\"" + host + "\",method=\"POST\"} 3"));
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"409\",host=\"" + host + "\",method=\"POST\"} 1"));
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"200\",host=\"" + host + "\",method=\"GET\"} 3"));
  EXPECT_THAT(text, HasSubstr("rest_client_request_duration_seconds_count{host=\"" + host + "\",verb=\"POST\"} 4"));
  EXPECT_THAT(text, HasSubstr("rest_client_request_duration_seconds_count{host=\"" + host + "\",verb=\"GET\"} 2"));
}

// The body sizes client-go records (rest_client_request_size_bytes, rest_client_response_size_bytes) per verb,
// and a watch stream's bytes as they arrive, as exactly what the caller was handed.
TEST(HttpRestClientTest, MetricsCountBodyAndWatchBytes) {
  Harness h;
  prometheus::Registry registry;
  auto c = h.Client({}, RestClientOptions{.registry = &registry});
  const std::string pod = Pod("s");
  auto created = c->Create(kPods, pod);
  ASSERT_TRUE(created.ok());
  auto got = c->Get(std::string(kPods) + "/s");
  ASSERT_TRUE(got.ok());
  size_t streamed = 0;
  ASSERT_TRUE(c->Watch(std::string(kPods) + "?watch=1&timeoutSeconds=1&resourceVersion=0",
                       [&](std::string_view data) {
                         streamed += data.size();
                         return true;
                       },
                       nullptr)
                  .ok());
  ASSERT_GT(streamed, 0u) << "the watch from resourceVersion 0 should replay the pod";
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  const std::string host = h.server.url().substr(7);
  const std::string post = "{host=\"" + host + "\",verb=\"POST\"}";
  const std::string get = "{host=\"" + host + "\",verb=\"GET\"}";
  EXPECT_THAT(text, HasSubstr("rest_client_request_size_bytes_sum" + post + " " + std::to_string(pod.size())));
  EXPECT_THAT(text, HasSubstr("rest_client_response_size_bytes_sum" + post + " " +
                              std::to_string(created->size())));
  EXPECT_THAT(text, HasSubstr("rest_client_request_size_bytes_sum" + get + " 0"));
  EXPECT_THAT(text, HasSubstr("rest_client_response_size_bytes_sum" + get + " " + std::to_string(got->size())));
  EXPECT_THAT(text, HasSubstr("rest_client_response_size_bytes_count" + get + " 1"));  // the watch is not in it
  EXPECT_THAT(text, HasSubstr("cloneset_rest_client_watch_received_bytes_total{host=\"" + host + "\"} " +
                              std::to_string(streamed)));
}

TEST(HttpRestClientTest, TlsVerificationBearerAndClientCerts) {
  const testing::TestPki pki = testing::GenerateTestPki();
  Harness h(FakeApiServer::Options{.tls = true, .pki = &pki, .token = "s3cret"});
  struct Case {
    std::string name;
    ClientConfig cfg;
    bool ok;
    std::string error;
  };
  const std::string url = h.server.url();
  const std::string localhost = "https://localhost:" + url.substr(url.rfind(':') + 1);
  const std::vector<Case> cases = {
      {"ca + token", {.server = url, .ca_pem = pki.ca_pem, .token = "s3cret"}, true, ""},
      {"hostname localhost", {.server = localhost, .ca_pem = pki.ca_pem, .token = "s3cret"}, true, ""},
      {"wrong ca", {.server = url, .ca_pem = pki.other_ca_pem, .token = "s3cret"}, false, "SSLServerVerification"},
      {"insecure", {.server = url, .ca_pem = pki.other_ca_pem, .insecure_skip_tls_verify = true, .token = "s3cret"},
       true, ""},
      {"bad token", {.server = url, .ca_pem = pki.ca_pem, .token = "nope"}, false, "Unauthorized"},
      {"mismatched tls-server-name",
       {.server = url, .ca_pem = pki.ca_pem, .tls_server_name = "kubernetes", .token = "s3cret"}, false,
       "SSLServerVerification"},
  };
  for (const auto& c : cases) {
    auto client = h.Client(c.cfg);
    auto r = client->Get(kPods);
    EXPECT_EQ(r.ok(), c.ok) << c.name << ": " << r.status();
    if (!c.ok) {
      EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.error)) << c.name;
    }
  }
}

TEST(HttpRestClientTest, TlsServerNameAndMutualTls) {
  const testing::TestPki pki = testing::GenerateTestPki("kubernetes");
  Harness h(FakeApiServer::Options{.tls = true, .pki = &pki, .require_client_cert = true});
  ClientConfig cfg{.server = h.server.url(), .ca_pem = pki.ca_pem, .tls_server_name = "kubernetes"};
  EXPECT_FALSE(h.Client(cfg)->Get(kPods).ok());  // no client certificate
  cfg.client_cert_pem = pki.client_cert_pem;
  cfg.client_key_pem = pki.client_key_pem;
  auto r = h.Client(cfg)->Get(kPods);
  EXPECT_TRUE(r.ok()) << r.status();
  cfg.tls_server_name = "";
  EXPECT_FALSE(h.Client(cfg)->Get(kPods).ok());  // the cert names only "kubernetes"

  cfg.client_key_pem = "garbage";
  auto bad = NewHttpRestClient(cfg);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("client-key holds no PEM private key"));
}

TEST(HttpRestClientTest, RereadsRotatedTokenFile) {
  Harness h(FakeApiServer::Options{.token = "one"});
  const std::string dir = std::filesystem::temp_directory_path() / ("kube_token_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/token") << "one";
  auto c = h.Client(ClientConfig{.token_file = dir + "/token"});
  EXPECT_TRUE(c->Get(kPods).ok());
  h.server.set_token("rotated-two");
  EXPECT_EQ(c->Get(kPods).status().code(), absl::StatusCode::kUnauthenticated);
  std::ofstream(dir + "/token") << "rotated-two";
  EXPECT_TRUE(c->Get(kPods).ok());
  std::filesystem::remove_all(dir);
}

TEST(HttpRestClientTest, WatchStreamsErrorsAndCancel) {
  Harness h;
  auto c = h.Client();
  h.server.Upsert(kPods, Pod("w1"));
  std::string got;
  CancelToken cancel;
  std::thread canceller;
  absl::Status s = c->Watch(std::string(kPods) + "?watch=1", [&](std::string_view data) {
    got.append(data);
    if (!canceller.joinable()) canceller = std::thread([&] { cancel.Cancel(); });
    return true;
  }, &cancel);
  canceller.join();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_THAT(got, HasSubstr(R"("type":"ADDED")"));
  for (int i = 0; i < 100 && h.server.open_watches() > 0; ++i) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(h.server.open_watches(), 0);  // the client really closed the connection

  h.server.InjectFault({"GET", kPods, "watch", 403, "Forbidden", "", 1});
  s = c->Watch(std::string(kPods) + "?watch=1", [](std::string_view) { return true; }, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;

  // The server ending the stream (timeoutSeconds) is a clean end.
  s = c->Watch(std::string(kPods) + "?watch=1&timeoutSeconds=1&resourceVersion=1000",
               [](std::string_view) { return true; }, nullptr);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(HttpRestClientTest, RejectsBadServerUrls) {
  for (const char* bad : {"ftp://x", "https://", "https://h:99999", "https://[::1"}) {
    EXPECT_FALSE(NewHttpRestClient(ClientConfig{.server = bad}).ok()) << bad;
  }
  EXPECT_TRUE(NewHttpRestClient(ClientConfig{.server = "https://[::1]:6443/prefix/"}).ok());
}

// A server closes a keep-alive connection after its idle timeout (kube-apiserver: 90 s, Go's IdleTimeout); a pooled
// connection idle for longer must not be reused, or the next request fails writing to a closed connection
// (seen on the real control plane: "UNAVAILABLE: DELETE ...: Write", which a DELETE does not retry). Each request's
// client port tells whether it came over the same connection; the injected clock says how long it was idle.
TEST(HttpRestClientTest, DropsPooledConnectionsIdleLongerThanTheBound) {
  httplib::Server svr;
  absl::Mutex mu;
  std::vector<int> ports;
  svr.Get("/x", [&](const httplib::Request& req, httplib::Response& res) {
    absl::MutexLock l(&mu);
    ports.push_back(req.remote_port);
    res.set_content("{}", "application/json");
  });
  const int port = svr.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serve([&] { svr.listen_after_bind(); });  // bound and listening: connections wait in the backlog
  base::testing::FakeClock clock;
  RestClientOptions opts{.clock = &clock};
  ASSERT_LT(opts.max_idle, absl::Seconds(30)) << "must stay below the servers' idle timeouts (devcluster: 30 s)";
  auto c = NewHttpRestClient(ClientConfig{.server = absl::StrCat("http://127.0.0.1:", port)}, opts);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Get("/x").ok());
  clock.Advance(opts.max_idle - absl::Seconds(1));
  ASSERT_TRUE((*c)->Get("/x").ok());  // within the bound: reused
  clock.Advance(opts.max_idle + absl::Seconds(1));
  ASSERT_TRUE((*c)->Get("/x").ok());  // idle too long: a new connection
  c->reset();  // closes the pooled connections, so the server's threads end without waiting for their timeout
  svr.stop();
  serve.join();
  absl::MutexLock l(&mu);
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0], ports[1]);
  EXPECT_NE(ports[1], ports[2]);
}

}  // namespace
}  // namespace cloneset::kube
