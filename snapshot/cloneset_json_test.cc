#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CloneSetFromJson, Seed000ManifestAsWritten) {
  auto json = YamlToJson(ReadFile(std::string(CLONESET_TEST_DATA_DIR) + "/seed000/cloneset.yaml"));
  ASSERT_TRUE(json.ok()) << json.status();
  auto cs = CloneSetFromJson(*json);
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->api_version(), "apps.kruise.io/v1alpha1");
  EXPECT_EQ(cs->metadata().name(), "video-transcoder");
  EXPECT_EQ(cs->metadata().labels().at("app"), "video-transcoder");
  EXPECT_EQ(cs->spec().replicas(), 3);
  EXPECT_FALSE(cs->spec().has_selector());
  EXPECT_EQ(cs->spec().update_strategy().type(), "InPlaceIfPossible");
  EXPECT_EQ(cs->spec().update_strategy().max_unavailable().int_value(), 1);
  EXPECT_EQ(cs->spec().update_strategy().partition().int_value(), 0);
  EXPECT_TRUE(cs->spec().update_strategy().partition().has_int_value());
  EXPECT_FALSE(cs->spec().update_strategy().has_max_surge());
  EXPECT_EQ(cs->spec().scale_strategy().pvc_retention_policy(), "Retain");
  EXPECT_FALSE(cs->spec().scale_strategy().has_enable_pvc_reuse());
  const auto tmpl = nlohmann::json::parse(cs->spec().template_json());
  EXPECT_EQ(tmpl["metadata"]["labels"], (nlohmann::json{{"app", "video-transcoder"}, {"version", "v1.2.0"}}));
  EXPECT_EQ(tmpl["spec"]["containers"][0]["image"], "my-registry/video-transcoder:v1.2.0");
  EXPECT_EQ(tmpl["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1000m");
  EXPECT_EQ(tmpl["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"], 8080);
  EXPECT_EQ(tmpl["spec"]["volumes"][0]["configMap"]["name"], "transcoder-config");
  ASSERT_EQ(cs->spec().volume_claim_templates_json_size(), 1);
  EXPECT_EQ(cs->spec().volume_claim_templates_json(0),
            R"({"metadata":{"name":"workspace"},"spec":{"accessModes":["ReadWriteOnce"],)"
            R"("resources":{"requests":{"storage":"50Gi"}},"storageClassName":"fast-ssd"}})");
}

