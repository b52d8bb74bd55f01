#include "clonesetctl/sim_objects.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/time_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "kube/object_patch.h"
#include "planner/predicates.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl::sim {
namespace {

using planner::FindCondition;
using planner::SetTimestamp;
using planner::ToTime;

std::string ImageId(const std::string& image) {
  return absl::StrCat("sim://", image, "@sha256:", std::hash<std::string>{}(image));
}

Json ContainerStatusJson(const pb::ContainerStatus& cs) {
  Json j = {{"name", cs.name()},       {"image", cs.image()}, {"imageID", cs.image_id()},
            {"containerID", cs.container_id()}, {"ready", cs.ready()}, {"restartCount", cs.restart_count()}};
  pb::Container as_container;
  *as_container.mutable_resource_requests() = cs.resource_requests();
  *as_container.mutable_resource_limits() = cs.resource_limits();
  Json resources = ResourcesJson(as_container);
  if (!resources.empty()) j["resources"] = std::move(resources);
  return j;
}

}  // namespace

// A timestamp the simulation writes itself (creation, deletion, the kubelet's conditions). metav1.Time has whole
// seconds, but the simulated clock moves in fractions of one (a 200ms start delay, availability 1ms after
// minReadySeconds) and the timeline has always been computed at that resolution, so the fraction is kept:
// base::ParseTime, hence the executor's decoders, read it.
std::string SimTime(absl::Time t) {
  const absl::Time whole = absl::FromUnixSeconds(absl::ToUnixSeconds(t));
  const int64_t nanos = absl::ToInt64Nanoseconds(t - whole);
  std::string text = base::FormatTime(whole);
  if (nanos == 0 || text.empty() || text.back() != 'Z') return text;
  text.pop_back();
  return absl::StrCat(text, absl::StrFormat(".%09d", nanos), "Z");
}

// Sets condition `type` to `status`; the transition time only moves when the status changes (as the kubelet does).
bool SetCondition(pb::Pod& pod, const std::string& type, bool value, absl::Time now) {
  const std::string status = value ? "True" : "False";
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() != type) continue;
    if (c.status() == status) return false;
    c.set_status(status);
    SetTimestamp(now, c.mutable_last_transition_time());
    return true;
  }
  pb::Condition* c = pod.add_conditions();
  c->set_type(type);
  c->set_status(status);
  SetTimestamp(now, c->mutable_last_transition_time());
  return true;
}

absl::StatusOr<Json> ParseObject(std::string_view text, std::string_view what) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": malformed JSON"));
  if (!doc.is_object()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": expected a JSON object"));
  return doc;
}

Failed CheckPreconditions(const Json& body, const char* field, const Json& stored) {
  const auto want = body.find(field);
  if (want == body.end() || !want->is_object()) return Failed::kNone;
  const auto meta = stored.find("metadata");
  const auto mismatch = [&](const char* key) {
    const auto w = want->find(key);
    if (w == want->end() || !w->is_string() || w->get_ref<const std::string&>().empty()) return false;
    if (meta == stored.end() || !meta->is_object()) return true;
    const auto have = meta->find(key);
    return have == meta->end() || *have != *w;
  };
  if (mismatch("uid")) return Failed::kUid;
  if (mismatch("resourceVersion")) return Failed::kVersion;
  return Failed::kNone;
}

// `stored` with the request's body applied as its content type says (kind: the object's, for the strategic merge).
absl::StatusOr<Json> ApplyRequest(const snapshot::ApiRequest& req, const Json& body, const Json& stored,
                                  std::string_view kind) {
  if (req.content_type == snapshot::kStrategicMergePatch) return kube::ApplyStrategicMergePatch(stored, body, kind);
  if (req.content_type == snapshot::kMergePatch) return kube::ApplyMergePatch(stored, body);
  return absl::InvalidArgumentError(absl::StrCat(req.path, ": unsupported content type ", req.content_type));
}

// The executor's decoders over a stored document.
namespace {
template <typename Message>
absl::Status Store(absl::StatusOr<Message> decoded, Message* out) {
  if (!decoded.ok()) return decoded.status();
  *out = *std::move(decoded);
  return absl::OkStatus();
}
}  // namespace
absl::Status Decode(const Json& doc, pb::Pod* out) { return Store(snapshot::PodFromJson(doc.dump()), out); }
absl::Status Decode(const Json& doc, pb::PersistentVolumeClaim* out) {
  return Store(snapshot::PvcFromJson(doc.dump()), out);
}
absl::Status Decode(const Json& doc, pb::ControllerRevision* out) {
  return Store(snapshot::RevisionFromJson(doc.dump()), out);
}
absl::Status Decode(const Json& doc, pb::CloneSet* out) { return Store(snapshot::CloneSetFromJson(doc.dump()), out); }

