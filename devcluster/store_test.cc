#include "base/testing/fake_clock.h"
#include "absl/strings/str_cat.h"
#include "devcluster/schema.h"
#include "devcluster/store.h"

#include <gtest/gtest.h>

#include <thread>

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json ConfigMap(const std::string& name, json data = {{"k", "v"}}) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "default"}}}, {"data", data}};
}

json Pod(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox:1.36"}}}}}}};
}

json CloneSetCrd() {
  return json::parse(R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"clonesets.apps.kruise.io"},
    "spec":{"group":"apps.kruise.io","scope":"Namespaced",
      "names":{"plural":"clonesets","singular":"cloneset","kind":"CloneSet","shortNames":["clone"]},
      "versions":[{"name":"v1alpha1","served":true,"storage":true,
        "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}},
        "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})");
}

class StoreTest : public ::testing::Test {
 protected:
  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
};

int64_t Rv(const json& o) { return std::stoll(o["metadata"]["resourceVersion"].get<std::string>()); }

TEST_F(StoreTest, CreateSetsMetadata) {
  auto cm = store_.Create(kConfigMaps, ConfigMap("a"));
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ((*cm)["metadata"]["generation"], 1);
  EXPECT_EQ((*cm)["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ((*cm)["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(Rv(*cm), store_.CurrentResourceVersion());
  auto again = store_.Create(kConfigMaps, ConfigMap("a"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(), "configmaps \"a\" already exists");
}

TEST_F(StoreTest, GenerateName) {
  json cm = ConfigMap("");
  cm["metadata"].erase("name");
  cm["metadata"]["generateName"] = "gen-";
  auto created = store_.Create(kConfigMaps, cm);
  ASSERT_TRUE(created.ok());
  std::string name = (*created)["metadata"]["name"];
  EXPECT_EQ(name.size(), 9u);
  EXPECT_EQ(name.substr(0, 4), "gen-");
}

TEST_F(StoreTest, InvalidInputs) {
  struct Case {
    json object;
    absl::StatusCode code;
    std::string message_prefix;
  };
  json no_ns = ConfigMap("x");
  no_ns["metadata"].erase("namespace");
  json bad_ns = ConfigMap("x");
  bad_ns["metadata"]["namespace"] = "nope";
  json bad_labels = ConfigMap("x");
  bad_labels["metadata"]["labels"] = {{"a", 1}};
  json no_name = ConfigMap("x");
  no_name["metadata"].erase("name");
  json wrong_kind = ConfigMap("x");
  wrong_kind["kind"] = "Secret";
  const std::vector<Case> cases = {
      {ConfigMap("Bad_Name"), absl::StatusCode::kInvalidArgument, "metadata.name: Invalid value: \"Bad_Name\""},
      {no_ns, absl::StatusCode::kInvalidArgument, "metadata.namespace: Required value"},
      {bad_ns, absl::StatusCode::kNotFound, "namespaces \"nope\" not found"},
      {bad_labels, absl::StatusCode::kInvalidArgument, "metadata.labels[a]"},
      {no_name, absl::StatusCode::kInvalidArgument, "metadata.name: Required value"},
      {wrong_kind, absl::StatusCode::kFailedPrecondition, "the kind in the data"},
      {json::array(), absl::StatusCode::kInvalidArgument, "body"},
  };
  for (const auto& c : cases) {
    auto r = store_.Create(kConfigMaps, c.object);
    EXPECT_EQ(r.status().code(), c.code) << c.object.dump();
    EXPECT_EQ(std::string(r.status().message()).substr(0, c.message_prefix.size()), c.message_prefix)
        << r.status();
  }
  EXPECT_EQ(store_.Create("widgets", ConfigMap("x")).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, UpdateOptimisticConcurrencyAndNoOp) {
  auto cm = store_.Create(kConfigMaps, ConfigMap("a"));
  ASSERT_TRUE(cm.ok());
  int64_t rv1 = Rv(*cm);
  // No-op write: same RV, no new event.
  auto same = store_.Update(kConfigMaps, *cm);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Rv(*same), rv1);
  EXPECT_EQ(store_.CurrentResourceVersion(), rv1);
  json changed = *cm;
  changed["data"]["k"] = "w";
  auto updated = store_.Update(kConfigMaps, changed);
  ASSERT_TRUE(updated.ok());
  EXPECT_GT(Rv(*updated), rv1);
  EXPECT_EQ((*updated)["metadata"]["generation"], 2);
  // Stale RV -> Conflict.
  changed["data"]["k"] = "z";
  auto stale = store_.Update(kConfigMaps, changed);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(stale.status().message(),
            "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your "
            "changes to the latest version and try again");
  // Without RV: last write wins.
  changed["metadata"].erase("resourceVersion");
  EXPECT_TRUE(store_.Update(kConfigMaps, changed).ok());
}

TEST_F(StoreTest, GenerationOnlyOnSpecAndStatusSubresource) {
  ASSERT_TRUE(store_.Create(kCustomResourceDefinitions, CloneSetCrd()).ok());
  json cs = {{"apiVersion", "apps.kruise.io/v1alpha1"}, {"kind", "CloneSet"},
             {"metadata", {{"name", "vt"}, {"namespace", "default"}}},
             {"spec", {{"replicas", 3}}}, {"status", {{"replicas", 9}}}};
  auto created = store_.Create(kCloneSets, cs);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(created->contains("status"));  // create cannot set status
  // Label change: no generation bump.
  auto labeled = store_.Mutate(kCloneSets, "default", "vt", false, [](json& o) {
    o["metadata"]["labels"]["a"] = "b";
    return absl::OkStatus();
  });
  ASSERT_TRUE(labeled.ok());
  EXPECT_EQ((*labeled)["metadata"]["generation"], 1);
  // Status through the main resource is ignored.
  auto ignored = store_.Mutate(kCloneSets, "default", "vt", false, [](json& o) {
    o["status"] = {{"replicas", 5}};
    return absl::OkStatus();
  });
  ASSERT_TRUE(ignored.ok());
  EXPECT_FALSE(ignored->contains("status"));
  EXPECT_EQ(Rv(*ignored), Rv(*labeled));
  // Status subresource ignores spec.
  json st = *ignored;
  st["status"] = {{"replicas", 3}};
  st["spec"]["replicas"] = 100;
  auto status = store_.UpdateStatus(kCloneSets, st);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ((*status)["status"]["replicas"], 3);
  EXPECT_EQ((*status)["spec"]["replicas"], 3);
  EXPECT_EQ((*status)["metadata"]["generation"], 1);
  // Spec change bumps generation.
  auto scaled = store_.Mutate(kCloneSets, "default", "vt", false, [](json& o) {
    o["spec"]["replicas"] = 4;
    return absl::OkStatus();
  });
  ASSERT_TRUE(scaled.ok());
  EXPECT_EQ((*scaled)["metadata"]["generation"], 2);
  EXPECT_EQ((*scaled)["status"]["replicas"], 3);
}

// Binding (spec.nodeName, by pods/binding or the scheduler) and status writes leave a pod's
// generation alone; any other spec change bumps it.
TEST_F(StoreTest, PodBindingAndStatusDoNotBumpGeneration) {
  ASSERT_TRUE(store_.Create(kPods, Pod("p")).ok());
  auto bound = store_.Mutate(kPods, "default", "p", false, [](json& o) {
    o["spec"]["nodeName"] = "node-1";
    return absl::OkStatus();
  });
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ((*bound)["spec"]["nodeName"], "node-1");
  EXPECT_EQ((*bound)["metadata"]["generation"], 1);
  auto running = store_.Mutate(kPods, "default", "p", true, [](json& o) {
    o["status"]["phase"] = "Running";
    return absl::OkStatus();
  });
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ((*running)["status"]["phase"], "Running");
  EXPECT_EQ((*running)["metadata"]["generation"], 1);
  // Binding together with another spec change is a spec change.
  ASSERT_TRUE(store_.Create(kPods, Pod("q")).ok());
  auto both = store_.Mutate(kPods, "default", "q", false, [](json& o) {
    o["spec"]["nodeName"] = "node-2";
    o["spec"]["containers"][0]["image"] = "busybox:1.37";
    return absl::OkStatus();
  });
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ((*both)["metadata"]["generation"], 2);
  auto image = store_.Mutate(kPods, "default", "p", false, [](json& o) {
    o["spec"]["containers"][0]["image"] = "busybox:1.37";
    return absl::OkStatus();
  });
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ((*image)["metadata"]["generation"], 2);
  EXPECT_EQ((*image)["spec"]["nodeName"], "node-1");
}

TEST_F(StoreTest, FinalizersKeepObjectUntilRemoved) {
  json cm = ConfigMap("f");
  cm["metadata"]["finalizers"] = {"example.com/x"};
  ASSERT_TRUE(store_.Create(kConfigMaps, cm).ok());
  auto deleted = store_.Delete(kConfigMaps, "default", "f");
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE((*deleted)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(store_.Get(kConfigMaps, "default", "f").ok());
  auto cleared = store_.Mutate(kConfigMaps, "default", "f", false, [](json& o) {
    o["metadata"]["finalizers"] = json::array();
    return absl::OkStatus();
  });
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(store_.Get(kConfigMaps, "default", "f").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, PodGracefulDeletion) {
  json pod = Pod("p");
  pod["spec"]["nodeName"] = "node-1";
  ASSERT_TRUE(store_.Create(kPods, pod).ok());
  auto deleted = store_.Delete(kPods, "default", "p");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted)["metadata"]["deletionTimestamp"], "2026-01-01T00:00:30Z");
  EXPECT_EQ((*deleted)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_TRUE(store_.Get(kPods, "default", "p").ok());
  ASSERT_TRUE(store_.DeleteNow(kPods, "default", "p").ok());
  EXPECT_FALSE(store_.Get(kPods, "default", "p").ok());
  // Unscheduled pod and grace 0 go at once.
  ASSERT_TRUE(store_.Create(kPods, Pod("q")).ok());
  ASSERT_TRUE(store_.Delete(kPods, "default", "q").ok());
  EXPECT_FALSE(store_.Get(kPods, "default", "q").ok());
  pod["metadata"]["name"] = "r";
  ASSERT_TRUE(store_.Create(kPods, pod).ok());
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(store_.Delete(kPods, "default", "r", now).ok());
  EXPECT_FALSE(store_.Get(kPods, "default", "r").ok());
}

json Owned(json obj, const json& owner) {
  obj["metadata"]["ownerReferences"] = {{{"apiVersion", owner["apiVersion"]}, {"kind", owner["kind"]},
                                         {"name", owner["metadata"]["name"]}, {"uid", owner["metadata"]["uid"]},
                                         {"controller", true}, {"blockOwnerDeletion", true}}};
  return obj;
}

TEST_F(StoreTest, GarbageCollectionPolicies) {
  for (Propagation p : {Propagation::kBackground, Propagation::kForeground, Propagation::kOrphan}) {
    auto owner = store_.Create(kConfigMaps, ConfigMap("owner"));
    ASSERT_TRUE(owner.ok());
    ASSERT_TRUE(store_.Create(kConfigMaps, Owned(ConfigMap("dep1"), *owner)).ok());
    ASSERT_TRUE(store_.Create(kPods, Owned(Pod("dep2"), *owner)).ok());
    DeleteOptions o;
    o.propagation = p;
    ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "owner", o).ok());
    EXPECT_FALSE(store_.Get(kConfigMaps, "default", "owner").ok());
    auto dep1 = store_.Get(kConfigMaps, "default", "dep1");
    if (p == Propagation::kOrphan) {
      ASSERT_TRUE(dep1.ok());
      EXPECT_FALSE((*dep1)["metadata"].contains("ownerReferences"));
      ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "dep1").ok());
      ASSERT_TRUE(store_.Delete(kPods, "default", "dep2").ok());
    } else {
      EXPECT_FALSE(dep1.ok()) << static_cast<int>(p);
      EXPECT_FALSE(store_.Get(kPods, "default", "dep2").ok());
    }
  }
}

TEST_F(StoreTest, ForegroundWaitsForTerminatingDependents) {
  auto owner = store_.Create(kConfigMaps, ConfigMap("owner"));
  ASSERT_TRUE(owner.ok());
  json pod = Owned(Pod("p"), *owner);
  pod["spec"]["nodeName"] = "n1";
  ASSERT_TRUE(store_.Create(kPods, pod).ok());
  DeleteOptions o;
  o.propagation = Propagation::kForeground;
  auto r = store_.Delete(kConfigMaps, "default", "owner", o);
  ASSERT_TRUE(r.ok());
  auto waiting = store_.Get(kConfigMaps, "default", "owner");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ((*waiting)["metadata"]["finalizers"], json({"foregroundDeletion"}));
  ASSERT_TRUE(store_.DeleteNow(kPods, "default", "p").ok());  // kubelet finished the pod
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "owner").ok());
}

