// The conversion webhook's server over real TLS on loopback: reviews answered, bad bodies answered (never a crash),
// the certificate renewed in its files served without a restart, bad files refused naming the flag.
#include "planner/service/conversion_server.h"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kube/testing/test_certs.h"
#include "nlohmann/json.hpp"
#include "prometheus/text_serializer.h"

namespace cloneset::planner::service {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::HasSubstr;

void Write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

class ConversionServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("conversion_server_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    pki_ = kube::testing::GenerateTestPki();
    Write(dir_ / "tls.crt", pki_.server_cert_pem);
    Write(dir_ / "tls.key", pki_.server_key_pem);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ConversionServerOptions Options() {
    ConversionServerOptions o;
    o.listen = "127.0.0.1:0";
    o.tls_cert = (dir_ / "tls.crt").string();
    o.tls_key = (dir_ / "tls.key").string();
    o.clock = &clock_;
    o.max_body_bytes = 1 << 20;
    return o;
  }

  // POST body to /convert trusting only `ca_pem`; status -1 when the TLS handshake or the request fails.
  static std::pair<int, std::string> Post(int port, const std::string& ca_pem, const std::string& body) {
    httplib::SSLClient cli("127.0.0.1", port);
    X509_STORE* store = X509_STORE_new();  // owned by the client afterwards
    BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
    while (X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, x);
      X509_free(x);
    }
    BIO_free(bio);
    cli.set_ca_cert_store(store);
    cli.enable_server_certificate_verification(true);
    cli.set_connection_timeout(5, 0);
    auto res = cli.Post("/convert", body, "application/json");
    if (!res) return {-1, ""};
    return {res->status, res->body};
  }

  static std::string Review() {
    return Json{{"apiVersion", "apiextensions.k8s.io/v1"},
                {"kind", "ConversionReview"},
                {"request",
                 {{"uid", "u-7"},
                  {"desiredAPIVersion", "apps.kruise.io/v1beta1"},
                  {"objects",
                   {{{"apiVersion", "apps.kruise.io/v1alpha1"},
                     {"kind", "CloneSet"},
                     {"metadata", {{"name", "web"}}},
                     {"spec", {{"updateStrategy", {{"type", "InPlaceIfPossible"}, {"partition", 1}}}}}}}}}}}
        .dump();
  }

  std::string Metrics() {
    return prometheus::TextSerializer().Serialize(registry_.Collect());
  }

  fs::path dir_;
  kube::testing::TestPki pki_;
  base::testing::FakeClock clock_;
  prometheus::Registry registry_;
};

TEST_F(ConversionServerTest, AnswersAReviewOverTls) {
  auto server = ConversionServer::Start(Options(), registry_, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  auto [status, body] = Post((*server)->port(), pki_.ca_pem, Review());
  ASSERT_EQ(status, 200) << body;
  const Json r = Json::parse(body);
  EXPECT_EQ(r["response"]["uid"], "u-7");
  EXPECT_EQ(r["response"]["result"]["status"], "Success");
  EXPECT_EQ(r["response"]["convertedObjects"][0]["spec"]["updateStrategy"],
            Json({{"type", "RollingUpdate"}, {"rollingUpdate", {{"podUpdatePolicy", "InPlaceIfPossible"}, {"partition", 1}}}}));
  EXPECT_THAT(Metrics(), HasSubstr("cloneset_planner_conversion_reviews_total{result=\"success\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("cloneset_planner_conversion_objects_total{to_version=\"v1beta1\"} 1"));
}

TEST_F(ConversionServerTest, BadBodiesGetAFailedReviewNotACrash) {
  auto server = ConversionServer::Start(Options(), registry_, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  auto [status, body] = Post((*server)->port(), pki_.ca_pem, "not json");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(Json::parse(body)["response"]["result"]["status"], "Failure");
  Json bad = Json::parse(Review());
  bad["request"]["objects"][0]["spec"]["updateStrategy"]["type"] = Json::array();
  std::tie(status, body) = Post((*server)->port(), pki_.ca_pem, bad.dump());
  EXPECT_EQ(status, 200);
  EXPECT_THAT(Json::parse(body)["response"]["result"]["message"].get<std::string>(),
              HasSubstr("(web) to apps.kruise.io/v1beta1: spec.updateStrategy.type: must be a string, got array"));
  // Larger than the limit: httplib's 413, and the server keeps answering.
  std::tie(status, body) = Post((*server)->port(), pki_.ca_pem, std::string(2 << 20, ' '));
  EXPECT_EQ(status, 413);
  std::tie(status, body) = Post((*server)->port(), pki_.ca_pem, Review());
  EXPECT_EQ(status, 200);
  EXPECT_THAT(Metrics(), HasSubstr("cloneset_planner_conversion_reviews_total{result=\"bad_request\"} 1"));
  EXPECT_THAT(Metrics(), HasSubstr("cloneset_planner_conversion_reviews_total{result=\"failure\"} 1"));
}

TEST_F(ConversionServerTest, ServesARenewedCertificateWithoutARestart) {
  ConversionServerOptions o = Options();
  o.reload_every = absl::Seconds(30);
  auto server = ConversionServer::Start(o, registry_, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  const kube::testing::TestPki renewed = kube::testing::GenerateTestPki();
  Write(dir_ / "tls.crt", renewed.server_cert_pem);
  Write(dir_ / "tls.key", renewed.server_key_pem);
  // Not re-read before the interval has passed.
  EXPECT_EQ(Post(port, renewed.ca_pem, Review()).first, -1);
  EXPECT_EQ(Post(port, pki_.ca_pem, Review()).first, 200);
  clock_.Advance(absl::Seconds(31));
  EXPECT_EQ(Post(port, renewed.ca_pem, Review()).first, 200);
  EXPECT_EQ(Post(port, pki_.ca_pem, Review()).first, -1);
  // A pair that does not load keeps the last good one.
  Write(dir_ / "tls.key", pki_.server_key_pem);  // not the key of the renewed certificate
  clock_.Advance(absl::Seconds(31));
  EXPECT_EQ(Post(port, renewed.ca_pem, Review()).first, 200);
}

TEST_F(ConversionServerTest, RefusesBadOptionsNamingTheFlag) {
  struct Case {
    std::function<void(ConversionServerOptions&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](ConversionServerOptions& o) { o.listen = "nowhere"; }, "--conversion_listen: \"nowhere\" is not host:port"},
      {[](ConversionServerOptions& o) { o.tls_cert.clear(); }, "--conversion_tls_cert: required"},
      {[](ConversionServerOptions& o) { o.tls_key.clear(); }, "--conversion_tls_key: required"},
      {[this](ConversionServerOptions& o) { o.tls_cert = (dir_ / "missing.crt").string(); },
       "--conversion_tls_cert: cannot read"},
      {[this](ConversionServerOptions& o) {
         Write(dir_ / "empty.crt", "nothing here");
         o.tls_cert = (dir_ / "empty.crt").string();
       },
       "holds no PEM certificate"},
      {[this](ConversionServerOptions& o) {
         Write(dir_ / "other.key", kube::testing::GenerateTestPki().server_key_pem);
         o.tls_key = (dir_ / "other.key").string();
       },
       "--conversion_tls_key: " },
  };
  for (const Case& c : cases) {
    ConversionServerOptions o = Options();
    c.edit(o);
    prometheus::Registry registry;
    auto server = ConversionServer::Start(o, registry, nullptr);
    ASSERT_FALSE(server.ok()) << c.message;
    EXPECT_THAT(std::string(server.status().message()), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace cloneset::planner::service
