#include "base/endpoints.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "prometheus/counter.h"

namespace cloneset::base {
namespace {

using ::testing::HasSubstr;

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

TEST(EndpointsUrl, V6HostsGoInBrackets) {
  EXPECT_EQ(EndpointUrl("127.0.0.1", 8080), "http://127.0.0.1:8080");
  EXPECT_EQ(EndpointUrl("::1", 9466), "http://[::1]:9466");
}

struct Answer {
  int status;  // -1: no answer
  std::string body;
  std::string content_type;
  std::string allow;
};

Answer Ask(const std::string& host, int port, const std::string& method, const std::string& path) {
  httplib::Client client(host, port);
  client.set_connection_timeout(2);
  client.set_read_timeout(2);
  httplib::Result res = method == "GET"    ? client.Get(path)
                        : method == "HEAD" ? client.Head(path)
                        : method == "POST" ? client.Post(path, "x", "text/plain")
                        : method == "PUT"  ? client.Put(path, "x", "text/plain")
                                           : client.Delete(path);
  if (!res) return {-1, "", "", ""};
  return {res->status, res->body, res->get_header_value("Content-Type"), res->get_header_value("Allow")};
}

Answer Get(int port, const std::string& path) { return Ask("127.0.0.1", port, "GET", path); }

std::shared_ptr<prometheus::Registry> RegistryWithCounter() {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("endpoints_test_total").Help("test").Register(*registry).Add({}).Increment(3);
  return registry;
}

// What each path and method answers, for the checks' states: one server with a registry, /healthz and /readyz.
TEST(EndpointServer, PathsMethodsAndProbeStates) {
  std::atomic<bool> alive{true};
  std::atomic<int> ready{0};
  auto server = EndpointServer::Start(
      {.listen = {"127.0.0.1:0"},
       .registry = RegistryWithCounter(),
       .healthz = [&] { return alive ? std::string() : std::string("shutting down"); },
       .readyz = [&]() -> std::string {
         switch (ready.load()) {
           case 0: return "caches not synced";
           case 1: return "no planner answers";
           default: return "";
         }
       }});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port(0);
  ASSERT_GT(port, 0);
  const struct Case {
    std::string name;
    bool alive;
    int ready;
    std::string method;
    std::string path;
    int status;
    std::string body;  // a substring of it
    std::string content_type;
  } cases[] = {
      {"metrics", true, 0, "GET", "/metrics", 200, "endpoints_test_total 3", kMetricsContentType},
      {"metrics head", true, 0, "HEAD", "/metrics", 200, "", kMetricsContentType},
      {"healthz ok", true, 0, "GET", "/healthz", 200, "ok", "text/plain"},
      {"healthz failing", false, 0, "GET", "/healthz", 503, "shutting down", "text/plain"},
      {"readyz not synced", true, 0, "GET", "/readyz", 503, "caches not synced", "text/plain"},
      {"readyz no planner", true, 1, "GET", "/readyz", 503, "no planner answers", "text/plain"},
      {"readyz ok", true, 2, "GET", "/readyz", 200, "ok", "text/plain"},
      {"unknown path", true, 2, "GET", "/debug/pprof", 404, "", ""},
      {"root", true, 2, "GET", "/", 404, "", ""},
      {"path prefix", true, 2, "GET", "/metricsx", 404, "", ""},
      {"post metrics", true, 2, "POST", "/metrics", 405, "method not allowed", "text/plain"},
      {"put healthz", true, 2, "PUT", "/healthz", 405, "method not allowed", "text/plain"},
      {"delete readyz", true, 2, "DELETE", "/readyz", 405, "method not allowed", "text/plain"},
      {"post unknown", true, 2, "POST", "/other", 404, "", ""},
  };
  for (const Case& c : cases) {
    alive = c.alive;
    ready = c.ready;
    const Answer a = Ask("127.0.0.1", port, c.method, c.path);
    EXPECT_EQ(a.status, c.status) << c.name;
    EXPECT_THAT(a.body, HasSubstr(c.body)) << c.name;
    if (c.method == "HEAD") {
      EXPECT_EQ(a.body, "") << c.name;
    }
    if (!c.content_type.empty()) {
      EXPECT_EQ(a.content_type, c.content_type) << c.name;
    }
    if (c.status == 405) {
      EXPECT_EQ(a.allow, "GET, HEAD") << c.name;
    }
  }
}

// A path without something to answer is 404: no registry, no readyz check.
TEST(EndpointServer, PathsWithoutAnAnswerAreNotFound) {
  auto server = EndpointServer::Start({.listen = {"127.0.0.1:0"}, .healthz = [] { return std::string(); }});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port(0);
  EXPECT_EQ(Get(port, "/healthz").status, 200);
  EXPECT_EQ(Get(port, "/readyz").status, 404);
  EXPECT_EQ(Get(port, "/metrics").status, 404);
  EXPECT_EQ(Ask("127.0.0.1", port, "POST", "/readyz").status, 404);
}

// Prometheus asks for gzip; the scrape is compressed as it was before.
TEST(EndpointServer, MetricsAreCompressedWhenAsked) {
  auto server = EndpointServer::Start({.listen = {"127.0.0.1:0"}, .registry = RegistryWithCounter()});
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port(0));
  client.set_decompress(false);
  auto res = client.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip");
}

// Raw bytes to 127.0.0.1:port; returns the status line of the answer ("" when the server closed without one, or
// when `hang_up` closes the connection right after sending).
std::string Raw(int port, const std::string& request, bool hang_up = false) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    for (size_t sent = 0; sent < request.size();) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    char buf[4096];
    while (!hang_up && answer.find("\r\n") == std::string::npos) {
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return answer.substr(0, answer.find("\r\n"));
}

// Odd requests get a 4xx answer, or a closed connection where httplib closes with part of the request unread (the
// kernel then resets the connection, which may drop the answer), never a crash or a hang; the server answers on
// afterwards.
TEST(EndpointServer, OddRequestsAreRefusedAndTheServerAnswersOn) {
  auto server = EndpointServer::Start(
      {.listen = {"127.0.0.1:0"}, .registry = RegistryWithCounter(), .healthz = [] { return std::string(); }});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port(0);
  enum Expect { kOk, kBadRequest, kTooLarge, kRefused, kHangUp };
  const struct {
    std::string name;
    std::string request;
    Expect expect;
  } cases[] = {
      {"garbage", "\x01\x02garbage\r\n\r\n", kBadRequest},
      {"unknown method", "BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n", kBadRequest},
      {"body over the limit", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n" +
                                  std::string(20000, 'c'), kTooLarge},
      {"long uri", "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", kRefused},
      {"long header", "GET /healthz HTTP/1.1\r\nX: " + std::string(20000, 'b') + "\r\n\r\n", kRefused},
      {"client gone mid-request", "GET /metr", kHangUp},
      {"client gone mid-body", "POST /metrics HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc", kHangUp},
      {"http/1.0", "GET /healthz HTTP/1.0\r\n\r\n", kOk},
  };
  for (const auto& c : cases) {
    const std::string line = Raw(port, c.request, c.expect == kHangUp);
    switch (c.expect) {
      case kOk: EXPECT_EQ(line, "HTTP/1.1 200 OK") << c.name; break;
      case kBadRequest: EXPECT_EQ(line, "HTTP/1.1 400 Bad Request") << c.name; break;
      case kTooLarge: EXPECT_EQ(line, "HTTP/1.1 413 Payload Too Large") << c.name; break;
      case kRefused: EXPECT_THAT(line, ::testing::AnyOf("", ::testing::StartsWith("HTTP/1.1 4"))) << c.name; break;
      case kHangUp: break;
    }
    EXPECT_EQ(Get(port, "/healthz").status, 200) << "after " << c.name;
  }
}

TEST(EndpointServer, StopEndsTheAnswersAndIsIdempotent) {
  auto server = EndpointServer::Start({.listen = {"127.0.0.1:0"}, .healthz = [] { return std::string(); }});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port(0);
  (*server)->Stop();
  EXPECT_EQ(Get(port, "/healthz").status, -1);
  (*server)->Stop();
}

TEST(EndpointServer, StopRightAfterStartReturns) {
  for (int i = 0; i < 20; ++i) {
    auto server = EndpointServer::Start({.listen = {"127.0.0.1:0", "127.0.0.2:0"}, .registry = RegistryWithCounter()});
    ASSERT_TRUE(server.ok()) << server.status();
  }  // each destructor stops and joins; a lost stop would hang here
}

// The same host and port twice is one listener (port 0 too); distinct addresses are one listener each, and each
// answers every path.
TEST(EndpointServer, OneListenerPerDistinctAddress) {
  const struct {
    std::vector<std::string> listen;
    size_t listeners;
  } cases[] = {
      {{"127.0.0.1:0"}, 1},
      {{"127.0.0.1:0", "127.0.0.1:0"}, 1},
      {{"127.0.0.1:0", "127.0.0.2:0"}, 2},
      {{"127.0.0.1:0", "127.0.0.2:0", "127.0.0.1:0"}, 2},
  };
  for (const auto& c : cases) {
    const std::string name = absl::StrJoin(c.listen, ",");
    auto server = EndpointServer::Start({.listen = c.listen,
                                         .registry = RegistryWithCounter(),
                                         .healthz = [] { return std::string(); },
                                         .readyz = [] { return std::string(); }});
    ASSERT_TRUE(server.ok()) << name << ": " << server.status();
    EXPECT_EQ((*server)->listeners(), c.listeners) << name;
    for (size_t i = 0; i < c.listen.size(); ++i) {
      std::string host;
      int unused = 0;
      ASSERT_TRUE(SplitHostPort(c.listen[i], &host, &unused));
      const int port = (*server)->port(i);
      ASSERT_GT(port, 0) << name;
      for (size_t j = 0; j < i; ++j) {
        if (c.listen[j] == c.listen[i]) {
          EXPECT_EQ((*server)->port(j), port) << name;
        }
      }
      for (const std::string path : {"/metrics", "/healthz", "/readyz"}) {
        EXPECT_EQ(Ask(host, port, "GET", path).status, 200) << name << " " << c.listen[i] << path;
      }
    }
  }
}

TEST(EndpointServer, BadAddressesAreInvalidArguments) {
  const std::vector<std::vector<std::string>> cases = {
      {}, {"127.0.0.1"}, {"127.0.0.1:http"}, {"127.0.0.1:70000"}, {"127.0.0.1:-1"}, {"127.0.0.1:0", "x"}};
  for (const auto& listen : cases) {
    auto server = EndpointServer::Start({.listen = listen, .healthz = [] { return std::string(); }});
    ASSERT_FALSE(server.ok()) << absl::StrJoin(listen, ",");
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << absl::StrJoin(listen, ",");
  }
}

size_t OpenFiles() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// An address not on this host, and a port in use (by another listener, as by another process), cannot be bound;
// the listener bound before the failing one is closed again.
TEST(EndpointServer, BindFailureIsUnavailableNamingTheAddress) {
  auto taken = EndpointServer::Start({.listen = {"127.0.0.1:0"}, .registry = RegistryWithCounter()});
  ASSERT_TRUE(taken.ok()) << taken.status();
  const std::string in_use = absl::StrCat("127.0.0.1:", (*taken)->port(0));
  for (const std::string& addr : {std::string("192.0.2.1:9466"), in_use}) {  // 192.0.2.1: TEST-NET-1
    const size_t files = OpenFiles();
    auto server = EndpointServer::Start({.listen = {"127.0.0.1:0", addr}, .registry = RegistryWithCounter()});
    ASSERT_FALSE(server.ok()) << addr;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable) << addr;
    EXPECT_EQ(server.status().message(), "cannot listen on " + addr);
    EXPECT_EQ(OpenFiles(), files) << addr;
  }
  EXPECT_EQ(Get((*taken)->port(0), "/metrics").status, 200);  // the first listener still has its port
}

