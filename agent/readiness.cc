#include "agent/readiness.h"

#include "absl/strings/str_cat.h"
#include "imagepull/types.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

constexpr char kStateAnnotation[] = "apps.kruise.io/inplace-update-state";
constexpr char kGraceAnnotation[] = "apps.kruise.io/inplace-update-grace";

const Json& Get(const Json& o, const char* k) {
  static const Json kNull;
  if (!o.is_object()) return kNull;
  auto it = o.find(k);
  return it == o.end() ? kNull : *it;
}
std::string Str(const Json& o, const char* k) {
  const Json& v = Get(o, k);
  return v.is_string() ? v.get<std::string>() : "";
}
bool NonEmptyObject(const Json& o, const char* k) {
  const Json& v = Get(o, k);
  return v.is_object() && !v.empty();
}

}  // namespace

absl::StatusOr<PodView> DecodePodView(std::string_view json) {
  Json j = Json::parse(json, nullptr, false);
  if (!j.is_object()) return absl::InvalidArgumentError("Pod: not a JSON object");
  PodView p;
  const Json& meta = Get(j, "metadata");
  p.namespace_ = Str(meta, "namespace");
  p.name = Str(meta, "name");
  p.uid = Str(meta, "uid");
  p.resource_version = Str(meta, "resourceVersion");
  p.deleting = !Get(meta, "deletionTimestamp").is_null();
  const Json& ann = Get(meta, "annotations");
  p.state_json = Str(ann, kStateAnnotation);
  p.has_grace = ann.is_object() && ann.contains(kGraceAnnotation);
  const Json& spec = Get(j, "spec");
  if (Get(spec, "readinessGates").is_array()) {
    for (const Json& g : Get(spec, "readinessGates")) {
      if (Str(g, "conditionType") == kInPlaceUpdateReady) p.has_gate = true;
    }
  }
  if (Get(spec, "containers").is_array()) {
    for (const Json& c : Get(spec, "containers")) p.spec_images[Str(c, "name")] = Str(c, "image");
  }
  const Json& status = Get(j, "status");
  if (Get(status, "conditions").is_array()) {
    for (const Json& c : Get(status, "conditions")) {
      if (Str(c, "type") != kInPlaceUpdateReady) continue;
      p.condition_status = Str(c, "status");
      p.condition_reason = Str(c, "reason");
      p.condition_message = Str(c, "message");
    }
  }
  if (Get(status, "containerStatuses").is_array()) {
    for (const Json& c : Get(status, "containerStatuses")) {
      p.statuses[Str(c, "name")] = {Str(c, "image"), Str(c, "imageID"), Get(c, "ready").is_boolean() && Get(c, "ready").get<bool>()};
    }
  }
  return p;
}

ReadinessDecision DecideReadiness(const PodView& pod, absl::Time now) {
  ReadinessDecision d;
  auto no = [&](std::string why) {
    d.why = std::move(why);
    return d;
  };
  if (!pod.has_gate) return no("no InPlaceUpdateReady readiness gate");
  if (pod.deleting) return no("terminating");
  if (pod.condition_status == "True" && pod.condition_reason.empty() && pod.condition_message.empty()) {
    return no("already reported");
  }
  if (pod.state_json.empty()) return no("no in-place update state");
  if (pod.has_grace) return no("grace period pending");
  Json state = Json::parse(pod.state_json, nullptr, false);
  if (!state.is_object()) return no("unparsable in-place update state");
  if (NonEmptyObject(state, "nextContainerImages") || NonEmptyObject(state, "nextContainerRefMetadata") ||
      NonEmptyObject(state, "nextContainerResources")) {
    return no("later container batch pending");
  }
  if (Get(state, "updateEnvFromMetadata").is_boolean() && Get(state, "updateEnvFromMetadata").get<bool>()) {
    return no("env-from-metadata update: left to the executor");
  }
  if (Get(state, "updateResources").is_boolean() && Get(state, "updateResources").get<bool>()) {
    return no("resource update: left to the executor");
  }
  const Json& last = Get(state, "lastContainerStatuses");
  if (last.is_object()) {
    for (auto it = last.begin(); it != last.end(); ++it) {
      auto st = pod.statuses.find(it.key());
      if (st == pod.statuses.end()) return no(absl::StrCat("container ", it.key(), " has no status"));
      std::string spec_image = pod.spec_images.contains(it.key()) ? pod.spec_images.at(it.key()) : "";
      if (spec_image.find(':') == std::string::npos) spec_image += ":latest";
      if (st->second.image_id == Str(*it, "imageID") && spec_image != st->second.image) {
        return no(absl::StrCat("container ", it.key(), " still runs the old image"));
      }
      if (!st->second.ready) return no(absl::StrCat("container ", it.key(), " not ready"));
    }
  }
  d.report = true;
  const absl::Time started = imagepull::ParseTime(Str(state, "updateTimestamp"));
  if (started != absl::InfinitePast() && now > started) d.update_duration = now - started;
  return d;
}

std::string ReadinessPatch(const PodView& pod, absl::Time now) {
  Json patch = {{"metadata", {{"resourceVersion", pod.resource_version}}},
                {"status",
                 {{"conditions",
                   {{{"type", kInPlaceUpdateReady}, {"status", "True"},
                     {"lastTransitionTime", imagepull::FormatTime(now)},
                     // null deletes: the executor's StartInPlaceUpdate reason must not survive the merge
                     {"reason", nullptr},
                     {"message", nullptr}}}}}}};
  return patch.dump();
}

}  // namespace cloneset::agent
