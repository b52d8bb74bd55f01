// StatusToJson: the CloneSet .status object as the API server stores it (camelCase, RFC3339 seconds).
#include "base/time_format.h"
#include "nlohmann/json.hpp"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {

std::string StatusToJson(const pb::CloneSetStatus& status) {
  nlohmann::ordered_json out;
  out["observedGeneration"] = status.observed_generation();
  out["replicas"] = status.replicas();
  out["readyReplicas"] = status.ready_replicas();
  out["availableReplicas"] = status.available_replicas();
  out["updatedReplicas"] = status.updated_replicas();
  out["updatedReadyReplicas"] = status.updated_ready_replicas();
  out["updatedAvailableReplicas"] = status.updated_available_replicas();
  out["expectedUpdatedReplicas"] = status.expected_updated_replicas();
  out["updateRevision"] = status.update_revision();
  out["currentRevision"] = status.current_revision();
  out["collisionCount"] = status.collision_count();
  out["labelSelector"] = status.label_selector();
  nlohmann::ordered_json conditions = nlohmann::ordered_json::array();
  for (const pb::Condition& c : status.conditions()) {
    nlohmann::ordered_json j;
    j["type"] = c.type();
    j["status"] = c.status();
    if (c.has_last_update_time()) j["lastUpdateTime"] = base::FormatTime(internal::TimeOf(c.last_update_time()));
    if (c.has_last_transition_time()) {
      j["lastTransitionTime"] = base::FormatTime(internal::TimeOf(c.last_transition_time()));
    }
    if (!c.reason().empty()) j["reason"] = c.reason();
    if (!c.message().empty()) j["message"] = c.message();
    conditions.push_back(std::move(j));
  }
  out["conditions"] = std::move(conditions);
  return out.dump();
}

}  // namespace cloneset::snapshot
