// The service with fake planning functions, in-process on 127.0.0.1 port 0: status mapping, metrics, logs.
#include "planner/service/planner_service.h"

#include <atomic>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "grpcpp/impl/codegen/client_unary_call.h"
#include "gtest/gtest.h"
#include "planner/service/server.h"
#include "prometheus/text_serializer.h"

namespace cloneset::planner::service {
namespace {

namespace pb = ::cloneset::planner::v1;

double Series(const prometheus::Registry& registry, const std::string& series) {
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

class ServiceTest : public ::testing::Test {
 protected:
  void Start(PlannerFunctions functions, int64_t max_response_bytes = kDefaultMaxResponseBytes) {
    service_ = std::make_unique<PlannerService>(std::move(functions), &metrics_, &log_, max_response_bytes);
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    auto running = StartServer(options, service_.get());
    ASSERT_TRUE(running.ok()) << running.status();
    running_ = std::move(*running);
    stub_ = pb::Planner::NewStub(grpc::CreateChannel(running_.address, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (running_.server) running_.server->Shutdown();
  }

  prometheus::Registry registry_;
  ServiceMetrics metrics_{registry_};
  std::ostringstream log_text_;
  base::testing::FakeClock clock_{absl::FromUnixSeconds(1800000000)};
  JsonLogger log_{PlannerLogOptions(&log_text_, LogLevel::kInfo, &clock_)};
  std::unique_ptr<PlannerService> service_;
  RunningServer running_;
  std::unique_ptr<pb::Planner::Stub> stub_;
};

TEST_F(ServiceTest, PlanResponseAndActionMetrics) {
  Start({.plan =
             [](const pb::PlanRequest& r) -> absl::StatusOr<pb::PlanResponse> {
               pb::PlanResponse resp;
               for (int i = 0; i < r.pods_size(); ++i) resp.add_actions()->mutable_delete_pod()->set_name("p");
               resp.add_actions()->mutable_patch_pod();
               resp.set_update_revision("cs-1");
               return resp;
             }});
  pb::PlanRequest req;
  req.add_pods();
  req.add_pods();
  pb::PlanResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->Plan(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.update_revision(), "cs-1");
  EXPECT_EQ(resp.actions_size(), 3);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_plans_total{result="ok"})"), 1);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_actions_total{type="delete_pod"})"), 2);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_actions_total{type="patch_pod"})"), 1);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_actions_total{type="create_pod"})"), 0);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_snapshot_pods_bucket{le="1"})"), 0);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_snapshot_pods_bucket{le="10"})"), 1);
  EXPECT_EQ(Series(registry_, "cloneset_planner_plan_duration_seconds_count"), 1);
}

// The production wiring: the plan is built straight into the call's (arena-allocated) response, and a partial
// response is never sent with an error.
TEST_F(ServiceTest, PlanIntoFillsTheArenaResponseAndClearsItOnError) {
  Start({.plan_into = [](const pb::PlanRequest& req, pb::PlanResponse* resp, const CancelCheck&) -> absl::Status {
    resp->set_update_revision("cs-2");
    for (int i = 0; i < req.pods_size(); ++i) resp->add_actions()->mutable_delete_pod()->set_name("p");
    if (req.clone_set().metadata().name() == "bad") return absl::InvalidArgumentError("metadata.name: bad");
    return absl::OkStatus();
  }});
  pb::PlanRequest req;
  req.add_pods();
  req.add_pods();
  pb::PlanResponse resp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Plan(&ctx, req, &resp).ok());
  }
  EXPECT_EQ(resp.update_revision(), "cs-2");
  EXPECT_EQ(resp.actions_size(), 2);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_actions_total{type="delete_pod"})"), 2);
  req.mutable_clone_set()->mutable_metadata()->set_name("bad");
  pb::PlanResponse failed;
  grpc::ClientContext ctx;
  const grpc::Status st = stub_->Plan(&ctx, req, &failed);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(failed.actions_size(), 0);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_plans_total{result="invalid_argument"})"), 1);
}

struct CodeCase {
  absl::StatusCode code;
  grpc::StatusCode grpc_code;
  const char* result_label;
};

class StatusMapping : public ServiceTest, public ::testing::WithParamInterface<CodeCase> {};

