// The pods/resize subresource as kube-apiserver 1.34 serves it: only the containers' cpu and memory change, with
// its validation errors, word for word; the pods endpoint itself refuses resources changes.
#include "devcluster/pod_resize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/testing/fake_clock.h"
#include "devcluster/api_server.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

constexpr char kPodPath[] = "/api/v1/namespaces/default/pods/web";

class PodResizeTest : public ::testing::Test {
 protected:
  ApiResponse Call(const std::string& method, const std::string& path, const json& body = nullptr,
                   const std::string& content_type = "application/strategic-merge-patch+json") {
    ApiRequest r;
    r.method = method;
    r.path = path;
    if (!body.is_null()) r.body = body.dump();
    r.headers["content-type"] = content_type;
    r.headers["accept"] = "application/json";
    return api_.Handle(r);
  }
  static json Body(const ApiResponse& r) { return json::parse(r.body); }

  // A running pod "web" with two containers whose status reports resources (a node that resizes), QoS Burstable.
  void CreateRunningPod(json extra = json::object(), bool node_resizes = true) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "web"}, {"labels", {{"app", "web"}}}}},
                {"spec",
                 {{"nodeName", "n1"},
                  {"containers",
                   json::array({{{"name", "main"},
                                 {"image", "nginx:1"},
                                 {"resources",
                                  {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}, {"ephemeral-storage", "1Gi"}}},
                                   {"limits", {{"cpu", "200m"}, {"memory", "256Mi"}}}}}},
                                {{"name", "side"}, {"image", "busybox:1"}}})}}}};
    pod["spec"].update(extra);
    ASSERT_EQ(Call("POST", "/api/v1/namespaces/default/pods", pod, "application/json").status, 201);
    json status = Body(Call("GET", kPodPath));
    json running = {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}};
    status["status"] = {{"phase", "Running"}, {"qosClass", "Burstable"},
                        {"containerStatuses",
                         json::array({{{"name", "main"}, {"image", "nginx:1"}, {"ready", true}, {"state", running}},
                                      {{"name", "side"}, {"image", "busybox:1"}, {"ready", true}, {"state", running}}})}};
    if (node_resizes) {
      status["status"]["containerStatuses"][0]["resources"] = pod["spec"]["containers"][0]["resources"];
      status["status"]["containerStatuses"][1]["resources"] = json::object();
    }
    ASSERT_EQ(Call("PUT", std::string(kPodPath) + "/status", status, "application/json").status, 200);
  }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  ApiServer api_{&store_, ApiServerOptions{.token = "", .server_address = "127.0.0.1:1"}};
};

