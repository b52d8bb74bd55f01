#include "planner/service/planner_service.h"

#include <chrono>
#include <exception>
#include <string>
#include <utility>

#include "planner/pod_table.h"

namespace cloneset::planner::service {
namespace {

// The planning functions are pure and report errors as values; an exception escaping them is a bug, and it must
// become an INTERNAL error for this one call instead of taking the process down.
template <typename Fn, typename Request>
auto CallGuarded(const Fn& fn, const Request& request) -> decltype(fn(request)) {
  try {
    return fn(request);
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("planner raised an exception: ") + e.what());
  } catch (...) {
    return absl::InternalError("planner raised an exception");
  }
}

std::string Peer(grpc::CallbackServerContext* context) { return context->peer(); }

class InFlight {
 public:
  InFlight(std::atomic<int>& counter, std::atomic<int64_t>& started) : counter_(counter) {
    ++counter_;
    ++started;
  }
  ~InFlight() { --counter_; }

 private:
  std::atomic<int>& counter_;
};

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

PlannerService::PlannerService(PlannerFunctions functions, ServiceMetrics* metrics, JsonLogger* log)
    : functions_(std::move(functions)), metrics_(metrics), log_(log) {
  SetMessageAllocatorFor_Plan(&plan_allocator_);
}

grpc::ServerUnaryReactor* PlannerService::Plan(grpc::CallbackServerContext* context, const v1::PlanRequest* request,
                                               v1::PlanResponse* response) {
  InFlight in_flight(in_flight_, calls_started_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const auto start = std::chrono::steady_clock::now();
  absl::Status status;
  if (functions_.plan_into) {
    status = CallGuarded([&](const v1::PlanRequest& r) { return functions_.plan_into(r, response); }, *request);
    if (!status.ok()) response->Clear();
  } else {
    absl::StatusOr<v1::PlanResponse> result = CallGuarded(functions_.plan, *request);
    if (result.ok()) *response = *std::move(result);
    status = result.status();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_->ObservePlan(seconds, ServiceMetrics::ResultLabel(static_cast<int>(status.code())), *request,
                        status.ok() ? response : nullptr);
  const std::string cloneset =
      request->clone_set().metadata().namespace_() + "/" + request->clone_set().metadata().name();
  if (!status.ok()) {
    log_->Warn("plan failed", {{"cloneset", cloneset},
                               {"code", absl::StatusCodeToString(status.code())},
                               {"error", std::string(status.message())},
                               {"peer", Peer(context)}});
  } else if (log_->Enabled(LogLevel::kDebug)) {
    log_->Debug("plan", {{"cloneset", cloneset},
                         {"pods", static_cast<int64_t>(PodsInRequest(*request))},
                         {"actions", static_cast<int64_t>(response->actions_size())},
                         {"phase", response->summary().phase()},
                         {"seconds", seconds}});
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* PlannerService::Validate(grpc::CallbackServerContext* context,
                                                   const v1::ValidateRequest* request,
                                                   v1::ValidateResponse* response) {
  InFlight in_flight(in_flight_, calls_started_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<v1::ValidateResponse> result = CallGuarded(functions_.validate, *request);
  if (result.ok()) {
    *response = *std::move(result);
    metrics_->ObserveValidate(response->errors().empty() ? "valid" : "invalid");
  } else {
    metrics_->ObserveValidate("error");
    log_->Warn("validate failed", {{"code", absl::StatusCodeToString(result.status().code())},
                                   {"error", std::string(result.status().message())},
                                   {"peer", Peer(context)}});
  }
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

grpc::ServerUnaryReactor* PlannerService::ComputeRevision(grpc::CallbackServerContext* context,
                                                          const v1::ComputeRevisionRequest* request,
                                                          v1::ComputeRevisionResponse* response) {
  InFlight in_flight(in_flight_, calls_started_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<v1::ComputeRevisionResponse> result = CallGuarded(functions_.compute_revision, *request);
  metrics_->ObserveComputeRevision(ServiceMetrics::ResultLabel(static_cast<int>(result.status().code())));
  if (result.ok()) {
    *response = *std::move(result);
  } else {
    log_->Warn("compute revision failed", {{"code", absl::StatusCodeToString(result.status().code())},
                                           {"error", std::string(result.status().message())},
                                           {"peer", Peer(context)}});
  }
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

}  // namespace cloneset::planner::service