// The daemons' two flags: which listeners, which announce lines, which errors.
TEST(ServeDaemonEndpoints, FlagsToListenersAndAnnounceLines) {
  const struct Case {
    std::string metrics;
    std::string health;
    size_t listeners;  // 0: an error
    std::string error;
  } cases[] = {
      {"127.0.0.1:0", "127.0.0.1:0", 1, ""},
      {"127.0.0.1:0", "127.0.0.2:0", 2, ""},
      {"127.0.0.1:0", "", 1, ""},
      {"", "127.0.0.1:0", 1, ""},
      {"", "", 0, "--metrics_listen and --health_listen are both empty"},
      {"127.0.0.1", "127.0.0.1:0", 0, "--metrics_listen: address '127.0.0.1' is not host:port"},
      {"127.0.0.1:0", "127.0.0.1:x", 0, "--health_listen: address '127.0.0.1:x' is not host:port"},
      {"127.0.0.1:0", "192.0.2.1:9466", 0,
       "cannot serve /metrics and the probes (--metrics_listen=127.0.0.1:0 --health_listen=192.0.2.1:9466): "
       "cannot listen on 192.0.2.1:9466"},
  };
  for (const Case& c : cases) {
    const std::string name = c.metrics + " " + c.health;
    ::testing::internal::CaptureStderr();
    auto server = ServeDaemonEndpoints(c.metrics, c.health, RegistryWithCounter(), [] { return std::string(); },
                                       [] { return std::string("not yet"); });
    const std::string err = ::testing::internal::GetCapturedStderr();
    if (c.listeners == 0) {
      ASSERT_FALSE(server.ok()) << name;
      EXPECT_THAT(std::string(server.status().message()), HasSubstr(c.error)) << name;
      EXPECT_EQ(err, "") << name;
      continue;
    }
    ASSERT_TRUE(server.ok()) << name << ": " << server.status();
    EXPECT_EQ((*server)->listeners(), c.listeners) << name;
    const int metrics_port = (*server)->port(0);
    const int health_port = (*server)->port(1);
    const std::string metrics_host = c.metrics.empty() ? "127.0.0.1" : c.metrics.substr(0, c.metrics.find(':'));
    const std::string health_host = c.health.empty() ? "127.0.0.1" : c.health.substr(0, c.health.find(':'));
    EXPECT_EQ(err, absl::StrCat("metrics on http://", metrics_host, ":", metrics_port, "\nlistening on http://",
                                health_host, ":", health_port, "\n"))
        << name;
    if (c.listeners == 1) {
      EXPECT_EQ(metrics_port, health_port) << name;
    }
    // Every address answers every path.
    for (const auto& [host, port] : {std::pair{metrics_host, metrics_port}, std::pair{health_host, health_port}}) {
      const Answer m = Ask(host, port, "GET", "/metrics");
      EXPECT_EQ(m.status, 200) << name;
      EXPECT_THAT(m.body, HasSubstr("endpoints_test_total 3")) << name;
      EXPECT_EQ(Ask(host, port, "GET", "/healthz").status, 200) << name;
      const Answer r = Ask(host, port, "GET", "/readyz");
      EXPECT_EQ(r.status, 503) << name;
      EXPECT_EQ(r.body, "not yet") << name;
    }
  }
}

}  // namespace
}  // namespace cloneset::base
