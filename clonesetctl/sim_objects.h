// The stored objects of `clonesetctl simulate` (sim_cluster.h): the API server's side of a write (the request's
// preconditions, its body applied by content type, the executor's decoders over the stored document) and the
// simulated kubelet's status report. Internal to clonesetctl.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"
#include "snapshot/patch.h"

namespace cloneset::clonesetctl::sim {

namespace pb = ::cloneset::planner::v1;
using Json = nlohmann::json;

// The simulated kubelet's progress with one pod (the model: sim_cluster.h).
struct Kubelet {
  std::map<std::string, std::string> images;  // container -> image the current attempt runs
  absl::Time running_at = absl::InfinitePast();
  absl::Time ready_at = absl::InfinitePast();
  bool failing = false;
  bool started = false;
};
// One kubelet sync of `pod`, as the kubelet sees it: restarts a container whose spec image changed (`start` begins
// the new attempt), then phase, container statuses, ContainersReady and Ready at `now`. True when `pod` changed.
bool SyncPod(pb::Pod& pod, Kubelet& k, absl::Time now, const std::function<void(const pb::Pod&)>& start);

// A timestamp the simulation writes itself (creation, deletion, the kubelet's conditions), with the simulated
// clock's fraction of a second kept.
std::string SimTime(absl::Time t);
// Sets condition `type` to `value`; the transition time only moves when the status changes (as the kubelet does).
bool SetCondition(pb::Pod& pod, const std::string& type, bool value, absl::Time now);
// A request body or a POSTed object: a JSON object, or InvalidArgument naming `what`.
absl::StatusOr<Json> ParseObject(std::string_view text, std::string_view what);

// Which precondition of a write fails, checked as the API server checks them: `body[field]` holds the uid and
// resourceVersion the request asks for (a patch's metadata, DeleteOptions' preconditions); absent or "" is any.
enum class Failed { kNone, kUid, kVersion };
Failed CheckPreconditions(const Json& body, const char* field, const Json& stored);
// `stored` with the request's body applied as its content type says (kind: the object's, for the strategic merge).
absl::StatusOr<Json> ApplyRequest(const snapshot::ApiRequest& req, const Json& body, const Json& stored,
                                  std::string_view kind);

// The executor's decoders over a stored document.
absl::Status Decode(const Json& doc, pb::Pod* out);
absl::Status Decode(const Json& doc, pb::PersistentVolumeClaim* out);
absl::Status Decode(const Json& doc, pb::ControllerRevision* out);
absl::Status Decode(const Json& doc, pb::CloneSet* out);

// A container's resources.requests/limits as the pod's JSON spells them (the lists that are not empty).
Json ResourcesJson(const pb::Container& c);
// What a kubelet reports after a sync that moved `before` to `after`: a strategic merge patch of the pod's status
// with the phase, the conditions (merged by type) and the container statuses (merged by name) that changed.
Json StatusReport(const pb::Pod& before, const pb::Pod& after);

}  // namespace cloneset::clonesetctl::sim