TEST_P(StatusMapping, CodeAndMessageUnchanged) {
  const CodeCase c = GetParam();
  Start({.plan = [c](const pb::PlanRequest&) -> absl::StatusOr<pb::PlanResponse> {
    return absl::Status(c.code, "spec.replicas: must be >= 0");
  }});
  pb::PlanResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status st = stub_->Plan(&ctx, pb::PlanRequest(), &resp);
  EXPECT_EQ(st.error_code(), c.grpc_code);
  EXPECT_EQ(st.error_message(), "spec.replicas: must be >= 0");
  EXPECT_EQ(Series(registry_, std::string("cloneset_planner_plans_total{result=\"") + c.result_label + "\"}"), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Table, StatusMapping,
    ::testing::Values(CodeCase{absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT, "invalid_argument"},
                      CodeCase{absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION, "error"},
                      CodeCase{absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED,
                               "resource_exhausted"},
                      CodeCase{absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL, "error"},
                      CodeCase{absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED, "error"}));

TEST_F(ServiceTest, ExceptionBecomesInternalAndIsLogged) {
  Start({.plan = [](const pb::PlanRequest&) -> absl::StatusOr<pb::PlanResponse> {
    throw std::runtime_error("boom");
  }});
  pb::PlanRequest req;
  req.mutable_clone_set()->mutable_metadata()->set_namespace_("ns");
  req.mutable_clone_set()->mutable_metadata()->set_name("cs");
  pb::PlanResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status st = stub_->Plan(&ctx, req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(st.error_message(), "planner raised an exception: boom");
  const std::string expected =
      R"({"ts":"2027-01-15T08:00:00.000Z","level":"warn","msg":"plan failed","fields":{"cloneset":"ns/cs",)"
      R"("code":"INTERNAL","error":"planner raised an exception: boom")";
  EXPECT_EQ(log_text_.str().substr(0, expected.size()), expected);
}

TEST_F(ServiceTest, ValidateAndComputeRevisionMetrics) {
  Start({.validate =
             [](const pb::ValidateRequest& r) -> absl::StatusOr<pb::ValidateResponse> {
               pb::ValidateResponse resp;
               if (r.clone_set().spec().replicas() < 0) resp.add_errors()->set_field("spec.replicas");
               return resp;
             },
         .compute_revision = [](const pb::ComputeRevisionRequest&) -> absl::StatusOr<pb::ComputeRevisionResponse> {
           return absl::InvalidArgumentError("spec.template: expected object");
         }});
  pb::ValidateRequest vreq;
  pb::ValidateResponse vresp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Validate(&ctx, vreq, &vresp).ok());
  }
  vreq.mutable_clone_set()->mutable_spec()->set_replicas(-1);
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Validate(&ctx, vreq, &vresp).ok());
    EXPECT_EQ(vresp.errors(0).field(), "spec.replicas");
  }
  pb::ComputeRevisionResponse cresp;
  grpc::ClientContext ctx;
  EXPECT_EQ(stub_->ComputeRevision(&ctx, pb::ComputeRevisionRequest(), &cresp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_validate_total{result="valid"})"), 1);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_validate_total{result="invalid"})"), 1);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_validate_total{result="error"})"), 0);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_compute_revision_total{result="invalid_argument"})"), 1);
}

// Bytes that are not a protobuf message, sent to each method: INVALID_ARGUMENT saying the request could not be
// parsed (gRPC's generated handlers answered UNIMPLEMENTED with an empty message), and nothing is planned.
TEST_F(ServiceTest, UnparsableRequestIsInvalidArgument) {
  std::atomic<int> calls{0};
  Start({.plan_into = [&](const pb::PlanRequest&, pb::PlanResponse*, const CancelCheck&) -> absl::Status {
           ++calls;
           return absl::OkStatus();
         },
         .validate = [&](const pb::ValidateRequest&) -> absl::StatusOr<pb::ValidateResponse> {
           ++calls;
           return pb::ValidateResponse();
         },
         .compute_revision = [&](const pb::ComputeRevisionRequest&) -> absl::StatusOr<pb::ComputeRevisionResponse> {
           ++calls;
           return pb::ComputeRevisionResponse();
         }});
  auto channel = grpc::CreateChannel(running_.address, grpc::InsecureChannelCredentials());
  struct Case {
    const char* method;
    const char* type;
  };
  // A length-delimited field 1 longer than the message; a field with wire type 7 (there is none); random bytes.
  const std::vector<std::string> garbage = {std::string("\x0a\xff\xff\xff\x0f", 5), std::string("\x0f\x01", 2),
                                            std::string("\x93\x2c\xd7\x7f\xff\xee\x01\x00\x9a\x03", 10)};
  for (const Case& c : {Case{"/cloneset.planner.v1.Planner/Plan", "PlanRequest"},
                        Case{"/cloneset.planner.v1.Planner/Validate", "ValidateRequest"},
                        Case{"/cloneset.planner.v1.Planner/ComputeRevision", "ComputeRevisionRequest"}}) {
    for (const std::string& bytes : garbage) {
      SCOPED_TRACE(std::string(c.method) + " with " + std::to_string(bytes.size()) + " bytes");
      grpc::Slice slice(bytes);
      grpc::ByteBuffer request(&slice, 1), response;
      grpc::ClientContext ctx;
      const grpc::internal::RpcMethod method(c.method, grpc::internal::RpcMethod::NORMAL_RPC, channel);
      const grpc::Status st =
          grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(channel.get(), method, &ctx, request,
                                                                                &response);
      EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_EQ(st.error_message(), std::string("request could not be parsed: the bytes are not a "
                                                "cloneset.planner.v1.") + c.type + " message");
    }
  }
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_plans_total{result="invalid_argument"})"), 3);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_validate_total{result="error"})"), 3);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_compute_revision_total{result="invalid_argument"})"), 3);
}

