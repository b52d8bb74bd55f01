#include "devcluster/nodes/node_model.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster::nodes {
namespace {

TEST(NodeModel, AddressesTable) {
  struct Case {
    int index;
    std::string host, cidr, first_pod;
  };
  for (const Case& c : std::vector<Case>{{0, "172.16.0.2", "10.64.0.0/24", "10.64.0.1"},
                                         {255, "172.16.1.1", "10.64.255.0/24", "10.64.255.1"},
                                         {999, "172.16.3.233", "10.67.231.0/24", "10.67.231.1"}}) {
    EXPECT_EQ(HostIp(c.index), c.host);
    EXPECT_EQ(PodCidr(c.index), c.cidr);
    EXPECT_EQ(PodIp(c.index, 0), c.first_pod);
    EXPECT_EQ(PodIpSlot(c.index, PodIp(c.index, 17)), 17);
  }
  EXPECT_EQ(PodIpSlot(1, PodIp(0, 3)), std::nullopt);
  EXPECT_EQ(NodeIndexOf("devcluster-node-42"), 42);
  EXPECT_EQ(NodeIndexOf("worker-1"), std::nullopt);
}

TEST(NodeModel, MakeNodeAndReadiness) {
  auto node = MakeNode(4, NodeShape{.cpu = "2", .memory = "4Gi", .pods = "20"}, "2026-01-01T00:00:00Z");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["metadata"]["labels"]["topology.kubernetes.io/zone"], "devcluster-zone-b");
  EXPECT_EQ((*node)["status"]["allocatable"]["pods"], "20");
  EXPECT_FALSE(MakeNode(0, NodeShape{.cpu = "lots", .memory = "1Gi", .pods = "1"}, "t").ok());

  EXPECT_TRUE(NodeShouldBeReady(*node, std::nullopt));
  EXPECT_FALSE(NodeShouldBeReady(*node, std::regex("devcluster-node-[4-6]")));
  nlohmann::json annotated = *node;
  annotated["metadata"]["annotations"]["devcluster.cloneset.io/fault"] = "not-ready";
  EXPECT_FALSE(NodeShouldBeReady(annotated, std::nullopt));

  EXPECT_TRUE(ApplyNodeStatus(*node, false, true, "2026-01-01T00:01:00Z"));
  EXPECT_EQ((*node)["spec"]["taints"][0]["key"], "node.kubernetes.io/unreachable");
  for (const auto& c : (*node)["status"]["conditions"]) {
    if (c["type"] == "Ready") {
      EXPECT_EQ(c["status"], "Unknown");
      EXPECT_EQ(c["lastHeartbeatTime"], "2026-01-01T00:00:00Z");  // a dead kubelet does not heartbeat
    }
  }
  EXPECT_FALSE(ApplyNodeStatus(*node, false, true, "2026-01-01T00:02:00Z"));
  EXPECT_TRUE(ApplyNodeStatus(*node, true, true, "2026-01-01T00:03:00Z"));
  EXPECT_FALSE((*node)["spec"].contains("taints"));
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
