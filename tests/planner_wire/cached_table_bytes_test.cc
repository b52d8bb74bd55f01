// The planner client (planner/client/, the executor's) against a real planner service: a request sent as its
// pieces, with the kept pod table's bytes referenced instead of copied (planapi::RequestWithPods::Serialize,
// PlannerClient::PlanBytes), is the request the planner parses and plans. Under tests/ because it runs the client and
// the planner's service together, end to end.
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "planapi/request.h"
#include "planner/bench/rollout_snapshot.h"
#include "planner/client/grpc_planner_client.h"
#include "planner/plan.h"
#include "planner/service/default_functions.h"
#include "planner/service/planner_service.h"
#include "planner/service/server.h"
#include "prometheus/registry.h"

namespace cloneset::planner::client {
namespace {

// A planner service on a loopback port (port 0), planning with the real functions and keeping the last request it
// parsed.
class LoopbackPlanner {
 public:
  LoopbackPlanner() : metrics_(registry_), log_(planner::service::PlannerLogOptions(&log_out_, base::LogLevel::kError)) {
    planner::service::PlannerFunctions functions = planner::service::DefaultPlannerFunctions();
    functions.plan_into = [this](const pb::PlanRequest& request, pb::PlanResponse* response,
                                 const planner::CancelCheck& cancelled) {
      {
        absl::MutexLock l(&mu_);
        last_ = request;
      }
      return planner::PlanInto(request, response, cancelled);
    };
    service_ = std::make_unique<planner::service::PlannerService>(std::move(functions), &metrics_, &log_);
    auto running = planner::service::StartServer({.listen = "127.0.0.1:0"}, service_.get());
    if (!running.ok()) {
      ADD_FAILURE() << running.status();
      return;
    }
    running_ = *std::move(running);
  }
  ~LoopbackPlanner() {
    if (running_.server != nullptr) running_.server->Shutdown();
  }
  std::string Address() const { return "ipv4:" + running_.address; }
  pb::PlanRequest last() {
    absl::MutexLock l(&mu_);
    return last_;
  }

 private:
  prometheus::Registry registry_;
  planner::service::ServiceMetrics metrics_;
  std::ostringstream log_out_;
  base::JsonLogger log_;
  std::unique_ptr<planner::service::PlannerService> service_;
  planner::service::RunningServer running_;
  absl::Mutex mu_;
  pb::PlanRequest last_;
};

// A request sent as its pieces (the cached table's bytes referenced, not copied) reaches the planner whole, and the
// planner answers it as it answers the request planned in process and the same request sent through the generated
// stub.
TEST(GrpcPlannerClientTest, APlanRequestSentAsCachedBytesIsAnswered) {
  absl::StatusOr<pb::PlanRequest> rollout = planner::bench::MidRolloutRequest(300);
  ASSERT_TRUE(rollout.ok()) << rollout.status();
  planapi::OwnedObjects objects;
  objects.pods.assign(rollout->pods().begin(), rollout->pods().end());
  objects.pvcs.assign(rollout->pvcs().begin(), rollout->pvcs().end());
  objects.revisions.assign(rollout->revisions().begin(), rollout->revisions().end());
  const absl::Time now = absl::FromUnixSeconds(rollout->now().seconds());
  LoopbackPlanner server;
  auto client = NewGrpcPlannerClient({.address = server.Address()});
  ASSERT_TRUE(client.ok()) << client.status();
  for (const bool batches : {true, false}) {
    SCOPED_TRACE(batches ? "with in-place batches" : "without");
    planapi::RequestWithPods snapshot =
        planapi::AssembleRequest(rollout->clone_set(), objects, nullptr, now, {.in_place_batches = batches});
    ASSERT_TRUE(snapshot.request.has_pod_table());
    planapi::RequestBytes bytes = snapshot.Serialize();
    ASSERT_TRUE(bytes.table.has_value()) << "the table is not sent as cached bytes";
    absl::StatusOr<pb::PlanResponse> got = (*client)->PlanBytes(snapshot.request, std::move(bytes));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(server.last(), snapshot.request))
        << "the planner parsed another request";
    absl::StatusOr<pb::PlanResponse> in_process = planner::Plan(snapshot.request);
    ASSERT_TRUE(in_process.ok()) << in_process.status();
    EXPECT_GT(got->actions_size(), 0);
    EXPECT_EQ(got->pods_read(), 300);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*got, *in_process));
    absl::StatusOr<pb::PlanResponse> generated = (*client)->Plan(snapshot.request);
    ASSERT_TRUE(generated.ok()) << generated.status();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*got, *generated));
  }
}

}  // namespace
}  // namespace cloneset::planner::client
