#include "base/testing/fake_clock.h"
#include "devcluster/watch_fanout.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "devcluster/http_server.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json Pod(const std::string& name, const std::string& app) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", app}}}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "x:1"}}}}}}};
}

std::vector<json> Lines(const std::string& body) {
  std::vector<json> out;
  for (absl::string_view line : absl::StrSplit(body, '\n', absl::SkipEmpty())) out.push_back(json::parse(line));
  return out;
}

size_t CountEvents(const std::string& body) {
  size_t n = 0;
  for (size_t p = 0; (p = body.find("}\n", p)) != std::string::npos; p += 2) ++n;
  return n;
}

// Decodes HTTP/1.1 chunk framing (a body written in raw mode).
std::string Unchunk(const std::string& framed) {
  std::string out;
  size_t pos = 0;
  while (pos < framed.size()) {
    size_t eol = framed.find("\r\n", pos);
    EXPECT_NE(eol, std::string::npos) << "truncated chunk header";
    if (eol == std::string::npos) break;
    size_t n = std::stoul(framed.substr(pos, eol - pos), nullptr, 16);
    out += framed.substr(eol + 2, n);
    EXPECT_EQ(framed.substr(eol + 2 + n, 2), "\r\n") << "chunk not terminated";
    pos = eol + 2 + n + 2;
  }
  return out;
}

// A connected TCP pair on loopback: the "server" end (accepted) and the client end.
struct TcpPair {
  int server = -1, client = -1;
  int listen_port = 0, client_port = 0;
  TcpPair() {
    int l = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(l, 1);
    ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len);
    listen_port = ntohs(a.sin_port);
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    ::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a);
    server = ::accept(l, nullptr, nullptr);
    ::close(l);
    len = sizeof a;
    ::getsockname(client, reinterpret_cast<sockaddr*>(&a), &len);
    client_port = ntohs(a.sin_port);
  }
  ~TcpPair() {
    ::close(server);
    ::close(client);
  }
  // Everything the client end has received within `wait`.
  std::string Read(std::chrono::milliseconds wait) { return ReadEvents(0, wait); }
  // Reads until `events` whole events arrived (each ends with "}\n", framed or not) or `wait` passed, then what
  // follows within 20 ms (so a test also sees events it did not expect).
  std::string ReadEvents(size_t events, std::chrono::milliseconds wait = 10s) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + wait;
    char buf[65536];
    size_t seen = 0, scanned = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t n = ::recv(client, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        out.append(buf, n);
        for (size_t p; (p = out.find("}\n", scanned)) != std::string::npos; scanned = p + 2) ++seen;
        if (events > 0 && seen >= events) deadline = std::min(deadline, std::chrono::steady_clock::now() + 20ms);
      } else {
        std::this_thread::sleep_for(1ms);
      }
    }
    return out;
  }
};

class WatchFanoutTest : public ::testing::Test {
 protected:
  std::unique_ptr<WatchStream> Watch(std::map<std::string, std::string> query) {
    ApiRequest r;
    r.method = "GET";
    r.path = "/api/v1/namespaces/default/pods";
    query["watch"] = "true";
    r.query = std::move(query);
    ApiResponse resp = api_.Handle(r);
    EXPECT_TRUE(resp.watch) << resp.body;
    return std::move(resp.watch);
  }
  std::string Rv() { return std::to_string(store_.CurrentResourceVersion()); }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_, StoreOptions{.watch_history = 20}};
  ApiServer api_{&store_, ApiServerOptions{}};
};

TEST(FindConnectionSocketTest, FindsTheServerEndOnly) {
  TcpPair p;
  EXPECT_EQ(FindConnectionSocket("127.0.0.1", p.listen_port, "127.0.0.1", p.client_port), p.server);
  EXPECT_EQ(FindConnectionSocket("127.0.0.1", p.client_port, "127.0.0.1", p.listen_port), p.client);
  EXPECT_EQ(FindConnectionSocket("127.0.0.1", p.listen_port, "127.0.0.1", p.client_port + 1), -1);
  EXPECT_EQ(FindConnectionSocket("127.0.0.2", p.listen_port, "127.0.0.1", p.client_port), -1);
}

