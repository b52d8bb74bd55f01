// The planner as its callers see it (the API of proto/planner.proto), and what a client reports about reaching it.
// The gRPC implementation is grpc_planner_client.h; test doubles are in testing/mock_planner_client.h.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "planapi/request.h"

namespace cloneset::planner::client {

namespace pb = ::cloneset::planner::v1;

// The planner service. Errors carry the gRPC code as the absl code (the numeric values are the same).
class PlannerClient {
 public:
  virtual ~PlannerClient() = default;
  virtual absl::StatusOr<pb::PlanResponse> Plan(const pb::PlanRequest& request) = 0;
  // The same call with the request's bytes made already (planapi::RequestWithPods::Serialize: a shared pod table's
  // cached bytes as they are): a client that sends bytes sends these instead of serializing `request`, which they
  // encode, again. By default Plan(request).
  virtual absl::StatusOr<pb::PlanResponse> PlanBytes(const pb::PlanRequest& request, planapi::RequestBytes bytes) {
    (void)bytes;
    return Plan(request);
  }
  virtual absl::StatusOr<pb::ValidateResponse> Validate(const pb::ValidateRequest& request) = 0;
  // Whether some planner replica answered recently: the health probe's last answer, or the last call's outcome
  // when the client probes nothing.
  virtual bool Healthy() = 0;
};

// Told each time the client learns whether a planner can be reached: a call answered or a health check said
// SERVING (Reached); a call found no planner (UNAVAILABLE) or a health check failed (Unreachable, with why).
// Called from the calling threads and the health probe's thread at once: implementations are thread-safe.
// What the caller makes of it (the executor's /readyz) is the caller's.
class ContactObserver {
 public:
  virtual ~ContactObserver() = default;
  virtual void Reached() = 0;
  virtual void Unreachable(std::string_view why) = 0;
};

}  // namespace cloneset::planner::client
