// The embedded cluster answers as a real kube-apiserver where clients can tell the difference: boolean query
// parameters, size limits, CRD schema admission, Secrets' stringData, PVC protection, events.k8s.io, version,
// OpenAPI schemas for kubectl explain, and SelfSubjectAccessReview.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/testing/fake_clock.h"
#include "devcluster/api_server.h"
#include "devcluster/codec.h"
#include "devcluster/object_meta.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

class FidelityTest : public ::testing::Test {
 protected:
  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body = "",
                   std::map<std::string, std::string> query = {},
                   const std::string& content_type = "application/json") {
    ApiRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.query = std::move(query);
    r.headers["content-type"] = content_type;
    r.headers["accept"] = "application/json";
    return api_.Handle(r);
  }
  static json Body(const ApiResponse& r) { return json::parse(r.body); }
  void InstallChartCrd() {
    std::ifstream in(CLONESET_CHART_CRD);
    std::stringstream text;
    text << in.rdbuf();
    ApiResponse r = Call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", text.str(), {},
                         "application/yaml");
    ASSERT_EQ(r.status, 201) << r.body;
  }
  static json CloneSet(const std::string& name) {
    return json::parse(R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":")" + name +
                       R"("},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"x"}},
      "template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}}})");
  }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  ApiServer api_{&store_, ApiServerOptions{.token = "", .server_address = "127.0.0.1:1"}};
};

const char kCloneSets[] = "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets";
const char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

TEST_F(FidelityTest, BooleanQueryParametersReadAsTheApiServerReadsThem) {
  struct Case {
    std::optional<std::string> value;
    bool want;
  };
  const std::vector<Case> cases = {{std::nullopt, false}, {"true", true}, {"True", true}, {"TRUE", true},
                                   {"1", true},           {"t", true},    {"false", false}, {"False", false},
                                   {"0", false}};
  for (const auto& c : cases) {
    ApiRequest r;
    if (c.value) r.query["watch"] = *c.value;
    EXPECT_EQ(QueryBool(r, "watch"), c.want) << c.value.value_or("(absent)");
  }
  // The Python client's spelling starts a watch stream, with bookmarks.
  ApiResponse w = Call("GET", kConfigMaps, "", {{"watch", "True"}, {"allowWatchBookmarks", "True"}});
  ASSERT_EQ(w.status, 200);
  ASSERT_TRUE(w.watch) << w.body;
  EXPECT_EQ(w.verb, "watch");
  ASSERT_EQ(Call("POST", kConfigMaps, R"({"metadata":{"name":"a"}})").status, 201);
  std::string chunk;
  ASSERT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(1000)), ApiServer::StreamStep::kData);
  EXPECT_EQ(json::parse(chunk)["type"], "ADDED");
  // Nothing more: the watcher offers a bookmark (allowWatchBookmarks=True was understood).
  ASSERT_EQ(api_.PollWatchChunk(*w.watch, &chunk, true), ApiServer::StreamStep::kData);
  EXPECT_EQ(json::parse(chunk)["type"], "BOOKMARK");
}