TEST_F(StoreTest, ListSelectorsAndPaging) {
  for (int i = 0; i < 5; ++i) {
    json pod = Pod(std::string("p").append(std::to_string(i)), {{"app", i % 2 ? "odd" : "even"}});
    if (i == 0) pod["spec"]["nodeName"] = "n1";
    ASSERT_TRUE(store_.Create(kPods, pod).ok());
  }
  auto names = [](const ListResult& r) {
    std::vector<std::string> out;
    for (const auto& o : r.items) out.push_back(o->name);
    return out;
  };
  ListOptions o;
  o.ns = "default";
  o.label_selector = "app=odd";
  EXPECT_EQ(names(*store_.List(kPods, o)), (std::vector<std::string>{"p1", "p3"}));
  o.label_selector = "";
  o.field_selector = "spec.nodeName=n1";
  EXPECT_EQ(names(*store_.List(kPods, o)), (std::vector<std::string>{"p0"}));
  o.field_selector = "spec.nodeName=";
  EXPECT_EQ(store_.List(kPods, o)->items.size(), 4u);
  o.field_selector = "bogus.field=x";
  EXPECT_EQ(store_.List(kPods, o).status().code(), absl::StatusCode::kFailedPrecondition);
  o.field_selector = "";
  o.limit = 2;
  auto page1 = store_.List(kPods, o);
  EXPECT_EQ(names(*page1), (std::vector<std::string>{"p0", "p1"}));
  EXPECT_EQ(page1->remaining, 3);
  o.continue_token = page1->continue_token;
  auto page2 = store_.List(kPods, o);
  EXPECT_EQ(names(*page2), (std::vector<std::string>{"p2", "p3"}));
  o.continue_token = page2->continue_token;
  auto page3 = store_.List(kPods, o);
  EXPECT_EQ(names(*page3), (std::vector<std::string>{"p4"}));
  EXPECT_TRUE(page3->continue_token.empty());
  o.ns = "kube-system";
  o.continue_token.clear();
  EXPECT_TRUE(store_.List(kPods, o)->items.empty());
}

