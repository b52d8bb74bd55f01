// Prints one worked example for docs/planner-api.md: a small mid-rollout request and the real Plan's response,
// both as protobuf JSON, and the request's pods as a pod table.
#include <cstdio>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "planner/bench/rollout_snapshot.h"
#include "planner/plan.h"
#include "planapi/pod_table.h"

int main(int argc, char** argv) {
  const int pods = argc > 1 ? std::stoi(argv[1]) : 4;
  auto request = cloneset::planner::bench::MidRolloutRequest(pods);
  if (!request.ok()) {
    std::fprintf(stderr, "%s\n", std::string(request.status().message()).c_str());
    return 1;
  }
  auto response = cloneset::planner::Plan(*request);
  if (!response.ok()) {
    std::fprintf(stderr, "%s\n", std::string(response.status().message()).c_str());
    return 1;
  }
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = false;
  std::string request_json, response_json;
  if (!google::protobuf::util::MessageToJsonString(*request, &request_json, options).ok() ||
      !google::protobuf::util::MessageToJsonString(*response, &response_json, options).ok()) {
    return 1;
  }
  // The same pods as a pod table (PlanRequest.pod_table), which gives the same response.
  auto table = cloneset::planapi::EncodePodTable(request->pods());
  std::string table_json;
  if (!table.ok() || !google::protobuf::util::MessageToJsonString(*table, &table_json, options).ok()) return 1;
  std::printf("### Request\n\n```json\n%s```\n\n### Response\n\n```json\n%s```\n\n"
              "### The same pods as a pod table\n\nSent as `podTable` instead of `pods`, these give the same "
              "response. `stringData` is base64 in JSON, as for every `bytes` field.\n\n```json\n%s```\n",
              request_json.c_str(), response_json.c_str(), table_json.c_str());
  return 0;
}
