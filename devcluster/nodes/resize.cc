#include "devcluster/nodes/resize.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "common/resources.h"

namespace cloneset::devcluster::nodes {
namespace {

using Json = nlohmann::json;

const Json& Field(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// The cpu and memory entries of a resource list.
Json CpuMemory(const Json& list) {
  Json out = Json::object();
  if (!list.is_object()) return out;
  for (const char* name : {"cpu", "memory"}) {
    if (list.contains(name)) out[name] = list[name];
  }
  return out;
}

// {requests, limits}, each left out when empty, as the kubelet writes status resources.
Json Requirements(const Json& requests, const Json& limits) {
  Json out = Json::object();
  if (!limits.empty()) out["limits"] = limits;
  if (!requests.empty()) out["requests"] = requests;
  return out;
}

std::string Text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Two cpu/memory lists with the same names and values (as quantities).
bool SameList(const Json& a, const Json& b) {
  const Json x = CpuMemory(a);
  const Json y = CpuMemory(b);
  if (x.size() != y.size()) return false;
  for (const auto& [name, quantity] : x.items()) {
    if (!y.contains(name) || !common::SameQuantity(Text(quantity), Text(y[name]))) return false;
  }
  return true;
}

bool SameRequirements(const Json& a, const Json& b) {
  return SameList(Field(a, "requests"), Field(b, "requests")) && SameList(Field(a, "limits"), Field(b, "limits"));
}

// Sum of a resource over the requests, rounded up to milli-units (cpu) or units (memory), as the kubelet counts.
int64_t Total(const std::vector<Json>& requests, const char* name, bool milli) {
  __int128 nanos = 0;
  for (const Json& r : requests) {
    if (!r.contains(name)) continue;
    const absl::StatusOr<__int128> v = common::JsonQuantityNanos(r[name]);
    if (v.ok() && *v > 0) nanos += *v;
  }
  const __int128 unit = milli ? 1000000 : 1000000000;
  return static_cast<int64_t>((nanos + unit - 1) / unit);
}

const Json* TrueCondition(const Json& status, const char* type) {
  const Json& conditions = Field(status, "conditions");
  if (!conditions.is_array()) return nullptr;
  for (const Json& c : conditions) {
    if (Field(c, "type") == type && Field(c, "status") == "True") return &c;
  }
  return nullptr;
}

// Sets condition `want` (type, status, reason, message) in `status`, keeping lastTransitionTime while the status
// stays; null `want` removes the condition of `type`.
void SetCondition(Json& status, const char* type, const Json* want, int64_t generation, const std::string& now) {
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  for (size_t i = 0; i < conditions.size(); ++i) {
    if (Field(conditions[i], "type") != type) continue;
    if (want == nullptr) {
      conditions.erase(i);
      return;
    }
    Json next = *want;
    next["lastProbeTime"] = nullptr;
    next["observedGeneration"] = generation;
    const bool same = Field(conditions[i], "status") == Field(*want, "status");
    next["lastTransitionTime"] = same && conditions[i].contains("lastTransitionTime")
                                     ? conditions[i]["lastTransitionTime"]
                                     : Json(now);
    conditions[i] = std::move(next);
    return;
  }
  if (want == nullptr) return;
  Json next = *want;
  next["lastProbeTime"] = nullptr;
  next["observedGeneration"] = generation;
  next["lastTransitionTime"] = now;
  conditions.push_back(std::move(next));
}

}  // namespace

ResizeDecision DecideResize(const Json& pod, const ResizeNode& node, const ResizeFault& fault,
                            const ResizeTiming& timing, ResizeClock::time_point now) {
  ResizeDecision d;
  const Json& spec = Field(pod, "spec");
  const Json& status = Field(pod, "status");
  std::map<std::string, const Json*> statuses;
  if (const Json& cs = Field(status, "containerStatuses"); cs.is_array()) {
    for (const Json& s : cs) statuses[Text(Field(s, "name"))] = &s;
  }
  struct Wanted {
    std::string name;
    Json requests;  // the spec's cpu/memory
    Json limits;
    bool running = false;
  };
  std::vector<Wanted> wanted;
  bool differs = false;       // a running container runs with other resources than its spec
  bool allocated_ok = true;   // every running container's allocation is the spec's requests
  const Json& containers = Field(spec, "containers");
  for (const Json& c : containers.is_array() ? containers : Json::array()) {
    Wanted w{Text(Field(c, "name")), CpuMemory(Field(Field(c, "resources"), "requests")),
             CpuMemory(Field(Field(c, "resources"), "limits"))};
    const auto it = statuses.find(w.name);
    const Json* s = it == statuses.end() ? nullptr : it->second;
    w.running = s != nullptr && Field(Field(*s, "state"), "running").is_object();
    ContainerResources& r = d.containers[w.name];
    if (!w.running || !Field(*s, "resources").is_object()) {
      // Not running yet (it starts with the spec), or never sized: the spec.
      r.allocated = w.requests;
      r.resources = Requirements(w.requests, w.limits);
    } else {
      r.allocated = Field(*s, "allocatedResources").is_object() ? CpuMemory((*s)["allocatedResources"]) : w.requests;
      r.resources = (*s)["resources"];
      differs = differs || !SameRequirements(r.resources, Requirements(w.requests, w.limits));
      allocated_ok = allocated_ok && SameList(r.allocated, w.requests);
    }
    wanted.push_back(std::move(w));
  }
  if (!differs) return d;
  const auto actuate = [&] {
    for (const Wanted& w : wanted) {
      if (w.running) d.containers[w.name].resources = Requirements(w.requests, w.limits);
    }
  };
  if (const Json* progress = TrueCondition(status, "PodResizeInProgress"); progress != nullptr && allocated_ok) {
    // Accepted earlier: applied `actuate` after the condition was set.
    absl::Time since = absl::FromChrono(now);
    if (const Json& t = Field(*progress, "lastTransitionTime"); t.is_string()) {
      if (absl::StatusOr<absl::Time> parsed = base::ParseTime(t.get<std::string>()); parsed.ok()) since = *parsed;
    }
    const ResizeClock::time_point due = absl::ToChronoTime(since) + timing.actuate;
    if (now >= due) {
      actuate();
    } else {
      d.in_progress = true;
      d.wake_at = due;
    }
    return d;
  }
  std::vector<Json> requests;
  for (const Wanted& w : wanted) requests.push_back(w.requests);
  const int64_t cpu = Total(requests, "cpu", true);
  const int64_t memory = Total(requests, "memory", false);
  std::string reason;
  std::string message;
  if (!fault.outcome.empty()) {
    reason = fault.outcome;
    message = absl::StrCat("resize held back by the pod annotation devcluster.cloneset.io/fault (resize-",
                           fault.outcome == common::kResizeInfeasible ? "infeasible" : "deferred", ")");
  } else if (node.memory_capacity > 0 && memory > node.memory_capacity) {
    reason = common::kResizeInfeasible;
    message = absl::StrCat("Node didn't have enough capacity: memory, requested: ", memory,
                           ", capacity: ", node.memory_capacity);
  } else if (node.cpu_milli_capacity > 0 && cpu > node.cpu_milli_capacity) {
    reason = common::kResizeInfeasible;
    message =
        absl::StrCat("Node didn't have enough capacity: cpu, requested: ", cpu, ", capacity: ", node.cpu_milli_capacity);
  } else if (node.cpu_milli_capacity > 0 && cpu > node.cpu_milli_capacity - node.cpu_milli_used) {
    reason = common::kResizeDeferred;
    message = absl::StrCat("Node didn't have enough resource: cpu, requested: ", cpu, ", used: ", node.cpu_milli_used,
                           ", capacity: ", node.cpu_milli_capacity);
  } else if (node.memory_capacity > 0 && memory > node.memory_capacity - node.memory_used) {
    reason = common::kResizeDeferred;
    message = absl::StrCat("Node didn't have enough resource: memory, requested: ", memory,
                           ", used: ", node.memory_used, ", capacity: ", node.memory_capacity);
  }
  if (!reason.empty()) {
    d.pending = Json{{"type", common::kPodResizePending}, {"status", "True"}, {"reason", reason}, {"message", message}};
    if (reason == common::kResizeDeferred) d.wake_at = now + timing.retry;
    return d;
  }
  d.accepted = true;
  for (const Wanted& w : wanted) {
    if (w.running) d.containers[w.name].allocated = w.requests;
  }
  if (timing.actuate <= ResizeClock::duration::zero()) {
    actuate();
  } else {
    d.in_progress = true;
    d.wake_at = now + timing.actuate;
  }
  return d;
}

void ApplyResize(const ResizeDecision& decision, int64_t generation, const std::string& now, Json& status) {
  Json& statuses = status["containerStatuses"];
  if (statuses.is_array()) {
    for (Json& cs : statuses) {
      const auto it = decision.containers.find(Text(Field(cs, "name")));
      if (it == decision.containers.end()) continue;
      if (it->second.allocated.is_object() && !it->second.allocated.empty()) {
        cs["allocatedResources"] = it->second.allocated;
      } else {
        cs.erase("allocatedResources");
      }
      cs["resources"] = it->second.resources.is_object() ? it->second.resources : Json::object();
    }
  }
  SetCondition(status, common::kPodResizePending, decision.pending ? &*decision.pending : nullptr, generation, now);
  const Json in_progress = {{"type", common::kPodResizeInProgress}, {"status", "True"}};
  SetCondition(status, common::kPodResizeInProgress, decision.in_progress ? &in_progress : nullptr, generation, now);
  if (status["conditions"].empty()) status.erase("conditions");
}

}  // namespace cloneset::devcluster::nodes