// A plan bigger than the response limit is never serialized: RESOURCE_EXHAUSTED naming both sizes.
TEST_F(ServiceTest, PlanOverTheResponseLimitIsResourceExhausted) {
  Start({.plan_into =
             [](const pb::PlanRequest& req, pb::PlanResponse* resp, const CancelCheck&) -> absl::Status {
               for (int i = 0; i < req.pods_size(); ++i) {
                 resp->add_actions()->mutable_create_pod()->set_pod_json(std::string(100, 'x'));
               }
               return absl::OkStatus();
             }},
        /*max_response_bytes=*/2000);
  pb::PlanRequest small, big;
  for (int i = 0; i < 5; ++i) small.add_pods();
  for (int i = 0; i < 50; ++i) big.add_pods();
  pb::PlanResponse resp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->Plan(&ctx, small, &resp).ok());
    EXPECT_EQ(resp.actions_size(), 5);
  }
  grpc::ClientContext ctx;
  const grpc::Status st = stub_->Plan(&ctx, big, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "the plan is 5")) << st.error_message();
  EXPECT_TRUE(absl::EndsWith(st.error_message(), "more than the 2000 bytes a response may have"))
      << st.error_message();
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_plans_total{result="resource_exhausted"})"), 1);
  EXPECT_EQ(Series(registry_, R"(cloneset_planner_actions_total{type="create_pod"})"), 5);
}

