// Round trip through the real cloneset-planner binary: started on 127.0.0.1 port 0, called over gRPC (plain, TLS
// and mutual TLS with certificates made by the openssl CLI), health, /metrics, limits, bad input and SIGTERM.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cloneset/planner/v1/planner.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "planner/testing/fixtures.h"

extern char** environ;

namespace cloneset::planner::service {
namespace {

namespace pb = ::cloneset::planner::v1;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "planner-roundtrip-XXXXXX").string();
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A CA, a server certificate for 127.0.0.1/localhost and a client certificate, all signed by the CA.
void MakeCertificates(const TempDir& dir) {
  const std::string script = R"(set -e
cd "$1"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.crt -subj /CN=test-ca -days 1 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > server.ext
printf 'extendedKeyUsage=clientAuth\n' > client.ext
for who in server client; do
  openssl req $ec -keyout $who.key -out $who.csr -subj /CN=$who 2>/dev/null
  openssl x509 -req -in $who.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $who.crt -days 1 \
    -extfile $who.ext 2>/dev/null
done
)";
  std::ofstream(dir.File("certs.sh")) << script;
  ASSERT_EQ(std::system(("bash '" + dir.File("certs.sh") + "' '" + dir.path().string() + "'").c_str()), 0);
}

// The binary as a child process. Stdout is read for the "listening on" lines; stderr (JSON logs) goes to a file.
class PlannerProcess {
 public:
  PlannerProcess(const TempDir& dir, std::vector<std::string> args) : log_path_(dir.File("planner.log")) {
    int out[2];
    if (pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    args.insert(args.begin(), CLONESET_PLANNER_BINARY);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, CLONESET_PLANNER_BINARY, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    stdout_fd_ = out[0];
  }

  ~PlannerProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_fd_ >= 0) close(stdout_fd_);
  }

  // Reads stdout until both addresses are printed (or the process ends / 15 s pass).
  bool WaitUntilListening() {
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    std::string buffer;
    while (std::chrono::steady_clock::now() < deadline && (grpc_address_.empty() || metrics_address_.empty())) {
      pollfd p{stdout_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char chunk[512];
      const ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<size_t>(n));
      for (size_t eol; (eol = buffer.find('\n')) != std::string::npos; buffer.erase(0, eol + 1)) {
        const std::string line = buffer.substr(0, eol);
        if (line.rfind("metrics listening on ", 0) == 0) metrics_address_ = line.substr(21);
        else if (line.rfind("listening on ", 0) == 0) grpc_address_ = line.substr(13);
      }
    }
    return !grpc_address_.empty() && !metrics_address_.empty();
  }

  // Waits for the exit; the exit code, or nullopt on timeout or a signal death.
  std::optional<int> WaitExit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        return std::nullopt;
      }
      std::this_thread::sleep_for(20ms);
    }
    return std::nullopt;
  }

  pid_t pid() const { return pid_; }
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }
  std::string Logs() const { return ReadText(log_path_); }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  bool exited_ = false;
  std::string grpc_address_;
  std::string metrics_address_;
};

// Value of the series `name{labels}` in Prometheus text output; -1 when absent.
double MetricValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

std::string Scrape(const std::string& address) {
  const auto colon = address.rfind(':');
  httplib::Client client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  client.set_read_timeout(5, 0);
  auto res = client.Get("/metrics");
  return res && res->status == 200 ? res->body : "";
}

// Three replicas, no pods yet: a scale-out plan.
pb::PlanRequest ScaleOutRequest() {
  return testing::Request(testing::CloneSetBuilder().Replicas(3));
}

std::unique_ptr<grpc::ClientContext> Context() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + 10s);
  return ctx;
}

