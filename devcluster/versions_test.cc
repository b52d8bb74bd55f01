// A CRD served in two versions, as kube-apiserver serves the chart's CloneSet CRD: stored in v1beta1, every request
// answered in its own version through the same conversion the planner's webhook runs (conversion/cloneset.h),
// admitted against its own version's schema, discovered with v1beta1 preferred.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/testing/fake_clock.h"
#include "conversion/cloneset.h"
#include "devcluster/api_server.h"
#include "devcluster/codec.h"
#include "devcluster/versions.h"
#include "kruise/keys.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kAlpha[] = "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets";
constexpr char kBeta[] = "/apis/apps.kruise.io/v1beta1/namespaces/default/clonesets";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The documents of a multi-document YAML file (split at "---" lines).
std::vector<json> YamlDocuments(const std::string& text) {
  std::vector<json> out;
  std::string doc;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line != "---") {
      doc += line + "\n";
      continue;
    }
    if (absl::StatusOr<json> j = ParseYaml(doc); j.ok()) out.push_back(*std::move(j));
    doc.clear();
  }
  if (absl::StatusOr<json> j = ParseYaml(doc); j.ok()) out.push_back(*std::move(j));
  return out;
}

class VersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiResponse r = Call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                         ReadFile(CLONESET_CHART_CRD), "application/yaml");
    ASSERT_EQ(r.status, 201) << r.body;
  }
  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& content_type = "application/json",
                   std::map<std::string, std::string> query = {}) {
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
  static json Seed000() {
    absl::StatusOr<json> cs = ParseYaml(ReadFile(fs::path(CLONESET_TEST_DATA_DIR) / "seed000/cloneset.yaml"));
    return *cs;
  }
  static json Stripped(json o) {  // what the server sets itself
    for (const char* f : {"uid", "resourceVersion", "creationTimestamp", "generation", "namespace"}) {
      o["metadata"].erase(f);
    }
    return o;
  }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  ApiServer api_{&store_, ApiServerOptions{.token = "", .server_address = "127.0.0.1:1"}};
};

TEST(KubeAwareVersionOrder, GaThenBetaThenAlphaThenOthers) {
  std::vector<std::string> v = {"v1alpha1", "foo", "v1beta1", "v2", "v1", "v10beta3", "v2alpha1", "v1beta2", "bar"};
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return KubeAwareVersionBefore(a, b); });
  EXPECT_EQ(v, (std::vector<std::string>{"v2", "v1", "v10beta3", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "bar",
                                         "foo"}));
}

TEST_F(VersionsTest, TheChartCrdServesBothAndStoresV1beta1WithV1beta1Preferred) {
  std::optional<ResourceType> t = store_.FindType(kCloneSets);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version, "v1beta1");
  ASSERT_EQ(t->served.size(), 2u);
  EXPECT_EQ(t->served[0].name, "v1alpha1");
  EXPECT_EQ(t->conversion_strategy, "Webhook");
  const json groups = Body(Call("GET", "/apis"));
  bool found = false;
  for (const json& g : groups["groups"]) {
    if (g["name"] != "apps.kruise.io") continue;
    found = true;
    EXPECT_EQ(g["preferredVersion"]["version"], "v1beta1");
    EXPECT_EQ(g["versions"][0]["version"], "v1beta1");
    EXPECT_EQ(g["versions"][1]["version"], "v1alpha1");
  }
  EXPECT_TRUE(found);
  for (const char* v : {"v1alpha1", "v1beta1"}) {
    ApiResponse r = Call("GET", std::string("/apis/apps.kruise.io/") + v);
    ASSERT_EQ(r.status, 200) << v;
    EXPECT_EQ(Body(r)["resources"][0]["name"], "clonesets");
  }
}

