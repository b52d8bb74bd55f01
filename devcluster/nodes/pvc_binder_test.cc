#include "devcluster/nodes/pvc_binder.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;

json Class(const std::string& name, bool is_default, const std::string& created = "2026-01-01T00:00:00Z") {
  json sc = {{"metadata", {{"name", name}, {"creationTimestamp", created}}}, {"provisioner", "x.io/p"}};
  if (is_default) sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] = "true";
  return sc;
}

json Claim(std::optional<std::string> cls, std::string selected_node = "") {
  json pvc = {{"metadata", {{"name", "data"}, {"namespace", "ns"}, {"uid", "u1"}}},
              {"spec", {{"resources", {{"requests", {{"storage", "2Gi"}}}}}}}};
  if (cls) pvc["spec"]["storageClassName"] = *cls;
  if (!selected_node.empty()) pvc["metadata"]["annotations"][kSelectedNodeAnnotation] = selected_node;
  return pvc;
}

json With(json sc, const std::string& key, const std::string& value) {
  sc[key] = value;
  return sc;
}

TEST(PvcBinder, Table) {
  struct Case {
    std::string name;
    json pvc;
    std::vector<json> classes;
    bool provisions;
    std::string phase;
    std::optional<std::string> recorded_class;
  };
  std::vector<Case> cases = {
      {"explicit class", Claim("fast"), {Class("fast", false)}, true, "Bound", std::nullopt},
      {"default class", Claim(std::nullopt), {Class("fast", false), Class("std", true)}, true, "Bound", "std"},
      {"no default", Claim(std::nullopt), {Class("fast", false)}, false, "Pending", std::nullopt},
      {"explicit empty class", Claim(""), {Class("std", true)}, false, "Pending", std::nullopt},
      {"missing class", Claim("gone"), {Class("std", true)}, false, "Pending", std::nullopt},
      // Nothing provisions kubernetes.io/no-provisioner classes: the claim waits for a volume forever.
      {"no provisioner", Claim("local"), {With(Class("local", false), "provisioner", kNoProvisioner)}, false,
       "Pending", std::nullopt},
      {"no provisioner, default", Claim(std::nullopt), {With(Class("local", true), "provisioner", kNoProvisioner)},
       false, "Pending", "local"},
      // WaitForFirstConsumer: provisioned once the scheduler picked a node for a pod using the claim; the default
      // class is written down while it waits.
      {"first consumer, no node yet", Claim(std::nullopt),
       {With(Class("std", true), "volumeBindingMode", "WaitForFirstConsumer")}, false, "Pending", "std"},
      {"first consumer, node picked", Claim("std", "node-1"),
       {With(Class("std", true), "volumeBindingMode", "WaitForFirstConsumer")}, true, "Bound", std::nullopt},
      {"immediate ignores the node", Claim("std", "node-1"), {With(Class("std", true), "volumeBindingMode", "Immediate")},
       true, "Bound", std::nullopt},
      {"the simulator's default class", Claim(std::nullopt, "node-0"), {DefaultStorageClassObject("standard")}, true,
       "Bound", "standard"},
  };
  for (const auto& c : cases) {
    PvcDecision d = DecidePvc(c.pvc, c.classes, std::nullopt, "t");
    EXPECT_EQ(d.volume.has_value(), c.provisions) << c.name;
    ASSERT_TRUE(d.claim_status.has_value()) << c.name;
    EXPECT_EQ((*d.claim_status)["phase"], c.phase) << c.name;
    EXPECT_EQ(d.class_to_record, c.recorded_class) << c.name;
    if (d.volume) {
      EXPECT_EQ((*d.volume)["metadata"]["name"], "pvc-u1");
      EXPECT_EQ((*d.volume)["spec"]["capacity"]["storage"], "2Gi");
      EXPECT_EQ((*d.volume)["spec"]["claimRef"]["uid"], "u1");
      EXPECT_EQ((*d.volume)["status"]["phase"], "Bound");
      EXPECT_EQ(d.volume_name, "pvc-u1");
      EXPECT_EQ((*d.claim_status)["capacity"]["storage"], "2Gi");
    }
  }
}

TEST(PvcBinder, IdempotentOnceBoundAndNewestDefaultWins) {
  json pvc = Claim("fast");
  pvc["spec"]["volumeName"] = "pvc-u1";
  pvc["status"] = {{"phase", "Bound"}, {"accessModes", {"ReadWriteOnce"}}, {"capacity", {{"storage", "2Gi"}}}};
  json pv = {{"spec", {{"capacity", {{"storage", "2Gi"}}}}}};
  PvcDecision d = DecidePvc(pvc, {Class("fast", false)}, pv, "t");
  EXPECT_FALSE(d.volume.has_value());
  EXPECT_FALSE(d.claim_status.has_value());
  EXPECT_EQ(d.volume_name, "");
  EXPECT_EQ(DefaultStorageClass({Class("a", true, "2026-01-01T00:00:00Z"), Class("b", true, "2026-01-02T00:00:00Z")}),
            "b");
  EXPECT_EQ(DefaultStorageClass({Class("a", false)}), std::nullopt);
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
