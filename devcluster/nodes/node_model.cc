#include "devcluster/nodes/node_model.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "devcluster/nodes/quantity.h"

namespace cloneset::devcluster::nodes {

std::string NodeName(int index) { return absl::StrCat("devcluster-node-", index); }

std::string ZoneOf(int index) { return absl::StrCat("devcluster-zone-", std::string(1, char('a' + index % 3))); }

std::string HostIp(int index) {
  int h = index + 2;  // skip .0 and .1 (gateway)
  return absl::StrCat("172.", 16 + ((h >> 16) & 15), ".", (h >> 8) & 255, ".", h & 255);
}

std::string PodCidr(int index) { return absl::StrCat("10.", 64 + ((index >> 8) & 63), ".", index & 255, ".0/24"); }

std::string PodIp(int index, int slot) {
  return absl::StrCat("10.", 64 + ((index >> 8) & 63), ".", index & 255, ".", slot + 1);
}

std::optional<int> PodIpSlot(int index, const std::string& ip) {
  std::string prefix = absl::StrCat("10.", 64 + ((index >> 8) & 63), ".", index & 255, ".");
  if (ip.rfind(prefix, 0) != 0) return std::nullopt;
  int last = 0;
  if (!absl::SimpleAtoi(ip.substr(prefix.size()), &last) || last < 1 || last > kPodsPerCidr) return std::nullopt;
  return last - 1;
}

std::optional<int> NodeIndexOf(const std::string& name) {
  const std::string kPrefix = "devcluster-node-";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  int i = 0;
  if (!absl::SimpleAtoi(name.substr(kPrefix.size()), &i) || i < 0) return std::nullopt;
  return i;
}

absl::StatusOr<nlohmann::json> MakeNode(int index, const NodeShape& shape, const std::string& now) {
  auto cpu = ParseMilliQuantity(shape.cpu, "--node-cpu");
  if (!cpu.ok()) return cpu.status();
  auto mem = ParseQuantity(shape.memory, "--node-memory");
  if (!mem.ok()) return mem.status();
  auto pods = ParseQuantity(shape.pods, "--node-pods");
  if (!pods.ok()) return pods.status();
  if (*cpu <= 0 || *mem <= 0 || *pods <= 0) {
    return absl::InvalidArgumentError("--node-cpu, --node-memory and --node-pods must be positive");
  }
  const std::string name = NodeName(index);
  nlohmann::json capacity = {{"cpu", shape.cpu}, {"memory", shape.memory}, {"pods", shape.pods},
                             {"ephemeral-storage", "100Gi"}};
  nlohmann::json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"},
          {"topology.kubernetes.io/zone", ZoneOf(index)},
          {"topology.kubernetes.io/region", "devcluster"},
          {"type", "devcluster-simulated"}}},
        {"annotations", {{"node.alpha.kubernetes.io/ttl", "0"}}}}},
      {"spec", {{"podCIDR", PodCidr(index)}, {"podCIDRs", nlohmann::json::array({PodCidr(index)})}}},
      {"status",
       {{"capacity", capacity},
        {"allocatable", capacity},
        {"addresses",
         nlohmann::json::array({{{"type", "InternalIP"}, {"address", HostIp(index)}},
                                {{"type", "Hostname"}, {"address", name}}})},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"architecture", "amd64"},
          {"operatingSystem", "linux"},
          {"osImage", "devcluster simulated node"},
          {"kernelVersion", "simulated"},
          {"kubeletVersion", "v1.32.0-devcluster"},
          {"kubeProxyVersion", "v1.32.0-devcluster"},
          {"containerRuntimeVersion", "devcluster-sim://1.0.0"},
          {"machineID", name},
          {"systemUUID", name},
          {"bootID", name}}},
        {"conditions", nlohmann::json::array()}}}};
  ApplyNodeStatus(node, true, true, now);
  return node;
}

bool NodeShouldBeReady(const nlohmann::json& node, const std::optional<std::regex>& not_ready_nodes) {
  const auto& meta = node.value("metadata", nlohmann::json::object());
  const std::string name = meta.value("name", "");
  if (not_ready_nodes && std::regex_match(name, *not_ready_nodes)) return false;
  const auto ann = meta.value("annotations", nlohmann::json::object());
  if (ann.is_object() && ann.contains("devcluster.cloneset.io/fault") && ann["devcluster.cloneset.io/fault"].is_string()) {
    for (absl::string_view f : absl::StrSplit(ann["devcluster.cloneset.io/fault"].get<std::string>(), ',')) {
      if (f == "not-ready") return false;
    }
  }
  return true;
}

bool ApplyNodeStatus(nlohmann::json& node, bool ready, bool heartbeat, const std::string& now) {
  nlohmann::json before = node;
  auto& status = node["status"];
  if (!status["conditions"].is_array()) status["conditions"] = nlohmann::json::array();
  auto& conds = status["conditions"];
  struct Want {
    const char* type;
    const char* status;
    const char* reason;
    const char* message;
  };
  const Want wants[] = {
      {"MemoryPressure", ready ? "False" : "Unknown", ready ? "KubeletHasSufficientMemory" : "NodeStatusUnknown",
       ready ? "kubelet has sufficient memory available" : "Kubelet stopped posting node status."},
      {"DiskPressure", ready ? "False" : "Unknown", ready ? "KubeletHasNoDiskPressure" : "NodeStatusUnknown",
       ready ? "kubelet has no disk pressure" : "Kubelet stopped posting node status."},
      {"PIDPressure", ready ? "False" : "Unknown", ready ? "KubeletHasSufficientPID" : "NodeStatusUnknown",
       ready ? "kubelet has sufficient PID available" : "Kubelet stopped posting node status."},
      {"Ready", ready ? "True" : "Unknown", ready ? "KubeletReady" : "NodeStatusUnknown",
       ready ? "kubelet is posting ready status" : "Kubelet stopped posting node status."},
  };
  for (const Want& w : wants) {
    nlohmann::json* cond = nullptr;
    for (auto& c : conds) {
      if (c.is_object() && c.value("type", "") == w.type) cond = &c;
    }
    if (cond == nullptr) {
      conds.push_back({{"type", w.type}, {"lastHeartbeatTime", now}, {"lastTransitionTime", now}});
      cond = &conds.back();
    }
    if (cond->value("status", "") != w.status) (*cond)["lastTransitionTime"] = now;
    (*cond)["status"] = w.status;
    (*cond)["reason"] = w.reason;
    (*cond)["message"] = w.message;
    // A NotReady kubelet does not heartbeat.
    if (heartbeat && ready) (*cond)["lastHeartbeatTime"] = now;
  }
  // The node lifecycle controller's taint keeps the scheduler away from a node that stopped reporting.
  auto& spec = node["spec"];
  nlohmann::json taints = nlohmann::json::array();
  if (spec.contains("taints") && spec["taints"].is_array()) {
    for (const auto& t : spec["taints"]) {
      if (t.value("key", "") != "node.kubernetes.io/unreachable") taints.push_back(t);
    }
  }
  if (!ready) {
    taints.push_back({{"key", "node.kubernetes.io/unreachable"}, {"effect", "NoSchedule"}, {"timeAdded", now}});
    for (const auto& t : before.value("spec", nlohmann::json::object()).value("taints", nlohmann::json::array())) {
      if (t.value("key", "") == "node.kubernetes.io/unreachable") taints.back() = t;  // keep its timeAdded
    }
  }
  if (taints.empty()) {
    spec.erase("taints");
  } else {
    spec["taints"] = taints;
  }
  return node != before;
}

}  // namespace cloneset::devcluster::nodes
