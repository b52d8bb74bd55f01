#include "base/testing/fake_clock.h"
#include "devcluster/api_server.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/escaping.h"
#include "devcluster/discovery.h"
#include "devcluster/k8s/k8s_objects.pb.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

class ApiServerTest : public ::testing::Test {
 protected:
  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& content_type = "application/json",
                   std::map<std::string, std::string> query = {}, const std::string& accept = "application/json") {
    ApiRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.query = std::move(query);
    r.headers["content-type"] = content_type;
    r.headers["accept"] = accept;
    r.headers["authorization"] = "Bearer secret";
    return api_.Handle(r);
  }
  json Body(const ApiResponse& r) { return json::parse(r.body); }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  ApiServer api_{&store_, ApiServerOptions{.token = "secret", .server_address = "127.0.0.1:1"}};
};

const char kCrd[] = R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"clonesets.apps.kruise.io"},
  "spec":{"group":"apps.kruise.io","scope":"Namespaced","names":{"plural":"clonesets","kind":"CloneSet","shortNames":["clone"]},
  "versions":[{"name":"v1alpha1","served":true,"storage":true,"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}},
   "additionalPrinterColumns":[{"name":"DESIRED","type":"integer","jsonPath":".spec.replicas"},{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}]}]}})";
const char kCloneSets[] = "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets";

TEST_F(ApiServerTest, StatusCodesForBadInputs) {
  const std::string cm = "/api/v1/namespaces/default/configmaps";
  struct Case {
    std::string name, method, path, body, content_type;
    int code;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"malformed json", "POST", cm, "{\"metadata\":", "application/json", 400, "BadRequest"},
      {"malformed yaml", "POST", cm, "a: [\n", "application/yaml", 400, "BadRequest"},
      {"not an object", "POST", cm, "[1,2]", "application/json", 400, "BadRequest"},
      {"wrong content type", "POST", cm, "x", "text/plain", 415, "UnsupportedMediaType"},
      {"protobuf without the k8s magic", "POST", cm, "x", "application/vnd.kubernetes.protobuf", 400, "BadRequest"},
      {"protobuf of a kind not decoded", "POST", cm, std::string("k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod", 15),
       "application/vnd.kubernetes.protobuf", 415, "UnsupportedMediaType"},
      {"invalid name", "POST", cm, R"({"metadata":{"name":"A_B"}})", "application/json", 422, "Invalid"},
      {"missing name", "POST", cm, R"({"metadata":{}})", "application/json", 422, "Invalid"},
      {"namespace mismatch", "POST", cm, R"({"metadata":{"name":"a","namespace":"other"}})", "application/json", 400,
       "BadRequest"},
      {"unknown resource", "GET", "/api/v1/namespaces/default/widgets", "", "", 404, "NotFound"},
      {"unknown group version", "GET", "/apis/apps/v2/controllerrevisions", "", "", 404, "NotFound"},
      {"unknown subresource", "GET", cm + "/x/exec", "", "", 404, "NotFound"},
      {"not found", "GET", cm + "/nope", "", "", 404, "NotFound"},
      {"bad selector", "GET", cm, "", "", 400, "BadRequest"},
      {"deep nesting", "POST", cm, std::string(300, '[') + std::string(300, ']'), "application/json", 400, "BadRequest"},
      {"put collection", "PUT", cm, "{}", "application/json", 405, "MethodNotAllowed"},
      {"empty body", "POST", cm, "", "application/json", 400, "BadRequest"},
  };
  for (const auto& c : cases) {
    std::map<std::string, std::string> q;
    if (c.name == "bad selector") q["labelSelector"] = "a in (b";
    ApiResponse r = Call(c.method, c.path, c.body, c.content_type, q);
    EXPECT_EQ(r.status, c.code) << c.name << ": " << r.body;
    json b = Body(r);
    EXPECT_EQ(b["kind"], "Status") << c.name;
    EXPECT_EQ(b["reason"], c.reason) << c.name;
    EXPECT_EQ(b["code"], c.code) << c.name;
  }
  ApiResponse big = Call("POST", cm, std::string(3 * 1024 * 1024 + 1, ' '));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(Body(big)["reason"], "RequestEntityTooLarge");
}

