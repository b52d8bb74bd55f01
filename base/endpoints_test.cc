#include "base/endpoints.h"

#include <atomic>
#include <string>

#include "gtest/gtest.h"
#include "httplib.h"
#include "prometheus/counter.h"

namespace cloneset::base {
namespace {

TEST(EndpointsSplitHostPort, Table) {
  struct Case {
    std::string addr;
    bool ok;
    std::string host;
    int port;
  };
  const Case cases[] = {
      {"127.0.0.1:8081", true, "127.0.0.1", 8081},
      {"0.0.0.0:0", true, "0.0.0.0", 0},
      {"[::1]:9466", true, "::1", 9466},
      {":8080", true, "", 8080},
      {"localhost", false, "", 0},
      {"127.0.0.1:http", false, "", 0},
      {"127.0.0.1:", false, "", 0},
  };
  for (const auto& c : cases) {
    std::string host;
    int port = 0;
    ASSERT_EQ(SplitHostPort(c.addr, &host, &port), c.ok) << c.addr;
    if (!c.ok) continue;
    EXPECT_EQ(host, c.host) << c.addr;
    EXPECT_EQ(port, c.port) << c.addr;
  }
}

struct Answer {
  int status;  // -1: no answer
  std::string body;
};

Answer Get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(2);
  auto res = client.Get(path);
  if (!res) return {-1, ""};
  return {res->status, res->body};
}

TEST(EndpointsHealth, HealthzFollowsItsCheckAndReadyzIsAbsentWithoutOne) {
  std::atomic<bool> stopping{false};
  auto health = HealthServer::Start("127.0.0.1:0", [&] { return stopping ? std::string("shutting down") : ""; });
  ASSERT_TRUE(health.ok()) << health.status();
  const int port = (*health)->port();
  ASSERT_GT(port, 0);
  Answer a = Get(port, "/healthz");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "ok");
  EXPECT_EQ(Get(port, "/readyz").status, 404);
  stopping = true;
  a = Get(port, "/healthz");
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.body, "shutting down");
}

TEST(EndpointsHealth, ReadyzAnswersWhyItIsNotReady) {
  std::atomic<int> state{0};
  auto health = HealthServer::Start("127.0.0.1:0", [] { return std::string(); }, [&]() -> std::string {
    switch (state.load()) {
      case 0: return "caches not synced";
      case 1: return "no planner answers";
      default: return "";
    }
  });
  ASSERT_TRUE(health.ok()) << health.status();
  const int port = (*health)->port();
  const struct {
    int state;
    int status;
    std::string body;
  } cases[] = {{0, 503, "caches not synced"}, {1, 503, "no planner answers"}, {2, 200, "ok"}};
  for (const auto& c : cases) {
    state = c.state;
    const Answer a = Get(port, "/readyz");
    EXPECT_EQ(a.status, c.status) << c.state;
    EXPECT_EQ(a.body, c.body) << c.state;
  }
  const Answer h = Get(port, "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok");
}

TEST(EndpointsHealth, StopEndsTheAnswersAndIsIdempotent) {
  auto health = HealthServer::Start("127.0.0.1:0", [] { return std::string(); });
  ASSERT_TRUE(health.ok()) << health.status();
  const int port = (*health)->port();
  (*health)->Stop();
  EXPECT_EQ(Get(port, "/healthz").status, -1);
  (*health)->Stop();
}

TEST(EndpointsHealth, StopRightAfterStartReturns) {
  for (int i = 0; i < 20; ++i) {
    auto health = HealthServer::Start("127.0.0.1:0", [] { return std::string(); });
    ASSERT_TRUE(health.ok()) << health.status();
  }  // each destructor stops and joins; a lost stop would hang here
}

TEST(EndpointsHealth, BadAddressesAreInvalidArguments) {
  for (const std::string addr : {"127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", "127.0.0.1:-1"}) {
    auto health = HealthServer::Start(addr, [] { return std::string(); });
    ASSERT_FALSE(health.ok()) << addr;
    EXPECT_EQ(health.status().code(), absl::StatusCode::kInvalidArgument) << addr;
  }
}

// (httplib binds with SO_REUSEPORT, so a port in use is no failure; an address not on this host is.)
TEST(EndpointsHealth, AddressThatCannotBeBoundIsUnavailable) {
  auto health = HealthServer::Start("192.0.2.1:9466", [] { return std::string(); });  // TEST-NET-1
  ASSERT_FALSE(health.ok());
  EXPECT_EQ(health.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(health.status().message(), "cannot serve health probes on 192.0.2.1:9466");
}

TEST(EndpointsMetrics, ServesTheRegistry) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("endpoints_test_total").Help("test").Register(*registry).Add({}).Increment(3);
  auto exposer = ServeMetrics("127.0.0.1:0", registry);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  const auto ports = (*exposer)->GetListeningPorts();
  ASSERT_EQ(ports.size(), 1u);
  const Answer a = Get(ports.front(), "/metrics");
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(a.body.find("endpoints_test_total 3"), std::string::npos) << a.body;
}

TEST(EndpointsMetrics, BindFailureIsUnavailable) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto first = ServeMetrics("127.0.0.1:0", registry);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->GetListeningPorts().front());
  auto second = ServeMetrics(taken, registry);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cloneset::base
