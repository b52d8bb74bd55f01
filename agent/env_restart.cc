#include "agent/env_restart.h"

#include "common/image_ref.h"
#include "kruise/inplace_completion.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

constexpr char kStateAnnotation[] = "apps.kruise.io/inplace-update-state";
constexpr char kGraceAnnotation[] = "apps.kruise.io/inplace-update-grace";

}  // namespace

std::string RuntimeContainerId(const std::string& status_container_id) {
  const size_t scheme = status_container_id.find("://");
  return scheme == std::string::npos ? status_container_id : status_container_id.substr(scheme + 3);
}

EnvRestartDecision DecideEnvRestarts(const pb::Pod& pod) {
  EnvRestartDecision d;
  auto no = [&](std::string why) {
    d.why = std::move(why);
    return d;
  };
  if (pod.metadata().has_deletion_timestamp()) return no("terminating");
  const auto& annotations = pod.metadata().annotations();
  const auto state_it = annotations.find(kStateAnnotation);
  if (state_it == annotations.end() || state_it->second.empty()) return no("no in-place update state");
  if (annotations.contains(kGraceAnnotation)) return no("grace period pending");
  const Json state = Json::parse(state_it->second, nullptr, false);
  if (!state.is_object()) return no("unparsable in-place update state");
  const auto env = state.find("updateEnvFromMetadata");
  if (env == state.end() || !env->is_boolean() || !env->get<bool>()) return no("no env-from-metadata update");
  const auto last = state.find("lastContainerStatuses");
  if (last == state.end() || !last->is_object()) return no("no container recorded");
  for (auto it = last->begin(); it != last->end(); ++it) {
    if (!it->is_object()) continue;
    const auto recorded = it->find("containerID");
    if (recorded == it->end() || !recorded->is_string() || recorded->get<std::string>().empty()) continue;
    const kruise::ObservedContainer now = kruise::Observe(pod, it.key());
    if (!now.has_status || now.container_id != recorded->get<std::string>()) continue;  // restarted already
    if (now.has_spec && !common::SameImage(now.spec_image, now.image)) continue;  // the kubelet restarts it
    d.restarts.push_back({it.key(), RuntimeContainerId(std::string(now.container_id))});
  }
  if (d.restarts.empty()) return no("every recorded container restarted or is left to the kubelet");
  return d;
}

}  // namespace cloneset::agent
