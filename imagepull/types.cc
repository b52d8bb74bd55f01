#include "imagepull/types.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_read.h"
#include "base/time_format.h"

namespace cloneset::imagepull {
namespace {

using Json = nlohmann::json;

// Reads without throwing: a missing or mistyped field yields the fallback.
using base::json_read::Str;
// A metav1.Time member; InfinitePast when absent or unparsable.
absl::Time TimeMember(const Json& obj, const char* key) {
  return base::ParseTime(Str(obj, key)).value_or(absl::InfinitePast());
}
const Json& Obj(const Json& obj, const char* key) {
  static const Json kEmpty = Json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}
const Json& Arr(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}
// Integer fields: absent -> fallback; present but not an integer -> error naming the field.
absl::Status Int(const Json& obj, const char* key, std::string_view field, int32_t* out) {
  if (!obj.is_object()) return absl::OkStatus();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return absl::OkStatus();
  if (it->is_number_integer()) {
    *out = it->get<int32_t>();
    return absl::OkStatus();
  }
  if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), out)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": expected an integer, got ", it->dump()));
}
std::vector<std::string> Strings(const Json& arr) {
  std::vector<std::string> out;
  for (const Json& v : arr) {
    if (v.is_string()) out.push_back(v.get<std::string>());
    else if (v.is_object() && v.contains("name") && v["name"].is_string()) out.push_back(v["name"].get<std::string>());
  }
  return out;
}
void PutTime(Json& obj, const char* key, absl::Time t) {
  if (t != absl::InfinitePast()) obj[key] = base::FormatTime(t);
}

absl::StatusOr<Json> ParseObject(std::string_view json, std::string_view what) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": not a JSON object"));
  return j;
}

}  // namespace

std::string_view PhaseName(PullPhase phase) {
  switch (phase) {
    case PullPhase::kPending: return "Pending";
    case PullPhase::kPulling: return "Pulling";
    case PullPhase::kSucceeded: return "Succeeded";
    case PullPhase::kFailed: return "Failed";
  }
  return "Pending";
}

std::optional<PullPhase> ParsePhase(std::string_view name) {
  for (PullPhase p : {PullPhase::kPending, PullPhase::kPulling, PullPhase::kSucceeded, PullPhase::kFailed}) {
    if (PhaseName(p) == name) return p;
  }
  return std::nullopt;
}

const PullReport* NodeImage::ReportFor(std::string_view job_uid) const {
  for (const PullReport& r : reports) {
    if (r.job_uid == job_uid) return &r;
  }
  return nullptr;
}
const PullRequest* NodeImage::RequestFor(std::string_view job_uid) const {
  for (const PullRequest& r : requests) {
    if (r.job_uid == job_uid) return &r;
  }
  return nullptr;
}

absl::StatusOr<PullJob> ParsePullJob(std::string_view json) {
  absl::StatusOr<Json> parsed = ParseObject(json, "ImagePullJob");
  if (!parsed.ok()) return parsed.status();
  const Json& j = *parsed;
  const Json& meta = Obj(j, "metadata");
  const Json& spec = Obj(j, "spec");
  PullJob job;
  job.namespace_ = Str(meta, "namespace");
  job.name = Str(meta, "name");
  job.uid = Str(meta, "uid");
  job.resource_version = Str(meta, "resourceVersion");
  job.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (job.name.empty()) return absl::InvalidArgumentError("ImagePullJob metadata.name: required");
  job.image = Str(spec, "image");
  if (job.image.empty()) return absl::InvalidArgumentError(absl::StrCat("ImagePullJob ", job.name, " spec.image: required"));
  for (auto [key, out] : {std::pair{"parallelism", &job.parallelism}, std::pair{"timeoutSeconds", &job.timeout_seconds},
                          std::pair{"minUpdatedReadyPods", &job.min_updated_ready_pods}}) {
    if (absl::Status s = Int(spec, key, absl::StrCat("ImagePullJob ", job.name, " spec.", key), out); !s.ok()) return s;
  }
  // Same normalisation as the planner: a non-positive parallelism or timeout falls back to the default.
  if (job.parallelism < 1) job.parallelism = 1;
  if (job.timeout_seconds < 1) job.timeout_seconds = 300;
  if (job.min_updated_ready_pods < 0) job.min_updated_ready_pods = 0;
  if (auto it = spec.find("podSelector"); it != spec.end() && !it->is_null()) {
    absl::StatusOr<common::LabelSelector> selector =
        common::LabelSelector::FromJson(*it, absl::StrCat("ImagePullJob ", job.name, " spec.podSelector"));
    if (!selector.ok()) return selector.status();
    job.pod_selector = *std::move(selector);
  }
  job.pull_secrets = Strings(Arr(spec, "pullSecrets"));
  for (const Json& ref : Arr(meta, "ownerReferences")) {
    if (ref.is_object() && ref.value("controller", false)) {
      job.owner_kind = Str(ref, "kind");
      job.owner_api_version = Str(ref, "apiVersion");
      job.owner_name = Str(ref, "name");
      job.owner_uid = Str(ref, "uid");
    }
  }
  job.revision_hash = Str(Obj(meta, "labels"), "controller-revision-hash");

  const Json& status = Obj(j, "status");
  PullJobStatus& st = job.status;
  st.phase = Str(status, "phase");
  st.message = Str(status, "message");
  for (auto [key, out] : {std::pair{"desired", &st.desired}, std::pair{"pending", &st.pending},
                          std::pair{"pulling", &st.pulling}, std::pair{"succeeded", &st.succeeded},
                          std::pair{"failed", &st.failed}}) {
    (void)Int(status, key, "status", out);  // our own output; a bad value is simply recomputed
  }
  for (const Json& n : Arr(status, "nodes")) {
    NodePullStatus ns;
    ns.node = Str(n, "name");
    ns.phase = ParsePhase(Str(n, "phase")).value_or(PullPhase::kPending);
    ns.image_id = Str(n, "imageID");
    ns.message = Str(n, "message");
    ns.start_time = TimeMember(n, "startTime");
    ns.completion_time = TimeMember(n, "completionTime");
    st.nodes.push_back(std::move(ns));
  }
  st.start_time = TimeMember(status, "startTime");
  st.completion_time = TimeMember(status, "completionTime");
  return job;
}

