// The fault proxy in front of a TLS API server (kube/testing's FakeApiServer on 127.0.0.1:0): it forwards each
// client's own credentials, injects exactly the write faults the shared FaultInjector decides for the seed (a
// conflict or an error before commit never reaches the API server, an error after commit does), cuts watches
// without the final chunk, delays requests, passes a non-stream watch answer on, and leaves other clients alone.
#include "tests/fault_proxy/fault_proxy.h"

#include <chrono>
#include <map>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kube/config.h"
#include "kube/testing/fake_apiserver.h"
#include "kube/testing/test_certs.h"

namespace cloneset::testing {
namespace {

using devcluster::FaultInjector;
using devcluster::FaultOptions;
using devcluster::WriteFault;
using kube::testing::FakeApiServer;

constexpr char kToken[] = "proxy-test-token";
constexpr char kExecutor[] = "cloneset-executor/0.1 (solo)";
constexpr char kConfigMaps[] = "/api/v1/namespaces/ns/configmaps";

httplib::Headers Headers(const std::string& user_agent, bool token = true) {
  httplib::Headers h = {{"User-Agent", user_agent}};
  if (token) h.emplace("Authorization", absl::StrCat("Bearer ", kToken));
  return h;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = kube::testing::GenerateTestPki();
    FakeApiServer::Options o;
    o.tls = true;
    o.pki = &pki_;
    o.token = kToken;
    api_ = std::make_unique<FakeApiServer>(o);
    ASSERT_TRUE(api_->Start().ok());
  }
  void TearDown() override {
    if (proxy_) proxy_->Stop();
    api_->Stop();
  }

  void StartProxy(FaultOptions faults) {
    FaultProxyOptions o;
    o.upstream.server = api_->url();
    o.upstream.ca_pem = pki_.ca_pem;
    o.faults = faults;
    proxy_ = std::make_unique<FaultProxy>(o);
    ASSERT_TRUE(proxy_->Start().ok());
  }

  httplib::Client Client(std::chrono::seconds read_timeout = std::chrono::seconds(30)) const {
    httplib::Client c("127.0.0.1", proxy_->port());
    c.set_read_timeout(read_timeout);
    return c;
  }

  static std::string ConfigMap(const std::string& name) {
    return absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name,
                        R"(","namespace":"ns"},"data":{"k":"v"}})");
  }

  kube::testing::TestPki pki_;
  std::unique_ptr<FakeApiServer> api_;
  std::unique_ptr<FaultProxy> proxy_;
};

TEST_F(FaultProxyTest, ForwardsTheClientsOwnCredentialsOverTls) {
  StartProxy({});
  api_->Upsert(kConfigMaps, ConfigMap("a"));
  auto c = Client();
  auto ok = c.Get(absl::StrCat(kConfigMaps, "/a"), Headers("kubectl/v1.33"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_TRUE(absl::StrContains(ok->body, R"("name":"a")")) << ok->body;
  auto anonymous = c.Get(absl::StrCat(kConfigMaps, "/a"), Headers("kubectl/v1.33", /*token=*/false));
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401) << "the proxy must not add credentials of its own";
  auto created = c.Post(kConfigMaps, Headers("kubectl/v1.33"), ConfigMap("b"), "application/json");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201) << created->body;
  EXPECT_NE(api_->GetObject(kConfigMaps, "b"), "");
}

