#include "snapshot/patch.h"

#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

#include "gtest/gtest.h"

namespace cloneset::snapshot {
namespace {

TEST(PodPatchRequest, EveryMutationInOneStrategicMergePatch) {
  pb::PatchPod p;
  p.set_name("cs-abcde");
  p.set_uid("u");
  p.set_resource_version("77");
  (*p.mutable_set_labels())["lifecycle.apps.kruise.io/state"] = "Updating";
  (*p.mutable_set_labels())["b"] = "2";
  p.add_remove_labels("apps.kruise.io/specified-delete");
  (*p.mutable_set_annotations())["apps.kruise.io/inplace-update-state"] = R"({"revision":"cs-2"})";
  p.add_remove_annotations("inplace-update-state");
  p.add_add_finalizers("hook/a");
  p.add_remove_finalizers("hook/b");
  (*p.mutable_container_images())["sidecar"] = "envoy:2";
  (*p.mutable_container_images())["main"] = "nginx:1.26";
  p.add_remove_owner_uids("cs-uid");
  const ApiRequest req = PodPatchRequest("ns", p);
  EXPECT_EQ(req.method, "PATCH");
  EXPECT_EQ(req.path, "/api/v1/namespaces/ns/pods/cs-abcde");
  EXPECT_EQ(req.path_suffix, "pods/cs-abcde");
  EXPECT_EQ(req.content_type, "application/strategic-merge-patch+json");
  EXPECT_EQ(req.body,
            R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["hook/b"],)"
            R"("annotations":{"apps.kruise.io/inplace-update-state":"{\"revision\":\"cs-2\"}","inplace-update-state":null},)"
            R"("finalizers":["hook/a"],"labels":{"apps.kruise.io/specified-delete":null,"b":"2",)"
            R"("lifecycle.apps.kruise.io/state":"Updating"},"ownerReferences":[{"$patch":"delete","uid":"cs-uid"}],)"
            R"("resourceVersion":"77"},"spec":{"containers":[{"image":"nginx:1.26","name":"main"},)"
            R"({"image":"envoy:2","name":"sidecar"}]}})");
}

TEST(PodPatchRequest, OnlyWhatIsGiven) {
  pb::PatchPod p;
  p.set_name("cs-x");
  (*p.mutable_set_labels())["a"] = "1";
  const std::string body = PodPatchRequest("default", p).body;
  EXPECT_EQ(body, std::string(R"({"metadata":{"labels":{"a":"1"}}})"));
}

TEST(PodResizeRequest, StrategicMergeOfTheResizeSubresource) {
  pb::Action action;
  pb::ResizePod& r = *action.mutable_resize_pod();
  r.set_name("cs-x");
  r.set_uid("u");
  r.set_resource_version("12");
  pb::ResizePod::ContainerResources* main = r.add_containers();
  main->set_name("main");
  (*main->mutable_limits())["memory"] = "512Mi";
  (*main->mutable_limits())["cpu"] = "1";
  (*main->mutable_requests())["cpu"] = "500m";
  pb::ResizePod::ContainerResources* side = r.add_containers();
  side->set_name("side");
  (*side->mutable_requests())["memory"] = "64Mi";
  absl::StatusOr<ApiRequest> req = ActionToPatch(action, "ns", "cs", "");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->method, "PATCH");
  EXPECT_EQ(req->path, "/api/v1/namespaces/ns/pods/cs-x/resize");
  EXPECT_EQ(req->path_suffix, "pods/cs-x/resize");
  EXPECT_EQ(req->content_type, "application/strategic-merge-patch+json");
  EXPECT_EQ(req->body,
            R"({"metadata":{"resourceVersion":"12"},"spec":{"containers":[)"
            R"({"name":"main","resources":{"limits":{"cpu":"1","memory":"512Mi"},"requests":{"cpu":"500m"}}},)"
            R"({"name":"side","resources":{"requests":{"memory":"64Mi"}}}]}})");
}

TEST(PodStatusPatchRequest, ConditionsMergeByType) {
  pb::PatchPodStatus p;
  p.set_name("cs-x");
  p.set_resource_version("9");
  pb::Condition* c = p.add_set_conditions();
  c->set_type("InPlaceUpdateReady");
  c->set_status("False");
  c->set_reason("StartInPlaceUpdate");
  c->mutable_last_transition_time()->set_seconds(1800000000);
  const ApiRequest req = PodStatusPatchRequest("ns", p);
  EXPECT_EQ(req.path, "/api/v1/namespaces/ns/pods/cs-x/status");
  EXPECT_EQ(req.content_type, kStrategicMergePatch);
  EXPECT_EQ(req.body,
            R"({"metadata":{"resourceVersion":"9"},"status":{"conditions":[{"lastTransitionTime":"2027-01-15T08:00:00Z",)"
            R"("message":null,"reason":"StartInPlaceUpdate","status":"False","type":"InPlaceUpdateReady"}]}})");
}

