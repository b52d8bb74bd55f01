// planner_vectors: writes and checks the shared planner test vectors (tests/vectors/planner/v1/, format in
// tests/vectors/README.md). Both start a real cloneset-planner on 127.0.0.1 (port 0) and talk to it over gRPC, as
// every client does:
//
//   planner_vectors generate --planner_binary=PATH --dir=DIR
//       sends every case of tools/vectors/cases.cc and writes DIR/<case>.json with the answer (`./run vectors`);
//   planner_vectors check --planner_binary=PATH --dir=DIR --planner_sources=planner/
//       fails when a vector file is missing, stale (its request is not the case's), or the planner answers it
//       differently, and when an action kind of the proto or an event reason of the planner's sources appears in
//       no vector (the ctest planner_vectors_cpp).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/impl/client_unary_call.h"
#include "grpcpp/impl/rpc_method.h"
#include "grpcpp/support/byte_buffer.h"
#include "nlohmann/json.hpp"
#include "tests/support/process.h"
#include "tools/vectors/cases.h"

namespace cloneset::vectors {
namespace {

namespace fs = std::filesystem;
namespace pb = ::cloneset::planner::v1;
using Json = nlohmann::json;
using google::protobuf::Message;

// Event reasons no vector can show at a sensible size, and why. Every other reason the planner's sources emit
// must appear in some vector.
const std::map<std::string, std::string>& ExemptReasons() {
  static const auto* exempt = new std::map<std::string, std::string>{
      {"FailedCreate",
       "only when all 14 348 907 instance ids are held by pods or PVCs (a request of millions of pods); "
       "planner/scale_test.cc covers it"},
  };
  return *exempt;
}

// The planner's log of this run (its stderr), named after the command and this process.
std::string LogPath(const std::string& command) {
  return (fs::temp_directory_path() / absl::StrCat("planner_vectors_", command, "-", getpid(), ".log")).string();
}

struct Reply {
  grpc::Status status;
  std::string bytes;  // the response message, when status is OK
};

class Planner {
 public:
  absl::Status Start(const std::string& binary, const std::string& log_path) {
    if (!fs::exists(binary)) return absl::NotFoundError(absl::StrCat("--planner_binary: no file ", binary));
    if (!process_.Start({binary, "--listen=127.0.0.1:0", "--metrics_listen="}, log_path)) {
      return absl::InternalError(absl::StrCat("cannot start ", binary));
    }
    const std::string address = process_.WaitForAddress("listening on", absl::Seconds(60));
    if (address.empty()) {
      return absl::DeadlineExceededError(
          absl::StrCat("the planner did not say \"listening on\" within 60 s; its log:\n", process_.Log()));
    }
    channel_ = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    return absl::OkStatus();
  }
  ~Planner() { process_.Stop(absl::Seconds(5)); }