TEST_F(StoreTest, WatchFromResourceVersionAndSelectorTransitions) {
  auto a = store_.Create(kPods, Pod("a", {{"app", "x"}}));
  ASSERT_TRUE(a.ok());
  WatchOptions o;
  o.label_selector = "app=x";
  o.resource_version = Rv(*a);
  auto w = store_.Watch(kPods, o);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(store_.Create(kPods, Pod("b", {{"app", "x"}})).ok());
  ASSERT_TRUE(store_.Create(kPods, Pod("c", {{"app", "y"}})).ok());
  ASSERT_TRUE(store_.Mutate(kPods, "default", "a", false, [](json& p) {
    p["metadata"]["labels"]["app"] = "y";
    return absl::OkStatus();
  }).ok());
  ASSERT_TRUE(store_.Mutate(kPods, "default", "c", false, [](json& p) {
    p["metadata"]["labels"]["app"] = "x";
    return absl::OkStatus();
  }).ok());
  std::vector<std::pair<std::string, std::string>> got;
  WatchEvent ev;
  while ((*w)->Next(&ev, 50ms)) got.emplace_back(EventTypeName(ev.type), ev.object->name);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{{"ADDED", "b"}, {"DELETED", "a"}, {"ADDED", "c"}}));
}

TEST_F(StoreTest, WatchInitialStateBookmarksAndExpiry) {
  Store small(&clock_, StoreOptions{.watch_history = 2});
  ASSERT_TRUE(small.Create(kConfigMaps, ConfigMap("a")).ok());
  WatchOptions o;
  o.allow_bookmarks = true;
  auto w = small.Watch(kConfigMaps, o);
  ASSERT_TRUE(w.ok());
  WatchEvent ev;
  ASSERT_TRUE((*w)->Next(&ev, 10ms));
  EXPECT_EQ(ev.type, EventType::kAdded);
  EXPECT_EQ(ev.object->name, "a");
  ASSERT_TRUE((*w)->Next(&ev, 10ms));
  EXPECT_EQ(ev.type, EventType::kBookmark);
  EXPECT_EQ(ev.resource_version, small.CurrentResourceVersion());
  EXPECT_FALSE((*w)->Next(&ev, 0ms)) << "a zero timeout polls: no bookmark";
  ASSERT_TRUE(small.Create(kConfigMaps, ConfigMap("z")).ok());
  ASSERT_TRUE((*w)->Next(&ev, 0ms)) << "a zero timeout returns what is ready";
  EXPECT_EQ(ev.type, EventType::kAdded);
  EXPECT_EQ(ev.object->name, "z");
  int64_t old_rv = small.CurrentResourceVersion();
  for (const char* n : {"b", "c", "d"}) ASSERT_TRUE(small.Create(kConfigMaps, ConfigMap(n)).ok());
  o.resource_version = old_rv;
  auto expired = small.Watch(kConfigMaps, o);
  ASSERT_TRUE(expired.ok());
  ASSERT_TRUE((*expired)->Next(&ev, 10ms));
  EXPECT_EQ(ev.type, EventType::kError);
  EXPECT_EQ(ev.error.code(), absl::StatusCode::kOutOfRange);
  EXPECT_FALSE((*expired)->Next(&ev, 10ms));
}