// kubectl >= 1.32 sends `create configmap` as Kubernetes protobuf; it is stored as the JSON client's would be.
TEST_F(ApiServerTest, CreatesFromProtobufBody) {
  k8s::ConfigMap cm;
  cm.mutable_metadata()->set_name("from-pb");
  cm.mutable_metadata()->set_namespace_("");
  (*cm.mutable_data())["a"] = "b";
  k8s::Unknown envelope;
  envelope.mutable_typemeta()->set_apiversion("v1");
  envelope.mutable_typemeta()->set_kind("ConfigMap");
  envelope.set_raw(cm.SerializeAsString());
  ApiResponse r = Call("POST", "/api/v1/namespaces/default/configmaps",
                       std::string("k8s\0", 4) + envelope.SerializeAsString(), "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  json got = Body(Call("GET", "/api/v1/namespaces/default/configmaps/from-pb"));
  EXPECT_EQ(got["kind"], "ConfigMap");
  EXPECT_EQ(got["metadata"]["namespace"], "default");
  EXPECT_EQ(got["data"], json({{"a", "b"}}));
}

TEST_F(ApiServerTest, InvalidStatusHasCauses) {
  ApiResponse r = Call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"A_B"}})");
  json b = Body(r);
  EXPECT_EQ(b["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(b["details"]["kind"], "ConfigMap");
  EXPECT_EQ(b["message"].get<std::string>().substr(0, 30), "ConfigMap \"A_B\" is invalid: me");
}

TEST_F(ApiServerTest, AuthRequiredExceptPublicPaths) {
  ApiRequest r;
  r.method = "GET";
  r.path = "/api/v1/namespaces";
  EXPECT_EQ(api_.Handle(r).status, 401);
  r.path = "/version";
  ApiResponse v = api_.Handle(r);
  EXPECT_EQ(v.status, 200);
  EXPECT_EQ(Body(v)["minor"], "32");
  r.path = "/readyz";
  EXPECT_EQ(api_.Handle(r).body, "ok");
}

TEST_F(ApiServerTest, CrdLifecycleDiscoveryScaleAndPatches) {
  ASSERT_EQ(Call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", kCrd).status, 201);
  json groups = Body(Call("GET", "/apis"));
  bool found = false;
  for (const auto& g : groups["groups"]) found |= g["name"] == "apps.kruise.io";
  EXPECT_TRUE(found);
  json resources = Body(Call("GET", "/apis/apps.kruise.io/v1alpha1"));
  ASSERT_EQ(resources["resources"].size(), 3u);
  EXPECT_EQ(resources["resources"][0]["shortNames"], json({"clone"}));
  EXPECT_EQ(resources["resources"][2]["name"], "clonesets/scale");
  ApiResponse created = Call("POST", kCloneSets,
                             "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: vt\nspec:\n  replicas: 3\n",
                             "application/yaml");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(Body(created)["metadata"]["namespace"], "default");
  // Scale subresource.
  ApiResponse scaled = Call("PATCH", std::string(kCloneSets) + "/vt/scale", R"({"spec":{"replicas":4}})",
                            "application/merge-patch+json");
  ASSERT_EQ(scaled.status, 200) << scaled.body;
  EXPECT_EQ(Body(scaled)["kind"], "Scale");
  EXPECT_EQ(Body(scaled)["spec"]["replicas"], 4);
  EXPECT_EQ(Body(Call("GET", std::string(kCloneSets) + "/vt"))["spec"]["replicas"], 4);
  ApiResponse negative = Call("PATCH", std::string(kCloneSets) + "/vt/scale", R"({"spec":{"replicas":-1}})",
                              "application/merge-patch+json");
  EXPECT_EQ(negative.status, 422);
  // Status subresource ignores spec; main resource ignores status.
  ApiResponse st = Call("PATCH", std::string(kCloneSets) + "/vt/status",
                        R"({"spec":{"replicas":9},"status":{"replicas":4,"labelSelector":"app=vt"}})",
                        "application/merge-patch+json");
  ASSERT_EQ(st.status, 200) << st.body;
  EXPECT_EQ(Body(st)["spec"]["replicas"], 4);
  EXPECT_EQ(Body(Call("GET", std::string(kCloneSets) + "/vt/scale"))["status"]["selector"], "app=vt");
  // Strategic merge patch on a CR: 415.
  ApiResponse smp = Call("PATCH", std::string(kCloneSets) + "/vt", R"({"spec":{"replicas":5}})",
                         "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.status, 415);
  // Table with CRD printer columns.
  ApiResponse table = Call("GET", kCloneSets, "", "", {}, "application/json;as=Table;v=v1;g=meta.k8s.io");
  json t = Body(table);
  EXPECT_EQ(t["kind"], "Table");
  EXPECT_EQ(t["rows"][0]["cells"], json::parse(R"(["vt",4,"0s"])"));
  // Dry run creates nothing.
  ApiResponse dry = Call("POST", kCloneSets, R"({"metadata":{"name":"dry"}})", "application/json", {{"dryRun", "All"}});
  EXPECT_EQ(dry.status, 201);
  EXPECT_EQ(Call("GET", std::string(kCloneSets) + "/dry").status, 404);
  // Deleting the CRD unregisters the kind.
  ASSERT_EQ(Call("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io").status, 200);
  EXPECT_EQ(Call("GET", kCloneSets).status, 404);
}

TEST_F(ApiServerTest, ListPagingAndWatchStream) {
  for (const char* n : {"a", "b", "c"})
    ASSERT_EQ(Call("POST", "/api/v1/namespaces/default/configmaps", json{{"metadata", {{"name", n}}}}.dump()).status, 201);
  json page = Body(Call("GET", "/api/v1/namespaces/default/configmaps", "", "", {{"limit", "2"}}));
  EXPECT_EQ(page["kind"], "ConfigMapList");
  EXPECT_EQ(page["items"].size(), 2u);
  EXPECT_EQ(page["metadata"]["remainingItemCount"], 1);
  json rest = Body(Call("GET", "/api/v1/namespaces/default/configmaps", "", "",
                        {{"limit", "2"}, {"continue", page["metadata"]["continue"]}}));
  EXPECT_EQ(rest["items"].size(), 1u);
  EXPECT_EQ(rest["items"][0]["metadata"]["name"], "c");
  std::string rv = page["metadata"]["resourceVersion"];
  ApiResponse w = Call("GET", "/api/v1/namespaces/default/configmaps", "", "",
                       {{"watch", "true"}, {"resourceVersion", rv}, {"fieldSelector", "metadata.name=b"}});
  ASSERT_TRUE(w.watch);
  ASSERT_EQ(Call("PATCH", "/api/v1/namespaces/default/configmaps/b", R"({"data":{"x":"y"}})",
                 "application/strategic-merge-patch+json").status, 200);
  std::string chunk;
  ASSERT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(100)), ApiServer::StreamStep::kData);
  json ev = json::parse(chunk);
  EXPECT_EQ(ev["type"], "MODIFIED");
  EXPECT_EQ(ev["object"]["data"]["x"], "y");
  EXPECT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(10)), ApiServer::StreamStep::kIdle);
}