Json ResourcesJson(const pb::Container& c) {
  Json resources = Json::object();
  const auto list = [](const google::protobuf::Map<std::string, std::string>& m) {
    Json out = Json::object();
    for (const auto& [name, quantity] : m) out[name] = quantity;
    return out;
  };
  if (!c.resource_requests().empty()) resources["requests"] = list(c.resource_requests());
  if (!c.resource_limits().empty()) resources["limits"] = list(c.resource_limits());
  return resources;
}

// What a kubelet reports after a sync that moved `before` to `after`: a strategic merge patch of the pod's status
// with the phase, the conditions (merged by type) and the container statuses (merged by name) that changed.
Json StatusReport(const pb::Pod& before, const pb::Pod& after) {
  using google::protobuf::util::MessageDifferencer;
  Json status = Json::object();
  if (after.phase() != before.phase()) status["phase"] = after.phase();
  Json conditions = Json::array();
  for (const pb::Condition& c : after.conditions()) {
    const pb::Condition* was = FindCondition(before, c.type());
    if (was != nullptr && MessageDifferencer::Equals(*was, c)) continue;
    conditions.push_back({{"type", c.type()}, {"status", c.status()},
                          {"lastTransitionTime", SimTime(ToTime(c.last_transition_time()))}});
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  Json statuses = Json::array();
  for (const pb::ContainerStatus& cs : after.container_statuses()) {
    const auto was = std::find_if(before.container_statuses().begin(), before.container_statuses().end(),
                                  [&](const pb::ContainerStatus& b) { return b.name() == cs.name(); });
    if (was != before.container_statuses().end() && MessageDifferencer::Equals(*was, cs)) continue;
    statuses.push_back(ContainerStatusJson(cs));
  }
  if (!statuses.empty()) status["containerStatuses"] = std::move(statuses);
  return {{"status", std::move(status)}};
}

bool SyncPod(pb::Pod& pod, Kubelet& k, absl::Time now, const std::function<void(const pb::Pod&)>& start) {
  bool changed = false;
  // A spec image that differs from what the kubelet runs restarts that container in place.
  bool restart = false;
  for (const pb::Container& c : pod.containers()) {
    if (k.images[c.name()] != c.image()) restart = true;
  }
  if (restart && now >= k.running_at) {
    for (pb::ContainerStatus& cs : *pod.mutable_container_statuses()) {
      for (const pb::Container& c : pod.containers()) {
        if (c.name() == cs.name() && k.images[c.name()] != c.image()) {
          cs.set_restart_count(cs.restart_count() + 1);
          cs.set_ready(false);
        }
      }
    }
    start(pod);
    changed = true;
  }
  if (now >= k.running_at) {
    if (pod.phase() != "Running") {
      pod.set_phase("Running");
      changed = true;
    }
    for (const pb::Container& c : pod.containers()) {
      pb::ContainerStatus* status = nullptr;
      for (pb::ContainerStatus& cs : *pod.mutable_container_statuses()) {
        if (cs.name() == c.name()) status = &cs;
      }
      if (status == nullptr) {
        status = pod.add_container_statuses();
        status->set_name(c.name());
        // A started container reports the resources it runs with (a resize updates them, ResizePod).
        *status->mutable_resource_requests() = c.resource_requests();
        *status->mutable_resource_limits() = c.resource_limits();
        changed = true;
      }
      const std::string& image = k.images[c.name()];
      if (status->image() != image) {
        status->set_image(image);
        status->set_image_id(ImageId(image));
        status->set_container_id(absl::StrCat("sim://", pod.metadata().uid(), "/", c.name(), "/",
                                              status->restart_count()));
        changed = true;
      }
      const bool ready = now >= k.ready_at && !k.failing;
      if (status->ready() != ready) {
        status->set_ready(ready);
        changed = true;
      }
    }
  }
  bool containers_ready = pod.container_statuses_size() == pod.containers_size() && now >= k.running_at;
  for (const pb::ContainerStatus& cs : pod.container_statuses()) containers_ready = containers_ready && cs.ready();
  changed |= SetCondition(pod, "ContainersReady", containers_ready, now);
  bool ready = containers_ready;
  for (const std::string& gate : pod.readiness_gates()) {
    const pb::Condition* c = FindCondition(pod, gate);
    ready = ready && c != nullptr && c->status() == "True";
  }
  changed |= SetCondition(pod, "Ready", ready, now);
  return changed;
}

}  // namespace cloneset::clonesetctl::sim