TEST_F(StoreTest, WatchDeliversAcrossThreadsAndStops) {
  WatchOptions o;
  o.resource_version = store_.CurrentResourceVersion();
  auto w = store_.Watch(kConfigMaps, o);
  ASSERT_TRUE(w.ok());
  std::thread writer([&] { ASSERT_TRUE(store_.Create(kConfigMaps, ConfigMap("t")).ok()); });
  WatchEvent ev;
  ASSERT_TRUE((*w)->Next(&ev, 2000ms));
  EXPECT_EQ(ev.object->name, "t");
  writer.join();
  EXPECT_EQ(store_.WatcherCount(kConfigMaps), 1u);
  (*w)->Stop();
  EXPECT_FALSE((*w)->Next(&ev, 2000ms));
  w->reset();
  EXPECT_EQ(store_.WatcherCount(kConfigMaps), 0u);
}

TEST_F(StoreTest, CrdRegistersAndUnregistersType) {
  EXPECT_FALSE(store_.FindType(kCloneSets).has_value());
  ASSERT_TRUE(store_.Create(kCustomResourceDefinitions, CloneSetCrd()).ok());
  auto t = store_.FindType(kCloneSets);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->has_scale);
  EXPECT_EQ(t->scale_selector_path, ".status.labelSelector");
  EXPECT_EQ(t->short_names, std::vector<std::string>{"clone"});
  ASSERT_TRUE(store_.Delete(kCustomResourceDefinitions, "", "clonesets.apps.kruise.io").ok());
  EXPECT_FALSE(store_.FindType(kCloneSets).has_value());
  json bad = CloneSetCrd();
  bad["metadata"]["name"] = "wrong.apps.kruise.io";
  EXPECT_EQ(store_.Create(kCustomResourceDefinitions, bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, DryRunStoresNothing) {
  auto r = store_.Create(kConfigMaps, ConfigMap("d"), WriteOptions{.dry_run = true});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "d").ok());
  int64_t rv = store_.CurrentResourceVersion();
  ASSERT_TRUE(store_.Create(kConfigMaps, ConfigMap("d")).ok());
  DeleteOptions o;
  o.dry_run = true;
  ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "d", o).ok());
  EXPECT_TRUE(store_.Get(kConfigMaps, "default", "d").ok());
  EXPECT_EQ(store_.CurrentResourceVersion(), rv + 1);
}