TEST(CloneSetFromJson, V1alpha1FieldsAndMetadataMapping) {
  auto cs = CloneSetFromJson(R"({
    "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
    "metadata": {"name": "cs", "namespace": "ns", "uid": "u1", "resourceVersion": "42", "generation": 7,
      "creationTimestamp": "2027-01-15T08:00:00Z",
      "labels": {"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"},
      "annotations": {"apps.kruise.io/image-predownload-parallelism": "5",
                      "apps.kruise.io/image-predownload-timeout-seconds": "600",
                      "apps.kruise.io/image-predownload-min-updated-ready-pods": "2"}},
    "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "demo"},
               "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
      "template": {"metadata": {"labels": {"app": "demo"}}, "spec": {"containers": [{"name": "main", "image": "x"}]}},
      "scaleStrategy": {"podsToDelete": ["cs-a", "cs-b"], "maxUnavailable": "50%", "disablePVCReuse": true},
      "updateStrategy": {"type": "InPlaceOnly", "partition": "25%", "maxUnavailable": 2, "maxSurge": "10%",
        "paused": true, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 30},
        "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"k": "v"}}}],
                             "orderPriority": [{"orderedKey": "prio"}]},
        "scatterStrategy": [{"key": "zone", "value": "a"}]},
      "revisionHistoryLimit": 3, "minReadySeconds": 20, "progressDeadlineSeconds": 600,
      "lifecycle": {"preDelete": {"labelsHandler": {"hook": "true"}, "finalizersHandler": ["f/1"],
                                  "markPodNotReady": true},
                    "inPlaceUpdate": {"finalizersHandler": ["f/2"]}}},
    "status": {"observedGeneration": 6, "replicas": 9, "readyReplicas": 8, "updatedReplicas": 4,
      "updateRevision": "cs-2", "currentRevision": "cs-1", "collisionCount": 1, "labelSelector": "app=demo",
      "conditions": [{"type": "Progressing", "status": "True", "reason": "CloneSetUpdated",
                      "lastUpdateTime": "2027-01-15T07:00:00Z", "lastTransitionTime": "2027-01-15T06:00:00Z"}]}})");
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->metadata().namespace_(), "ns");
  EXPECT_EQ(cs->metadata().uid(), "u1");
  EXPECT_EQ(cs->metadata().resource_version(), "42");
  EXPECT_EQ(cs->metadata().generation(), 7);
  EXPECT_EQ(cs->metadata().creation_timestamp().seconds(), 1800000000);
  const auto& spec = cs->spec();
  EXPECT_EQ(spec.replicas(), 10);
  EXPECT_EQ(spec.selector().match_labels().at("app"), "demo");
  ASSERT_EQ(spec.selector().match_expressions_size(), 1);
  EXPECT_EQ(spec.selector().match_expressions(0).operator_(), "In");
  EXPECT_THAT(spec.selector().match_expressions(0).values(), ::testing::ElementsAre("a", "b"));
  EXPECT_THAT(spec.scale_strategy().pods_to_delete(), ::testing::ElementsAre("cs-a", "cs-b"));
  EXPECT_EQ(spec.scale_strategy().max_unavailable().str_value(), "50%");
  ASSERT_TRUE(spec.scale_strategy().has_enable_pvc_reuse());
  EXPECT_FALSE(spec.scale_strategy().enable_pvc_reuse());
  EXPECT_TRUE(spec.scale_strategy().exclude_preparing_delete());
  const auto& u = spec.update_strategy();
  EXPECT_EQ(u.type(), "InPlaceOnly");
  EXPECT_EQ(u.partition().str_value(), "25%");
  EXPECT_EQ(u.max_unavailable().int_value(), 2);
  EXPECT_EQ(u.max_surge().str_value(), "10%");
  EXPECT_TRUE(u.paused());
  EXPECT_EQ(u.grace_period_seconds(), 30);
  EXPECT_EQ(u.image_predownload_parallelism().int_value(), 5);
  EXPECT_EQ(u.image_predownload_timeout_seconds(), 600);
  EXPECT_EQ(u.image_predownload_min_updated_ready_pods(), 2);
  ASSERT_EQ(u.priority_strategy().weight_priority_size(), 1);
  EXPECT_EQ(u.priority_strategy().weight_priority(0).weight(), 50);
  EXPECT_EQ(u.priority_strategy().weight_priority(0).match_selector().match_labels().at("k"), "v");
  EXPECT_EQ(u.priority_strategy().order_priority(0).ordered_key(), "prio");
  EXPECT_EQ(u.scatter_strategy(0).key(), "zone");
  EXPECT_EQ(u.scatter_strategy(0).value(), "a");
  EXPECT_EQ(spec.revision_history_limit(), 3);
  EXPECT_EQ(spec.min_ready_seconds(), 20);
  EXPECT_EQ(spec.progress_deadline_seconds(), 600);
  EXPECT_EQ(spec.lifecycle().pre_delete().labels_handler().at("hook"), "true");
  EXPECT_THAT(spec.lifecycle().pre_delete().finalizers_handler(), ::testing::ElementsAre("f/1"));
  EXPECT_TRUE(spec.lifecycle().pre_delete().mark_pod_not_ready());
  EXPECT_THAT(spec.lifecycle().in_place_update().finalizers_handler(), ::testing::ElementsAre("f/2"));
  EXPECT_FALSE(spec.lifecycle().has_pre_normal());
  const auto& st = cs->status();
  EXPECT_EQ(st.observed_generation(), 6);
  EXPECT_EQ(st.replicas(), 9);
  EXPECT_EQ(st.ready_replicas(), 8);
  EXPECT_EQ(st.updated_replicas(), 4);
  EXPECT_EQ(st.update_revision(), "cs-2");
  EXPECT_EQ(st.current_revision(), "cs-1");
  EXPECT_EQ(st.collision_count(), 1);
  EXPECT_EQ(st.label_selector(), "app=demo");
  ASSERT_EQ(st.conditions_size(), 1);
  EXPECT_EQ(st.conditions(0).reason(), "CloneSetUpdated");
  EXPECT_EQ(st.conditions(0).last_update_time().seconds(), 1800000000 - 3600);
  EXPECT_EQ(st.conditions(0).last_transition_time().seconds(), 1800000000 - 7200);
}

TEST(CloneSetFromJson, V1beta1RollingUpdateIsFlattened) {
  auto cs = CloneSetFromJson(R"({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
    "metadata": {"name": "cs", "annotations": {"apps.kruise.io/image-predownload-parallelism": "9"},
                 "labels": {"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"}},
    "spec": {"scaleStrategy": {"enablePVCReuse": true, "excludePreparingDelete": false, "disablePVCReuse": true},
      "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible",
        "partition": 3, "maxSurge": 1, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 5,
        "imagePreDownloadParallelism": "50%", "imagePreDownloadTimeoutSeconds": 120,
        "imagePreDownloadMinUpdatedReadyPods": 1}}}}})");
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->api_version(), "apps.kruise.io/v1beta1");
  const auto& u = cs->spec().update_strategy();
  EXPECT_EQ(u.type(), "InPlaceIfPossible");
  EXPECT_EQ(u.partition().int_value(), 3);
  EXPECT_EQ(u.max_surge().int_value(), 1);
  EXPECT_EQ(u.grace_period_seconds(), 5);
  EXPECT_EQ(u.image_predownload_parallelism().str_value(), "50%");  // the v1alpha1 annotation is ignored
  EXPECT_EQ(u.image_predownload_timeout_seconds(), 120);
  EXPECT_EQ(u.image_predownload_min_updated_ready_pods(), 1);
  EXPECT_TRUE(cs->spec().scale_strategy().enable_pvc_reuse());  // disablePVCReuse is not a v1beta1 field
  EXPECT_FALSE(cs->spec().scale_strategy().exclude_preparing_delete());  // the label is v1alpha1-only
}

