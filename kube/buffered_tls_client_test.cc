// BufferedSslClient against a real TLS server on loopback (cpp-httplib's SSLServer with a throw-away PKI): what
// httplib's own TLS client does, over the buffered stream: status lines, headers and chunk lines read from the
// buffer, bodies smaller and larger than it, chunked responses, keep-alive reuse of one connection, a request
// body larger than the buffer, a read timeout, and a server that closes the connection.
#include "kube/buffered_tls_client.h"

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kube/testing/test_certs.h"

namespace cloneset::kube {
namespace {

using ::testing::HasSubstr;

// A body whose bytes depend on their position, so a byte lost, doubled or reordered shows.
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

class TlsServer {
 public:
  explicit TlsServer(const testing::TestPki& pki) : server_(testing::NewTlsServer(pki)) {}
  ~TlsServer() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::SSLServer& server() { return *server_; }
  int Start() {
    const int port = server_->bind_to_any_port("127.0.0.1");
    // Bound and listening already: a connection made before the thread accepts waits in the backlog.
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    return port;
  }

 private:
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
};

class BufferedSslClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // /body/N answers N patterned bytes with a header long enough to span several TLS reads of a line.
    server_.server().Get(R"(/body/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      {
        absl::MutexLock l(&mu_);
        remote_ports_.insert(req.remote_port);
      }
      res.set_header("X-Long", std::string(3000, 'h'));
      res.set_content(Pattern(std::stoul(req.matches[1])), "application/octet-stream");
    });
    // /chunked: a chunked body of small chunks and one larger than the client's buffer.
    server_.server().Get("/chunked", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
        const std::string body = Pattern(100000);
        size_t at = 0;
        for (size_t n : {1, 2, 3, 500, 17, 40000, 1, 9000}) {
          sink.write(body.data() + at, n);
          at += n;
        }
        sink.write(body.data() + at, body.size() - at);
        sink.done();
        return true;
      });
    });
    // /echo: the request body's size and its first and last bytes.
    server_.server().Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      const bool same = req.body == Pattern(req.body.size());
      res.set_content(std::to_string(req.body.size()) + (same ? " same" : " differs"), "text/plain");
    });
    server_.server().Get("/slow", [this](const httplib::Request&, httplib::Response& res) {
      release_slow_.WaitForNotificationWithTimeout(absl::Seconds(10));
      res.set_content("late", "text/plain");
    });
    server_.server().set_keep_alive_max_count(100);  // httplib closes after 5 requests by default
    port_ = server_.Start();
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (!release_slow_.HasBeenNotified()) release_slow_.Notify();
  }

  std::unique_ptr<BufferedSslClient> Client() {
    auto c = std::make_unique<BufferedSslClient>("127.0.0.1", port_);
    c->set_ca_cert_store(testing::NewCaStore(pki_.ca_pem));
    c->enable_server_certificate_verification(true);
    c->set_keep_alive(true);
    return c;
  }

  const testing::TestPki pki_ = testing::GenerateTestPki();
  TlsServer server_{pki_};
  int port_ = 0;
  absl::Mutex mu_;
  std::set<int> remote_ports_ ABSL_GUARDED_BY(mu_);
  absl::Notification release_slow_;
};

TEST_F(BufferedSslClientTest, BodiesOfEverySizeOnOneKeptAliveConnection) {
  auto client = Client();
  const size_t buffer = BufferedTlsStream::kBufferSize;
  for (int round = 0; round < 3; ++round) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{5000}, buffer - 1, buffer, buffer + 1, size_t{200000}}) {
      auto res = client->Get("/body/" + std::to_string(n));
      ASSERT_TRUE(res) << "size " << n << ": " << httplib::to_string(res.error());
      EXPECT_EQ(res->status, 200);
      EXPECT_EQ(res->get_header_value("X-Long"), std::string(3000, 'h')) << "size " << n;
      EXPECT_EQ(res->body, Pattern(n)) << "size " << n;
    }
  }
  absl::MutexLock l(&mu_);
  EXPECT_EQ(remote_ports_.size(), 1u) << "21 requests should share one keep-alive connection";
}

TEST_F(BufferedSslClientTest, ChunkedBodyArrivesWhole) {
  auto client = Client();
  std::string got;
  auto res = client->Get("/chunked", [&](const char* data, size_t n) {
    got.append(data, n);
    return true;
  });
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(got, Pattern(100000));
  // The connection is still good for the next request after the chunked body's last line.
  auto next = client->Get("/body/10");
  ASSERT_TRUE(next) << httplib::to_string(next.error());
  EXPECT_EQ(next->body, Pattern(10));
}

TEST_F(BufferedSslClientTest, RequestBodiesSmallerAndLargerThanTheBuffer) {
  auto client = Client();
  for (size_t n : {size_t{10}, BufferedTlsStream::kBufferSize - 200, size_t{100000}}) {
    auto res = client->Post("/echo", Pattern(n), "application/octet-stream");
    ASSERT_TRUE(res) << "size " << n << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->body, std::to_string(n) + " same");
  }
}

TEST_F(BufferedSslClientTest, AReadTimeoutFailsTheRequest) {
  auto client = Client();
  client->set_read_timeout(0, 200 * 1000);
  auto res = client->Get("/slow");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read);
  release_slow_.Notify();
  // A new request after the failed one works (on a new connection).
  auto next = client->Get("/body/3");
  ASSERT_TRUE(next) << httplib::to_string(next.error());
  EXPECT_EQ(next->body, Pattern(3));
}

TEST_F(BufferedSslClientTest, ACertificateOfAnotherCaIsRefused) {
  auto c = std::make_unique<BufferedSslClient>("127.0.0.1", port_);
  c->set_ca_cert_store(testing::NewCaStore(pki_.other_ca_pem));
  c->enable_server_certificate_verification(true);
  auto res = c->Get("/body/1");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::SSLServerVerification);
}

TEST_F(BufferedSslClientTest, AServerThatClosesTheConnectionIsAFreshConnectionNextTime) {
  server_.server().set_keep_alive_max_count(2);  // the server closes after every second request
  auto client = Client();
  for (int i = 0; i < 6; ++i) {
    auto res = client->Get("/body/700");
    ASSERT_TRUE(res) << "request " << i << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->body, Pattern(700));
  }
  absl::MutexLock l(&mu_);
  EXPECT_GE(remote_ports_.size(), 3u);
}

}  // namespace
}  // namespace cloneset::kube