TEST_F(StoreTest, NamespaceDeletionRemovesContents) {
  ASSERT_TRUE(store_.Create(kNamespaces, {{"metadata", {{"name", "team"}}}}).ok());
  json cm = ConfigMap("x");
  cm["metadata"]["namespace"] = "team";
  ASSERT_TRUE(store_.Create(kConfigMaps, cm).ok());
  ASSERT_TRUE(store_.Delete(kNamespaces, "", "team").ok());
  EXPECT_FALSE(store_.Get(kConfigMaps, "team", "x").ok());
  EXPECT_EQ(store_.Create(kConfigMaps, cm).status().code(), absl::StatusCode::kNotFound);
}

// A namespace held by a finalizer after its DELETE is terminating: kube-apiserver's NamespaceLifecycle admission
// refuses anything new in it (403 in the API, PermissionDenied here), while what is there stays.
TEST_F(StoreTest, TerminatingNamespaceRefusesNewContent) {
  ASSERT_TRUE(store_.Create(kNamespaces, {{"metadata", {{"name", "team"}, {"finalizers", {"example.com/hold"}}}}}).ok());
  json cm = ConfigMap("x");
  cm["metadata"]["namespace"] = "team";
  ASSERT_TRUE(store_.Create(kConfigMaps, cm).ok());
  ASSERT_TRUE(store_.Delete(kNamespaces, "", "team").ok());
  EXPECT_TRUE(store_.Get(kConfigMaps, "team", "x").ok());
  json pod = Pod("p");
  pod["metadata"]["namespace"] = "team";
  const auto refused = store_.Create(kPods, pod);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.status().message(), "unable to create new content in namespace team because it is being terminated");
  EXPECT_TRUE(refused.status().GetPayload(kFieldCausesPayload).has_value());
}