TEST_F(VersionsTest, WrittenInOneVersionReadInBothStoredInV1beta1) {
  const json alpha = Seed000();
  ApiResponse created = Call("POST", kAlpha, alpha.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const json answered = Body(created);
  EXPECT_EQ(answered["apiVersion"], "apps.kruise.io/v1alpha1");
  EXPECT_EQ(answered["spec"]["updateStrategy"]["type"], "InPlaceIfPossible");
  // Stored in v1beta1: what the webhook would have made of the defaulted v1alpha1 object.
  absl::StatusOr<json> stored = store_.Get(kCloneSets, "default", "video-transcoder");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["apiVersion"], "apps.kruise.io/v1beta1");
  EXPECT_EQ((*stored)["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"], "InPlaceIfPossible");
  EXPECT_EQ((*stored)["spec"]["scaleStrategy"]["enablePVCReuse"], true);
  EXPECT_EQ(Stripped(*stored), Stripped(*conversion::ConvertCloneSet(answered, kruise::kV1beta1)));
  // Read back in each version.
  const json as_alpha = Body(Call("GET", std::string(kAlpha) + "/video-transcoder"));
  EXPECT_EQ(as_alpha, answered);
  const json as_beta = Body(Call("GET", std::string(kBeta) + "/video-transcoder"));
  EXPECT_EQ(as_beta, *stored);
  // Lists and tables too.
  const json list = Body(Call("GET", kAlpha));
  EXPECT_EQ(list["apiVersion"], "apps.kruise.io/v1alpha1");
  EXPECT_EQ(list["items"][0], answered);
  // A merge patch in v1alpha1's shape lands in v1beta1's.
  ApiResponse patched = Call("PATCH", std::string(kAlpha) + "/video-transcoder",
                             R"({"spec":{"updateStrategy":{"partition":2}}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Body(patched)["spec"]["updateStrategy"]["partition"], 2);
  EXPECT_EQ((*store_.Get(kCloneSets, "default", "video-transcoder"))["spec"]["updateStrategy"]["rollingUpdate"]
                                                                     ["partition"],
            2);
  // And one in v1beta1's shape.
  patched = Call("PATCH", std::string(kBeta) + "/video-transcoder",
                 R"({"spec":{"updateStrategy":{"rollingUpdate":{"paused":true}}}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Body(Call("GET", std::string(kAlpha) + "/video-transcoder"))["spec"]["updateStrategy"]["paused"], true);
}

TEST_F(VersionsTest, EachVersionIsAdmittedAgainstItsOwnSchema) {
  json alpha = Seed000();
  alpha["spec"]["updateStrategy"]["type"] = "RollingUpdate";  // a v1beta1 word
  ApiResponse r = Call("POST", kAlpha, alpha.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(Body(r)["message"].get<std::string>().find("spec.updateStrategy.type: Unsupported value: \"RollingUpdate\""),
            std::string::npos)
      << r.body;
  json beta = *conversion::ConvertCloneSet(Seed000(), kruise::kV1beta1);
  beta["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = "Sideways";
  r = Call("POST", kBeta, beta.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(Body(r)["message"].get<std::string>().find(
                "spec.updateStrategy.rollingUpdate.podUpdatePolicy: Unsupported value: \"Sideways\""),
            std::string::npos)
      << r.body;
  // v1beta1's defaults: the update type and no PVC reuse.
  json minimal = Body(Call("POST", kBeta, R"({"metadata":{"name":"tiny"},"spec":{"selector":{"matchLabels":{"a":"b"}},
      "template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})"));
  EXPECT_EQ(minimal["spec"]["updateStrategy"]["type"], "RollingUpdate");
  EXPECT_EQ(minimal["spec"]["scaleStrategy"]["enablePVCReuse"], false);
  EXPECT_EQ(Body(Call("GET", std::string(kAlpha) + "/tiny"))["spec"]["scaleStrategy"]["disablePVCReuse"], true);
}

TEST_F(VersionsTest, WatchesAndStatusWritesInEitherVersion) {
  ApiResponse w = Call("GET", kAlpha, "", "application/json", {{"watch", "true"}});
  ASSERT_TRUE(w.watch) << w.body;
  ASSERT_EQ(Call("POST", kBeta, conversion::ConvertCloneSet(Seed000(), kruise::kV1beta1)->dump()).status, 201);
  std::string chunk;
  ASSERT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(1000)), ApiServer::StreamStep::kData);
  const json ev = json::parse(chunk);
  EXPECT_EQ(ev["type"], "ADDED");
  EXPECT_EQ(ev["object"]["apiVersion"], "apps.kruise.io/v1alpha1");
  EXPECT_EQ(ev["object"]["spec"]["updateStrategy"]["type"], "InPlaceIfPossible");
  json cs = Body(Call("GET", std::string(kBeta) + "/video-transcoder"));
  cs["status"] = {{"replicas", 3}, {"readyReplicas", 1}, {"availableReplicas", 1}, {"updatedReplicas", 3},
                  {"updatedReadyReplicas", 1}};
  ApiResponse st = Call("PUT", std::string(kBeta) + "/video-transcoder/status", cs.dump());
  ASSERT_EQ(st.status, 200) << st.body;
  ASSERT_EQ(api_.NextWatchChunk(*w.watch, &chunk, std::chrono::milliseconds(1000)), ApiServer::StreamStep::kData);
  EXPECT_EQ(json::parse(chunk)["object"]["status"]["readyReplicas"], 1);
  // The scale subresource in v1alpha1 reads and writes the stored object.
  ApiResponse scale = Call("GET", std::string(kAlpha) + "/video-transcoder/scale");
  ASSERT_EQ(scale.status, 200) << scale.body;
  EXPECT_EQ(Body(scale)["spec"]["replicas"], 3);
  json s = Body(scale);
  s["spec"]["replicas"] = 5;
  ASSERT_EQ(Call("PUT", std::string(kAlpha) + "/video-transcoder/scale", s.dump()).status, 200);
  EXPECT_EQ((*store_.Get(kCloneSets, "default", "video-transcoder"))["spec"]["replicas"], 5);
}

// Objects written with this table's spellings and defaulted by the CRD need no stash annotation when read in the
// other version (docs/semantics.md §1.2): every complete CloneSet of tests/data, created in its own version.
TEST_F(VersionsTest, DefaultedObjectsReadInTheOtherVersionNeedNoStash) {
  int n = 0;
  for (const char* dir : {"seed000", "seeds", "v1beta1"}) {
    for (const auto& e : fs::directory_iterator(fs::path(CLONESET_TEST_DATA_DIR) / dir)) {
      if (e.path().extension() != ".yaml" || e.path().filename() == "from-kruise.yaml") continue;
      for (json& o : YamlDocuments(ReadFile(e.path()))) {
        if (!o.is_object() || o.value("kind", "") != "CloneSet") continue;
        o["metadata"]["name"] = "n" + std::to_string(n++);
        o["metadata"].erase("namespace");
        const bool beta = o["apiVersion"] == "apps.kruise.io/v1beta1";
        ApiResponse r = Call("POST", beta ? kBeta : kAlpha, o.dump());
        ASSERT_EQ(r.status, 201) << e.path() << ": " << r.body;
        const std::string name = o["metadata"]["name"];
        const json other = Body(Call("GET", std::string(beta ? kAlpha : kBeta) + "/" + name));
        const json annotations = other["metadata"].value("annotations", json::object());
        EXPECT_FALSE(annotations.contains(conversion::kV1alpha1StashAnnotation) ||
                     annotations.contains(conversion::kV1beta1StashAnnotation))
            << e.path() << ": " << other.dump();
        EXPECT_EQ(Body(Call("GET", std::string(beta ? kBeta : kAlpha) + "/" + name)), Body(r));
      }
    }
  }
  EXPECT_GE(n, 7);
}

TEST_F(VersionsTest, AConversionThatFailsIsAnInternalErrorNamingTheWebhook) {
  std::optional<ResourceType> t = store_.FindType(kCloneSets);
  ASSERT_TRUE(t);
  json bad = {{"apiVersion", "apps.kruise.io/v1beta1"}, {"kind", "CloneSet"}, {"spec", {{"updateStrategy", 3}}}};
  absl::StatusOr<json> out = ConvertToVersion(*t, bad, "v1alpha1");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(out.status().message(),
            "conversion webhook for apps.kruise.io/v1beta1, Kind=CloneSet failed: spec.updateStrategy: must be an "
            "object, got number");
}

}  // namespace
}  // namespace cloneset::devcluster