absl::StatusOr<NodeImage> ParseNodeImage(std::string_view json) {
  absl::StatusOr<Json> parsed = ParseObject(json, "NodeImage");
  if (!parsed.ok()) return parsed.status();
  const Json& j = *parsed;
  NodeImage ni;
  ni.node = Str(Obj(j, "metadata"), "name");
  ni.resource_version = Str(Obj(j, "metadata"), "resourceVersion");
  if (ni.node.empty()) return absl::InvalidArgumentError("NodeImage metadata.name: required");
  for (const Json& p : Arr(Obj(j, "spec"), "pulls")) {
    PullRequest r;
    r.job = Str(p, "job");
    r.job_uid = Str(p, "jobUID");
    r.image = Str(p, "image");
    r.secret_namespace = Str(p, "secretNamespace");
    r.pull_secrets = Strings(Arr(p, "pullSecrets"));
    if (absl::Status s = Int(p, "timeoutSeconds", absl::StrCat("NodeImage ", ni.node, " spec.pulls[].timeoutSeconds"),
                             &r.timeout_seconds);
        !s.ok()) {
      return s;
    }
    if (r.timeout_seconds < 1) r.timeout_seconds = 300;
    r.assigned_at = TimeMember(p, "assignedAt");
    if (r.job_uid.empty() || r.image.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("NodeImage ", ni.node, " spec.pulls[]: jobUID and image are required"));
    }
    ni.requests.push_back(std::move(r));
  }
  for (const Json& p : Arr(Obj(j, "status"), "pulls")) {
    PullReport r;
    r.job = Str(p, "job");
    r.job_uid = Str(p, "jobUID");
    r.image = Str(p, "image");
    r.phase = ParsePhase(Str(p, "phase")).value_or(PullPhase::kPending);
    r.image_id = Str(p, "imageID");
    r.message = Str(p, "message");
    (void)Int(p, "attempts", "status.pulls[].attempts", &r.attempts);
    r.start_time = TimeMember(p, "startTime");
    r.completion_time = TimeMember(p, "completionTime");
    if (!r.job_uid.empty()) ni.reports.push_back(std::move(r));
  }
  return ni;
}

nlohmann::json RequestsJson(const std::vector<PullRequest>& requests) {
  Json out = Json::array();
  for (const PullRequest& r : requests) {
    Json p = {{"job", r.job}, {"jobUID", r.job_uid}, {"image", r.image}, {"secretNamespace", r.secret_namespace},
              {"pullSecrets", r.pull_secrets}, {"timeoutSeconds", r.timeout_seconds}};
    PutTime(p, "assignedAt", r.assigned_at);
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json ReportsJson(const std::vector<PullReport>& reports) {
  Json out = Json::array();
  for (const PullReport& r : reports) {
    Json p = {{"job", r.job}, {"jobUID", r.job_uid}, {"image", r.image}, {"phase", PhaseName(r.phase)},
              {"attempts", r.attempts}};
    if (!r.image_id.empty()) p["imageID"] = r.image_id;
    if (!r.message.empty()) p["message"] = r.message;
    PutTime(p, "startTime", r.start_time);
    PutTime(p, "completionTime", r.completion_time);
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json JobStatusJson(const PullJobStatus& st) {
  Json nodes = Json::array();
  for (const NodePullStatus& n : st.nodes) {
    Json e = {{"name", n.node}, {"phase", PhaseName(n.phase)}};
    if (!n.image_id.empty()) e["imageID"] = n.image_id;
    if (!n.message.empty()) e["message"] = n.message;
    PutTime(e, "startTime", n.start_time);
    PutTime(e, "completionTime", n.completion_time);
    nodes.push_back(std::move(e));
  }
  Json out = {{"phase", st.phase},     {"desired", st.desired},     {"pending", st.pending}, {"pulling", st.pulling},
              {"succeeded", st.succeeded}, {"failed", st.failed}, {"nodes", nodes}};
  if (!st.message.empty()) out["message"] = st.message;
  PutTime(out, "startTime", st.start_time);
  PutTime(out, "completionTime", st.completion_time);
  return out;
}

}  // namespace cloneset::imagepull
