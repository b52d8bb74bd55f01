// Compares our planner's ControllerRevisions with what OpenKruise v1.8.0's own code computed for the same
// CloneSets (tools/go/kruise/cmd/kruise-revision's output). Every value comes through the planner's public API,
// as the executor drives it: the CloneSet JSON through snapshot::CloneSetFromJson, then planner::Plan (the
// CreateRevision action's name, hash label and volumeClaimTemplates hash, the CreatePod action's labels with the
// CloneSetShortHash gate off and on, the status' collisionCount) and planner::ComputeRevision (the data bytes).
//
// Usage: kruise_revision_check CASES_DIR UPSTREAM_OUTPUT
// Exit 0 when every case of UPSTREAM_OUTPUT matches; prints each difference and "N passed, M failed".
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "planner/plan.h"
#include "snapshot/snapshot.h"

namespace {

using Json = nlohmann::json;
namespace pb = ::cloneset::planner::v1;

// The revision the Go program creates first under the computed name, so that the name is taken (its data differs).
constexpr char kTakenData[] = R"({"spec":{"template":{"$patch":"replace","metadata":{"labels":{"taken":"true"}}}}})";

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const pb::Action* FindAction(const pb::PlanResponse& r, bool (pb::Action::*has)() const) {
  for (const pb::Action& a : r.actions()) {
    if ((a.*has)()) return &a;
  }
  return nullptr;
}

// What our planner answers for one case, in the Go program's vocabulary. `error` when the planner rejects the
// CloneSet (upstream: kruise-manager cannot decode it).
absl::StatusOr<Json> Ours(const std::string& file, const Json& tc) {
  Json out = {{"case", file}};
  absl::StatusOr<pb::CloneSet> cs = cloneset::snapshot::CloneSetFromJson(tc.at("cloneSet").dump());
  if (!cs.ok()) return absl::InvalidArgumentError(absl::StrCat("CloneSetFromJson: ", cs.status().message()));
  pb::PlanRequest req;
  *req.mutable_clone_set() = *cs;
  req.mutable_now()->set_seconds(1700000000);
  req.set_random_seed(1);
  if (tc.value("nameTaken", false)) {
    pb::ComputeRevisionRequest cr;
    *cr.mutable_clone_set() = *cs;
    absl::StatusOr<pb::ComputeRevisionResponse> first = cloneset::planner::ComputeRevision(cr);
    if (!first.ok()) {
      out["error"] = true;
      std::cerr << file << ": " << first.status() << "\n";
      return out;
    }
    pb::ControllerRevision* taken = req.add_revisions();
    taken->mutable_metadata()->set_name(first->name());
    taken->mutable_metadata()->set_namespace_(cs->metadata().namespace_());
    taken->set_data_json(kTakenData);
    taken->set_revision(1);
  }
  for (bool short_hash : {false, true}) {
    req.mutable_feature_gates()->set_clone_set_short_hash(short_hash);
    absl::StatusOr<pb::PlanResponse> plan = cloneset::planner::Plan(req);
    if (!plan.ok()) {
      if (plan.status().code() != absl::StatusCode::kInvalidArgument) return plan.status();
      std::cerr << file << ": " << plan.status() << "\n";
      return Json{{"case", file}, {"error", true}};
    }
    const pb::Action* create_rev = FindAction(*plan, &pb::Action::has_create_revision);
    const pb::Action* create_pod = FindAction(*plan, &pb::Action::has_create_pod);
    if (create_rev == nullptr || create_pod == nullptr) {
      return absl::InternalError("the plan holds no CreateRevision or no CreatePod action");
    }
    const Json rev = Json::parse(create_rev->create_revision().revision_json());
    const Json pod = Json::parse(create_pod->create_pod().pod_json());
    const Json& pod_labels = pod.at("metadata").at("labels");
    if (short_hash) {
      out["podRevisionLabelShortHash"] = pod_labels.value("controller-revision-hash", "<none>");
      continue;
    }
    out["name"] = rev.at("metadata").at("name");
    out["label"] = rev.at("metadata").at("labels").value("controller.kubernetes.io/hash", "<none>");
    out["vctHash"] = rev.at("metadata").at("annotations").value("kruise.io/cloneset-volumeclaimtemplate-hash", "<none>");
    out["collisionCount"] = plan->status().collision_count();
    out["podRevisionLabel"] = pod_labels.value("controller-revision-hash", "<none>");
    out["podTemplateHash"] = pod_labels.value("pod-template-hash", "<none>");
    pb::ComputeRevisionRequest cr;
    *cr.mutable_clone_set() = *cs;
    *cr.mutable_revisions() = req.revisions();
    absl::StatusOr<pb::ComputeRevisionResponse> computed = cloneset::planner::ComputeRevision(cr);
    if (!computed.ok()) return computed.status();
    out["data"] = computed->data_json();
    if (Json::parse(computed->data_json()) != rev.at("data")) {
      return absl::InternalError("ComputeRevision's data differs from the CreateRevision action's");
    }
    if (computed->name() != out["name"]) {
      return absl::InternalError(absl::StrCat("ComputeRevision names ", computed->name(), ", Plan creates ",
                                              out["name"].get<std::string>()));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kruise_revision_check CASES_DIR UPSTREAM_OUTPUT\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::ifstream upstream(argv[2]);
  if (!upstream) {
    std::cerr << "FAIL: cannot read " << argv[2] << "\n";
    return 1;
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  int passed = 0, failed = 0;
  size_t lines = 0;
  for (std::string line; std::getline(upstream, line);) {
    if (line.empty()) continue;
    const Json want = Json::parse(line, nullptr, false);
    if (want.is_discarded() || !want.contains("case")) {
      std::cerr << "FAIL: not a line of kruise-revision: " << line << "\n";
      return 1;
    }
    const std::string file = want.at("case");
    if (lines >= files.size() || files[lines] != file) {
      std::cerr << "FAIL: upstream's case " << lines << " is " << file << ", expected the files of " << dir << "\n";
      return 1;
    }
    ++lines;
    const Json tc = Json::parse(ReadFile(dir / file), nullptr, false);
    absl::StatusOr<Json> got = tc.is_discarded() ? absl::InvalidArgumentError("not JSON") : Ours(file, tc);
    if (!got.ok()) {
      std::cerr << "FAIL " << file << ": " << got.status() << "\n";
      ++failed;
      continue;
    }
    bool same = true;
    for (const auto& [key, value] : want.items()) {
      const Json ours = got->value(key, Json());
      if (ours != value) {
        std::cerr << "FAIL " << file << " " << key << ":\n  upstream: " << value.dump() << "\n  ours:     " << ours.dump()
                  << "\n";
        same = false;
      }
    }
    for (const auto& [key, value] : got->items()) {
      if (!want.contains(key)) {
        std::cerr << "FAIL " << file << ": we answer " << key << "=" << value.dump() << ", upstream does not\n";
        same = false;
      }
    }
    same ? ++passed : ++failed;
  }
  if (lines != files.size()) {
    std::cerr << "FAIL: upstream answered " << lines << " of the " << files.size() << " cases\n";
    return 1;
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