TEST_F(WatchFanoutTest, WritesEachMatchingEventOnceInOrderFromTheWriterThread) {
  WatchFanout fan(&api_, &store_);
  TcpPair web, db;
  auto web_stream = Watch({{"resourceVersion", Rv()}, {"labelSelector", "app=web"}});
  auto db_stream = Watch({{"resourceVersion", Rv()}, {"labelSelector", "app=db"}});
  std::atomic<int> writer_calls_off_thread{0};
  auto serve = [&](WatchStream& s, TcpPair& p) {
    const auto me = std::this_thread::get_id();
    WatchFanout::Write w = [&, me](std::string_view d) {
      if (std::this_thread::get_id() != me) ++writer_calls_off_thread;
      return ::send(p.server, d.data(), d.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(d.size());
    };
    return fan.Serve(s, w, p.server, false);
  };
  auto f1 = std::async(std::launch::async, serve, std::ref(*web_stream), std::ref(web));
  auto f2 = std::async(std::launch::async, serve, std::ref(*db_stream), std::ref(db));
  while (fan.open_streams() < 2) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(store_.Create(kPods, Pod("w1", "web")).ok());
  ASSERT_TRUE(store_.Create(kPods, Pod("d1", "db")).ok());
  ASSERT_TRUE(store_.Create(kPods, Pod("w2", "web")).ok());
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(store_.Delete(kPods, "default", "w1", now).ok());
  auto web_events = Lines(web.ReadEvents(3));
  auto db_events = Lines(db.ReadEvents(1));
  std::vector<std::string> got;
  for (const auto& e : web_events) got.push_back(absl::StrCat(e["type"].get<std::string>(), " ",
                                                              e["object"]["metadata"]["name"].get<std::string>()));
  EXPECT_EQ(got, (std::vector<std::string>{"ADDED w1", "ADDED w2", "DELETED w1"}));
  ASSERT_EQ(db_events.size(), 1u);
  EXPECT_EQ(db_events[0]["object"]["metadata"]["name"], "d1");
  EXPECT_EQ(writer_calls_off_thread.load(), 4);  // the connection threads wrote nothing themselves
  fan.Shutdown();
  EXPECT_EQ(f1.get(), WatchEnd::kShutdown);
  EXPECT_EQ(f2.get(), WatchEnd::kShutdown);
}

TEST_F(WatchFanoutTest, RawModeFramesEachEventAsOneChunk) {
  WatchFanout fan(&api_, &store_);
  TcpPair p;
  auto s = Watch({{"resourceVersion", Rv()}});
  WatchFanout::Write unused = [](std::string_view) { return false; };
  auto f = std::async(std::launch::async, [&] { return fan.Serve(*s, unused, p.server, true); });
  while (fan.open_streams() < 1) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(store_.Create(kPods, Pod("a", "web")).ok());
  ASSERT_TRUE(store_.Create(kPods, Pod("b", "web")).ok());
  std::string framed = p.ReadEvents(2);
  auto events = Lines(Unchunk(framed));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(framed.substr(0, framed.find("\r\n")), absl::StrCat(absl::Hex(events[0].dump().size() + 1)));
  fan.Shutdown();
  EXPECT_EQ(f.get(), WatchEnd::kShutdown);
}

TEST_F(WatchFanoutTest, WithoutASocketTheConnectionThreadWrites) {
  WatchFanout fan(&api_, &store_);
  auto s = Watch({{"resourceVersion", Rv()}});
  std::mutex mu;
  std::string body;
  std::thread::id serving;
  WatchFanout::Write w = [&](std::string_view d) {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_EQ(std::this_thread::get_id(), serving);
    body.append(d);
    return true;
  };
  auto f = std::async(std::launch::async, [&] {
    {
      std::lock_guard<std::mutex> l(mu);
      serving = std::this_thread::get_id();
    }
    return fan.Serve(*s, w, -1, false);
  });
  while (fan.open_streams() < 1) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(store_.Create(kPods, Pod("a", "web")).ok());
  for (int i = 0; i < 200; ++i) {
    std::lock_guard<std::mutex> l(mu);
    if (!body.empty()) break;
    std::this_thread::sleep_for(1ms);
  }
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(Lines(body).size(), 1u);
  }
  fan.Shutdown();
  EXPECT_EQ(f.get(), WatchEnd::kShutdown);
}