  Reply Call(const std::string& method, const std::string& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Slice slice(request);
    grpc::ByteBuffer in(&slice, 1);
    grpc::ByteBuffer out;
    const std::string path = absl::StrCat("/cloneset.planner.v1.Planner/", method);
    grpc::internal::RpcMethod rpc(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC);
    Reply reply;
    reply.status = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(channel_.get(), rpc,
                                                                                           &context, in, &out);
    if (reply.status.ok()) {
      std::vector<grpc::Slice> slices;
      (void)out.Dump(&slices);
      for (const grpc::Slice& s : slices) reply.bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    return reply;
  }

 private:
  cloneset::testing::Process process_;
  std::shared_ptr<grpc::Channel> channel_;
};

std::unique_ptr<Message> NewRequest(const std::string& method) {
  if (method == "Plan") return std::make_unique<pb::PlanRequest>();
  if (method == "Validate") return std::make_unique<pb::ValidateRequest>();
  if (method == "ComputeRevision") return std::make_unique<pb::ComputeRevisionRequest>();
  return nullptr;
}

std::unique_ptr<Message> NewResponse(const std::string& method) {
  if (method == "Plan") return std::make_unique<pb::PlanResponse>();
  if (method == "Validate") return std::make_unique<pb::ValidateResponse>();
  if (method == "ComputeRevision") return std::make_unique<pb::ComputeRevisionResponse>();
  return nullptr;
}

// The canonical proto3 JSON form (lowerCamel names, defaults omitted) as a JSON value.
Json ToJson(const Message& m) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  (void)google::protobuf::util::MessageToJsonString(m, &text, options);
  return Json::parse(text);
}

absl::Status FromJson(const Json& j, Message* m, const std::string& what) {
  const auto status = google::protobuf::util::JsonStringToMessage(j.dump(), m);
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", status.ToString()));
  return absl::OkStatus();
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

std::string RequestBytes(const Case& c) { return c.request ? c.request->SerializeAsString() : c.request_bytes; }

// The vector of `c` from the planner's answer; an error when the answer is not what the case expects.
absl::StatusOr<Json> MakeVector(const Case& c, const Reply& reply) {
  Json v = {{"name", c.name}, {"description", c.description}, {"method", c.method}};
  if (c.request) {
    v["request"] = ToJson(*c.request);
  } else {
    v["requestBytes"] = absl::Base64Escape(c.request_bytes);
  }
  if (!c.error_contains.empty()) {
    if (reply.status.error_code() != grpc::StatusCode::INVALID_ARGUMENT ||
        !absl::StrContains(reply.status.error_message(), c.error_contains)) {
      return absl::FailedPreconditionError(absl::StrCat(c.name, ": expected INVALID_ARGUMENT containing \"",
                                                        c.error_contains, "\", got ",
                                                        CodeName(reply.status.error_code()), ": ",
                                                        reply.status.error_message()));
    }
    v["error"] = {{"code", "INVALID_ARGUMENT"},
                  {"messageContains", c.error_contains},
                  {"message", reply.status.error_message()}};
    return v;
  }
  if (!reply.status.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(c.name, ": the planner failed: ",
                                                      CodeName(reply.status.error_code()), ": ",
                                                      reply.status.error_message()));
  }
  std::unique_ptr<Message> response = NewResponse(c.method);
  if (!response->ParseFromString(reply.bytes)) {
    return absl::DataLossError(absl::StrCat(c.name, ": the response does not parse"));
  }
  v["response"] = ToJson(*response);
  return v;
}

absl::StatusOr<Json> ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  std::stringstream s;
  s << in.rdbuf();
  Json j = Json::parse(s.str(), nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(path.string(), ": not JSON"));
  return j;
}

std::set<std::string> VectorFiles(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.insert(entry.path().stem().string());
  }
  return names;
}

int Generate(const std::string& binary, const fs::path& dir) {
  fs::create_directories(dir);
  Planner planner;
  if (absl::Status s = planner.Start(binary, LogPath("generate")); !s.ok()) {
    std::cerr << "planner_vectors: " << s << "\n";
    return 1;
  }
  const std::vector<Case> cases = AllCases();
  std::set<std::string> written;
  for (const Case& c : cases) {
    const Reply reply = planner.Call(c.method, RequestBytes(c));
    absl::StatusOr<Json> v = MakeVector(c, reply);
    if (!v.ok()) {
      std::cerr << "planner_vectors: " << v.status().message() << "\n";
      return 1;
    }
    std::ofstream out(dir / (c.name + ".json"));
    out << v->dump(1) << "\n";
    written.insert(c.name);
  }
  for (const std::string& stale : VectorFiles(dir)) {
    if (!written.contains(stale)) {
      fs::remove(dir / (stale + ".json"));
      std::cout << "removed " << stale << ".json (no such case any more)\n";
    }
  }
  std::cout << "wrote " << written.size() << " vectors to " << dir.string() << "\n";
  return 0;
}