// Every write's fault is the one a FaultInjector with the same options draws for it, in order; the API server saw
// exactly the writes that were forwarded (none, after-commit errors and nothing else).
TEST_F(FaultProxyTest, WriteFaultsFollowTheSharedDecisionsOfTheSeed) {
  const FaultOptions faults{.conflict_rate = 0.3, .error_rate = 0.4, .user_agent = "cloneset-executor", .seed = 42};
  StartProxy(faults);
  FaultInjector expected(faults);
  auto c = Client();
  std::map<WriteFault, int> seen;
  for (int i = 0; i < 40; ++i) {
    const std::string name = absl::StrCat("cm-", i);
    const WriteFault want = expected.ForRequest("POST", "cloneset-executor");
    ++seen[want];
    auto r = c.Post(kConfigMaps, Headers(kExecutor), ConfigMap(name), "application/json");
    ASSERT_TRUE(r) << name;
    const bool committed = api_->GetObject(kConfigMaps, name) != "";
    switch (want) {
      case WriteFault::kNone:
        EXPECT_EQ(r->status, 201) << name << " " << r->body;
        EXPECT_TRUE(committed) << name;
        break;
      case WriteFault::kConflict:
        EXPECT_EQ(r->status, 409) << name << " " << r->body;
        EXPECT_TRUE(absl::StrContains(r->body, R"("reason":"Conflict")")) << r->body;
        EXPECT_FALSE(committed) << name << ": a conflict must not reach the API server";
        break;
      case WriteFault::kErrorBeforeCommit:
        EXPECT_EQ(r->status, 500) << name << " " << r->body;
        EXPECT_FALSE(committed) << name << ": an error before commit must not reach the API server";
        break;
      case WriteFault::kErrorAfterCommit:
        EXPECT_EQ(r->status, 500) << name << " " << r->body;
        EXPECT_TRUE(absl::StrContains(r->body, "after commit")) << r->body;
        EXPECT_TRUE(committed) << name << ": an error after commit is answered for a committed write";
        break;
    }
  }
  for (WriteFault f : {WriteFault::kNone, WriteFault::kConflict, WriteFault::kErrorBeforeCommit,
                       WriteFault::kErrorAfterCommit}) {
    EXPECT_GT(seen[f], 0) << devcluster::WriteFaultName(f) << " never drawn for seed 42: pick another seed";
  }
  // Reads and other clients are never faulted.
  for (int i = 0; i < 10; ++i) {
    auto read = c.Get(absl::StrCat(kConfigMaps, "/cm-0"), Headers(kExecutor));
    ASSERT_TRUE(read);
    EXPECT_NE(read->status, 409);
    EXPECT_NE(read->status, 500);
    auto other = c.Post(kConfigMaps, Headers("kubectl/v1.33"), ConfigMap(absl::StrCat("other-", i)), "application/json");
    ASSERT_TRUE(other);
    EXPECT_EQ(other->status, 201) << other->body;
  }
}

// A watch from the faulted client is cut after uniform[d/2, d]: the events so far arrive, then the connection
// closes without the final chunk (the client sees an error, not an end).
TEST_F(FaultProxyTest, WatchOfTheFaultedClientIsCutWithoutTheFinalChunk) {
  StartProxy({.watch_drop_after = std::chrono::milliseconds(400), .user_agent = "cloneset-executor"});
  api_->Upsert(kConfigMaps, ConfigMap("w1"));
  auto c = Client();
  std::string body;
  const auto start = std::chrono::steady_clock::now();
  auto r = c.Get(absl::StrCat(kConfigMaps, "?watch=true"), Headers(kExecutor), [&](const char* d, size_t n) {
    body.append(d, n);
    return true;
  });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r) << "the watch ended cleanly; it must be cut";
  EXPECT_TRUE(absl::StrContains(body, R"("name":"w1")")) << body;
  EXPECT_GE(took, std::chrono::milliseconds(200));  // not before d/2
  EXPECT_LT(took, std::chrono::seconds(25)) << "ended by the client's read timeout, not by the cut";
}

