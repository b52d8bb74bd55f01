// Kubernetes Events from the simulated kubelet and scheduler, so `kubectl describe pod` and `kubectl get events`
// tell the story a real node tells: Scheduled, Pulling, Pulled, Created, Started, Killing, BackOff, Failed,
// FailedScheduling.
//
// KubeletEvents is pure: it derives the events from a pod's status transition (the status the simulator is about
// to store versus the stored one), so a transition the simulator skips over (a fast start that goes straight to
// running) still yields the whole story. EventRecorder writes them as core/v1 Events and keeps their volume
// bounded like kubelet's event correlator: a repeat of the same (object, subobject, reason, message, source)
// bumps count and lastTimestamp of the existing Event instead of creating another, and the recorder keeps at most
// `max_events` Event objects (the oldest it created are deleted first).
#pragma once

#include <cstddef>
#include <deque>
#include <list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_map.h"
#include "devcluster/store.h"

namespace cloneset::devcluster::nodes {

struct PodEvent {
  std::string type;        // Normal | Warning
  std::string reason;      // Pulling, Pulled, Created, Started, Killing, BackOff, Failed, ...
  std::string message;
  std::string field_path;  // "spec.containers{name}", or "" for the pod itself

  bool operator==(const PodEvent&) const = default;
};

// Events for the move from `old_status` (the stored .status, may be null/empty) to `new_status` of `pod` (whose
// .spec.containers name the images).
std::vector<PodEvent> KubeletEvents(const nlohmann::json& pod, const nlohmann::json& old_status,
                                    const nlohmann::json& new_status);
// "Stopping container <name>" for each container of a pod that starts its graceful deletion.
std::vector<PodEvent> KillingEvents(const nlohmann::json& pod);

struct EventSource {
  std::string component;  // kubelet | default-scheduler
  std::string host;       // node name for the kubelet, "" for the scheduler
};

class EventRecorder {
 public:
  EventRecorder(Store* store, base::Clock* clock, size_t max_events = 20000);
  // Records `event` about `pod` (its metadata names the involved object). Write errors are counted, not fatal:
  // an event is best effort, as in Kubernetes.
  void Record(const nlohmann::json& pod, const PodEvent& event, const EventSource& source);
  uint64_t write_errors() const { return write_errors_; }

 private:
  struct Seen {
    std::string ns, name;  // the Event object
  };
  Store* store_;
  base::Clock* clock_;
  size_t max_events_;
  uint64_t sequence_ = 0;
  uint64_t write_errors_ = 0;
  // Aggregation key -> Event, in creation order for eviction.
  std::list<std::pair<std::string, Seen>> order_;
  absl::flat_hash_map<std::string, std::list<std::pair<std::string, Seen>>::iterator> by_key_;
};

}  // namespace cloneset::devcluster::nodes