TEST_F(WatchFanoutTest, TimeoutEndsTheStreamCleanly) {
  WatchFanout fan(&api_, &store_, {.tick = 20ms});
  TcpPair p;
  auto s = Watch({{"resourceVersion", Rv()}, {"timeoutSeconds", "0"}});
  WatchFanout::Write w = [&](std::string_view d) { return ::send(p.server, d.data(), d.size(), MSG_NOSIGNAL) > 0; };
  EXPECT_EQ(fan.Serve(*s, w, p.server, false), WatchEnd::kDone);
}

TEST_F(WatchFanoutTest, TooOldResourceVersionSends410ThenEnds) {
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(store_.Create(kPods, Pod(absl::StrCat("p", i), "web")).ok());
  WatchFanout fan(&api_, &store_);
  TcpPair p;
  auto s = Watch({{"resourceVersion", "1"}});
  WatchFanout::Write w = [&](std::string_view d) { return ::send(p.server, d.data(), d.size(), MSG_NOSIGNAL) > 0; };
  EXPECT_EQ(fan.Serve(*s, w, p.server, false), WatchEnd::kDone);
  auto events = Lines(p.ReadEvents(1));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["code"], 410);
}

TEST_F(WatchFanoutTest, IdleStreamsGetBookmarks) {
  WatchFanout fan(&api_, &store_, {.tick = 50ms});
  TcpPair p;
  auto s = Watch({{"resourceVersion", Rv()}, {"allowWatchBookmarks", "true"}});
  WatchFanout::Write w = [&](std::string_view d) { return ::send(p.server, d.data(), d.size(), MSG_NOSIGNAL) > 0; };
  auto f = std::async(std::launch::async, [&] { return fan.Serve(*s, w, p.server, false); });
  auto events = Lines(p.ReadEvents(1));
  ASSERT_GE(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "BOOKMARK");
  EXPECT_EQ(events[0]["object"]["metadata"]["resourceVersion"], Rv());
  fan.Shutdown();
  EXPECT_EQ(f.get(), WatchEnd::kShutdown);
}

TEST_F(WatchFanoutTest, InjectedCutAndVanishedClientEndTheStream) {
  WatchFanout fan(&api_, &store_, {.liveness = 20ms});
  {
    TcpPair p;
    auto s = Watch({{"resourceVersion", Rv()}});
    WatchFanout::Write w = [&](std::string_view) { return true; };
    EXPECT_EQ(fan.Serve(*s, w, p.server, true, std::chrono::steady_clock::now() + 30ms), WatchEnd::kCut);
  }
  TcpPair p;
  auto s = Watch({{"resourceVersion", Rv()}});
  WatchFanout::Write w = [&](std::string_view) { return true; };
  ::shutdown(p.client, SHUT_RDWR);
  EXPECT_EQ(fan.Serve(*s, w, p.server, true), WatchEnd::kBroken);
  EXPECT_EQ(fan.open_streams(), 0u);
}

// A client that stops reading must not delay the others; once it reads again it gets every event, in order,
// because its watcher waits in the store's history (or gets 410 when it fell out of it). Both write modes.
class SlowClientTest : public ::testing::TestWithParam<bool> {};

