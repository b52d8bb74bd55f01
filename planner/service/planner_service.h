// The gRPC face of the planner: a callback service that calls the pure planning functions, measures and logs.
#pragma once

#include <atomic>
#include <functional>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.grpc.pb.h"
#include "planner/service/arena_allocator.h"
#include "planner/service/json_log.h"
#include "planner/service/metrics.h"

namespace cloneset::planner::service {

// The planning functions behind the service. Production wires planner/plan.h (see default_functions.h); tests
// pass fakes.
struct PlannerFunctions {
  std::function<absl::StatusOr<v1::PlanResponse>(const v1::PlanRequest&)> plan;
  // Optional: plans straight into the call's arena-allocated response (planner::PlanInto). Used instead of
  // `plan` when set.
  std::function<absl::Status(const v1::PlanRequest&, v1::PlanResponse*)> plan_into;
  std::function<absl::StatusOr<v1::ValidateResponse>(const v1::ValidateRequest&)> validate;
  std::function<absl::StatusOr<v1::ComputeRevisionResponse>(const v1::ComputeRevisionRequest&)> compute_revision;
};

class PlannerService final : public v1::Planner::CallbackService {
 public:
  // `metrics` and `log` must outlive the service.
  PlannerService(PlannerFunctions functions, ServiceMetrics* metrics, JsonLogger* log);

  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* context, const v1::PlanRequest* request,
                                 v1::PlanResponse* response) override;
  grpc::ServerUnaryReactor* Validate(grpc::CallbackServerContext* context, const v1::ValidateRequest* request,
                                     v1::ValidateResponse* response) override;
  grpc::ServerUnaryReactor* ComputeRevision(grpc::CallbackServerContext* context,
                                            const v1::ComputeRevisionRequest* request,
                                            v1::ComputeRevisionResponse* response) override;

  // Calls currently inside a handler (for draining on shutdown).
  int in_flight() const { return in_flight_.load(); }
  // Calls that have entered a handler since start (for IdleMemoryRelease).
  int64_t calls_started() const { return calls_started_.load(); }

 private:
  // Plan requests and responses live on a per-call arena.
  ArenaMessageAllocator<v1::PlanRequest, v1::PlanResponse> plan_allocator_;
  std::atomic<int> in_flight_{0};
  std::atomic<int64_t> calls_started_{0};
  PlannerFunctions functions_;
  ServiceMetrics* metrics_;
  JsonLogger* log_;
};

// absl::Status -> grpc::Status with the same code and message (the codes are numbered alike).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace cloneset::planner::service
