#include "planner/client/grpc_planner_client.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "cloneset/planner/v1/planner.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace cloneset::planner::client {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(std::string("--") + flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// The path of Planner.Plan ("/cloneset.planner.v1.Planner/Plan"), from the service's descriptor.
std::string PlanMethodPath() {
  const google::protobuf::ServiceDescriptor* service =
      pb::PlanRequest::descriptor()->file()->FindServiceByName("Planner");
  return "/" + service->full_name() + "/" + service->FindMethodByName("Plan")->name();
}

grpc::Slice OwnedSlice(std::string bytes) {
  auto* held = new std::string(std::move(bytes));
  return grpc::Slice(held->data(), held->size(), [](void* p) { delete static_cast<std::string*>(p); }, held);
}

bool Retryable(grpc::StatusCode c) {
  return c == grpc::StatusCode::UNAVAILABLE || c == grpc::StatusCode::DEADLINE_EXCEEDED;
}

}  // namespace

grpc::ByteBuffer PlanRequestBuffer(planapi::RequestBytes bytes) {
  std::vector<grpc::Slice> slices;
  slices.reserve(3);
  if (!bytes.head.empty()) slices.push_back(OwnedSlice(std::move(bytes.head)));
  if (bytes.table.has_value() && !bytes.table->bytes().empty()) {
    auto* held = new planapi::SharedPodTable(*std::move(bytes.table));
    const std::string& kept = held->bytes();
    // gRPC only reads a slice it sends.
    slices.emplace_back(const_cast<char*>(kept.data()), kept.size(),
                        [](void* p) { delete static_cast<planapi::SharedPodTable*>(p); }, held);
  }
  if (!bytes.tail.empty()) slices.push_back(OwnedSlice(std::move(bytes.tail)));
  return grpc::ByteBuffer(slices.data(), slices.size());
}

namespace {

class GrpcPlannerClient final : public PlannerClient {
 public:
  GrpcPlannerClient(std::shared_ptr<grpc::Channel> channel, GrpcPlannerOptions options)
      : options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : base::RealClock::Get()),
        channel_(std::move(channel)),
        stub_(pb::Planner::NewStub(channel_)),
        health_(grpc::health::v1::Health::NewStub(channel_)),
        generic_(channel_),
        plan_path_(PlanMethodPath()) {
    if (options_.health_probe) probe_ = std::thread([this] { ProbeLoop(); });
  }
  ~GrpcPlannerClient() override {
    {
      absl::MutexLock l(&mu_);
      stopping_ = true;
    }
    if (probe_.joinable()) probe_.join();
  }

  absl::StatusOr<pb::PlanResponse> Plan(const pb::PlanRequest& request) override {
    pb::PlanResponse response;
    auto s = Call([&](grpc::ClientContext* ctx) { return stub_->Plan(ctx, request, &response); });
    if (!s.ok()) return s;
    return response;
  }
  // The bytes go out as they are, through the generic stub (the generated one would serialize the message).
  absl::StatusOr<pb::PlanResponse> PlanBytes(const pb::PlanRequest&, planapi::RequestBytes bytes) override {
    const grpc::ByteBuffer request = PlanRequestBuffer(std::move(bytes));
    pb::PlanResponse response;
    auto s = Call([&](grpc::ClientContext* ctx) {
      grpc::ByteBuffer reply;
      grpc::Status status;
      absl::Notification done;
      generic_.UnaryCall(ctx, plan_path_, grpc::StubOptions(), &request, &reply, [&](grpc::Status st) {
        status = std::move(st);
        done.Notify();
      });
      done.WaitForNotification();  // the call's deadline bounds it
      if (status.ok()) {
        status = grpc::SerializationTraits<pb::PlanResponse>::Deserialize(&reply, &response);
      }
      return status;
    });
    if (!s.ok()) return s;
    return response;
  }
  absl::StatusOr<pb::ValidateResponse> Validate(const pb::ValidateRequest& request) override {
    pb::ValidateResponse response;
    auto s = Call([&](grpc::ClientContext* ctx) { return stub_->Validate(ctx, request, &response); });
    if (!s.ok()) return s;
    return response;
  }
  bool Healthy() override { return healthy_.load(); }

 private:
  template <typename F>
  absl::Status Call(F&& rpc) {
    absl::Duration backoff = options_.backoff;
    grpc::Status s;
    for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.deadline));
      s = rpc(&ctx);
      if (s.ok()) {
        healthy_ = true;
        if (options_.observer) options_.observer->Reached();
        return absl::OkStatus();
      }
      if (!Retryable(s.error_code())) break;
      if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
        healthy_ = false;
        if (options_.observer) options_.observer->Unreachable(s.error_message());
      }
      if (attempt < options_.max_attempts) {
        absl::MutexLock l(&mu_);
        if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), backoff)) break;  // the client stops
        backoff *= 2;
      }
    }
    return FromGrpc(s);
  }

  void ProbeLoop() {
    for (;;) {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
      grpc::health::v1::HealthCheckRequest req;
      grpc::health::v1::HealthCheckResponse resp;
      grpc::Status s = health_->Check(&ctx, req, &resp);
      healthy_ = s.ok() && resp.status() == grpc::health::v1::HealthCheckResponse::SERVING;
      if (options_.observer) {
        if (healthy_) {
          options_.observer->Reached();
        } else {
          options_.observer->Unreachable(s.ok() ? "health check: not serving" : "health check: " + s.error_message());
        }
      }
      absl::MutexLock l(&mu_);
      const absl::Duration wait = healthy_ ? options_.health_period : absl::Milliseconds(250);
      if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), wait)) return;
    }
  }

  const GrpcPlannerOptions options_;
  const base::Clock& clock_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Planner::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  grpc::GenericStub generic_;
  const std::string plan_path_;
  std::atomic<bool> healthy_{false};
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread probe_;  // not started without options_.health_probe
};

}  // namespace

absl::StatusOr<std::unique_ptr<PlannerClient>> NewGrpcPlannerClient(const GrpcPlannerOptions& options) {
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (options.tls_ca.empty()) {
    if (!options.tls_cert.empty()) {
      return absl::InvalidArgumentError("--planner_tls_cert needs --planner_tls_ca");
    }
    creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    auto ca = ReadPem(options.tls_ca, "planner_tls_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    if (!options.tls_cert.empty() || !options.tls_key.empty()) {
      auto cert = ReadPem(options.tls_cert, "planner_tls_cert");
      if (!cert.ok()) return cert.status();
      auto key = ReadPem(options.tls_key, "planner_tls_key");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    creds = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetInt(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, 256 << 20);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // dns:/// names a headless Service whose addresses are the planner pods. When they all go away (a planner
  // rollout replaces every pod), round_robin asks for a new resolution, which gRPC allows only 30 s after the last
  // one by default: for that long every call failed on the old addresses and /readyz turned false (seen on a real
  // node: real.chart_install's helm upgrade). One second is plenty for a cluster DNS to answer.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 1000);
  auto channel = grpc::CreateCustomChannel(options.address, creds, args);
  return std::unique_ptr<PlannerClient>(new GrpcPlannerClient(std::move(channel), options));
}

}  // namespace cloneset::planner::client
