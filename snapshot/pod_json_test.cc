#include <string>

#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

using ::testing::ElementsAre;

constexpr char kPod[] = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "cs-abcde", "namespace": "ns", "uid": "pod-uid", "resourceVersion": "77",
    "generation": 2, "creationTimestamp": "2027-01-15T07:00:00Z", "deletionTimestamp": "2027-01-15T08:00:00.5Z",
    "labels": {"app": "demo", "controller-revision-hash": "cs-7f9"},
    "annotations": {"controller.kubernetes.io/pod-deletion-cost": "100", "note": "caf\u00e9"},
    "finalizers": ["example.com/hook"],
    "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "cs",
      "uid": "cs-uid", "controller": true, "blockOwnerDeletion": true}],
    "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:metadata": {}}}]},
  "spec": {"nodeName": "node-1", "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
    "containers": [
      {"name": "main", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
       "env": [{"name": "A", "value": "1"},
               {"valueFrom": {"configMapKeyRef": {"name": "cs-barrier", "key": "p_100"}},
                "name": "KRUISE_CONTAINER_BARRIER"}]},
      {"name": "sidecar", "image": "envoy:1",
       "resources": {"requests": {"cpu": "100m", "memory": 134217728, "ephemeral-storage": "1Gi"},
                     "limits": {"memory": "256Mi", "example.com/gpu": "1"}},
       "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                        {"resourceName": "memory", "restartPolicy": "RestartContainer"}]}]},
  "status": {"phase": "Running",
    "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null,
                    "lastTransitionTime": "2027-01-15T07:30:00Z", "reason": "r", "message": "m"}],
    "containerStatuses": [{"name": "main", "image": "nginx:1.25", "imageID": "docker://sha256:1",
      "containerID": "containerd://c1", "ready": true, "restartCount": 3, "state": {"running": {}},
      "allocatedResources": {"cpu": "100m"},
      "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "hugepages-2Mi": "2Mi"}}}]}
})";

TEST(PodFromJson, DecodesEveryPlannerField) {
  auto pod = PodFromJson(kPod);
  ASSERT_TRUE(pod.ok()) << pod.status();
  const auto& m = pod->metadata();
  EXPECT_EQ(m.name(), "cs-abcde");
  EXPECT_EQ(m.namespace_(), "ns");
  EXPECT_EQ(m.uid(), "pod-uid");
  EXPECT_EQ(m.resource_version(), "77");
  EXPECT_EQ(m.generation(), 2);
  EXPECT_EQ(m.creation_timestamp().seconds(), 1799996400);
  EXPECT_EQ(m.deletion_timestamp().seconds(), 1800000000);
  EXPECT_EQ(m.deletion_timestamp().nanos(), 500000000);
  EXPECT_EQ(m.labels().size(), 2u);
  EXPECT_EQ(m.labels().at("controller-revision-hash"), "cs-7f9");
  EXPECT_EQ(m.annotations().at("note"), "caf\xc3\xa9");
  EXPECT_THAT(m.finalizers(), ElementsAre("example.com/hook"));
  ASSERT_EQ(m.owner_references_size(), 1);
  EXPECT_EQ(m.owner_references(0).api_version(), "apps.kruise.io/v1beta1");
  EXPECT_EQ(m.owner_references(0).kind(), "CloneSet");
  EXPECT_EQ(m.owner_references(0).name(), "cs");
  EXPECT_EQ(m.owner_references(0).uid(), "cs-uid");
  EXPECT_TRUE(m.owner_references(0).controller());
  EXPECT_TRUE(m.owner_references(0).block_owner_deletion());
  EXPECT_EQ(pod->node_name(), "node-1");
  EXPECT_THAT(pod->readiness_gates(), ElementsAre("InPlaceUpdateReady"));
  ASSERT_EQ(pod->containers_size(), 2);
  EXPECT_EQ(pod->containers(0).name(), "main");
  EXPECT_EQ(pod->containers(0).image(), "nginx:1.25");
  EXPECT_EQ(pod->containers(0).launch_priority(), 100);
  EXPECT_EQ(pod->containers(1).name(), "sidecar");
  EXPECT_FALSE(pod->containers(1).has_launch_priority());
  // cpu and memory only; a number is kept as its literal.
  EXPECT_TRUE(pod->containers(0).resource_requests().empty());
  EXPECT_EQ(pod->containers(1).resource_requests().size(), 2u);
  EXPECT_EQ(pod->containers(1).resource_requests().at("cpu"), "100m");
  EXPECT_EQ(pod->containers(1).resource_requests().at("memory"), "134217728");
  EXPECT_EQ(pod->containers(1).resource_limits().size(), 1u);
  EXPECT_EQ(pod->containers(1).resource_limits().at("memory"), "256Mi");
  EXPECT_THAT(pod->containers(1).restart_on_resize(), ElementsAre("memory"));
  EXPECT_EQ(pod->phase(), "Running");
  ASSERT_EQ(pod->conditions_size(), 1);
  EXPECT_EQ(pod->conditions(0).type(), "Ready");
  EXPECT_EQ(pod->conditions(0).status(), "True");
  EXPECT_EQ(pod->conditions(0).reason(), "r");
  EXPECT_EQ(pod->conditions(0).message(), "m");
  EXPECT_EQ(pod->conditions(0).last_transition_time().seconds(), 1799998200);
  ASSERT_EQ(pod->container_statuses_size(), 1);
  const auto& cs = pod->container_statuses(0);
  EXPECT_EQ(cs.name(), "main");
  EXPECT_EQ(cs.image(), "nginx:1.25");
  EXPECT_EQ(cs.image_id(), "docker://sha256:1");
  EXPECT_EQ(cs.container_id(), "containerd://c1");
  EXPECT_TRUE(cs.ready());
  EXPECT_EQ(cs.restart_count(), 3);
  EXPECT_EQ(cs.resource_requests().size(), 1u);
  EXPECT_EQ(cs.resource_requests().at("cpu"), "100m");
  EXPECT_EQ(cs.resource_limits().size(), 1u);
  EXPECT_EQ(cs.resource_limits().at("cpu"), "1");
}

struct PriorityCase {
  const char* name;
  const char* env;
  int expected;  // -1 = unset
};

class LaunchPriority : public ::testing::TestWithParam<PriorityCase> {};

TEST_P(LaunchPriority, FromEnv) {
  const std::string json = std::string(R"({"spec":{"containers":[{"name":"c","env":)") + GetParam().env + "}]}}";
  auto pod = PodFromJson(json);
  ASSERT_TRUE(pod.ok()) << pod.status();
  if (GetParam().expected < 0) {
    EXPECT_FALSE(pod->containers(0).has_launch_priority());
  } else {
    EXPECT_EQ(pod->containers(0).launch_priority(), GetParam().expected);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, LaunchPriority,
    ::testing::Values(
        PriorityCase{"barrier", R"([{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"key":"p_7"}}}])", 7},
        PriorityCase{"barrier_garbage_is_zero",
                     R"([{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"key":"p_x"}}}])", 0},
        PriorityCase{"priority_value", R"([{"name":"KRUISE_CONTAINER_PRIORITY","value":"12"}])", 12},
        PriorityCase{"first_wins", R"([{"name":"KRUISE_CONTAINER_PRIORITY","value":"1"},
            {"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"key":"p_2"}}}])", 1},
        PriorityCase{"barrier_without_ref", R"([{"name":"KRUISE_CONTAINER_BARRIER","value":"p_5"}])", -1},
        PriorityCase{"secret_ref", R"([{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"secretKeyRef":{"key":"p_5"}}}])", -1},
        PriorityCase{"other_env", R"([{"name":"X","valueFrom":{"configMapKeyRef":{"key":"p_5"}}}])", -1},
        PriorityCase{"no_env", "[]", -1}),
    [](const ::testing::TestParamInfo<PriorityCase>& info) { return std::string(info.param.name); });

// Negative priorities exist upstream (sidecars last); kept apart from the table, where -1 means unset.
TEST(LaunchPriority, NegativeBarrier) {
  auto pod = PodFromJson(
      R"({"spec":{"containers":[{"name":"c","env":[{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"key":"p_-3"}}}]}]}})");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->containers(0).launch_priority(), -3);
}

struct BadPod {
  const char* name;
  const char* json;
  const char* error;
};

class PodFromJsonBadInput : public ::testing::TestWithParam<BadPod> {};

TEST_P(PodFromJsonBadInput, NamesTheField) {
  auto pod = PodFromJson(GetParam().json);
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(pod.status().message()), GetParam().error);
}

const BadPod kBadPods[] = {
    BadPod{"empty", "", "Pod: malformed JSON (Empty: no JSON found)"},
    BadPod{"not_object", "[1]", "Pod: expected object"},
    BadPod{"name", R"({"metadata":{"name":5}})", "Pod metadata.name: expected string"},
    BadPod{"label", R"({"metadata":{"labels":{"a":true}}})", "Pod metadata.labels.a: expected string"},
    BadPod{"time", R"({"metadata":{"creationTimestamp":"2027-13-01T00:00:00Z"}})",
           "Pod metadata.creationTimestamp: \"2027-13-01T00:00:00Z\" is not an RFC3339 time"},
    BadPod{"finalizer", R"({"metadata":{"finalizers":[1]}})", "Pod metadata.finalizers[0]: expected string"},
    BadPod{"owner", R"({"metadata":{"ownerReferences":[{"controller":1}]}})",
           "Pod metadata.ownerReferences[0].controller: expected boolean"},
    BadPod{"containers", R"({"spec":{"containers":{}}})", "Pod spec.containers: expected array"},
    BadPod{"image", R"({"spec":{"containers":[{"name":"a"},{"image":7}]}})",
           "Pod spec.containers[1].image: expected string"},
    BadPod{"env_key", R"({"spec":{"containers":[{"env":[{"valueFrom":{"configMapKeyRef":{"key":1}}}]}]}})",
           "Pod spec.containers[0].env[0].valueFrom.configMapKeyRef.key: expected string"},
    BadPod{"gate", R"({"spec":{"readinessGates":[{"conditionType":null},{"conditionType":[]}]}})",
           "Pod spec.readinessGates[1].conditionType: expected string"},
    BadPod{"phase", R"({"status":{"phase":1}})", "Pod status.phase: expected string"},
    BadPod{"condition", R"({"status":{"conditions":[{"type":"Ready","status":true}]}})",
           "Pod status.conditions[0].status: expected string"},
    BadPod{"restart", R"({"status":{"containerStatuses":[{"restartCount":"1"}]}})",
           "Pod status.containerStatuses[0].restartCount: expected integer"},
    BadPod{"restart_range", R"({"status":{"containerStatuses":[{"restartCount":99999999999}]}})",
           "Pod status.containerStatuses[0].restartCount: out of range"},
    BadPod{"ready", R"({"status":{"containerStatuses":[{"ready":"true"}]}})",
           "Pod status.containerStatuses[0].ready: expected boolean"}};

std::string BadPodName(const ::testing::TestParamInfo<BadPod>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Table, PodFromJsonBadInput, ::testing::ValuesIn(kBadPods), BadPodName);

// Only metadata and spec (the executor's check of a status write's returned pod): the same error, naming the same
// field, for every bad metadata or spec field and for bad JSON; the status is not read, so a bad status field is
// not an error.
class PodMetadataAndSpecBadInput : public ::testing::TestWithParam<BadPod> {};

TEST_P(PodMetadataAndSpecBadInput, NamesTheSameFieldOrSkipsTheStatus) {
  pb::Pod pod;
  const absl::Status s = PodFromJson(GetParam().json, &pod, PodParts::kMetadataAndSpec);
  if (std::string_view(GetParam().error).starts_with("Pod status.")) {
    EXPECT_TRUE(s.ok()) << s;
    return;
  }
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(Table, PodMetadataAndSpecBadInput, ::testing::ValuesIn(kBadPods), BadPodName);

// The full decode with the status cleared, i.e. every metadata and spec field.
pb::Pod WithoutStatus(pb::Pod pod) {
  pod.clear_phase();
  pod.clear_conditions();
  pod.clear_container_statuses();
  return pod;
}

TEST(PodFromJson, MetadataAndSpecOnlyEqualsTheFullDecodeWithoutItsStatus) {
  auto full = PodFromJson(kPod);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_FALSE(full->phase().empty());
  pb::Pod pod;
  ASSERT_TRUE(PodFromJson(kPod, &pod, PodParts::kMetadataAndSpec).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(pod, WithoutStatus(*full)))
      << pod.ShortDebugString() << "\nvs " << full->ShortDebugString();
}

// The executor decodes every pod event into one message: whatever the previous pod had, the next decode gives what a
// fresh message would (no label, condition, container, launch priority or timestamp of the previous pod left).
TEST(PodFromJson, AReusedMessageKeepsNothingOfThePreviousPod) {
  const std::string big_annotation(100 * 1024, 'x');  // over the kept padded buffer: the large-document path
  const std::string big_pod = R"({"metadata":{"name":"big","annotations":{"a":")" + big_annotation +
                              R"("}},"spec":{"containers":[{"name":"c"}]}})";
  const std::vector<std::string> pods = {
      kPod,
      "{}",
      kPod,
      R"({"metadata":{"name":"n"},"status":{"conditions":[{"type":"Ready"}]}})",
      R"({"spec":{"containers":[{"name":"main"},{"name":"second","image":"i"}]},"metadata":{"labels":{"b":"1"}}})",
      kPod,
      R"({"metadata":{"name":"bad","labels":{"a":1}}})",  // fails half-way
      R"({"metadata":{"name":"after-bad"}})",
      big_pod,
      R"({"spec":{"containers":[{"name":"c","env":[]}]}})",
      kPod,
      R"({"metadata":{"deletionTimestamp":null,"ownerReferences":[{"uid":"u"}]},"spec":{"nodeName":"n"}})",
  };
  for (const PodParts parts : {PodParts::kAll, PodParts::kMetadataAndSpec}) {
    pb::Pod reused;
    for (size_t i = 0; i < pods.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "pod " << i << (parts == PodParts::kAll ? " whole" : " metadata and spec"));
      pb::Pod fresh;
      const absl::Status want = PodFromJson(pods[i], &fresh, parts);
      const absl::Status got = PodFromJson(pods[i], &reused, parts);
      EXPECT_EQ(got, want);
      if (!want.ok()) continue;
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(reused, fresh))
          << "reused: " << reused.ShortDebugString() << "\nfresh:  " << fresh.ShortDebugString();
      auto returned = PodFromJson(pods[i]);  // the decoder that returns a new message: the same pod
      ASSERT_TRUE(returned.ok()) << returned.status();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
          parts == PodParts::kAll ? *returned : WithoutStatus(*returned), fresh));
    }
  }
}