// A planning function that would run forever unless told to stop: it polls the CancelCheck the service gives it
// and reports what it saw.
PlannerFunctions UntilCancelled(absl::Notification* entered) {
  return {.plan_into = [entered](const pb::PlanRequest&, pb::PlanResponse* resp, const CancelCheck& cancelled)
              -> absl::Status {
    entered->Notify();
    resp->set_update_revision("partial");
    while (!cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return absl::CancelledError("stopped");
  }};
}

// The handler returns once the call is over; in_flight() counts it until then. Bounded wait for the handler
// thread to leave (it is on gRPC's threads, not ours).
bool HandlerLeaves(const PlannerService& service, std::chrono::seconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (service.in_flight() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return service.in_flight() == 0;
}

TEST_F(ServiceTest, DeadlineStopsThePlan) {
  absl::Notification entered;
  Start(UntilCancelled(&entered));
  pb::PlanResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status st = stub_->Plan(&ctx, pb::PlanRequest(), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(entered.HasBeenNotified());
  EXPECT_TRUE(HandlerLeaves(*service_, std::chrono::seconds(5))) << "the plan kept running after the deadline";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(resp.update_revision(), "");
}

TEST_F(ServiceTest, ClientCancellationStopsThePlan) {
  absl::Notification entered;
  Start(UntilCancelled(&entered));
  grpc::ClientContext ctx;
  pb::PlanResponse resp;
  absl::Notification done;
  grpc::Status st;
  pb::PlanRequest req;
  stub_->async()->Plan(&ctx, &req, &resp, [&](grpc::Status s) {
    st = std::move(s);
    done.Notify();
  });
  entered.WaitForNotification();  // the handler runs
  ctx.TryCancel();
  done.WaitForNotification();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(HandlerLeaves(*service_, std::chrono::seconds(5))) << "the plan kept running after the cancel";
}

// Shutdown after the grace period (what cloneset-planner does on SIGTERM): CancelInFlight stops a plan that would
// otherwise hold Server::Wait forever; the client learns to retry elsewhere.
TEST_F(ServiceTest, CancelInFlightLetsTheServerStop) {
  absl::Notification entered;
  Start(UntilCancelled(&entered));
  grpc::ClientContext ctx;
  pb::PlanResponse resp;
  absl::Notification done;
  grpc::Status st;
  pb::PlanRequest req;
  stub_->async()->Plan(&ctx, &req, &resp, [&](grpc::Status s) {
    st = std::move(s);
    done.Notify();
  });
  entered.WaitForNotification();  // the handler runs
  const auto start = std::chrono::steady_clock::now();
  service_->CancelInFlight();
  done.WaitForNotification();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(st.error_message(), "plan abandoned: the planner is stopping; retry on another replica");
  running_.server->Shutdown(std::chrono::system_clock::now());
  running_.server->Wait();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(service_->in_flight(), 0);
}

// An in-place batch counts as the per-pod actions the executor expands it into: a status write (when the batch
// has one) and a patch per target.
TEST(ServiceMetrics, InPlaceBatchCountsAsItsPerPodActions) {
  struct Case {
    std::string name;
    int targets;
    bool status_patch;
    double want_patch_pod;
    double want_patch_pod_status;
  };
  for (const Case& c :
       std::vector<Case>{{"gated", 3, true, 4, 3}, {"no gate", 2, false, 3, 0}, {"empty", 0, true, 1, 0}}) {
    prometheus::Registry registry;
    ServiceMetrics metrics(registry);
    pb::PlanResponse response;
    response.add_actions()->mutable_patch_pod();  // one per-pod action besides the batch
    pb::StartInPlaceUpdates* batch = response.add_actions()->mutable_start_in_place_updates();
    if (c.status_patch) batch->mutable_status_patch()->set_purpose("start-in-place-update");
    for (int i = 0; i < c.targets; ++i) batch->add_targets()->set_name("p" + std::to_string(i));
    metrics.ObservePlan(0.001, "ok", pb::PlanRequest(), &response);
    EXPECT_EQ(Series(registry, R"(cloneset_planner_actions_total{type="patch_pod"})"), c.want_patch_pod) << c.name;
    EXPECT_EQ(Series(registry, R"(cloneset_planner_actions_total{type="patch_pod_status"})"), c.want_patch_pod_status)
        << c.name;
    // No series of its own (Series answers -1 for a missing one).
    EXPECT_EQ(Series(registry, R"(cloneset_planner_actions_total{type="start_in_place_updates"})"), -1) << c.name;
  }
}

TEST(ServiceMetrics, ActionTypeNamesEveryKind) {
  pb::Action a;
  EXPECT_EQ(ServiceMetrics::ActionType(a), "unspecified");
  a.mutable_create_revision();
  EXPECT_EQ(ServiceMetrics::ActionType(a), "create_revision");
  a.mutable_update_pvc_owner();
  EXPECT_EQ(ServiceMetrics::ActionType(a), "update_pvc_owner");
  a.mutable_delete_image_pull_job();
  EXPECT_EQ(ServiceMetrics::ActionType(a), "delete_image_pull_job");
}

TEST(WithPort, ReplacesThePort) {
  EXPECT_EQ(WithPort("127.0.0.1:0", 7070), "127.0.0.1:7070");
  EXPECT_EQ(WithPort("[::1]:0", 80), "[::1]:80");
  EXPECT_EQ(WithPort("localhost", 1), "localhost:1");
}

TEST(JsonLogger, OneObjectPerLineAndLevelFilter) {
  std::ostringstream out;
  base::testing::FakeClock clock(absl::FromUnixMillis(1800000000123));
  JsonLogger log(PlannerLogOptions(&out, LogLevel::kInfo, &clock));
  log.Debug("hidden");
  log.Info("hello", {{"n", int64_t{3}}, {"ok", true}, {"s", std::string("a\"b")}, {"x", 0.5}});
  log.Error("bad utf8", {{"s", std::string("\xff")}});
  EXPECT_EQ(out.str(),
            "{\"ts\":\"2027-01-15T08:00:00.123Z\",\"level\":\"info\",\"msg\":\"hello\",\"fields\":{\"n\":3,"
            "\"ok\":true,\"s\":\"a\\\"b\",\"x\":0.5}}\n"
            "{\"ts\":\"2027-01-15T08:00:00.123Z\",\"level\":\"error\",\"msg\":\"bad utf8\",\"fields\":{\"s\":"
            "\"\xEF\xBF\xBD\"}}\n");
  LogLevel level;
  EXPECT_TRUE(ParseLogLevel("warn", &level));
  EXPECT_EQ(level, LogLevel::kWarn);
  EXPECT_FALSE(ParseLogLevel("verbose", &level));
}

}  // namespace
}  // namespace cloneset::planner::service