class RoundTrip : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(RoundTrip, PlainPlanValidateComputeRevisionHealthMetricsAndSigterm) {
  PlannerProcess planner(dir_, {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"});
  ASSERT_TRUE(planner.WaitUntilListening()) << planner.Logs();
  auto channel = grpc::CreateChannel(planner.grpc_address(), grpc::InsecureChannelCredentials());
  auto stub = pb::Planner::NewStub(channel);

  // Health.
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest hreq;
  grpc::health::v1::HealthCheckResponse hresp;
  ASSERT_TRUE(health->Check(Context().get(), hreq, &hresp).ok());
  EXPECT_EQ(hresp.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  // Plan.
  const pb::PlanRequest request = ScaleOutRequest();
  pb::PlanResponse plan;
  grpc::Status st = stub->Plan(Context().get(), request, &plan);
  ASSERT_TRUE(st.ok()) << st.error_message();
  int create_pods = 0;
  for (const pb::Action& a : plan.actions()) create_pods += a.has_create_pod() ? 1 : 0;
  EXPECT_GT(create_pods, 0);
  EXPECT_FALSE(plan.update_revision().empty());

  // ComputeRevision agrees with the plan's update revision.
  pb::ComputeRevisionRequest creq;
  *creq.mutable_clone_set() = request.clone_set();
  pb::ComputeRevisionResponse cresp;
  st = stub->ComputeRevision(Context().get(), creq, &cresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(cresp.name(), plan.update_revision());
  EXPECT_FALSE(cresp.hash().empty());

  // Validate: a valid CloneSet, then an invalid one.
  pb::ValidateRequest vreq;
  *vreq.mutable_clone_set() = request.clone_set();
  pb::ValidateResponse vresp;
  st = stub->Validate(Context().get(), vreq, &vresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(vresp.errors_size(), 0);
  vreq.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->mutable_partition()->set_str_value("ten");
  st = stub->Validate(Context().get(), vreq, &vresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_GE(vresp.errors_size(), 1);
  EXPECT_EQ(vresp.errors(0).field(), "spec.updateStrategy.partition");

  // Invalid Plan requests: INVALID_ARGUMENT naming the field.
  pb::PlanRequest bad = request;
  bad.mutable_clone_set()->mutable_spec()->set_replicas(-1);
  pb::PlanResponse ignored;
  st = stub->Plan(Context().get(), bad, &ignored);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("spec.replicas"), std::string::npos) << st.error_message();
  bad = request;
  bad.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->mutable_partition()->set_str_value("ten");
  st = stub->Plan(Context().get(), bad, &ignored);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("spec.updateStrategy.partition"), std::string::npos) << st.error_message();

  // Metrics count the calls.
  const std::string metrics = Scrape(planner.metrics_address());
  EXPECT_EQ(MetricValue(metrics, R"(cloneset_planner_plans_total{result="ok"})"), 1);
  EXPECT_EQ(MetricValue(metrics, R"(cloneset_planner_plans_total{result="invalid_argument"})"), 2);
  EXPECT_EQ(MetricValue(metrics, R"(cloneset_planner_actions_total{type="create_pod"})"), create_pods);
  EXPECT_EQ(MetricValue(metrics, R"(cloneset_planner_validate_total{result="valid"})"), 1);
  EXPECT_EQ(MetricValue(metrics, R"(cloneset_planner_validate_total{result="invalid"})"), 1);
  EXPECT_EQ(MetricValue(metrics, R"(cloneset_planner_compute_revision_total{result="ok"})"), 1);
  EXPECT_EQ(MetricValue(metrics, "cloneset_planner_plan_duration_seconds_count"), 3);
  EXPECT_EQ(MetricValue(metrics, "cloneset_planner_snapshot_pods_count"), 3);

  // Structured logs: every stderr line is a JSON object with the four keys; failures are logged with the code.
  const std::string logs = planner.Logs();
  std::istringstream lines(logs);
  int log_lines = 0;
  for (std::string line; std::getline(lines, line); ++log_lines) {
    EXPECT_TRUE(std::regex_search(line, std::regex(R"(^\{"ts":"[0-9T:.Z-]+","level":"\w+","msg":".*","fields":\{)")))
        << line;
  }
  EXPECT_GE(log_lines, 4);
  EXPECT_NE(logs.find(R"("msg":"plan failed","fields":{"cloneset":"default/cs","code":"INVALID_ARGUMENT")"),
            std::string::npos)
      << logs;

  // SIGTERM: graceful, exit code 0, promptly.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(planner.pid(), SIGTERM), 0);
  EXPECT_EQ(planner.WaitExit(10s), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

// One CloneSet asking for millions of pods neither crashes nor wedges the shared planner (it built a response of
// over 2 GiB and aborted in the serializer at 3 000 000, and redrew instance ids forever at 2^31 - 1): each plan
// creates a bounded batch and asks to be called again; the server keeps answering and stops on SIGTERM at once.
TEST_F(RoundTrip, HugeReplicasGetABoundedPlan) {
  PlannerProcess planner(dir_, {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"});
  ASSERT_TRUE(planner.WaitUntilListening()) << planner.Logs();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);  // what the executor accepts
  auto stub = pb::Planner::NewStub(
      grpc::CreateCustomChannel(planner.grpc_address(), grpc::InsecureChannelCredentials(), args));
  for (const int32_t replicas : {3000000, 2147483647}) {
    SCOPED_TRACE(replicas);
    pb::PlanResponse plan;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    const grpc::Status st =
        stub->Plan(&ctx, testing::Request(testing::CloneSetBuilder().Replicas(replicas)), &plan);
    ASSERT_TRUE(st.ok()) << st.error_code() << " " << st.error_message();
    int create_pods = 0;
    for (const pb::Action& a : plan.actions()) create_pods += a.has_create_pod() ? 1 : 0;
    EXPECT_EQ(create_pods, 10000);
    EXPECT_EQ(plan.summary().scale_up(), 10000);
    EXPECT_EQ(plan.summary().scale_up_limited_to(), 10000);
    EXPECT_EQ(plan.requeue_after().seconds(), 1);
  }
  pb::PlanResponse plan;
  const grpc::Status st = stub->Plan(Context().get(), ScaleOutRequest(), &plan);
  EXPECT_TRUE(st.ok()) << st.error_message();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(planner.pid(), SIGTERM), 0);
  EXPECT_EQ(planner.WaitExit(10s), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

TEST_F(RoundTrip, OversizeRequestIsResourceExhausted) {
  PlannerProcess planner(dir_, {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--max_request_bytes=65536"});
  ASSERT_TRUE(planner.WaitUntilListening()) << planner.Logs();
  auto stub = pb::Planner::NewStub(grpc::CreateChannel(planner.grpc_address(), grpc::InsecureChannelCredentials()));
  pb::PlanRequest request = ScaleOutRequest();
  (*request.mutable_clone_set()->mutable_metadata()->mutable_annotations())["big"] = std::string(100000, 'x');
  pb::PlanResponse response;
  grpc::Status st = stub->Plan(Context().get(), request, &response);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  // The server is still healthy afterwards.
  st = stub->Plan(Context().get(), ScaleOutRequest(), &response);
  EXPECT_TRUE(st.ok()) << st.error_message();
  kill(planner.pid(), SIGINT);
  EXPECT_EQ(planner.WaitExit(10s), 0);
}

TEST_F(RoundTrip, TlsAndMutualTls) {
  MakeCertificates(dir_);
  if (HasFatalFailure()) return;
  const std::string ca = ReadText(dir_.File("ca.crt"));
  {
    PlannerProcess planner(dir_, {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                                  "--tls_cert=" + dir_.File("server.crt"), "--tls_key=" + dir_.File("server.key")});
    ASSERT_TRUE(planner.WaitUntilListening()) << planner.Logs();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ca;
    auto stub = pb::Planner::NewStub(grpc::CreateChannel(planner.grpc_address(), grpc::SslCredentials(ssl)));
    pb::PlanResponse response;
    grpc::Status st = stub->Plan(Context().get(), ScaleOutRequest(), &response);
    EXPECT_TRUE(st.ok()) << st.error_message();
    // A plaintext client cannot talk to the TLS port.
    auto plain = pb::Planner::NewStub(grpc::CreateChannel(planner.grpc_address(), grpc::InsecureChannelCredentials()));
    auto ctx = Context();
    ctx->set_deadline(std::chrono::system_clock::now() + 2s);
    EXPECT_FALSE(plain->Plan(ctx.get(), ScaleOutRequest(), &response).ok());
    kill(planner.pid(), SIGTERM);
    EXPECT_EQ(planner.WaitExit(10s), 0);
  }
  {
    PlannerProcess planner(dir_, {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                                  "--tls_cert=" + dir_.File("server.crt"), "--tls_key=" + dir_.File("server.key"),
                                  "--tls_client_ca=" + dir_.File("ca.crt")});
    ASSERT_TRUE(planner.WaitUntilListening()) << planner.Logs();
    grpc::SslCredentialsOptions no_cert;
    no_cert.pem_root_certs = ca;
    auto anonymous = pb::Planner::NewStub(grpc::CreateChannel(planner.grpc_address(), grpc::SslCredentials(no_cert)));
    pb::PlanResponse response;
    auto ctx = Context();
    ctx->set_deadline(std::chrono::system_clock::now() + 2s);
    EXPECT_FALSE(anonymous->Plan(ctx.get(), ScaleOutRequest(), &response).ok());
    grpc::SslCredentialsOptions with_cert = no_cert;
    with_cert.pem_cert_chain = ReadText(dir_.File("client.crt"));
    with_cert.pem_private_key = ReadText(dir_.File("client.key"));
    auto client = pb::Planner::NewStub(grpc::CreateChannel(planner.grpc_address(), grpc::SslCredentials(with_cert)));
    grpc::Status st = client->Plan(Context().get(), ScaleOutRequest(), &response);
    EXPECT_TRUE(st.ok()) << st.error_message();
    kill(planner.pid(), SIGTERM);
    EXPECT_EQ(planner.WaitExit(10s), 0);
  }
}

struct BadFlags {
  const char* flag;
  const char* logged;
};

class RoundTripBadFlags : public RoundTrip, public ::testing::WithParamInterface<BadFlags> {};

TEST_P(RoundTripBadFlags, ExitOneWithTheFlagNamed) {
  PlannerProcess planner(dir_, {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", GetParam().flag});
  EXPECT_EQ(planner.WaitExit(10s), 1);
  EXPECT_NE(planner.Logs().find(GetParam().logged), std::string::npos) << planner.Logs();
}

INSTANTIATE_TEST_SUITE_P(Table, RoundTripBadFlags,
                         ::testing::Values(BadFlags{"--tls_cert=/nonexistent.crt", "--tls_key: required with --tls_cert"},
                                           BadFlags{"--tls_client_ca=/x.pem", "--tls_client_ca: needs --tls_cert"},
                                           BadFlags{"--max_request_bytes=0", "--max_request_bytes: must be between"},
                                           BadFlags{"--listen=nohost", "--listen: \\\"nohost\\\" is not host:port"}),
                         [](const ::testing::TestParamInfo<BadFlags>& info) { return std::to_string(info.index); });

}  // namespace
}  // namespace cloneset::planner::service
