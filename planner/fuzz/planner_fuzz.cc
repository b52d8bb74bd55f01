// Fuzzes the planner's request path: the first byte picks the encoding of the rest (0: binary PlanRequest, 1: text
// format, 2: protobuf JSON), then Validate and Plan run on it, and Plan again with the pods as a pod table, which
// must give the same plan, and Plan with accept_in_place_batches flipped, whose plan (batches expanded) must be the
// same too. Any crash, sanitizer report, hang or difference is a bug; error statuses are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "planapi/in_place_batches.h"
#include "planner/plan.h"
#include "planapi/pod_table.h"
#include "planner/testing/deterministic_bytes.h"

namespace {

namespace pb = ::cloneset::planner::v1;

// Text format and JSON accept escapes that make strings invalid UTF-8, which the service's binary parsing rejects
// before the planner sees them. Re-parsing the binary form keeps the fuzzer on inputs the service can receive.
bool ReachableOverGrpc(const pb::PlanRequest& request) {
  std::string wire;
  pb::PlanRequest reparsed;
  return request.SerializeToString(&wire) && reparsed.ParseFromString(wire);
}

bool Decode(const uint8_t* data, size_t size, pb::PlanRequest* request) {
  if (size == 0) return false;
  const std::string payload(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      return request->ParseFromString(payload);
    case 1: {
      google::protobuf::TextFormat::Parser parser;
      parser.AllowPartialMessage(true);
      return parser.ParseFromString(payload, request) && ReachableOverGrpc(*request);
    }
    default:
      return google::protobuf::util::JsonStringToMessage(payload, request).ok() && ReachableOverGrpc(*request);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pb::PlanRequest request;
  if (!Decode(data, size, &request)) return -1;  // not a request: keep it out of the corpus
  pb::ValidateRequest validate;
  *validate.mutable_clone_set() = request.clone_set();
  *validate.mutable_pods() = request.pods();
  (void)cloneset::planner::Validate(validate);
  const auto plan = cloneset::planner::Plan(request);
  // The pod-table encoding of the same pods must give the same plan, byte for byte (or fail alike).
  if (!request.has_pod_table()) {
    auto table = cloneset::planapi::EncodePodTable(request.pods());
    if (table.ok()) {
      pb::PlanRequest as_table = request;
      as_table.clear_pods();
      *as_table.mutable_pod_table() = *std::move(table);
      const auto from_table = cloneset::planner::Plan(as_table);
      if (plan.ok() != from_table.ok()) __builtin_trap();
      if (plan.ok() && cloneset::planner::testing::DeterministicBytes(*plan) !=
                            cloneset::planner::testing::DeterministicBytes(*from_table)) __builtin_trap();
    }
  }
  // With in-place batches flipped: the same plan once the batches are expanded. A caller that did not ask for
  // batches never gets one.
  {
    pb::PlanRequest flipped = request;
    flipped.set_accept_in_place_batches(!request.accept_in_place_batches());
    auto other = cloneset::planner::Plan(flipped);
    if (plan.ok() != other.ok()) __builtin_trap();
    if (plan.ok()) {
      pb::PlanResponse per_pod = request.accept_in_place_batches() ? *other : *plan;
      pb::PlanResponse batched = request.accept_in_place_batches() ? *plan : *other;
      for (const pb::Action& action : per_pod.actions()) {
        if (action.has_start_in_place_updates()) __builtin_trap();
      }
      cloneset::planapi::ExpandInPlaceBatches(&batched);
      if (cloneset::planner::testing::DeterministicBytes(per_pod) !=
          cloneset::planner::testing::DeterministicBytes(batched)) __builtin_trap();
    }
  }
  pb::ComputeRevisionRequest revision;
  *revision.mutable_clone_set() = request.clone_set();
  *revision.mutable_revisions() = request.revisions();
  (void)cloneset::planner::ComputeRevision(revision);
  return 0;
}