TEST_F(FidelityTest, SizeLimits) {
  // Annotations: 256 KiB in total (messages as kube-apiserver 1.34 answers them).
  json cm = {{"metadata", {{"name", "big"}, {"annotations", {{"a", std::string(2 * 1024 * 1024, 'x')}}}}}};
  ApiResponse r = Call("POST", kConfigMaps, cm.dump());
  EXPECT_EQ(r.status, 422) << r.body.substr(0, 300);
  EXPECT_EQ(Body(r)["message"],
            "ConfigMap \"big\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes");
  EXPECT_EQ(Body(r)["details"]["causes"][0]["reason"], "FieldValueTooLong");
  cm["metadata"]["annotations"]["a"] = std::string(256 * 1024 - 1, 'x');
  EXPECT_EQ(Call("POST", kConfigMaps, cm.dump()).status, 201);
  // ConfigMap and Secret data: 1 MiB.
  json data = {{"metadata", {{"name", "data"}}}, {"data", {{"a", std::string(1100 * 1024, 'x')}}}};
  r = Call("POST", kConfigMaps, data.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Body(r)["message"], "ConfigMap \"data\" is invalid: []: Too long: may not be more than 1048576 bytes");
  json secret = {{"metadata", {{"name", "s"}}}, {"data", {{"a", std::string(1500 * 1024, 'A')}}}};  // 1.1 MiB decoded
  r = Call("POST", "/api/v1/namespaces/default/secrets", secret.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Body(r)["message"], "Secret \"s\" is invalid: data: Too long: may not be more than 1048576 bytes");
  // Bodies over 3 MiB.
  json huge = {{"metadata", {{"name", "huge"}}}, {"data", {{"a", std::string(3 * 1024 * 1024, 'x')}}}};
  r = Call("POST", kConfigMaps, huge.dump());
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(Body(r)["message"], "Request entity too large: limit is 3145728");
  // Objects over etcd's 1.5 MiB request limit (a kind without a data limit), and over the etcd client's 2 MiB:
  // refused with etcd's words, nothing stored.
  InstallChartCrd();
  json cs = CloneSet("large");
  cs["spec"]["template"]["spec"]["containers"][0]["env"] = {{{"name", "A"}, {"value", std::string(1700 * 1024, 'x')}}};
  r = Call("POST", kCloneSets, cs.dump());
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(Body(r)["message"], "etcdserver: request is too large");
  EXPECT_EQ(Call("GET", std::string(kCloneSets) + "/large").status, 404);
  cs["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = std::string(2100 * 1024, 'x');
  r = Call("POST", kCloneSets, cs.dump());
  EXPECT_EQ(r.status, 500);
  EXPECT_TRUE(absl::StartsWith(Body(r)["message"].get<std::string>(),
                               "rpc error: code = ResourceExhausted desc = trying to send message larger than max ("))
      << r.body;
  const int64_t rv = store_.CurrentResourceVersion();
  ASSERT_EQ(Call("POST", kConfigMaps, R"({"metadata":{"name":"after"}})").status, 201);
  EXPECT_EQ(store_.CurrentResourceVersion(), rv + 1);  // the refused writes used no resourceVersion
}

TEST_F(FidelityTest, CloneSetSchemaIsEnforcedAtAdmission) {
  InstallChartCrd();
  json bad = CloneSet("x");
  bad["spec"]["replicas"] = -1;
  ApiResponse r = Call("POST", kCloneSets, bad.dump());
  ASSERT_EQ(r.status, 422) << r.body;
  json b = Body(r);
  EXPECT_EQ(b["reason"], "Invalid");
  // As kube-apiserver 1.34 answers: the schema's minimum, then the scale subresource's own check of its path.
  EXPECT_EQ(b["message"], "CloneSet.apps.kruise.io \"x\" is invalid: [spec.replicas: Invalid value: -1: "
                          "spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: "
                          "-1: should be a non-negative integer]");
  EXPECT_EQ(b["details"]["causes"][0]["field"], "spec.replicas");
  EXPECT_EQ(b["details"]["causes"][1]["field"], ".spec.replicas");
  EXPECT_EQ(b["details"]["kind"], "CloneSet");
  // Two errors at once are both reported.
  bad = CloneSet("y");
  bad["spec"]["updateStrategy"] = {{"type", "Rolling"}, {"partition", "abc"}};
  r = Call("POST", kCloneSets, bad.dump());
  ASSERT_EQ(r.status, 422) << r.body;
  std::set<std::string> fields;
  const json invalid = Body(r);
  for (const auto& c : invalid["details"]["causes"]) fields.insert(c["field"].get<std::string>());
  // The unsupported type blocks the CEL rules, which kube-apiserver notes as a third cause.
  EXPECT_EQ(fields, (std::set<std::string>{"spec.updateStrategy.type", "spec.updateStrategy.partition", "<nil>"}))
      << r.body;
  EXPECT_EQ(Call("GET", std::string(kCloneSets) + "/y").status, 404);
  // Unknown fields: Strict refuses, the default (Warn) prunes and warns.
  json typo = CloneSet("z");
  typo["spec"]["replicaz"] = 3;
  r = Call("POST", kCloneSets, typo.dump(), {{"fieldValidation", "Strict"}});
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Body(r)["message"], "CloneSet in version \"v1alpha1\" cannot be handled as a CloneSet: strict decoding "
                                "error: unknown field \"spec.replicaz\"");
  r = Call("POST", kCloneSets, typo.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.warnings, std::vector<std::string>{"unknown field \"spec.replicaz\""});
  json stored = Body(r);
  EXPECT_FALSE(stored["spec"].contains("replicaz"));
  EXPECT_EQ(stored["spec"]["updateStrategy"]["maxUnavailable"], "20%");  // schema default
  EXPECT_EQ(stored["spec"]["revisionHistoryLimit"], 10);
  // Updates are validated too, including the transition rule on the selector and via the scale subresource.
  r = Call("PATCH", std::string(kCloneSets) + "/z", R"({"spec":{"selector":{"matchLabels":{"app":"x","b":"c"}}}})",
           {}, "application/merge-patch+json");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("selector is immutable"), std::string::npos) << r.body;
  r = Call("PATCH", std::string(kCloneSets) + "/z/scale", R"({"spec":{"replicas":-3}})", {},
           "application/merge-patch+json");
  EXPECT_EQ(r.status, 422) << r.body;
  // Status writes are pruned to the schema.
  r = Call("PUT", std::string(kCloneSets) + "/z/status",
           json{{"metadata", {{"name", "z"}}}, {"status", {{"replicas", 2}, {"made_up", 1}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["status"], json({{"replicas", 2}}));
}

TEST_F(FidelityTest, SecretStringDataIsMergedIntoData) {
  ApiResponse r = Call("POST", "/api/v1/namespaces/default/secrets",
                       R"({"metadata":{"name":"s"},"data":{"a":"eA==","b":"eA=="},"stringData":{"b":"hello","c":"c"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  json s = Body(r);
  EXPECT_FALSE(s.contains("stringData"));
  EXPECT_EQ(s["data"], json({{"a", "eA=="}, {"b", "aGVsbG8="}, {"c", "Yw=="}}));
  r = Call("PATCH", "/api/v1/namespaces/default/secrets/s", R"({"stringData":{"a":"new"}})", {},
           "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["data"]["a"], "bmV3");
  EXPECT_FALSE(Body(r).contains("stringData"));
  r = Call("POST", "/api/v1/namespaces/default/secrets", R"({"metadata":{"name":"t"},"stringData":{"n":1}})");
  EXPECT_EQ(r.status, 422) << r.body;
}

TEST_F(FidelityTest, PvcInUseIsProtectedUntilItsPodIsGone) {
  const std::string pvcs = "/api/v1/namespaces/default/persistentvolumeclaims";
  const std::string pods = "/api/v1/namespaces/default/pods";
  auto pod = [](const std::string& name, const std::string& claim, const std::string& node) {
    json p = {{"metadata", {{"name", name}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}},
                        {"volumes", {{{"name", "v"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}}}};
    if (!node.empty()) p["spec"]["nodeName"] = node;
    p["spec"]["terminationGracePeriodSeconds"] = 0;
    return p.dump();
  };
  ApiResponse r = Call("POST", pvcs, R"({"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"]}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["finalizers"], json::array({"kubernetes.io/pvc-protection"}));
  // A scheduled pod holds its claim, whatever its phase.
  ASSERT_EQ(Call("POST", pods, pod("p", "data", "node-1")).status, 201);
  ASSERT_EQ(Call("PATCH", pods + "/p/status", R"({"status":{"phase":"Succeeded"}})", {},
                 "application/merge-patch+json").status, 200);
  r = Call("DELETE", pvcs + "/data");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp"));
  ASSERT_EQ(Call("GET", pvcs + "/data").status, 200);  // kept while the pod exists
  ASSERT_EQ(Call("DELETE", pods + "/p").status, 200);
  EXPECT_EQ(Call("GET", pvcs + "/data").status, 404);
  // An unused claim goes at once, and so does one whose pods are not scheduled (the kubelet would not start them).
  ASSERT_EQ(Call("POST", pvcs, R"({"metadata":{"name":"free"}})").status, 201);
  EXPECT_EQ(Call("DELETE", pvcs + "/free").status, 200);
  EXPECT_EQ(Call("GET", pvcs + "/free").status, 404);
  ASSERT_EQ(Call("POST", pvcs, R"({"metadata":{"name":"pending"}})").status, 201);
  ASSERT_EQ(Call("POST", pods, pod("unscheduled", "pending", "")).status, 201);
  EXPECT_EQ(Call("DELETE", pvcs + "/pending").status, 200);
  EXPECT_EQ(Call("GET", pvcs + "/pending").status, 404);
}

TEST_F(FidelityTest, EventsK8sIoSharesTheCoreEvents) {
  const std::string v1 = "/apis/events.k8s.io/v1/namespaces/default/events";
  const std::string core = "/api/v1/namespaces/default/events";
  ApiResponse r = Call("POST", v1, R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},
      "eventTime":"2026-01-01T00:00:00.000000Z","regarding":{"kind":"Pod","name":"p","namespace":"default"},
      "reason":"Tested","note":"hello","type":"Normal","action":"Test","reportingController":"t",
      "reportingInstance":"t-1","deprecatedCount":2})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(Body(r)["note"], "hello");
  json as_core = Body(Call("GET", core + "/e1"));
  EXPECT_EQ(as_core["message"], "hello");
  EXPECT_EQ(as_core["involvedObject"]["name"], "p");
  EXPECT_EQ(as_core["reportingComponent"], "t");
  EXPECT_EQ(as_core["count"], 2);
  ASSERT_EQ(Call("POST", core, R"({"metadata":{"name":"e2"},"involvedObject":{"kind":"Pod","name":"q"},
      "message":"from core","reason":"Tested"})").status, 201);
  json list = Body(Call("GET", "/apis/events.k8s.io/v1/events"));
  EXPECT_EQ(list["kind"], "EventList");
  EXPECT_EQ(list["apiVersion"], "events.k8s.io/v1");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][1]["note"], "from core");
  EXPECT_EQ(list["items"][1]["regarding"]["name"], "q");
  // Field selectors use the group's names.
  json selected = Body(Call("GET", v1, "", {{"fieldSelector", "regarding.name=q,reason=Tested"}}));
  ASSERT_EQ(selected["items"].size(), 1u) << selected.dump();
  EXPECT_EQ(selected["items"][0]["metadata"]["name"], "e2");
  // Patches are written against the events.k8s.io shape.
  r = Call("PATCH", v1 + "/e2", R"([{"op":"replace","path":"/note","value":"patched"}])", {},
           "application/json-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(Call("GET", core + "/e2"))["message"], "patched");
  // Watches speak the group's shape too.
  ApiResponse w = Call("GET", v1, "", {{"watch", "true"}});
  ASSERT_TRUE(w.watch) << w.body;
  std::string chunk;
  ASSERT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(1000)), ApiServer::StreamStep::kData);
  EXPECT_TRUE(json::parse(chunk)["object"].contains("note")) << chunk;
  // Discovery lists the group.
  EXPECT_NE(Call("GET", "/apis").body.find("\"events.k8s.io/v1\""), std::string::npos);
  json resources = Body(Call("GET", "/apis/events.k8s.io/v1"));
  EXPECT_EQ(resources["resources"][0]["name"], "events");
  EXPECT_EQ(Call("GET", "/apis/events.k8s.io/v1/namespaces/default/pods").status, 404);
}

TEST_F(FidelityTest, SelfSubjectAccessReviewIsAllowed) {
  ApiResponse r = Call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                       R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
                           "spec":{"resourceAttributes":{"verb":"create","resource":"pods","namespace":"default"}}})");
  ASSERT_EQ(r.status, 201) << r.body;
  json b = Body(r);
  EXPECT_TRUE(b["status"]["allowed"]);
  EXPECT_EQ(b["spec"]["resourceAttributes"]["verb"], "create");
  json list = Body(Call("GET", "/apis/authorization.k8s.io/v1"));
  EXPECT_EQ(list["resources"][0]["verbs"], json::array({"create"}));
  EXPECT_EQ(Call("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").status, 405);
}

