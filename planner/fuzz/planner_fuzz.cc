// Fuzzes the planner's request path: the first byte picks the encoding of the rest (0: binary PlanRequest, 1: text
// format, 2: protobuf JSON), then Validate and Plan run on it. Any crash, sanitizer report or hang is a bug; error
// statuses are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "planner/plan.h"

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
  (void)cloneset::planner::Plan(request);
  pb::ComputeRevisionRequest revision;
  *revision.mutable_clone_set() = request.clone_set();
  *revision.mutable_revisions() = request.revisions();
  (void)cloneset::planner::ComputeRevision(revision);
  return 0;
}
