#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

TEST(PvcFromJson, MetadataAndPhase) {
  auto pvc = PvcFromJson(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",
    "metadata":{"name":"workspace-cs-abcde","namespace":"ns","uid":"u","resourceVersion":"5",
      "labels":{"apps.kruise.io/cloneset-instance-id":"abcde","app.kruise.io/instance":"cs"},
      "ownerReferences":[{"kind":"CloneSet","name":"cs","uid":"cs-uid","controller":true}]},
    "spec":{"storageClassName":"fast","resources":{"requests":{"storage":"50Gi"}}},
    "status":{"phase":"Bound","capacity":{"storage":"40Gi"}}})");
  ASSERT_TRUE(pvc.ok()) << pvc.status();
  EXPECT_EQ(pvc->metadata().name(), "workspace-cs-abcde");
  EXPECT_EQ(pvc->metadata().labels().at("apps.kruise.io/cloneset-instance-id"), "abcde");
  EXPECT_EQ(pvc->metadata().owner_references(0).uid(), "cs-uid");
  EXPECT_EQ(pvc->phase(), "Bound");
  EXPECT_EQ(pvc->storage_class_name(), "fast");
  EXPECT_EQ(pvc->storage_request(), "50Gi");
  EXPECT_EQ(pvc->storage_capacity(), "40Gi");
}

TEST(PvcFromJson, StorageFieldsAbsentOrMalformed) {
  auto bare = PvcFromJson(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"c"},"spec":{}})");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->storage_class_name(), "");
  EXPECT_EQ(bare->storage_request(), "");
  auto bad = PvcFromJson(R"({"kind":"PersistentVolumeClaim","spec":{"resources":{"requests":{"storage":5}}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), testing::HasSubstr("spec.resources.requests.storage"));
}

TEST(StorageClassFromJson, NameAndExpansion) {
  auto sc = StorageClassFromJson(R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass",
    "metadata":{"name":"fast"},"provisioner":"x","allowVolumeExpansion":true})");
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(sc->name(), "fast");
  EXPECT_TRUE(sc->allow_volume_expansion());
  auto absent = StorageClassFromJson(R"({"kind":"StorageClass","metadata":{"name":"slow"},"provisioner":"x"})");
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_FALSE(absent->allow_volume_expansion());
  auto bad = StorageClassFromJson(R"({"kind":"StorageClass","allowVolumeExpansion":"yes"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), testing::HasSubstr("allowVolumeExpansion"));
}

TEST(RevisionFromJson, DataBecomesCompactSortedJson) {
  auto rev = RevisionFromJson(R"({"apiVersion":"apps/v1","kind":"ControllerRevision",
    "metadata":{"name":"cs-7f9","labels":{"controller.kubernetes.io/hash":"7f9"},
      "annotations":{"kruise.io/cloneset-volumeclaimtemplate-hash":""}},
    "revision": 3,
    "data": {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}, "$patch": "replace",
             "metadata": {"labels": {"b": "2", "a": "1"}}}}}})");
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_EQ(rev->metadata().name(), "cs-7f9");
  EXPECT_EQ(rev->revision(), 3);
  EXPECT_EQ(rev->data_json(),
            R"({"spec":{"template":{"$patch":"replace","metadata":{"labels":{"a":"1","b":"2"}},)"
            R"("spec":{"containers":[{"image":"x","name":"main"}]}}}})");
}

TEST(NodeFromJson, NameAndLabels) {
  auto node = NodeFromJson(R"({"kind":"Node","metadata":{"name":"n1","labels":{"topology.kubernetes.io/zone":"a"}},
    "status":{"capacity":{"cpu":"2"}}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->name(), "n1");
  EXPECT_EQ(node->labels().at("topology.kubernetes.io/zone"), "a");
}

struct BadObject {
  const char* name;
  int kind;  // 0 PVC, 1 revision, 2 node
  const char* json;
  const char* error;
};

class ObjectsBadInput : public ::testing::TestWithParam<BadObject> {};

TEST_P(ObjectsBadInput, NamesTheField) {
  absl::Status st;
  switch (GetParam().kind) {
    case 0: st = PvcFromJson(GetParam().json).status(); break;
    case 1: st = RevisionFromJson(GetParam().json).status(); break;
    default: st = NodeFromJson(GetParam().json).status(); break;
  }
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(st.message()), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ObjectsBadInput,
    ::testing::Values(
        BadObject{"pvc_malformed", 0, "{\"a\":", "PersistentVolumeClaim: malformed JSON at byte 6"},
        BadObject{"pvc_phase", 0, R"({"status":{"phase":3}})", "status.phase: expected string, got number"},
        BadObject{"pvc_status", 0, R"({"status":"Bound"})", "status: expected object, got string"},
        BadObject{"pvc_rv", 0, R"({"metadata":{"resourceVersion":5}})",
                  "metadata.resourceVersion: expected string, got number"},
        BadObject{"rev_revision", 1, R"({"revision":"3"})", "revision: expected integer, got string"},
        BadObject{"rev_data", 1, R"({"data":"{}"})", "data: expected object, got string"},
        BadObject{"rev_generation", 1, R"({"metadata":{"generation":1.5}})",
                  "metadata.generation: expected integer, got 1.5"},
        BadObject{"node_labels", 2, R"({"metadata":{"labels":["a"]}})", "metadata.labels: expected object, got array"},
        BadObject{"node_name", 2, R"({"metadata":{"name":false}})", "metadata.name: expected string, got boolean"},
        BadObject{"node_array", 2, "[]", "Node: expected object, got array"}),
    [](const ::testing::TestParamInfo<BadObject>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cloneset::snapshot