TEST_F(FidelityTest, OpenApiV3CarriesTheCrdSchemaForExplain) {
  InstallChartCrd();
  json doc = Body(Call("GET", "/openapi/v3/apis/apps.kruise.io/v1alpha1"));
  const json& schema = doc["components"]["schemas"]["io.kruise.apps.v1alpha1.CloneSet"];
  EXPECT_EQ(schema["x-kubernetes-group-version-kind"][0]["kind"], "CloneSet");
  EXPECT_EQ(schema["properties"]["spec"]["properties"]["replicas"]["description"], "desired number of pods (default 1)");
}

TEST_F(FidelityTest, CrdRuleOutsideTheCelSubsetIsNamedInAWarning) {
  json crd = json::parse(R"J({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
    "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
      "properties":{"spec":{"type":"object","properties":{"size":{"type":"string"}},
        "x-kubernetes-validations":[{"rule":"quantity(self.size).isGreaterThan(quantity('1Gi'))"},
                                    {"rule":"self.size != 'bad'","message":"bad size"}]}}}}}]}})J");
  ApiResponse r = Call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("quantity(self.size)"), std::string::npos) << r.warnings[0];
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  // The supported rule is enforced; the other one is not (and was said so).
  r = Call("POST", widgets, R"({"metadata":{"name":"w"},"spec":{"size":"bad"}})");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("bad size"), std::string::npos);
  EXPECT_EQ(Call("POST", widgets, R"({"metadata":{"name":"w"},"spec":{"size":"1Mi"}})").status, 201);
}