// The event reasons the planner's sources emit: AddEvent(pb::TYPE, "Reason", ...) and reasons named by a
// constant (constexpr char k...Reason[] = "...").
std::set<std::string> SourceEventReasons(const fs::path& planner_dir) {
  static const std::regex add_event(R"(AddEvent\(\s*pb::\w+,\s*"([A-Za-z]+)\")");
  static const std::regex constant(R"(constexpr char k\w*EventReason\[\]\s*=\s*"([A-Za-z]+)\")");
  std::set<std::string> reasons;
  for (const auto& entry : fs::directory_iterator(planner_dir)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".cc" || absl::EndsWith(file, "_test.cc")) continue;
    std::ifstream in(entry.path());
    std::stringstream s;
    s << in.rdbuf();
    const std::string text = s.str();
    for (const std::regex* re : {&add_event, &constant}) {
      for (auto it = std::sregex_iterator(text.begin(), text.end(), *re); it != std::sregex_iterator(); ++it) {
        reasons.insert((*it)[1].str());
      }
    }
  }
  return reasons;
}

int Check(const std::string& binary, const fs::path& dir, const fs::path& planner_sources) {
  std::vector<std::string> failures;
  const std::vector<Case> cases = AllCases();
  std::map<std::string, const Case*> by_name;
  for (const Case& c : cases) by_name[c.name] = &c;
  const std::set<std::string> files = VectorFiles(dir);
  for (const std::string& f : files) {
    if (!by_name.contains(f)) failures.push_back(absl::StrCat(f, ".json: no such case in tools/vectors/cases.cc"));
  }
  Planner planner;
  if (absl::Status s = planner.Start(binary, LogPath("check")); !s.ok()) {
    std::cerr << "planner_vectors: " << s << "\n";
    return 1;
  }
  std::set<std::string> kinds_seen;
  std::set<std::string> reasons_seen;
  int checked = 0;
  for (const Case& c : cases) {
    if (!files.contains(c.name)) {
      failures.push_back(absl::StrCat(c.name, ".json is missing: run ./run vectors"));
      continue;
    }
    absl::StatusOr<Json> v = ReadJson(dir / (c.name + ".json"));
    if (!v.ok()) {
      failures.push_back(std::string(v.status().message()));
      continue;
    }
    // The request as the file holds it, parsed from its JSON form as every client parses it.
    std::string bytes;
    if (v->contains("request")) {
      std::unique_ptr<Message> request = NewRequest(v->value("method", ""));
      if (request == nullptr) {
        failures.push_back(absl::StrCat(c.name, ": unknown method ", v->value("method", "")));
        continue;
      }
      if (absl::Status s = FromJson((*v)["request"], request.get(), c.name + " request"); !s.ok()) {
        failures.push_back(std::string(s.message()));
        continue;
      }
      std::string diff;
      google::protobuf::util::MessageDifferencer differ;
      differ.ReportDifferencesToString(&diff);
      if (c.request == nullptr || v->value("method", "") != c.method || !differ.Compare(*c.request, *request)) {
        failures.push_back(absl::StrCat(c.name, ".json is stale (its request is not the case's; run ./run vectors): ",
                                        diff));
        continue;
      }
      bytes = request->SerializeAsString();
    } else {
      std::string raw;
      if (!absl::Base64Unescape(v->value("requestBytes", ""), &raw) || raw != c.request_bytes) {
        failures.push_back(absl::StrCat(c.name, ".json is stale (requestBytes differ; run ./run vectors)"));
        continue;
      }
      bytes = raw;
    }
    const Reply reply = planner.Call(c.method, bytes);
    if (v->contains("error")) {
      const Json& e = (*v)["error"];
      if (CodeName(reply.status.error_code()) != e.value("code", "") ||
          reply.status.error_message() != e.value("message", "") ||
          !absl::StrContains(reply.status.error_message(), e.value("messageContains", "?"))) {
        failures.push_back(absl::StrCat(c.name, ": expected ", e.dump(), ", got ", CodeName(reply.status.error_code()),
                                        ": ", reply.status.error_message()));
      }
      ++checked;
      continue;
    }
    if (!reply.status.ok()) {
      failures.push_back(absl::StrCat(c.name, ": the planner failed: ", CodeName(reply.status.error_code()), ": ",
                                      reply.status.error_message()));
      continue;
    }
    std::unique_ptr<Message> got = NewResponse(c.method);
    std::unique_ptr<Message> want = NewResponse(c.method);
    if (!got->ParseFromString(reply.bytes)) {
      failures.push_back(absl::StrCat(c.name, ": the response does not parse"));
      continue;
    }
    if (absl::Status s = FromJson((*v)["response"], want.get(), c.name + " response"); !s.ok()) {
      failures.push_back(std::string(s.message()));
      continue;
    }
    std::string diff;
    google::protobuf::util::MessageDifferencer differ;
    differ.ReportDifferencesToString(&diff);
    if (!differ.Compare(*want, *got)) {
      failures.push_back(absl::StrCat(c.name, ": the planner's answer differs from the vector (expected -> got):\n",
                                      diff));
    }
    ++checked;
    if (auto* plan = dynamic_cast<pb::PlanResponse*>(got.get())) {
      const auto* kind = pb::Action::descriptor()->FindOneofByName("kind");
      const auto* reflection = pb::Action::GetReflection();
      for (const pb::Action& a : plan->actions()) {
        if (const auto* f = reflection->GetOneofFieldDescriptor(a, kind)) kinds_seen.insert(f->name());
        if (a.has_start_in_place_updates() && !a.start_in_place_updates().event_reason().empty()) {
          reasons_seen.insert(a.start_in_place_updates().event_reason());
        }
      }
      for (const pb::Event& e : plan->events()) reasons_seen.insert(e.reason());
    }
  }
  // Coverage: every action kind of the proto and every event reason of the planner is in some vector.
  const auto* kind = pb::Action::descriptor()->FindOneofByName("kind");
  for (int i = 0; i < kind->field_count(); ++i) {
    if (!kinds_seen.contains(kind->field(i)->name())) {
      failures.push_back(absl::StrCat("no vector has an action of kind ", kind->field(i)->name(),
                                      ": add a case to tools/vectors/cases.cc"));
    }
  }
  const std::set<std::string> reasons = SourceEventReasons(planner_sources);
  if (reasons.size() < 5) {
    failures.push_back(absl::StrCat("found only ", reasons.size(), " event reasons in ", planner_sources.string(),
                                    ": the scan of AddEvent calls no longer matches the sources"));
  }
  for (const std::string& r : reasons) {
    if (!reasons_seen.contains(r) && !ExemptReasons().contains(r)) {
      failures.push_back(absl::StrCat("no vector has an event with reason ", r,
                                      ": add a case to tools/vectors/cases.cc"));
    }
  }
  for (const auto& [r, why] : ExemptReasons()) {
    if (!reasons.contains(r)) failures.push_back(absl::StrCat("exempt reason ", r, " is no longer in the sources"));
  }
  for (const std::string& f : failures) std::cerr << "FAIL " << f << "\n";
  std::cout << checked << " of " << cases.size() << " vectors answered as recorded; " << kinds_seen.size() << " of "
            << kind->field_count() << " action kinds and " << reasons_seen.size() << " event reasons covered; "
            << failures.size() << " failures\n";
  return failures.empty() ? 0 : 1;
}

int Usage() {
  std::cerr << "usage: planner_vectors generate --planner_binary=PATH --dir=DIR\n"
               "       planner_vectors check --planner_binary=PATH --dir=DIR --planner_sources=DIR\n";
  return 2;
}

}  // namespace
}  // namespace cloneset::vectors

int main(int argc, char** argv) {
  using namespace cloneset::vectors;
  if (argc < 2) return Usage();
  const std::string command = argv[1];
  std::map<std::string, std::string> flags;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) {
      std::cerr << "planner_vectors: expected --flag=value, got " << arg << "\n";
      return Usage();
    }
    flags[arg.substr(2, eq - 2)] = arg.substr(eq + 1);
  }
  for (const char* required : {"planner_binary", "dir"}) {
    if (flags[required].empty()) {
      std::cerr << "planner_vectors: --" << required << " is required\n";
      return Usage();
    }
  }
  if (command == "generate") return Generate(flags["planner_binary"], flags["dir"]);
  if (command == "check") {
    if (flags["planner_sources"].empty()) {
      std::cerr << "planner_vectors: --planner_sources is required\n";
      return Usage();
    }
    return Check(flags["planner_binary"], flags["dir"], flags["planner_sources"]);
  }
  return Usage();
}
