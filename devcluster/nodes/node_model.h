// Simulated Node objects: names, addresses, pod CIDRs, capacity and the Ready condition the kubelet heartbeats.
#pragma once

#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::devcluster::nodes {

inline constexpr int kPodsPerCidr = 254;

struct NodeShape {
  std::string cpu = "8";
  std::string memory = "32Gi";
  std::string pods = "110";
};

std::string NodeName(int index);  // "devcluster-node-<index>"
std::string ZoneOf(int index);    // spread over 3 zones: "devcluster-zone-a".."-c"
std::string HostIp(int index);    // 172.16.0.0/12, one address per node
std::string PodCidr(int index);   // a /24 per node inside 10.64.0.0/10
// The slot-th pod address of a node (slot in [0, kPodsPerCidr)): x.y.z.(slot + 1).
std::string PodIp(int index, int slot);
// Parses the slot back from an address of this node's CIDR; nullopt when it is not one.
std::optional<int> PodIpSlot(int index, const std::string& ip);
// The node index in a "devcluster-node-<i>" name, nullopt for other names.
std::optional<int> NodeIndexOf(const std::string& name);

// Validates the shape (quantities parse) and returns the Node object with capacity == allocatable.
absl::StatusOr<nlohmann::json> MakeNode(int index, const NodeShape& shape, const std::string& now_rfc3339);

// The node should report Ready unless the flag regex matches its name or its annotation
// devcluster.cloneset.io/fault is "not-ready".
bool NodeShouldBeReady(const nlohmann::json& node, const std::optional<std::regex>& not_ready_nodes);

// Updates the Ready condition (and its heartbeat time when `heartbeat`), and the not-ready taint, as the
// kubelet and the node lifecycle controller do. Returns true when the object changed.
bool ApplyNodeStatus(nlohmann::json& node, bool ready, bool heartbeat, const std::string& now_rfc3339);

}  // namespace cloneset::devcluster::nodes