// Regression: InPlaceUpdateReady=True must clear the False phase's reason (the server merges condition items by
// type and keeps fields the patch omits), else the planner sees {True, "StartInPlaceUpdate"} and re-writes it.
TEST(PodStatusPatchRequest, EmptyReasonAndMessageAreCleared) {
  pb::PatchPodStatus p;
  p.set_name("cs-x");
  pb::Condition* c = p.add_set_conditions();
  c->set_type("InPlaceUpdateReady");
  c->set_status("True");
  c->mutable_last_transition_time()->set_seconds(1800000000);
  EXPECT_EQ(PodStatusPatchRequest("ns", p).body,
            R"({"status":{"conditions":[{"lastTransitionTime":"2027-01-15T08:00:00Z","message":null,"reason":null,)"
            R"("status":"True","type":"InPlaceUpdateReady"}]}})");
}

// Which precondition a status patch carries: the pod's uid when it sets only the CloneSet controller's own
// conditions (a kubelet status write in between must not turn it into a 409), else the snapshot's version.
TEST(PodStatusPatchRequest, PreconditionByConditionTypes) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> conditions;  // type, status
    std::string uid;
    std::string want_metadata;
  };
  const Case cases[] = {
      {"in-place ready true", {{"InPlaceUpdateReady", "True"}}, "pu", R"({"uid":"pu"})"},
      {"start in-place update", {{"InPlaceUpdateReady", "False"}, {"Ready", "False"}}, "pu", R"({"uid":"pu"})"},
      {"no uid known", {{"InPlaceUpdateReady", "True"}}, "", R"({"resourceVersion":"9"})"},
      {"KruisePodReady merges a key list", {{"KruisePodReady", "False"}, {"Ready", "False"}}, "pu",
       R"({"resourceVersion":"9"})"},
      {"Ready True is the kubelet's to decide", {{"InPlaceUpdateReady", "True"}, {"Ready", "True"}}, "pu",
       R"({"resourceVersion":"9"})"},
      {"Ready alone", {{"Ready", "False"}}, "pu", R"({"resourceVersion":"9"})"},
      {"no condition", {}, "pu", R"({"resourceVersion":"9"})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::PatchPodStatus p;
    p.set_name("cs-x");
    p.set_uid(c.uid);
    p.set_resource_version("9");
    for (const auto& [type, status] : c.conditions) {
      pb::Condition* cond = p.add_set_conditions();
      cond->set_type(type);
      cond->set_status(status);
    }
    const nlohmann::json body = nlohmann::json::parse(PodStatusPatchRequest("ns", p).body);
    EXPECT_EQ(body["metadata"].dump(), c.want_metadata);
    EXPECT_EQ(body["status"]["conditions"].size(), c.conditions.size());
  }
}

TEST(RevisionPatchRequest, MergePatchWithPrecondition) {
  pb::UpdateRevision u;
  u.set_name("cs-7f9");
  u.set_resource_version("3");
  u.set_revision(5);
  (*u.mutable_set_labels())["apps.kruise.io/pre-predownload-created"] = "true";
  const ApiRequest req = RevisionPatchRequest("ns", u);
  EXPECT_EQ(req.path, "/apis/apps/v1/namespaces/ns/controllerrevisions/cs-7f9");
  EXPECT_EQ(req.content_type, "application/merge-patch+json");
  EXPECT_EQ(req.body,
            R"({"metadata":{"labels":{"apps.kruise.io/pre-predownload-created":"true"},"resourceVersion":"3"},)"
            R"("revision":5})");
}

TEST(CloneSetPatchRequest, AddsResourceVersion) {
  pb::PatchCloneSet p;
  p.set_merge_patch_json(R"({"spec":{"selector":{"matchLabels":{"app":"v"}}}})");
  p.set_resource_version("12");
  auto req = CloneSetPatchRequest("ns", "video-transcoder", "", p);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->path, "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/video-transcoder");
  EXPECT_EQ(req->content_type, kMergePatch);
  EXPECT_EQ(req->body, R"({"metadata":{"resourceVersion":"12"},"spec":{"selector":{"matchLabels":{"app":"v"}}}})");
}

TEST(CloneSetPatchRequest, RejectsBadPatch) {
  pb::PatchCloneSet p;
  p.set_merge_patch_json("[1]");
  EXPECT_EQ(std::string(CloneSetPatchRequest("ns", "cs", "", p).status().message()),
            "patch_clone_set.merge_patch_json: expected a JSON object");
  p.set_merge_patch_json("{");
  EXPECT_EQ(std::string(CloneSetPatchRequest("ns", "cs", "", p).status().message()),
            "patch_clone_set.merge_patch_json: malformed JSON at byte 2");
}

TEST(CloneSetStatusRequest, StatusSubresource) {
  pb::CloneSetStatus st;
  st.set_replicas(2);
  const ApiRequest req = CloneSetStatusRequest("ns", "cs", "apps.kruise.io/v1beta1", st);
  EXPECT_EQ(req.path, "/apis/apps.kruise.io/v1beta1/namespaces/ns/clonesets/cs/status");
  EXPECT_EQ(req.body.substr(0, 46), R"({"status":{"observedGeneration":0,"replicas":2)");
}