TEST_F(FidelityTest, RemainingItemCountOnlyWithoutSelectors) {
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(Call("POST", kConfigMaps, json{{"metadata", {{"name", absl::StrCat("c", i)}, {"labels", {{"a", "b"}}}}}}.dump())
                  .status,
              201);
  json plain = Body(Call("GET", kConfigMaps, "", {{"limit", "1"}}));
  EXPECT_EQ(plain["metadata"]["remainingItemCount"], 3);
  json selected = Body(Call("GET", kConfigMaps, "", {{"limit", "1"}, {"labelSelector", "a=b"}}));
  EXPECT_TRUE(selected["metadata"].contains("continue"));
  EXPECT_FALSE(selected["metadata"].contains("remainingItemCount")) << selected["metadata"].dump();
}

TEST(PodUsesClaimTest, AsThePvcProtectionControllerDecides) {
  struct Case {
    std::string name;
    json pod;
    bool want;
  };
  const json claim_vol = {{{"name", "v"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}};
  const json eph_vol = {{{"name", "scratch"}, {"ephemeral", {{"volumeClaimTemplate", json::object()}}}}};
  const std::vector<Case> cases = {
      {"scheduled", {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n"}, {"volumes", claim_vol}}}}, true},
      {"unscheduled", {{"metadata", {{"name", "p"}}}, {"spec", {{"volumes", claim_vol}}}}, false},
      {"succeeded", {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n"}, {"volumes", claim_vol}}},
                     {"status", {{"phase", "Succeeded"}}}}, true},
      {"other claim", {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n"}, {"volumes", eph_vol}}}}, false},
      {"ephemeral", {{"metadata", {{"name", "data"}}}, {"spec", {{"nodeName", "n"}, {"volumes", eph_vol}}}}, false},
  };
  for (const auto& c : cases) EXPECT_EQ(PodUsesClaim(c.pod, "data"), c.want) << c.name;
  json eph = {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n"}, {"volumes", eph_vol}}}};
  EXPECT_TRUE(PodUsesClaim(eph, "p-scratch"));
  eph["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  eph["metadata"]["deletionGracePeriodSeconds"] = 0;
  EXPECT_FALSE(PodUsesClaim(eph, "p-scratch"));  // shut down: no longer holds its ephemeral claim
}

// Pod updates: kube-apiserver 1.34 accepts a spec change only in the images, activeDeadlineSeconds (lowered),
// tolerations (added) and schedulingGates (removed); everything else is 422 naming the field. Before, the embedded
// cluster stored any spec change (an executor bug a real API server would refuse could not show here).
TEST_F(FidelityTest, PodUpdatesChangeOnlyTheMutableSpecFields) {
  const std::string pods = "/api/v1/namespaces/default/pods";
  struct Case {
    std::string name, type, patch;
    int want_status;
    std::string want_field, want_message;  // of the 422's first cause
  };
  const std::string smp = "application/strategic-merge-patch+json", mp = "application/merge-patch+json",
                    jp = "application/json-patch+json";
  const std::vector<Case> cases = {
      {"labels and annotations", mp, R"({"metadata":{"labels":{"t":"x"},"annotations":{"a":"b"}}})", 200, "", ""},
      {"image (strategic merge)", smp, R"({"spec":{"containers":[{"name":"main","image":"nginx:2"}]}})", 200, "", ""},
      {"init container image", jp, R"([{"op":"replace","path":"/spec/initContainers/0/image","value":"busybox:2"}])",
       200, "", ""},
      {"activeDeadlineSeconds lowered", mp, R"({"spec":{"activeDeadlineSeconds":100}})", 200, "", ""},
      {"activeDeadlineSeconds raised", mp, R"({"spec":{"activeDeadlineSeconds":7200}})", 422,
       "spec.activeDeadlineSeconds", "must be less than or equal to previous value"},
      {"activeDeadlineSeconds removed", mp, R"({"spec":{"activeDeadlineSeconds":null}})", 422,
       "spec.activeDeadlineSeconds", "must not update from a positive integer to nil value"},
      {"toleration added", jp,
       R"([{"op":"add","path":"/spec/tolerations/-","value":{"key":"b","operator":"Exists","effect":"NoExecute"}}])",
       200, "", ""},
      {"tolerationSeconds changed", jp, R"([{"op":"add","path":"/spec/tolerations/1/tolerationSeconds","value":5}])",
       200, "", ""},
      {"toleration removed", jp, R"([{"op":"remove","path":"/spec/tolerations/0"}])", 422, "spec.tolerations",
       "existing toleration can not be modified except its tolerationSeconds"},
      {"env changed", smp, R"({"spec":{"containers":[{"name":"main","env":[{"name":"A","value":"2"}]}]}})", 422,
       "spec", "pod updates may not change fields other than `spec.containers[*].image`"},
      {"restartPolicy", mp, R"({"spec":{"restartPolicy":"Never"}})", 422, "spec", "spec.restartPolicy"},
      {"container renamed", jp, R"([{"op":"replace","path":"/spec/containers/0/name","value":"other"}])", 422,
       "spec", "spec.containers[0].name"},
      {"container added", jp, R"([{"op":"add","path":"/spec/containers/-","value":{"name":"b","image":"b:1"}}])",
       422, "spec.containers", "pod updates may not add or remove containers"},
      {"empty image", jp, R"([{"op":"replace","path":"/spec/containers/0/image","value":""}])", 422,
       "spec.containers[0].image", "Required value"},
      {"nodeName moved", mp, R"({"spec":{"nodeName":"node-2"}})", 422, "spec", "spec.nodeName"},
      {"resources", smp,
       R"({"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"2"}}}]}})", 422, "spec",
       "spec.containers[0].resources"},
  };
  for (const auto& c : cases) {
    Call("DELETE", pods + "/p", "", {{"gracePeriodSeconds", "0"}});
    ApiResponse r = Call("POST", pods, R"({"metadata":{"name":"p"},"spec":{"nodeName":"node-1",
      "activeDeadlineSeconds":3600,"tolerations":[{"key":"a","operator":"Exists","effect":"NoSchedule"},
        {"key":"t","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
      "initContainers":[{"name":"init","image":"busybox:1"}],
      "containers":[{"name":"main","image":"nginx:1","env":[{"name":"A","value":"1"}]}]}})");
    ASSERT_EQ(r.status, 201) << r.body;
    r = Call("PATCH", pods + "/p", c.patch, {}, c.type);
    EXPECT_EQ(r.status, c.want_status) << c.name << ": " << r.body;
    if (c.want_status != 422 || r.status != 422) continue;
    json b = Body(r);
    EXPECT_EQ(b["reason"], "Invalid") << c.name;
    EXPECT_TRUE(absl::StartsWith(b.value("message", ""), "Pod \"p\" is invalid: ")) << c.name << ": " << r.body;
    ASSERT_TRUE(b["details"]["causes"].is_array()) << c.name << ": " << r.body;
    EXPECT_EQ(b["details"]["causes"][0]["field"], c.want_field) << c.name << ": " << r.body;
    EXPECT_TRUE(absl::StrContains(b["details"]["causes"][0].value("message", ""), c.want_message))
        << c.name << ": " << r.body;
  }
  // A status write and an unbound pod's binding are not spec updates by the user.
  Call("DELETE", pods + "/q", "", {{"gracePeriodSeconds", "0"}});
  ASSERT_EQ(Call("POST", pods, R"({"metadata":{"name":"q"},"spec":{"containers":[{"name":"c","image":"i"}]}})").status,
            201);
  EXPECT_EQ(Call("POST", pods + "/q/binding", R"({"target":{"name":"node-1"}})").status, 201);
  EXPECT_EQ(Call("PATCH", pods + "/q/status", R"({"status":{"phase":"Running"}})", {}, mp).status, 200);
}