TEST(CloneSetFromJson, V1beta1OnDeleteDropsRollingFields) {
  auto cs = CloneSetFromJson(R"({"apiVersion": "apps.kruise.io/v1beta1",
    "spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 3}}}})");
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->spec().update_strategy().type(), "OnDelete");
  EXPECT_FALSE(cs->spec().update_strategy().has_partition());
}

// Upstream's conversion of a v1alpha1 OnDelete CloneSet leaves rollingUpdate nil: the rolling fields and the
// pre-download annotations are dropped, the scaling label is kept.
TEST(CloneSetFromJson, V1alpha1OnDeleteDropsRollingFieldsAndPreDownloadSettings) {
  auto cs = CloneSetFromJson(R"({"apiVersion": "apps.kruise.io/v1alpha1",
    "metadata": {"annotations": {"apps.kruise.io/image-predownload-parallelism": "3",
                                 "apps.kruise.io/image-predownload-timeout-seconds": "not a number"},
                 "labels": {"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"}},
    "spec": {"updateStrategy": {"type": "OnDelete", "partition": 3, "maxSurge": 1, "maxUnavailable": "5",
                                "paused": true, "scatterStrategy": [{"key": "k", "value": "v"}],
                                "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}}}})");
  ASSERT_TRUE(cs.ok()) << cs.status();
  pb::UpdateStrategy want;
  want.set_type("OnDelete");
  EXPECT_EQ(cs->spec().update_strategy().SerializeAsString(), want.SerializeAsString())
      << cs->spec().update_strategy().DebugString();
  EXPECT_TRUE(cs->spec().scale_strategy().exclude_preparing_delete());
}

TEST(CloneSetFromJson, V1beta1RollingUpdateWithoutPolicyKeepsTypeEmpty) {
  auto cs = CloneSetFromJson(R"({"apiVersion": "apps.kruise.io/v1beta1",
    "spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "20%"}}}})");
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->spec().update_strategy().type(), "");
  EXPECT_EQ(cs->spec().update_strategy().max_unavailable().str_value(), "20%");
}

TEST(CloneSetFromJson, NullsCountAsAbsent) {
  auto cs = CloneSetFromJson(R"({"metadata": {"name": "cs", "labels": null}, "spec": {"replicas": null,
    "selector": null, "updateStrategy": {"partition": null}}, "status": null})");
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->api_version(), "apps.kruise.io/v1alpha1");
  EXPECT_FALSE(cs->spec().has_replicas());
  EXPECT_FALSE(cs->spec().has_selector());
  EXPECT_FALSE(cs->spec().update_strategy().has_partition());
}

struct BadCase {
  const char* name;
  const char* json;
  const char* error;
};

class CloneSetFromJsonBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CloneSetFromJsonBadInput, NamesTheField) {
  auto cs = CloneSetFromJson(GetParam().json);
  ASSERT_FALSE(cs.ok());
  EXPECT_EQ(cs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(cs.status().message()), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CloneSetFromJsonBadInput,
    ::testing::Values(
        BadCase{"malformed", "{", "CloneSet: malformed JSON at byte 2"},
        BadCase{"array", "[]", "CloneSet: expected object, got array"},
        BadCase{"api_version", R"({"apiVersion": "apps/v1"})",
                "apiVersion: \"apps/v1\" is not apps.kruise.io/v1alpha1 or apps.kruise.io/v1beta1"},
        BadCase{"api_version_type", R"({"apiVersion": 1})", "apiVersion: expected string, got number"},
        BadCase{"kind", R"({"kind": "Deployment"})", "kind: \"Deployment\" is not \"CloneSet\""},
        BadCase{"metadata", R"({"metadata": []})", "metadata: expected object, got array"},
        BadCase{"label_value", R"({"metadata": {"labels": {"a": 1}}})", "metadata.labels.a: expected string, got number"},
        BadCase{"creation", R"({"metadata": {"creationTimestamp": "yesterday"}})",
                "metadata.creationTimestamp: \"yesterday\" is not an RFC3339 time"},
        BadCase{"owner_ref", R"({"metadata": {"ownerReferences": [{"controller": "yes"}]}})",
                "metadata.ownerReferences[0].controller: expected boolean, got string"},
        BadCase{"spec", R"({"spec": 5})", "spec: expected object, got number"},
        BadCase{"replicas_string", R"({"spec": {"replicas": "3"}})", "spec.replicas: expected integer, got string"},
        BadCase{"replicas_float", R"({"spec": {"replicas": 3.5}})", "spec.replicas: expected integer, got 3.5"},
        BadCase{"replicas_range", R"({"spec": {"replicas": 3000000000}})",
                "spec.replicas: 3000000000 is out of the int32 range"},
        BadCase{"selector", R"({"spec": {"selector": {"matchExpressions": [{"values": "a"}]}}})",
                "spec.selector.matchExpressions[0].values: expected array, got string"},
        BadCase{"template", R"({"spec": {"template": "x"}})", "spec.template: expected object, got string"},
        BadCase{"vct", R"({"spec": {"volumeClaimTemplates": [{}, 1]}})",
                "spec.volumeClaimTemplates[1]: expected object, got number"},
        BadCase{"pods_to_delete", R"({"spec": {"scaleStrategy": {"podsToDelete": ["a", 1]}}})",
                "spec.scaleStrategy.podsToDelete[1]: expected string, got number"},
        BadCase{"disable_pvc_reuse", R"({"spec": {"scaleStrategy": {"disablePVCReuse": "true"}}})",
                "spec.scaleStrategy.disablePVCReuse: expected boolean, got string"},
        BadCase{"retention", R"({"spec": {"scaleStrategy": {"pvcRetentionPolicy": false}}})",
                "spec.scaleStrategy.pvcRetentionPolicy: expected string, got boolean"},
        BadCase{"partition", R"({"spec": {"updateStrategy": {"partition": true}}})",
                "spec.updateStrategy.partition: expected integer or string, got boolean"},
        BadCase{"partition_float", R"({"spec": {"updateStrategy": {"partition": 12.5}}})",
                "spec.updateStrategy.partition: expected integer, got 12.5"},
        BadCase{"weight", R"({"spec": {"updateStrategy": {"priorityStrategy": {"weightPriority": [{"weight": "x"}]}}}})",
                "spec.updateStrategy.priorityStrategy.weightPriority[0].weight: expected integer, got string"},
        BadCase{"scatter", R"({"spec": {"updateStrategy": {"scatterStrategy": {"key": "a"}}}})",
                "spec.updateStrategy.scatterStrategy: expected array, got object"},
        BadCase{"grace", R"({"spec": {"updateStrategy": {"inPlaceUpdateStrategy": {"gracePeriodSeconds": "5"}}}})",
                "spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds: expected integer, got string"},
        BadCase{"v1beta1_type", R"({"apiVersion": "apps.kruise.io/v1beta1", "spec": {"updateStrategy": {"type": "Blue"}}})",
                "spec.updateStrategy.type: \"Blue\" is not RollingUpdate or OnDelete"},
        BadCase{"v1beta1_surge",
                R"({"apiVersion": "apps.kruise.io/v1beta1", "spec": {"updateStrategy": {"rollingUpdate": {"maxSurge": []}}}})",
                "spec.updateStrategy.rollingUpdate.maxSurge: expected integer or string, got array"},
        BadCase{"hook", R"({"spec": {"lifecycle": {"preDelete": {"markPodNotReady": "yes"}}}})",
                "spec.lifecycle.preDelete.markPodNotReady: expected boolean, got string"},
        BadCase{"history", R"({"spec": {"revisionHistoryLimit": "10"}})",
                "spec.revisionHistoryLimit: expected integer, got string"},
        BadCase{"status_time", R"({"status": {"conditions": [{"type": "X", "lastTransitionTime": 5}]}})",
                "status.conditions[0].lastTransitionTime: expected RFC3339 string, got number"},
        BadCase{"status_counter", R"({"status": {"readyReplicas": -1e3}})",
                "status.readyReplicas: expected integer, got -1000.0"},
        BadCase{"timeout_annotation",
                R"({"metadata": {"annotations": {"apps.kruise.io/image-predownload-timeout-seconds": "abc"}}})",
                "metadata.annotations[\"apps.kruise.io/image-predownload-timeout-seconds\"]: \"abc\" is not an integer"},
        BadCase{"parallelism_annotation",
                R"({"metadata": {"annotations": {"apps.kruise.io/image-predownload-parallelism": "many"}}})",
                "metadata.annotations[\"apps.kruise.io/image-predownload-parallelism\"]: \"many\" is not an integer "
                "or a percentage"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cloneset::snapshot