TEST_F(ApiServerTest, PodBindingAndDeleteOptions) {
  ASSERT_EQ(Call("POST", "/api/v1/namespaces/default/pods",
                 R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x:1","ports":[{"containerPort":80}]}]}})")
                .status,
            201);
  json pod = Body(Call("GET", "/api/v1/namespaces/default/pods/p"));
  EXPECT_EQ(pod["spec"]["containers"][0]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  ASSERT_EQ(Call("POST", "/api/v1/namespaces/default/pods/p/binding", R"({"target":{"name":"n1"}})").status, 201);
  json bound = Body(Call("GET", "/api/v1/namespaces/default/pods/p"));
  EXPECT_EQ(bound["spec"]["nodeName"], "n1");
  EXPECT_EQ(bound["metadata"]["generation"], 1);  // binding never bumps generation
  EXPECT_EQ(Call("POST", "/api/v1/namespaces/default/pods/p/binding", R"({"target":{"name":"n2"}})").status, 409);
  ApiResponse del = Call("DELETE", "/api/v1/namespaces/default/pods/p", R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(del.status, 200);
  EXPECT_EQ(Body(del)["metadata"]["deletionGracePeriodSeconds"], 30);
  ApiResponse force = Call("DELETE", "/api/v1/namespaces/default/pods/p", R"({"gracePeriodSeconds":0})");
  ASSERT_EQ(force.status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods/p").status, 404);
}

// The kinds the Helm chart installs are stored and served (no controllers act on them).
TEST_F(ApiServerTest, ChartKindsAreServed) {
  struct Served {
    std::string group_version, resource, kind;
    bool namespaced;
    std::vector<std::string> subresources;
  };
  const std::vector<Served> served = {
      {"apps/v1", "deployments", "Deployment", true, {"deployments/status", "deployments/scale"}},
      {"apps/v1", "daemonsets", "DaemonSet", true, {"daemonsets/status"}},
      {"v1", "serviceaccounts", "ServiceAccount", true, {}},
      {"rbac.authorization.k8s.io/v1", "roles", "Role", true, {}},
      {"rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding", true, {}},
      {"rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", false, {}},
      {"rbac.authorization.k8s.io/v1", "clusterrolebindings", "ClusterRoleBinding", false, {}},
      {"policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", true, {"poddisruptionbudgets/status"}},
      {"networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", true, {}},
      {"autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true,
       {"horizontalpodautoscalers/status"}},
  };
  for (const auto& s : served) {
    const std::string base = s.group_version == "v1" ? "/api/v1" : "/apis/" + s.group_version;
    ApiResponse disc = Call("GET", base);
    ASSERT_EQ(disc.status, 200) << base;
    std::set<std::string> names;
    const json list = Body(disc);
    for (const auto& r : list["resources"]) {
      names.insert(r["name"].get<std::string>());
      if (r["name"] == s.resource) {
        EXPECT_EQ(r["kind"], s.kind);
        EXPECT_EQ(r["namespaced"], s.namespaced) << s.resource;
      }
    }
    EXPECT_TRUE(names.count(s.resource)) << base << " lacks " << s.resource;
    for (const auto& sub : s.subresources) EXPECT_TRUE(names.count(sub)) << base << " lacks " << sub;
    std::string gv_path = s.group_version == "v1" ? "api/v1" : "apis/" + s.group_version;
    ApiResponse openapi = Call("GET", "/openapi/v3/" + gv_path);
    ASSERT_EQ(openapi.status, 200) << gv_path;
    EXPECT_NE(openapi.body.find("\"kind\":\"" + s.kind + "\""), std::string::npos) << gv_path;
    // Create and read back through the collection path.
    std::string collection = base + (s.namespaced ? "/namespaces/default/" : "/") + s.resource;
    ApiResponse created = Call("POST", collection, R"({"metadata":{"name":"x"}})");
    ASSERT_EQ(created.status, 201) << collection << ": " << created.body;
    EXPECT_EQ(Body(created)["apiVersion"], s.group_version);
    EXPECT_EQ(Body(created)["kind"], s.kind);
    EXPECT_EQ(Call("GET", collection + "/x").status, 200) << collection;
  }
  // kubectl apply's strategic merge patch on a Deployment's pod template, and scale.
  const std::string deploy = "/apis/apps/v1/namespaces/default/deployments";
  ASSERT_EQ(Call("POST", deploy, R"({"metadata":{"name":"planner"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"p"}},
      "template":{"metadata":{"labels":{"app":"p"}},"spec":{"containers":[{"name":"planner","image":"p:1"},{"name":"side","image":"s:1"}]}}}})")
                .status,
            201);
  ApiResponse patched = Call("PATCH", deploy + "/planner",
                             R"({"spec":{"template":{"spec":{"containers":[{"name":"planner","image":"p:2"}]}}}})",
                             "application/strategic-merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  json d = Body(patched);
  EXPECT_EQ(d["spec"]["template"]["spec"]["containers"],
            json::parse(R"([{"name":"planner","image":"p:2"},{"name":"side","image":"s:1"}])"));
  EXPECT_EQ(d["metadata"]["generation"], 2);
  ApiResponse scaled = Call("PATCH", deploy + "/planner/scale", R"({"spec":{"replicas":3}})",
                            "application/merge-patch+json");
  ASSERT_EQ(scaled.status, 200) << scaled.body;
  EXPECT_EQ(Body(scaled)["spec"]["replicas"], 3);
  ApiResponse table = Call("GET", deploy, "", "", {}, "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(table.status, 200);
  json rows = Body(table)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["cells"][0], "planner");
  EXPECT_EQ(rows[0]["cells"][1], "0/3");  // no controller: nothing becomes ready
  EXPECT_EQ(rows[1]["cells"][1], "0/1");  // "x" defaulted to 1 replica
}

TEST(DiscoveryTest, OpenApiV2MatchesKubectlReferenceBytes) {
  ResourceType cm;
  cm.version = "v1";
  cm.resource = "configmaps";
  cm.kind = "ConfigMap";
  // The 205-byte single-entry document that kubectl 1.27-1.33 accepted.
  const std::string want =
      "0a03322e3012150a0a4b756265726e65746573120776312e33322e3042ae0112ab010a302f6170692f76312f6e616d65737061636573"
      "2f7b6e616d6573706163657d2f636f6e6669676d6170732f7b6e616d657d1277427542260a2412221a2012057175657279220f666965"
      "6c6456616c69646174696f6e3206737472696e676a4b0a1f782d6b756265726e657465732d67726f75702d76657273696f6e2d6b696e"
      "641228122667726f75703a2022220a6b696e643a20436f6e6669674d61700a76657273696f6e3a2076310a";
  EXPECT_EQ(absl::BytesToHexString(OpenApiV2Protobuf({cm}, "v1.32.0")), want);
}

TEST(DiscoveryTest, OpenApiV3DeclaresFieldValidation) {
  ResourceType cm;
  cm.version = "v1";
  cm.resource = "configmaps";
  cm.kind = "ConfigMap";
  json root = OpenApiV3Root({cm}, "7");
  EXPECT_EQ(root["paths"]["api/v1"]["serverRelativeURL"], "/openapi/v3/api/v1?hash=7");
  auto doc = OpenApiV3Document({cm}, "api/v1");
  ASSERT_TRUE(doc.has_value());
  const json& patch = (*doc)["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "ConfigMap");
  EXPECT_EQ(patch["parameters"][0]["name"], "fieldValidation");
  EXPECT_FALSE(OpenApiV3Document({cm}, "apis/x/v1").has_value());
}

}  // namespace
}  // namespace cloneset::devcluster