TEST_P(SlowClientTest, DoesNotStallOthersAndLosesNothing) {
  const bool raw = GetParam();
  base::testing::FakeClock clock{base::testing::FakeClock::k2026};
  Store store(&clock, StoreOptions{.watch_history = 100000});
  ApiServer api(&store, ApiServerOptions{});
  WatchFanout fan(&api, &store, {.max_queued_bytes = 64 << 10, .writers = 1});
  auto watch = [&] {
    ApiRequest r;
    r.method = "GET";
    r.path = "/api/v1/namespaces/default/pods";
    r.query = {{"watch", "true"}, {"resourceVersion", std::to_string(store.CurrentResourceVersion())}};
    return std::move(api.Handle(r).watch);
  };
  TcpPair slow, fast;
  auto slow_stream = watch(), fast_stream = watch();
  WatchFanout::Write slow_write = [&](std::string_view d) {
    return ::send(slow.server, d.data(), d.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(d.size());
  };
  WatchFanout::Write fast_write = [&](std::string_view d) {
    return ::send(fast.server, d.data(), d.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(d.size());
  };
  auto f1 = std::async(std::launch::async, [&] { return fan.Serve(*slow_stream, slow_write, slow.server, raw); });
  auto f2 = std::async(std::launch::async, [&] { return fan.Serve(*fast_stream, fast_write, fast.server, raw); });
  while (fan.open_streams() < 2) std::this_thread::sleep_for(1ms);
  const int kCount = 3000;  // ~1.3 MB of events: far more than the slow socket's buffers take
  std::string fast_body;
  for (int i = 0; i < kCount; ++i) {
    json pod = Pod(absl::StrCat("pod-", i), "web");
    pod["metadata"]["annotations"]["pad"] = std::string(200, 'x');
    ASSERT_TRUE(store.Create(kPods, pod).ok());
    if (i % 100 == 0) fast_body += fast.Read(1ms);
  }
  // A writer stalled by the slow client would hold these until the 30 s write timeout.
  fast_body += fast.ReadEvents(kCount - CountEvents(fast_body), 5s);
  EXPECT_EQ(Lines(raw ? Unchunk(fast_body) : fast_body).size(), static_cast<size_t>(kCount));
  std::string slow_body = slow.ReadEvents(kCount);
  auto events = Lines(raw ? Unchunk(slow_body) : slow_body);
  ASSERT_EQ(events.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(events[i]["object"]["metadata"]["name"], absl::StrCat("pod-", i)) << i;
  fan.Shutdown();
  EXPECT_EQ(f1.get(), WatchEnd::kShutdown);
  EXPECT_EQ(f2.get(), WatchEnd::kShutdown);
}

INSTANTIATE_TEST_SUITE_P(WriteModes, SlowClientTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "RawChunks" : "ThroughWrite"; });

// Through the HTTP server: chunked framing a real client reads, selectors per watcher, a clean end on timeout.
TEST(WatchOverHttpTest, ManyWatchersGetTheirEventsAndCleanEnds) {
  base::testing::FakeClock clock{base::testing::FakeClock::k2026};
  Store store(&clock);
  ApiServer api(&store, ApiServerOptions{});
  HttpServerOptions o;
  o.threads = 32;
  HttpServer http(&api, &store, nullptr, o);
  ASSERT_TRUE(http.Start().ok());
  const std::string rv = std::to_string(store.CurrentResourceVersion());
  constexpr int kWatchers = 20;
  std::vector<std::future<std::pair<int, std::string>>> clients;
  for (int i = 0; i < kWatchers; ++i) {
    clients.push_back(std::async(std::launch::async, [&, i] {
      httplib::Client cli("127.0.0.1", http.port());
      cli.set_read_timeout(10, 0);
      std::string body;
      auto r = cli.Get(absl::StrCat("/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=2&resourceVersion=",
                                    rv, "&labelSelector=app%3D", i % 2 ? "web" : "db")
                           .c_str(),
                       [&](const char* d, size_t n) {
                         body.append(d, n);
                         return true;
                       });
      return std::make_pair(r ? r->status : -1, body);
    }));
  }
  while (store.WatcherCount(kPods) < kWatchers) std::this_thread::sleep_for(1ms);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store.Create(kPods, Pod(absl::StrCat("p", i), i < 3 ? "web" : "db")).ok());
  for (int i = 0; i < kWatchers; ++i) {
    auto [status, body] = clients[i].get();
    EXPECT_EQ(status, 200) << i;  // the final chunk arrived: httplib reports a truncated body as an error
    auto events = Lines(body);
    ASSERT_EQ(events.size(), i % 2 ? 3u : 7u) << i;
    EXPECT_EQ(events.front()["object"]["metadata"]["name"], i % 2 ? "p0" : "p3");
  }
  http.Stop();
}

}  // namespace
}  // namespace cloneset::devcluster
