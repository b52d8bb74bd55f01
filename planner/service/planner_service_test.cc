// The service with fake planning functions, in-process on 127.0.0.1 port 0: status mapping, metrics, logs.
#include "planner/service/planner_service.h"

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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
  void Start(PlannerFunctions functions) {
    service_ = std::make_unique<PlannerService>(std::move(functions), &metrics_, &log_);
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
  JsonLogger log_{&log_text_, LogLevel::kInfo, [] { return absl::FromUnixSeconds(1800000000); }};
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
  Start({.plan_into = [](const pb::PlanRequest& req, pb::PlanResponse* resp) -> absl::Status {
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
  JsonLogger log(&out, LogLevel::kInfo, [] { return absl::FromUnixMillis(1800000000123); });
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