// The streaming list (sendInitialEvents, as client-go's WatchList and the Python client send it): the current
// objects as ADDED, then a BOOKMARK annotated k8s.io/initial-events-end, then changes; the options' rules as
// kube-apiserver 1.34 answers them. Before, sendInitialEvents was ignored (no end bookmark, a list stayed a list).
TEST_F(FidelityTest, SendInitialEventsEndsWithAnAnnotatedBookmark) {
  ASSERT_EQ(Call("POST", kConfigMaps, R"({"metadata":{"name":"a"}})").status, 201);
  ASSERT_EQ(Call("POST", kConfigMaps, R"({"metadata":{"name":"b"}})").status, 201);
  auto next = [&](ApiResponse& w) {
    std::string chunk;
    EXPECT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(1000)), ApiServer::StreamStep::kData);
    return chunk.empty() ? json() : json::parse(chunk);
  };
  for (bool bookmarks : {true, false}) {
    std::map<std::string, std::string> q = {{"watch", "1"}, {"sendInitialEvents", "true"},
                                            {"resourceVersionMatch", "NotOlderThan"}, {"resourceVersion", "1"}};
    if (bookmarks) q["allowWatchBookmarks"] = "true";
    ApiResponse w = Call("GET", kConfigMaps, "", q);
    ASSERT_EQ(w.status, 200) << w.body;
    ASSERT_TRUE(w.watch);
    std::vector<std::string> initial = {"a", "b"};
    if (!bookmarks) initial.push_back("c1");  // created by the first round
    for (const auto& name : initial) EXPECT_EQ(next(w)["object"]["metadata"]["name"], name);
    if (bookmarks) {
      json end = next(w);
      EXPECT_EQ(end["type"], "BOOKMARK") << end;
      EXPECT_EQ(end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true") << end;
      EXPECT_EQ(end["object"]["metadata"]["resourceVersion"], std::to_string(store_.CurrentResourceVersion()));
    }
    ASSERT_EQ(Call("POST", kConfigMaps, absl::StrCat(R"({"metadata":{"name":"c)", bookmarks, R"("}})")).status, 201);
    json added = next(w);
    EXPECT_EQ(added["type"], "ADDED") << added;
    EXPECT_EQ(added["object"]["metadata"]["name"], absl::StrCat("c", bookmarks));
  }
  struct Bad {
    std::map<std::string, std::string> query;
    std::string field;
  };
  const std::vector<Bad> bad = {
      {{{"sendInitialEvents", "true"}}, "sendInitialEvents"},
      {{{"watch", "1"}, {"sendInitialEvents", "true"}, {"allowWatchBookmarks", "true"}}, "resourceVersionMatch"},
      {{{"watch", "1"}, {"resourceVersionMatch", "NotOlderThan"}}, "resourceVersionMatch"},
      {{{"watch", "1"}, {"sendInitialEvents", "true"}, {"resourceVersionMatch", "Exact"}}, "resourceVersionMatch"},
  };
  for (const auto& b : bad) {
    ApiResponse r = Call("GET", kConfigMaps, "", b.query);
    ASSERT_EQ(r.status, 422) << r.body;
    json body = Body(r);
    EXPECT_EQ(body["reason"], "Invalid");
    EXPECT_TRUE(absl::StartsWith(body.value("message", ""), "ListOptions.meta.k8s.io \"\" is invalid: ")) << r.body;
    EXPECT_EQ(body["details"]["causes"][0]["field"], b.field) << r.body;
  }
}

