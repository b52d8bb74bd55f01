#include "agent/env_restart.h"

#include "common/image_ref.h"
#include "kruise/inplace_completion.h"
#include "kruise/inplace_state.h"

namespace cloneset::agent {

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
  // The state as the planner and the readiness report read it (kruise/inplace_state.h): current key, else legacy.
  const std::string_view state_json = kruise::InPlaceStateAnnotation(pod);
  if (state_json.empty()) return no("no in-place update state");
  if (!kruise::InPlaceGraceAnnotation(pod).empty()) return no("grace period pending");
  const absl::StatusOr<kruise::InPlaceUpdateState> state = kruise::ParseInPlaceState(state_json);
  if (!state.ok()) return no("unparsable in-place update state");
  if (!state->update_env_from_metadata) return no("no env-from-metadata update");
  if (state->last_container_statuses.empty()) return no("no container recorded");
  for (const auto& [name, recorded] : state->last_container_statuses) {
    if (recorded.container_id.empty()) continue;
    const kruise::ObservedContainer now = kruise::Observe(pod, name);
    if (!now.has_status || now.container_id != recorded.container_id) continue;  // restarted already
    if (now.has_spec && !common::SameImage(now.spec_image, now.image)) continue;  // the kubelet restarts it
    d.restarts.push_back({name, RuntimeContainerId(std::string(now.container_id))});
  }
  if (d.restarts.empty()) return no("every recorded container restarted or is left to the kubelet");
  return d;
}

}  // namespace cloneset::agent
