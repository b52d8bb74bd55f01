// The inputs of the shared planner test vectors (tests/vectors/planner/v1/): one request per case, built with the
// planner's test fixtures so that each case states only what it is about. `planner_vectors generate` sends each
// request to a real planner and writes the answer next to it; `planner_vectors check` sends them again and fails on
// any difference (tools/vectors/main.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/message.h"

namespace cloneset::vectors {

struct Case {
  std::string name;         // the file name without .json: <method>_<what>, lower case
  std::string description;  // one sentence: what the case shows
  std::string method;       // "Plan", "Validate" or "ComputeRevision"
  // The request; null when `request_bytes` is sent instead (bytes that do not parse as the request message).
  std::shared_ptr<google::protobuf::Message> request;
  std::string request_bytes;
  // Non-empty: the call must fail with INVALID_ARGUMENT and a message that contains this (the field's name).
  std::string error_contains;
};

// Every case, in a fixed order, names distinct.
std::vector<Case> AllCases();

}  // namespace cloneset::vectors