// ResourceQuota admission on the pod count, in kube-apiserver's words: pods beyond spec.hard.pods (or count/pods)
// are refused; terminal pods do not count; raising the limit lets the next pod in.
TEST_F(StoreTest, PodQuotaRefusesPodsBeyondTheHardLimit) {
  struct Case {
    std::string key;
    json hard;
  };
  for (const Case& c : {Case{"pods", "2"}, Case{"count/pods", 2}}) {
    SCOPED_TRACE(c.key);
    const std::string ns = c.key == "pods" ? "qa" : "qb";
    ASSERT_TRUE(store_.Create(kNamespaces, {{"metadata", {{"name", ns}}}}).ok());
    json quota = {{"apiVersion", "v1"}, {"kind", "ResourceQuota"},
                  {"metadata", {{"name", "q"}, {"namespace", ns}}}, {"spec", {{"hard", {{c.key, c.hard}}}}}};
    ASSERT_TRUE(store_.Create(kResourceQuotas, quota).ok());
    const auto pod = [&](const std::string& name) {
      json p = Pod(name);
      p["metadata"]["namespace"] = ns;
      return p;
    };
    ASSERT_TRUE(store_.Create(kPods, pod("a")).ok());
    ASSERT_TRUE(store_.Create(kPods, pod("b")).ok());
    auto refused = store_.Create(kPods, pod("c"));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(refused.status().message(), absl::StrCat("exceeded quota: q, requested: ", c.key, "=1, used: ", c.key,
                                                       "=2, limited: ", c.key, "=2"));
    // A pod that finished no longer counts.
    ASSERT_TRUE(store_.Mutate(kPods, ns, "a", true, [](json& p) {
                        p["status"]["phase"] = "Succeeded";
                        return absl::OkStatus();
                      }).ok());
    EXPECT_TRUE(store_.Create(kPods, pod("c")).ok());
    EXPECT_EQ(store_.Create(kPods, pod("d")).status().code(), absl::StatusCode::kPermissionDenied);
    quota["spec"]["hard"][c.key] = 5;
    ASSERT_TRUE(store_.Mutate(kResourceQuotas, ns, "q", false, [&](json& q) {
                        q["spec"] = quota["spec"];
                        return absl::OkStatus();
                      }).ok());
    EXPECT_TRUE(store_.Create(kPods, pod("d")).ok());
  }
}

// kube-apiserver defaults imagePullPolicy from the tag its image reference parser reads (SetDefaults_Container):
// Always for "latest", written or implied, IfNotPresent for another tag or a digest alone. The ':' of a registry's
// port is no tag: "registry:5000/app" is app:latest (this said IfNotPresent before).
TEST_F(StoreTest, ImagePullPolicyDefaultsFromTheImageTag) {
  const std::string digest = "@sha256:" + std::string(64, 'a');
  const std::pair<std::string, std::string> cases[] = {
      {"busybox", "Always"},
      {"busybox:latest", "Always"},
      {"busybox:1.36", "IfNotPresent"},
      {"registry:5000/app", "Always"},
      {"registry:5000/app:v2", "IfNotPresent"},
      {"localhost:5000/team/app:latest", "Always"},
      {"busybox" + digest, "IfNotPresent"},
      {"busybox:latest" + digest, "Always"},
  };
  int i = 0;
  for (const auto& [image, want] : cases) {
    json pod = Pod("pull-" + std::to_string(i++));
    pod["spec"]["containers"][0]["image"] = image;
    auto created = store_.Create(kPods, pod);
    ASSERT_TRUE(created.ok()) << image << ": " << created.status();
    EXPECT_EQ((*created)["spec"]["containers"][0]["imagePullPolicy"], want) << image;
  }
}

}  // namespace
}  // namespace cloneset::devcluster
