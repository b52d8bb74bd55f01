#include "devcluster/nodes/scheduler.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/time_format.h"
#include "devcluster/nodes/pvc_binder.h"
#include "devcluster/nodes/quantity.h"

namespace cloneset::devcluster::nodes {
namespace {

constexpr int64_t kDefaultScoreCpuMilli = 100;
constexpr int64_t kDefaultScoreMemory = 200 * 1024 * 1024;

int64_t RequestValue(const nlohmann::json& container, const char* resource, bool milli) {
  auto res = container.find("resources");
  if (res == container.end() || !res->is_object()) return 0;
  // Kubernetes defaults requests from limits when only limits are given.
  const nlohmann::json* value = nullptr;
  for (const char* section : {"requests", "limits"}) {
    auto sec = res->find(section);
    if (sec != res->end() && sec->is_object() && sec->contains(resource)) {
      value = &(*sec)[resource];
      break;
    }
  }
  if (value == nullptr) return 0;
  auto v = milli ? ParseMilliQuantity(*value, resource) : ParseQuantity(*value, resource);
  return v.ok() ? std::max<int64_t>(*v, 0) : 0;
}

}  // namespace

PodRequest RequestOf(const nlohmann::json& pod) {
  PodRequest r;
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return r;
  if (auto cs = spec->find("containers"); cs != spec->end() && cs->is_array()) {
    for (const auto& c : *cs) {
      if (!c.is_object()) continue;
      int64_t cpu = RequestValue(c, "cpu", true), mem = RequestValue(c, "memory", false);
      r.cpu_milli += cpu;
      r.memory_bytes += mem;
      r.score_cpu_milli += cpu > 0 ? cpu : kDefaultScoreCpuMilli;
      r.score_memory_bytes += mem > 0 ? mem : kDefaultScoreMemory;
    }
  }
  if (auto ics = spec->find("initContainers"); ics != spec->end() && ics->is_array()) {
    for (const auto& c : *ics) {
      if (!c.is_object()) continue;
      r.cpu_milli = std::max(r.cpu_milli, RequestValue(c, "cpu", true));
      r.memory_bytes = std::max(r.memory_bytes, RequestValue(c, "memory", false));
    }
  }
  if (auto sel = spec->find("nodeSelector"); sel != spec->end() && sel->is_object()) {
    for (const auto& [k, v] : sel->items()) r.node_selector.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (auto vols = spec->find("volumes"); vols != spec->end() && vols->is_array()) {
    for (const auto& v : *vols) {
      if (!v.is_object()) continue;
      auto pvc = v.find("persistentVolumeClaim");
      if (pvc == v.end() || !pvc->is_object()) continue;
      auto name = pvc->find("claimName");
      if (name != pvc->end() && name->is_string()) r.claims.push_back(name->get<std::string>());
    }
  }
  return r;
}

ClaimsVerdict CheckClaims(const std::vector<std::string>& claims, size_t nodes,
                          const std::function<std::optional<nlohmann::json>(const std::string&)>& claim,
                          const std::vector<nlohmann::json>& classes) {
  ClaimsVerdict v;
  for (const std::string& name : claims) {
    std::optional<nlohmann::json> c = claim(name);
    std::string why;
    if (!c.has_value()) {
      why = absl::StrCat("persistentvolumeclaim \"", name, "\" not found");
    } else if (auto meta = c->find("metadata"); meta != c->end() && meta->is_object() &&
                                                meta->contains("deletionTimestamp")) {
      why = absl::StrCat("persistentvolumeclaim \"", name, "\" is being deleted");
    } else if (auto st = c->find("status");
               st != c->end() && st->is_object() && st->value("phase", "") == "Bound") {
      continue;
    } else if (const nlohmann::json* sc = ClaimClass(*c, classes); sc == nullptr || BindsImmediately(*sc)) {
      why = "pod has unbound immediate PersistentVolumeClaims";
    } else if (!Provisionable(*sc)) {
      // A Filter verdict (per node), so kube-scheduler also reports what preemption found.
      v.unschedulable = absl::StrCat("0/", nodes, " nodes are available: ", nodes,
                                     " node(s) didn't find available persistent volumes to bind. no new claims to "
                                     "deallocate, preemption: 0/",
                                     nodes, " nodes are available: ", nodes,
                                     " Preemption is not helpful for scheduling.");
      v.awaiting_node.clear();
      return v;
    } else {
      v.awaiting_node.push_back(name);
      continue;
    }
    // A PreFilter verdict: kube-scheduler 1.34 ends it with its preemption step's " not found" (as compared on
    // ./run up --cluster real).
    v.unschedulable = absl::StrCat("0/", nodes, " nodes are available: ", why, ". not found");
    v.awaiting_node.clear();
    return v;
  }
  return v;
}

Placement PickNode(const PodRequest& request, const std::vector<NodeSlot>& nodes) {
  std::map<std::string, int> reasons;
  std::optional<size_t> best;
  double best_score = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeSlot& n = nodes[i];
    if (!n.ready) {
      ++reasons["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"];
      continue;
    }
    if (n.unschedulable) {
      ++reasons["node(s) were unschedulable"];
      continue;
    }
    bool selector_ok = std::all_of(request.node_selector.begin(), request.node_selector.end(), [&](const auto& kv) {
      auto it = std::lower_bound(n.labels.begin(), n.labels.end(), kv.first,
                                 [](const auto& l, const std::string& k) { return l.first < k; });
      return it != n.labels.end() && it->first == kv.first && it->second == kv.second;
    });
    if (!selector_ok) {
      ++reasons["node(s) didn't match Pod's node affinity/selector"];
      continue;
    }
    bool fits = true;
    if (n.pods + 1 > n.alloc_pods) {
      ++reasons["Too many pods"];
      fits = false;
    }
    if (n.req_cpu_milli + request.cpu_milli > n.alloc_cpu_milli) {
      ++reasons["Insufficient cpu"];
      fits = false;
    }
    if (n.req_memory_bytes + request.memory_bytes > n.alloc_memory_bytes) {
      ++reasons["Insufficient memory"];
      fits = false;
    }
    if (!fits) continue;
    double cpu = n.alloc_cpu_milli > 0 ? double(n.score_cpu_milli + request.score_cpu_milli) / n.alloc_cpu_milli : 1;
    double mem = n.alloc_memory_bytes > 0
                     ? double(n.score_memory_bytes + request.score_memory_bytes) / n.alloc_memory_bytes
                     : 1;
    double score = (cpu + mem) / 2;
    if (!best || score < best_score ||
        (score == best_score && (n.pods < nodes[*best].pods ||
                                 (n.pods == nodes[*best].pods && n.name < nodes[*best].name)))) {
      best = i;
      best_score = score;
    }
  }
  if (best) return Placement{.node = best, .message = {}};
  std::vector<std::string> parts;
  for (const auto& [reason, count] : reasons) parts.push_back(absl::StrCat(count, " ", reason));
  return Placement{.node = std::nullopt, .message = absl::StrCat("0/", nodes.size(), " nodes are available",
                                           parts.empty() ? "" : ": ", absl::StrJoin(parts, ", "), ".")};
}

bool SetPodCondition(nlohmann::json& status, const std::string& type, const std::string& value,
                     const std::string& reason, const std::string& message, const std::string& now) {
  if (!status.is_object()) status = nlohmann::json::object();
  auto& conds = status["conditions"];
  if (!conds.is_array()) conds = nlohmann::json::array();
  nlohmann::json want = {{"type", type}, {"status", value}, {"lastProbeTime", nullptr}};
  if (!reason.empty()) want["reason"] = reason;
  if (!message.empty()) want["message"] = message;
  for (auto& c : conds) {
    if (!c.is_object() || c.value("type", "") != type) continue;
    bool same_status = c.value("status", "") == value;
    want["lastTransitionTime"] = same_status && c.contains("lastTransitionTime") ? c["lastTransitionTime"] : nlohmann::json(now);
    if (c == want) return false;
    c = std::move(want);
    return true;
  }
  want["lastTransitionTime"] = now;
  conds.push_back(std::move(want));
  return true;
}

bool ApplyBinding(nlohmann::json& pod, const std::string& node, const std::string& now) {
  bool changed = false;
  if (pod["spec"].value("nodeName", "") != node) {
    pod["spec"]["nodeName"] = node;
    changed = true;
  }
  changed |= SetPodCondition(pod["status"], "PodScheduled", "True", "", "", now);
  return changed;
}

bool ApplyUnschedulable(nlohmann::json& pod, const std::string& message, const std::string& now) {
  auto& status = pod["status"];
  bool changed = SetPodCondition(status, "PodScheduled", "False", "Unschedulable", message, now);
  if (status.value("phase", "") != "Pending") {
    status["phase"] = "Pending";
    changed = true;
  }
  return changed;
}

}  // namespace cloneset::devcluster::nodes