TEST_F(PodResizeTest, ResizeChangesOnlyCpuAndMemory) {
  CreateRunningPod();
  const json before = Body(Call("GET", kPodPath));
  // Anything else the patch says (labels, images) is dropped, as the resize strategy does.
  ApiResponse r = Call("PATCH", std::string(kPodPath) + "/resize",
                       {{"metadata", {{"labels", {{"extra", "x"}}}}},
                        {"spec",
                         {{"containers", json::array({{{"name", "main"},
                                                       {"image", "nginx:2"},
                                                       {"resources", {{"limits", {{"cpu", "300m"}}},
                                                                      {"requests", {{"cpu", "150m"}}}}}}})}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json pod = Body(r);
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["cpu"], "300m");
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"], "150m");
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"]["memory"], "128Mi");
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "nginx:1");
  EXPECT_FALSE(pod["metadata"]["labels"].contains("extra"));
  EXPECT_EQ(pod["metadata"]["generation"], before["metadata"]["generation"].get<int64_t>() + 1);
  EXPECT_EQ(pod["status"], before["status"]);
  EXPECT_NE(pod["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]);

  // GET of the subresource is the pod; PUT takes a whole pod, of which again only the resources count.
  json current = Body(Call("GET", std::string(kPodPath) + "/resize"));
  EXPECT_EQ(current["metadata"]["name"], "web");
  current["spec"]["containers"][0]["resources"]["limits"]["memory"] = "512Mi";
  current["spec"]["terminationGracePeriodSeconds"] = 5;
  r = Call("PUT", std::string(kPodPath) + "/resize", current, "application/json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["containers"][0]["resources"]["limits"]["memory"], "512Mi");
  EXPECT_EQ(Body(r)["spec"]["terminationGracePeriodSeconds"], 30);

  // A stale resourceVersion is a conflict, as on the pod itself.
  r = Call("PATCH", std::string(kPodPath) + "/resize",
           {{"metadata", {{"resourceVersion", before["metadata"]["resourceVersion"]}}},
            {"spec", {{"containers", json::array({{{"name", "main"}, {"resources", {{"limits", {{"cpu", "1"}}}}}}})}}}});
  EXPECT_EQ(r.status, 409) << r.body;
}

TEST_F(PodResizeTest, ThePodsEndpointRefusesResourcesChanges) {
  CreateRunningPod();
  ApiResponse r = Call("PATCH", kPodPath,
                       {{"spec", {{"containers", json::array({{{"name", "main"},
                                                               {"resources", {{"limits", {{"cpu", "300m"}}}}}}})}}}});
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_NE(Body(r)["message"].get<std::string>().find(
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`"),
            std::string::npos)
      << r.body;
}

struct Refusal {
  std::string name;
  json patch;  // of container "main" (strategic merge), unless `json_patch`
  std::string message;
  bool json_patch = false;
};

class PodResizeValidationTest : public PodResizeTest, public ::testing::WithParamInterface<Refusal> {};

TEST_P(PodResizeValidationTest, RefusedAsKubeApiserverRefusesIt) {
  CreateRunningPod();
  const Refusal& c = GetParam();
  json patch = c.patch;
  if (!c.json_patch) {
    json container = {{"name", "main"}};
    container.update(c.patch);
    patch = {{"spec", {{"containers", json::array({container})}}}};
  }
  ApiResponse r = Call("PATCH", std::string(kPodPath) + "/resize", patch,
                       c.json_patch ? "application/json-patch+json" : "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r)["message"], "Pod \"web\" is invalid: " + c.message) << r.body;
  EXPECT_EQ(Body(r)["reason"], "Invalid");
}

INSTANTIATE_TEST_SUITE_P(
    Table, PodResizeValidationTest,
    ::testing::Values(
        Refusal{"OtherResource", {{"resources", {{"requests", {{"ephemeral-storage", "2Gi"}}}}}},
                "spec: Forbidden: only cpu and memory resources are mutable"},
        // A memory request removed next to a memory limit is defaulted back from the limit (a resize to it); a
        // request without a limit is removed for good.
        Refusal{"RequestRemoved", {{"resources", {{"requests", {{"ephemeral-storage", nullptr}}}}}},
                "[spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed, spec: "
                "Forbidden: only cpu and memory resources are mutable]"},
        Refusal{"LimitsRemoved", {{"resources", {{"limits", nullptr}}}},
                "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"},
        Refusal{"RequestAboveLimit", {{"resources", {{"requests", {{"cpu", "1"}}}}}},
                "spec.containers[0].resources.requests: Invalid value: \"1\": must be less than or equal to cpu "
                "limit of 200m"},
        Refusal{"Renamed",
                json::array({{{"op", "replace"}, {"path", "/spec/containers/0/name"}, {"value", "other"}}}),
                "spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize", true},
        Refusal{"Added",
                json::array({{{"op", "add"}, {"path", "/spec/containers/-"},
                              {"value", {{"name", "third"}, {"image", "x:1"}}}}}),
                "spec.containers: Forbidden: containers may not be added or removed on resize", true}),
    [](const auto& info) { return info.param.name; });

TEST_F(PodResizeTest, QosClassMayNotChange) {
  CreateRunningPod();
  // Every container's requests equal to its limits: the Burstable pod would become Guaranteed.
  ApiResponse r = Call(
      "PATCH", std::string(kPodPath) + "/resize",
      {{"spec",
        {{"containers",
          json::array({{{"name", "main"},
                        {"resources", {{"requests", {{"cpu", "200m"}, {"memory", "256Mi"}}}}}},
                       {{"name", "side"},
                        {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}},
                                       {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}})}}}});
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r)["message"],
            "Pod \"web\" is invalid: spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of "
            "resizing")
      << r.body;
}

TEST_F(PodResizeTest, NodeWithoutResizeSupport) {
  CreateRunningPod(json::object(), /*node_resizes=*/false);
  ApiResponse r = Call("PATCH", std::string(kPodPath) + "/resize",
                       {{"spec", {{"containers", json::array({{{"name", "main"},
                                                               {"resources", {{"limits", {{"cpu", "300m"}}}}}}})}}}});
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r)["message"], "Pod \"web\" is invalid: spec: Forbidden: Pod running on node without support for resize");
}

TEST_F(PodResizeTest, OnlyPodsHaveIt) {
  ApiResponse r = Call("GET", "/api/v1/namespaces/default/configmaps/x/resize");
  EXPECT_EQ(r.status, 404);
  const json discovery = Body(Call("GET", "/api/v1"));
  bool listed = false;
  for (const json& resource : discovery["resources"]) {
    if (resource["name"] == "pods/resize") {
      listed = true;
      EXPECT_EQ(resource["kind"], "Pod");
      EXPECT_EQ(resource["verbs"], json({"get", "patch", "update"}));
    }
  }
  EXPECT_TRUE(listed);
}

TEST(MergePodResizeTest, KeepsEverythingButResources) {
  const json prev = {{"metadata", {{"name", "p"}}},
                     {"spec", {{"containers", json::array({{{"name", "a"}, {"image", "x:1"}}})}}},
                     {"status", {{"phase", "Running"}}}};
  const json incoming = {{"metadata", {{"name", "p"}, {"labels", {{"k", "v"}}}}},
                         {"spec",
                          {{"containers", json::array({{{"name", "a"},
                                                        {"image", "x:2"},
                                                        {"resources", {{"limits", {{"cpu", "1"}}}}},
                                                        {"resizePolicy", json::array({{{"resourceName", "cpu"},
                                                                                       {"restartPolicy",
                                                                                        "NotRequired"}}})}}})}}},
                         {"status", {{"phase", "Failed"}}}};
  const json next = MergePodResize(prev, incoming);
  EXPECT_EQ(next["metadata"], prev["metadata"]);
  EXPECT_EQ(next["status"], prev["status"]);
  EXPECT_EQ(next["spec"]["containers"][0]["image"], "x:1");
  EXPECT_EQ(next["spec"]["containers"][0]["resources"]["limits"]["cpu"], "1");
  EXPECT_EQ(next["spec"]["containers"][0]["resizePolicy"][0]["restartPolicy"], "NotRequired");
}

}  // namespace
}  // namespace cloneset::devcluster