// The kubelet's final delete (Store::DeleteNow, grace period 0) leaves a pod that still has finalizers, as
// kube-apiserver does; removing the last finalizer then removes it. Before, DeleteNow dropped it at once.
TEST_F(FidelityTest, FinalDeleteKeepsAPodWithFinalizers) {
  const std::string pods = "/api/v1/namespaces/default/pods";
  ASSERT_EQ(Call("POST", pods, R"({"metadata":{"name":"held","finalizers":["test/hold"]},
    "spec":{"nodeName":"node-1","containers":[{"name":"c","image":"i"}]}})").status, 201);
  ASSERT_EQ(Call("DELETE", pods + "/held").status, 200);
  ASSERT_TRUE(store_.DeleteNow(kPods, "default", "held").ok());
  ApiResponse r = Call("GET", pods + "/held");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["deletionGracePeriodSeconds"], 0) << r.body;
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp")) << r.body;
  ASSERT_TRUE(store_.DeleteNow(kPods, "default", "held").ok());  // again: nothing changes
  EXPECT_EQ(Call("GET", pods + "/held").status, 200);
  ASSERT_EQ(Call("PATCH", pods + "/held", R"({"metadata":{"finalizers":null}})", {}, "application/merge-patch+json")
                .status, 200);
  EXPECT_EQ(Call("GET", pods + "/held").status, 404);
}

TEST_F(FidelityTest, VersionWithTrailingSlash) {
  ApiResponse r = Call("GET", "/version/");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["major"], "1");
}

}  // namespace
}  // namespace cloneset::devcluster
