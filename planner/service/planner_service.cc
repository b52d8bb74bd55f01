#include "planner/service/planner_service.h"

#include <chrono>
#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "planapi/pod_table.h"
#include "planner/service/arena_allocator.h"

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

// The request as `message`; false when the bytes are not one.
bool Parse(const grpc::ByteBuffer& bytes, google::protobuf::MessageLite* message) {
  grpc::ByteBuffer copy(bytes);  // shares the slices; the reader needs a mutable buffer
  grpc::ProtoBufferReader reader(&copy);
  return reader.status().ok() && message->ParseFromZeroCopyStream(&reader);
}

absl::Status Unparsable(absl::string_view type) {
  return absl::InvalidArgumentError(
      absl::StrCat("request could not be parsed: the bytes are not a cloneset.planner.v1.", type, " message"));
}

constexpr size_t kSmallResponseBytes = 8 << 10;

// `message` into `bytes`, unless it is bigger than `max_bytes` (RESOURCE_EXHAUSTED saying so).
absl::Status Serialize(const google::protobuf::MessageLite& message, int64_t max_bytes, absl::string_view what,
                       grpc::ByteBuffer* bytes) {
  const size_t size = message.ByteSizeLong();
  if (static_cast<int64_t>(size) > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(what, " is ", size, " bytes, more than the ", max_bytes,
                                                     " bytes a response may have"));
  }
  if (size <= kSmallResponseBytes) {
    // As gRPC's own serializer does: one slice (the stream writer cannot be made for an empty message).
    grpc::Slice slice(size);
    message.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
    grpc::ByteBuffer one(&slice, 1);
    bytes->Swap(&one);
    return absl::OkStatus();
  }
  grpc::ProtoBufferWriter writer(bytes, grpc::kProtoBufferWriterMaxBufferLength, static_cast<int>(size));
  google::protobuf::io::CodedOutputStream out(&writer);
  message.SerializeWithCachedSizes(&out);
  out.Trim();
  if (out.HadError()) return absl::InternalError(absl::StrCat(what, ": serialization failed"));
  return absl::OkStatus();
}

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

base::LogOptions PlannerLogOptions(std::ostream* out, LogLevel min_level, const base::Clock* clock) {
  base::LogOptions options;
  options.out = out;
  options.min_level = min_level;
  options.nested_fields = true;
  options.clock = clock;
  return options;
}

PlannerService::PlannerService(PlannerFunctions functions, ServiceMetrics* metrics, JsonLogger* log,
                               int64_t max_response_bytes)
    : max_response_bytes_(max_response_bytes), functions_(std::move(functions)), metrics_(metrics), log_(log) {}

grpc::ServerUnaryReactor* PlannerService::Plan(grpc::CallbackServerContext* context,
                                               const grpc::ByteBuffer* request_bytes,
                                               grpc::ByteBuffer* response_bytes) {
  InFlight in_flight(in_flight_, calls_started_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const auto start = std::chrono::steady_clock::now();
  google::protobuf::Arena arena(CallArenaOptions());
  auto* request = google::protobuf::Arena::CreateMessage<v1::PlanRequest>(&arena);
  auto* response = google::protobuf::Arena::CreateMessage<v1::PlanResponse>(&arena);
  const auto deadline = context->deadline();
  const auto deadline_passed = [&] { return std::chrono::system_clock::now() >= deadline; };
  const CancelCheck cancelled = [&] { return stopping_.load() || context->IsCancelled() || deadline_passed(); };
  absl::Status status;
  if (!Parse(*request_bytes, request)) {
    status = Unparsable("PlanRequest");
    request->Clear();
  } else if (functions_.plan_into) {
    status = CallGuarded([&](const v1::PlanRequest& r) { return functions_.plan_into(r, response, cancelled); },
                         *request);
  } else {
    absl::StatusOr<v1::PlanResponse> result = CallGuarded(functions_.plan, *request);
    if (result.ok()) *response = *std::move(result);
    status = result.status();
  }
  if (absl::IsCancelled(status)) {
    // Say why: the client's deadline, or this server stopping (another replica can answer).
    if (deadline_passed()) {
      status = absl::DeadlineExceededError(absl::StrCat("plan abandoned at the call's deadline: ", status.message()));
    } else if (stopping_.load()) {
      status = absl::UnavailableError("plan abandoned: the planner is stopping; retry on another replica");
    }
  }
  if (status.ok()) status = Serialize(*response, max_response_bytes_, "the plan", response_bytes);
  if (!status.ok()) response->Clear();
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
                         {"pods", static_cast<int64_t>(planapi::PodsInRequest(*request))},
                         {"actions", static_cast<int64_t>(response->actions_size())},
                         {"phase", response->summary().phase()},
                         {"seconds", seconds}});
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* PlannerService::Validate(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request_bytes,
                                                   grpc::ByteBuffer* response_bytes) {
  InFlight in_flight(in_flight_, calls_started_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  v1::ValidateRequest request;
  absl::StatusOr<v1::ValidateResponse> result = Unparsable("ValidateRequest");
  if (Parse(*request_bytes, &request)) result = CallGuarded(functions_.validate, request);
  absl::Status status = result.status();
  if (status.ok()) status = Serialize(*result, max_response_bytes_, "the validation result", response_bytes);
  if (status.ok()) {
    metrics_->ObserveValidate(result->errors().empty() ? "valid" : "invalid");
  } else {
    metrics_->ObserveValidate("error");
    log_->Warn("validate failed", {{"code", absl::StatusCodeToString(status.code())},
                                   {"error", std::string(status.message())},
                                   {"peer", Peer(context)}});
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* PlannerService::ComputeRevision(grpc::CallbackServerContext* context,
                                                          const grpc::ByteBuffer* request_bytes,
                                                          grpc::ByteBuffer* response_bytes) {
  InFlight in_flight(in_flight_, calls_started_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  v1::ComputeRevisionRequest request;
  absl::StatusOr<v1::ComputeRevisionResponse> result = Unparsable("ComputeRevisionRequest");
  if (Parse(*request_bytes, &request)) result = CallGuarded(functions_.compute_revision, request);
  absl::Status status = result.status();
  if (status.ok()) status = Serialize(*result, max_response_bytes_, "the revision", response_bytes);
  metrics_->ObserveComputeRevision(ServiceMetrics::ResultLabel(static_cast<int>(status.code())));
  if (!status.ok()) {
    log_->Warn("compute revision failed", {{"code", absl::StatusCodeToString(status.code())},
                                           {"error", std::string(status.message())},
                                           {"peer", Peer(context)}});
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace cloneset::planner::service