TEST(PodListFromJson, DecodesItemsInOrder) {
  auto pods = PodListFromJson(R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[
    {"metadata":{"name":"a"}},{"metadata":{"name":"b"},"spec":{"nodeName":"n"}},{"metadata":{"name":"c"}}]})");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ((*pods)[0].metadata().name(), "a");
  EXPECT_EQ((*pods)[1].metadata().name(), "b");
  EXPECT_EQ((*pods)[1].node_name(), "n");
  EXPECT_EQ((*pods)[2].metadata().name(), "c");
}

TEST(PodListFromJson, EmptyAndNullItems) {
  auto empty = PodListFromJson(R"({"items":[]})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto null_items = PodListFromJson(R"({"items":null})");
  ASSERT_TRUE(null_items.ok());
  EXPECT_TRUE(null_items->empty());
}

TEST(PodListFromJson, ErrorNamesTheItem) {
  auto pods = PodListFromJson(R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"uid":1}}]})");
  ASSERT_FALSE(pods.ok());
  EXPECT_EQ(std::string(pods.status().message()), "PodList items[1].metadata.uid: expected string");
}

TEST(PodListFromJson, ManyPodsRoundTrip) {
  std::string json = R"({"items":[)";
  for (int i = 0; i < 2000; ++i) {
    if (i) json += ",";
    json += R"({"metadata":{"name":"p)" + std::to_string(i) + R"(","labels":{"i":")" + std::to_string(i) +
            R"("}},"status":{"phase":"Running"}})";
  }
  json += "]}";
  auto pods = PodListFromJson(json);
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2000u);
  EXPECT_EQ((*pods)[1234].metadata().name(), "p1234");
  EXPECT_EQ((*pods)[1234].metadata().labels().at("i"), "1234");
  EXPECT_EQ((*pods)[1999].phase(), "Running");
}

}  // namespace
}  // namespace cloneset::snapshot