TEST(ActionToPatch, DispatchesByKind) {
  pb::Action a;
  a.mutable_patch_pod()->set_name("p1");
  EXPECT_EQ(ActionToPatch(a, "ns", "cs", "")->path, "/api/v1/namespaces/ns/pods/p1");
  a.mutable_patch_pod_status()->set_name("p2");
  EXPECT_EQ(ActionToPatch(a, "ns", "cs", "")->path, "/api/v1/namespaces/ns/pods/p2/status");
  a.mutable_update_revision()->set_name("r1");
  EXPECT_EQ(ActionToPatch(a, "ns", "cs", "")->path, "/apis/apps/v1/namespaces/ns/controllerrevisions/r1");
  a.mutable_patch_clone_set()->set_merge_patch_json("{}");
  EXPECT_EQ(ActionToPatch(a, "ns", "cs", "")->path, "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs");
  a.mutable_delete_pod()->set_name("p1");
  EXPECT_EQ(ActionToPatch(a, "ns", "cs", "").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PvcOwnerPatchRequest, ReplacesTheOwnerListUnderThePrecondition) {
  pb::PersistentVolumeClaim pvc;
  pvc.mutable_metadata()->set_name("data-cs-a");
  for (const char* uid : {"old-uid", "other-uid"}) {
    pb::OwnerReference* o = pvc.mutable_metadata()->add_owner_references();
    o->set_api_version("v1");
    o->set_kind("Pod");
    o->set_name(uid);
    o->set_uid(uid);
  }
  pb::UpdatePvcOwner u;
  u.set_name("data-cs-a");
  u.set_resource_version("9");
  u.set_remove_owner_uid("old-uid");
  u.mutable_add_owner()->set_api_version("apps.kruise.io/v1alpha1");
  u.mutable_add_owner()->set_kind("CloneSet");
  u.mutable_add_owner()->set_name("cs");
  u.mutable_add_owner()->set_uid("cs-uid");
  u.mutable_add_owner()->set_controller(true);
  const ApiRequest req = PvcOwnerPatchRequest("ns", pvc, u);
  EXPECT_EQ(req.path, "/api/v1/namespaces/ns/persistentvolumeclaims/data-cs-a");
  EXPECT_EQ(req.content_type, kMergePatch);
  EXPECT_EQ(req.body,
            R"({"metadata":{"ownerReferences":[)"
            R"({"apiVersion":"v1","blockOwnerDeletion":false,"controller":false,"kind":"Pod","name":"other-uid",)"
            R"("uid":"other-uid"},)"
            R"({"apiVersion":"apps.kruise.io/v1alpha1","blockOwnerDeletion":false,"controller":true,)"
            R"("kind":"CloneSet","name":"cs","uid":"cs-uid"}],"resourceVersion":"9"}})");
}

TEST(PvcExpandRequest, SetsTheStorageRequestUnderThePrecondition) {
  pb::Action action;
  pb::ExpandPvc* e = action.mutable_expand_pvc();
  e->set_name("data-cs-a");
  e->set_uid("pvc-uid");
  e->set_resource_version("12");
  e->set_storage("20Gi");
  e->set_pod_name("cs-a");
  auto req = ActionToPatch(action, "ns", "cs", "apps.kruise.io/v1beta1");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->method, "PATCH");
  EXPECT_EQ(req->path, "/api/v1/namespaces/ns/persistentvolumeclaims/data-cs-a");
  EXPECT_EQ(req->content_type, kMergePatch);
  EXPECT_EQ(req->body, R"({"metadata":{"resourceVersion":"12"},"spec":{"resources":{"requests":{"storage":"20Gi"}}}})");
}

TEST(WritePaths, CollectionsDeleteBodyAndTheCloneSet) {
  EXPECT_EQ(PodsPath("ns"), "/api/v1/namespaces/ns/pods");
  EXPECT_EQ(PvcsPath("ns"), "/api/v1/namespaces/ns/persistentvolumeclaims");
  EXPECT_EQ(RevisionsPath("ns"), "/apis/apps/v1/namespaces/ns/controllerrevisions");
  EXPECT_EQ(ImagePullJobsPath("ns"), "/apis/apps.kruise.io/v1alpha1/namespaces/ns/imagepulljobs");
  EXPECT_EQ(CloneSetPath("ns", "cs", "apps.kruise.io/v1beta1"),
            "/apis/apps.kruise.io/v1beta1/namespaces/ns/clonesets/cs");
  EXPECT_EQ(DeleteBody(""), R"({"apiVersion":"v1","kind":"DeleteOptions"})");
  EXPECT_EQ(DeleteBody("u1"), R"({"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"uid":"u1"}})");
}

}  // namespace
}  // namespace cloneset::snapshot
