// The gRPC face of the planner: a callback service that calls the pure planning functions, measures and logs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.grpc.pb.h"
#include "base/log.h"
#include "planner/plan_limits.h"
#include "planner/service/metrics.h"

namespace cloneset::planner::service {

using base::JsonLogger;
using base::LogFields;
using base::LogLevel;
using base::ParseLogLevel;

// The planner's log format: the fields nested under "fields" (docs/architecture.md "Base library"). `clock`: RealClock
// when null.
base::LogOptions PlannerLogOptions(std::ostream* out, LogLevel min_level, const base::Clock* clock = nullptr);

// The planning functions behind the service. Production wires planner/plan.h (see default_functions.h); tests
// pass fakes.
struct PlannerFunctions {
  std::function<absl::StatusOr<v1::PlanResponse>(const v1::PlanRequest&)> plan;
  // Optional: plans straight into the call's arena-allocated response (planner::PlanInto), and stops when the
  // CancelCheck says so (the call was cancelled, its deadline passed, or the server is stopping). Used instead of
  // `plan` when set.
  std::function<absl::Status(const v1::PlanRequest&, v1::PlanResponse*, const CancelCheck&)> plan_into;
  std::function<absl::StatusOr<v1::ValidateResponse>(const v1::ValidateRequest&)> validate;
  std::function<absl::StatusOr<v1::ComputeRevisionResponse>(const v1::ComputeRevisionRequest&)> compute_revision;
};

// The largest plan the service sends: what the executor accepts (planner/client/grpc_planner_client.cc). A bigger
// plan fails with RESOURCE_EXHAUSTED instead of reaching a client that cannot read it (or, beyond 2 GiB, a
// serializer that aborts). The planner's own per-plan bounds (planner/plan_limits.h) keep real plans far below it.
inline constexpr int64_t kDefaultMaxResponseBytes = int64_t{256} << 20;

// The methods take raw bytes and parse them here: a request that does not parse gets INVALID_ARGUMENT saying so
// (gRPC's generated handler answers UNIMPLEMENTED with no message), and the plan's size is checked before it is
// serialized.
class PlannerService final
    : public v1::Planner::WithRawCallbackMethod_Plan<v1::Planner::WithRawCallbackMethod_Validate<
          v1::Planner::WithRawCallbackMethod_ComputeRevision<v1::Planner::Service>>> {
 public:
  // `metrics` and `log` must outlive the service.
  PlannerService(PlannerFunctions functions, ServiceMetrics* metrics, JsonLogger* log,
                 int64_t max_response_bytes = kDefaultMaxResponseBytes);

  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Validate(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ComputeRevision(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) override;

  // Calls currently inside a handler (for draining on shutdown).
  int in_flight() const { return in_flight_.load(); }
  // Calls that have entered a handler since start (for IdleMemoryRelease).
  int64_t calls_started() const { return calls_started_.load(); }
  // The shutdown grace period is over: plans in flight stop at their next check and fail with UNAVAILABLE, so
  // the server can stop at once.
  void CancelInFlight() { stopping_.store(true); }

 private:
  const int64_t max_response_bytes_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<int64_t> calls_started_{0};
  PlannerFunctions functions_;
  ServiceMetrics* metrics_;
  JsonLogger* log_;
};

// absl::Status -> grpc::Status with the same code and message (the codes are numbered alike).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace cloneset::planner::service