// Another client's watch is a plain pass-through: events as they happen, and a clean end when the API server ends
// the stream.
TEST_F(FaultProxyTest, OtherClientsWatchPassesEventsAndEndsCleanly) {
  StartProxy({.watch_drop_after = std::chrono::milliseconds(400), .user_agent = "cloneset-executor"});
  auto c = Client();
  std::string body;
  std::thread reader([&] {
    auto r = c.Get(absl::StrCat(kConfigMaps, "?watch=true"), Headers("kubectl/v1.33"), [&](const char* d, size_t n) {
      body.append(d, n);
      return true;
    });
    EXPECT_TRUE(r) << "the watch was cut: " << httplib::to_string(r.error());
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (api_->open_watches() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(api_->open_watches(), 1);
  api_->Upsert(kConfigMaps, ConfigMap("w2"));
  api_->CloseWatches();
  reader.join();
  EXPECT_TRUE(absl::StrContains(body, R"("name":"w2")")) << body;
}

// A watch the API server refuses is not a stream: its status and Status body reach the client.
TEST_F(FaultProxyTest, RefusedWatchPassesTheStatusOn) {
  StartProxy({});
  api_->InjectFault({.method = "GET", .path_prefix = kConfigMaps, .query_contains = "watch", .status = 403,
                     .reason = "Forbidden"});
  auto c = Client();
  auto r = c.Get(absl::StrCat(kConfigMaps, "?watch=true"), Headers(kExecutor));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_TRUE(absl::StrContains(r->body, R"("reason":"Forbidden")")) << r->body;
}

// Each request is held for the delay the shared FaultInjector draws for it: the requests take at least the sum.
TEST_F(FaultProxyTest, RequestsAreHeldForTheDrawnDelays) {
  const FaultOptions faults{.max_delay = std::chrono::milliseconds(200), .user_agent = "cloneset-executor", .seed = 7};
  StartProxy(faults);
  FaultInjector expected(faults);
  std::chrono::milliseconds sum{0};
  for (int i = 0; i < 5; ++i) sum += *expected.DelayFor("cloneset-executor");  // GETs draw no write fault
  ASSERT_GT(sum.count(), 0);
  api_->Upsert(kConfigMaps, ConfigMap("d"));
  auto c = Client();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    auto r = c.Get(absl::StrCat(kConfigMaps, "/d"), Headers(kExecutor));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, sum);
}

TEST(FaultProxyUpstreamTest, UnreachableApiServerIs503AndBadServerIsAnError) {
  FaultProxyOptions o;
  o.upstream.server = "ftp://127.0.0.1:1";
  FaultProxy bad(o);
  const absl::Status s = bad.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "https:// or http://")) << s;

  o.upstream.server = "http://127.0.0.1:1";  // nothing listens on port 1
  FaultProxy proxy(o);
  ASSERT_TRUE(proxy.Start().ok());
  httplib::Client c("127.0.0.1", proxy.port());
  auto r = c.Get("/api/v1/namespaces", Headers("kubectl/v1.33"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_TRUE(absl::StrContains(r->body, "fault proxy: API server")) << r->body;
}

TEST(KubeconfigThroughProxyTest, PointsEveryClusterAtTheProxyAndKeepsTheCredentials) {
  const std::string in = R"(apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: Zm9v
    tls-server-name: kubernetes
users:
- name: executor
  user:
    token: secret-token
contexts:
- name: executor
  context: {cluster: real, user: executor}
current-context: executor
)";
  auto out = KubeconfigThroughProxy(in, "http://127.0.0.1:4242");
  ASSERT_TRUE(out.ok()) << out.status();
  auto cfg = kube::ParseKubeconfig(*out, "proxy", "/");
  ASSERT_TRUE(cfg.ok()) << cfg.status() << "\n" << *out;
  EXPECT_EQ(cfg->server, "http://127.0.0.1:4242");
  EXPECT_EQ(cfg->ca_pem, "");
  EXPECT_EQ(cfg->tls_server_name, "");
  EXPECT_EQ(cfg->token, "secret-token");

  struct Case { const char* yaml; const char* error; };
  for (const Case& c : {Case{"kind: Config\n", "no clusters"}, Case{"clusters: [{name: a, cluster: 3}]\n", "not a map"},
                        Case{"clusters: [\n", "kubeconfig: "}}) {
    auto bad = KubeconfigThroughProxy(c.yaml, "http://127.0.0.1:1");
    EXPECT_FALSE(bad.ok()) << c.yaml;
    EXPECT_TRUE(absl::StrContains(bad.status().message(), c.error)) << bad.status();
  }
}

}  // namespace
}  // namespace cloneset::testing
