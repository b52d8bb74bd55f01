// The planner over gRPC: one channel with client-side round_robin over every address the target resolves to
// (dns:///planner.svc:7070 reaches every planner replica), a deadline per call, retries with exponential
// back-off on UNAVAILABLE / DEADLINE_EXCEEDED, optional TLS / mTLS, and an optional background gRPC health probe
// that drives Healthy(). Every outcome that says whether a planner can be reached goes to the ContactObserver given
// (the executor feeds its /readyz from it). Long-lived callers (the executor) probe; one-shot callers (clonesetctl)
// do not, and the client then starts no thread.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "grpcpp/support/byte_buffer.h"
#include "planapi/request.h"
#include "planner/client/planner_client.h"

namespace cloneset::planner::client {

struct GrpcPlannerOptions {
  std::string address = "dns:///127.0.0.1:7070";
  std::string tls_ca;    // PEM file; TLS when set
  std::string tls_cert;  // PEM files for mTLS
  std::string tls_key;
  absl::Duration deadline = absl::Seconds(10);
  int max_attempts = 3;
  absl::Duration backoff = absl::Milliseconds(200);
  // A thread that asks the gRPC health service every health_period (every 250 ms while no planner answers), for
  // callers that stay up and want to know before they call. Off: no thread, Healthy() follows the calls.
  bool health_probe = false;
  absl::Duration health_period = absl::Seconds(2);
  // Told every call's and health check's outcome that says whether a planner can be reached; optional, and must
  // outlive the client.
  ContactObserver* observer = nullptr;
  // Measures the back-off between attempts and the health probe's period (RealClock when null). gRPC deadlines
  // stay in real time: gRPC enforces them.
  const base::Clock* clock = nullptr;
};

// The request's bytes as one gRPC message, without copying them: `head` and `tail` moved into slices of their own,
// the shared pod table's bytes referenced where they are kept (the slice holds the table until gRPC drops it).
// What GrpcPlannerClient::PlanBytes sends.
grpc::ByteBuffer PlanRequestBuffer(planapi::RequestBytes bytes);

// Fails on unreadable PEM files (INVALID_ARGUMENT naming the flag). Starts the health probe's thread when asked.
absl::StatusOr<std::unique_ptr<PlannerClient>> NewGrpcPlannerClient(const GrpcPlannerOptions& options);

}  // namespace cloneset::planner::client
