#include "devcluster/nodes/events.h"

#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json_read.h"
#include "base/time_format.h"
#include "devcluster/object_meta.h"

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;

using base::json_read::Str;

const json& Get(const json& o, const char* key) {
  static const json kNull;
  if (!o.is_object()) return kNull;
  auto it = o.find(key);
  return it == o.end() ? kNull : *it;
}

std::map<std::string, const json*> ByName(const json& status) {
  std::map<std::string, const json*> out;
  const json& list = Get(status, "containerStatuses");
  if (list.is_array())
    for (const auto& cs : list)
      if (cs.is_object()) out[Str(cs, "name")] = &cs;
  return out;
}

// "running", "waiting:<reason>", "terminated" or "".
std::string StateOf(const json* cs) {
  if (!cs) return "";
  const json& state = Get(*cs, "state");
  if (state.contains("running")) return "running";
  if (state.contains("waiting")) return "waiting:" + Str(Get(state, "waiting"), "reason");
  if (state.contains("terminated")) return "terminated";
  return "";
}

bool Pulling(const std::string& state) {
  return state == "waiting:ContainerCreating" || state == "waiting:ErrImagePull" ||
         state == "waiting:ImagePullBackOff";
}

}  // namespace

std::vector<PodEvent> KubeletEvents(const json& pod, const json& old_status, const json& new_status) {
  std::vector<PodEvent> out;
  auto old_by_name = ByName(old_status);
  const json& list = Get(new_status, "containerStatuses");
  if (!list.is_array()) return out;
  for (const auto& cs : list) {
    if (!cs.is_object()) continue;
    const std::string name = Str(cs, "name"), image = Str(cs, "image");
    const std::string path = absl::StrCat("spec.containers{", name, "}");
    auto it = old_by_name.find(name);
    const json* old = it == old_by_name.end() ? nullptr : it->second;
    const std::string before = StateOf(old), after = StateOf(&cs);
    const bool same_image = old && Str(*old, "image") == image;
    const bool same_instance = same_image && Str(*old, "containerID") == Str(cs, "containerID") &&
                               Get(*old, "restartCount") == Get(cs, "restartCount");
    if (old && !same_image && before == "running")
      out.push_back({"Normal", "Killing", absl::StrCat("Container ", name, " definition changed, will be restarted"), path});
    // A new image starts with a pull (reported once, also when the simulator went straight to running).
    const bool pull_reported = same_image && Pulling(before);
    if (!pull_reported && (Pulling(after) || (after == "running" && !same_image)))
      out.push_back({"Normal", "Pulling", absl::StrCat("Pulling image \"", image, "\""), path});
    if (after == "waiting:ErrImagePull" && before != after) {
      const std::string why = Str(Get(Get(cs, "state"), "waiting"), "message");
      out.push_back({"Warning", "Failed", absl::StrCat("Failed to pull image \"", image, "\": ", why), path});
      out.push_back({"Warning", "Failed", "Error: ErrImagePull", path});
    }
    if (after == "waiting:ImagePullBackOff" && before != after) {
      out.push_back({"Normal", "BackOff", absl::StrCat("Back-off pulling image \"", image, "\""), path});
      out.push_back({"Warning", "Failed", "Error: ImagePullBackOff", path});
    }
    if (after == "waiting:CrashLoopBackOff" && before != after)
      out.push_back({"Warning", "BackOff",
                     absl::StrCat("Back-off restarting failed container ", name, " in pod ",
                                  Str(Get(pod, "metadata"), "name"), "_", Str(Get(pod, "metadata"), "namespace")),
                     path});
    if (after == "running" && !(before == "running" && same_instance)) {
      if (!same_image || Pulling(before))
        out.push_back({"Normal", "Pulled", absl::StrCat("Successfully pulled image \"", image, "\""), path});
      else
        out.push_back({"Normal", "Pulled", absl::StrCat("Container image \"", image, "\" already present on machine"),
                       path});
      out.push_back({"Normal", "Created", absl::StrCat("Created container: ", name), path});
      out.push_back({"Normal", "Started", absl::StrCat("Started container ", name), path});
    }
  }
  return out;
}

std::vector<PodEvent> KillingEvents(const json& pod) {
  std::vector<PodEvent> out;
  const json& containers = Get(Get(pod, "spec"), "containers");
  if (!containers.is_array()) return out;
  for (const auto& c : containers)
    if (c.is_object())
      out.push_back({"Normal", "Killing", absl::StrCat("Stopping container ", Str(c, "name")),
                     absl::StrCat("spec.containers{", Str(c, "name"), "}")});
  return out;
}

EventRecorder::EventRecorder(Store* store, base::Clock* clock, size_t max_events)
    : store_(store), clock_(clock), max_events_(max_events) {}

void EventRecorder::Record(const json& pod, const PodEvent& event, const EventSource& source) {
  const json& meta = Get(pod, "metadata");
  const std::string ns = Str(meta, "namespace"), pod_name = Str(meta, "name"), uid = Str(meta, "uid");
  const std::string now = base::FormatTime(absl::FromChrono(clock_->ChronoNow()));
  const std::string key =
      absl::StrCat(uid, "\n", event.field_path, "\n", event.type, "\n", event.reason, "\n", event.message, "\n",
                   source.component, "\n", source.host);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    const Seen& seen = it->second->second;
    auto bumped = store_->Mutate(kEvents, seen.ns, seen.name, false, [&](json& ev) {
      ev["count"] = ev.value("count", 1) + 1;
      ev["lastTimestamp"] = now;
      return absl::OkStatus();
    });
    if (bumped.ok()) return;
    // Deleted behind our back (kubectl delete events): forget it and create a fresh one.
    order_.erase(it->second);
    by_key_.erase(it);
  }
  // kubelet names events <object>.<unix nanos in hex>; a sequence keeps names unique under a fake clock.
  const auto nanos = absl::ToUnixNanos(clock_->Now());
  const std::string name = absl::StrFormat("%s.%x", pod_name, static_cast<uint64_t>(nanos) + sequence_++);
  json involved = {{"kind", "Pod"}, {"namespace", ns}, {"name", pod_name}, {"uid", uid}, {"apiVersion", "v1"},
                   {"resourceVersion", Str(meta, "resourceVersion")}};
  if (!event.field_path.empty()) involved["fieldPath"] = event.field_path;
  json source_json = {{"component", source.component}};
  if (!source.host.empty()) source_json["host"] = source.host;
  json ev = {{"apiVersion", "v1"},
             {"kind", "Event"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"involvedObject", involved},
             {"reason", event.reason},
             {"message", event.message},
             {"source", source_json},
             {"firstTimestamp", now},
             {"lastTimestamp", now},
             {"count", 1},
             {"type", event.type},
             {"eventTime", nullptr},
             {"reportingComponent", source.component},
             {"reportingInstance", source.host}};
  if (!store_->Create(kEvents, std::move(ev)).ok()) {
    ++write_errors_;  // namespace going away, or a name clash: best effort
    return;
  }
  order_.emplace_back(key, Seen{ns, name});
  by_key_[key] = std::prev(order_.end());
  while (order_.size() > max_events_) {
    const Seen& oldest = order_.front().second;
    (void)store_->DeleteNow(kEvents, oldest.ns, oldest.name);
    by_key_.erase(order_.front().first);
    order_.pop_front();
  }
}

}  // namespace cloneset::devcluster::nodes
