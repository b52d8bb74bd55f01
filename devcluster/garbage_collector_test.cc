#include "base/testing/fake_clock.h"
#include "devcluster/garbage_collector.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <tuple>

#include "devcluster/store.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using Action = GcDecision::Action;
using namespace std::chrono_literals;

// ---- the pure decisions ----------------------------------------------------------------------------------------

class TableLookup final : public OwnerLookup {
 public:
  // (apiVersion, kind) -> namespaced; (kind, ns, name) -> owner
  std::map<std::pair<std::string, std::string>, bool> kinds = {
      {{"v1", "ConfigMap"}, true}, {{"v1", "Node"}, false}, {{"apps/v1", "Deployment"}, true}};
  std::map<std::tuple<std::string, std::string, std::string>, Owner> objects = {
      {{"ConfigMap", "default", "cm"}, {"u-cm", false}},
      {{"ConfigMap", "default", "going"}, {"u-going", true}},
      {{"Node", "", "n1"}, {"u-n1", false}},
  };
  std::optional<bool> KindNamespaced(std::string_view api_version, std::string_view kind) const override {
    auto it = kinds.find({std::string(api_version), std::string(kind)});
    if (it == kinds.end()) return std::nullopt;
    return it->second;
  }
  std::optional<Owner> Find(std::string_view, std::string_view kind, std::string_view ns,
                            std::string_view name) const override {
    auto it = objects.find({std::string(kind), std::string(ns), std::string(name)});
    if (it == objects.end()) return std::nullopt;
    return it->second;
  }
};

TEST(ClassifyOwnerTest, Table) {
  struct Case {
    const char* name;
    OwnerReference ref;
    std::string dependent_ns;
    OwnerStatus want;
  } cases[] = {
      {"existing owner", {"v1", "ConfigMap", "cm", "u-cm"}, "default", OwnerStatus::kSolid},
      {"absent owner", {"v1", "ConfigMap", "ghost", "u-ghost"}, "default", OwnerStatus::kDangling},
      {"recreated owner (other uid)", {"v1", "ConfigMap", "cm", "u-old"}, "default", OwnerStatus::kDangling},
      {"namespaced owner looked up in the dependent's namespace", {"v1", "ConfigMap", "cm", "u-cm"}, "team-a",
       OwnerStatus::kDangling},
      {"cluster-scoped owner found from any namespace", {"v1", "Node", "n1", "u-n1"}, "team-a", OwnerStatus::kSolid},
      {"cluster-scoped owner of a cluster-scoped dependent", {"v1", "Node", "n1", "u-n1"}, "", OwnerStatus::kSolid},
      {"cluster-scoped owner absent", {"v1", "Node", "n2", "u-n2"}, "default", OwnerStatus::kDangling},
      {"foreground-deleting owner", {"v1", "ConfigMap", "going", "u-going"}, "default",
       OwnerStatus::kWaitingForDependents},
      {"kind not served", {"apps/v1", "ReplicaSet", "rs", "u-rs"}, "default", OwnerStatus::kUnresolvable},
      {"served kind, wrong version", {"apps/v1beta1", "Deployment", "d", "u-d"}, "default",
       OwnerStatus::kUnresolvable},
      {"no kind", {"v1", "", "cm", "u-cm"}, "default", OwnerStatus::kUnresolvable},
      {"no name", {"v1", "ConfigMap", "", "u-cm"}, "default", OwnerStatus::kUnresolvable},
      {"cluster-scoped dependent naming a namespaced kind", {"v1", "ConfigMap", "cm", "u-cm"}, "",
       OwnerStatus::kUnresolvable},
  };
  TableLookup lookup;
  for (const auto& c : cases)
    EXPECT_EQ(ClassifyOwner(c.ref, c.dependent_ns, lookup), c.want) << c.name;
}

TEST(DecideCollectionTest, Table) {
  const OwnerReference a{"v1", "ConfigMap", "a", "u-a"}, b{"v1", "ConfigMap", "b", "u-b"};
  using S = OwnerStatus;
  struct Case {
    const char* name;
    GcSubject subject;
    std::vector<OwnerReference> refs;
    std::vector<OwnerStatus> statuses;
    GcDecision want;
  } cases[] = {
      {"no owners", {}, {}, {}, {}},
      {"solid owner", {}, {a}, {S::kSolid}, {}},
      {"dangling owner", {}, {a}, {S::kDangling}, {Action::kDelete, {}, Propagation::kBackground}},
      {"all dangling", {}, {a, b}, {S::kDangling, S::kDangling}, {Action::kDelete, {}, Propagation::kBackground}},
      {"one solid one dangling: the dangling reference goes", {}, {a, b}, {S::kSolid, S::kDangling},
       {Action::kRemoveReferences, {"u-b"}, Propagation::kBackground}},
      {"one solid one waiting: the waiting reference goes", {}, {a, b}, {S::kWaitingForDependents, S::kSolid},
       {Action::kRemoveReferences, {"u-a"}, Propagation::kBackground}},
      {"unresolvable keeps the object untouched", {}, {a, b}, {S::kDangling, S::kUnresolvable}, {}},
      {"unresolvable next to a solid owner", {}, {a, b}, {S::kSolid, S::kUnresolvable}, {}},
      {"being deleted: left alone", {true, {"example.com/keep"}, false}, {a}, {S::kDangling}, {}},
      {"waiting owner, no dependents of its own", {}, {a}, {S::kWaitingForDependents},
       {Action::kDelete, {}, Propagation::kBackground}},
      {"waiting owner, dependents of its own: foreground", {false, {}, true}, {a}, {S::kWaitingForDependents},
       {Action::kDelete, {}, Propagation::kForeground}},
      {"orphan finalizer honoured", {false, {"orphan"}, true}, {a}, {S::kDangling},
       {Action::kDelete, {}, Propagation::kOrphan}},
      {"foregroundDeletion finalizer honoured", {false, {"foregroundDeletion"}, true}, {a}, {S::kDangling},
       {Action::kDelete, {}, Propagation::kForeground}},
      {"other finalizers: background", {false, {"example.com/keep"}, true}, {a}, {S::kDangling},
       {Action::kDelete, {}, Propagation::kBackground}},
  };
  for (const auto& c : cases) {
    GcDecision got = DecideCollection(c.subject, c.refs, c.statuses);
    EXPECT_EQ(static_cast<int>(got.action), static_cast<int>(c.want.action)) << c.name;
    EXPECT_EQ(got.remove_uids, c.want.remove_uids) << c.name;
    EXPECT_EQ(static_cast<int>(got.propagation), static_cast<int>(c.want.propagation)) << c.name;
  }
}

TEST(OwnerReferencesOfTest, ReadsWireFields) {
  json o = {{"metadata",
             {{"ownerReferences",
               {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}, {"uid", "u1"}, {"controller", true}},
                {{"uid", 7}},
                "not an object"}}}}};
  auto refs = OwnerReferencesOf(o);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(std::tie(refs[0].api_version, refs[0].kind, refs[0].name, refs[0].uid),
            std::make_tuple(std::string("v1"), std::string("Node"), std::string("n1"), std::string("u1")));
  EXPECT_EQ(std::tie(refs[1].api_version, refs[1].kind, refs[1].name, refs[1].uid),
            std::make_tuple(std::string(), std::string(), std::string(), std::string()));
  EXPECT_TRUE(OwnerReferencesOf(json::object()).empty());
  EXPECT_TRUE(OwnerReferencesOf(json::array()).empty());
}

// ---- the store applies them ------------------------------------------------------------------------------------

json ConfigMap(const std::string& name, const std::string& ns = "default") {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
}

json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox:1.36"}}}}}}};
}

json Ref(const std::string& api_version, const std::string& kind, const std::string& name, const std::string& uid) {
  return {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", uid}, {"controller", false}};
}

json RefTo(const json& owner) {
  return Ref(owner["apiVersion"], owner["kind"], owner["metadata"]["name"], owner["metadata"]["uid"]);
}

std::vector<std::string> RefUids(const json& o) {
  std::vector<std::string> out;
  for (const auto& r : OwnerReferencesOf(o)) out.push_back(r.uid);
  return out;
}

// A store with the helpers the scenarios share.
struct Cluster {
  json MustCreate(const char* resource, json o) {
    auto r = store.Create(resource, std::move(o));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : json();
  }
  std::unique_ptr<Watcher> WatchFromNow(const char* resource) {
    WatchOptions o;
    o.resource_version = store.CurrentResourceVersion();
    auto w = store.Watch(resource, o);
    EXPECT_TRUE(w.ok());
    return std::move(*w);
  }

  base::testing::FakeClock clock{base::testing::FakeClock::k2026};
  Store store{&clock};
};

// The events a watcher has ready, as "TYPE name".
std::vector<std::string> Drain(Watcher& w) {
  std::vector<std::string> out;
  WatchEvent ev;
  while (w.Next(&ev, 0ms)) out.push_back(std::string(EventTypeName(ev.type)) + " " + ev.object->name);
  return out;
}

class GarbageCollectorStoreTest : public ::testing::Test {
 protected:
  json MustCreate(const char* resource, json o) { return c_.MustCreate(resource, std::move(o)); }
  std::unique_ptr<Watcher> WatchFromNow(const char* resource) { return c_.WatchFromNow(resource); }
  // Sets a label on ConfigMap `name`, an update that leaves its owner references alone; when it succeeds, checks
  // the ConfigMap is still there.
  absl::StatusOr<json> Relabel(const std::string& name, const std::string& key, const std::string& value) {
    auto labelled = store_.Mutate(kConfigMaps, "default", name, false, [&](json& o) {
      o["metadata"]["labels"] = {{key, value}};
      return absl::OkStatus();
    });
    if (labelled.ok()) {
      EXPECT_TRUE(store_.Get(kConfigMaps, "default", name).ok()) << name << " was collected";
    }
    return labelled;
  }

  Cluster c_;
  Store& store_ = c_.store;
};

// A dependent created with the given owner references: is it kept, with which references left?
TEST(GarbageCollectorStore, CreateWithOwnerReferences) {
  struct Case {
    const char* name;
    std::function<json(Cluster&)> refs;  // creates the owners it needs
    bool kept;
    std::vector<std::string> refs_left;  // owner names
  } cases[] = {
      {"missing owner", [](auto&) { return json::array({Ref("v1", "ConfigMap", "ghost", "u-ghost")}); }, false, {}},
      {"owner recreated with another uid",
       [](auto& t) {
         t.MustCreate(kConfigMaps, ConfigMap("owner"));
         return json::array({Ref("v1", "ConfigMap", "owner", "u-previous-incarnation")});
       },
       false, {}},
      {"existing owner",
       [](auto& t) { return json::array({RefTo(t.MustCreate(kConfigMaps, ConfigMap("owner")))}); }, true, {"owner"}},
      {"two owners, one existing: kept, the dangling reference removed",
       [](auto& t) {
         return json::array({Ref("v1", "ConfigMap", "ghost", "u-ghost"), RefTo(t.MustCreate(kConfigMaps, ConfigMap("owner")))});
       },
       true, {"owner"}},
      {"namespaced owner in another namespace is absent",
       [](auto& t) {
         t.MustCreate(kNamespaces, {{"metadata", {{"name", "team-a"}}}});
         return json::array({RefTo(t.MustCreate(kConfigMaps, ConfigMap("owner", "team-a")))});
       },
       false, {}},
      {"cluster-scoped owner (Node) resolved cluster-wide",
       [](auto& t) { return json::array({RefTo(t.MustCreate(kNodes, {{"metadata", {{"name", "n1"}}}}))}); }, true,
       {"n1"}},
      {"cluster-scoped owner (Namespace) resolved cluster-wide",
       [](auto& t) {
         json ns = t.MustCreate(kNamespaces, {{"metadata", {{"name", "team-b"}}}});
         return json::array({RefTo(ns)});
       },
       true, {"team-b"}},
      {"cluster-scoped owner with another uid",
       [](auto& t) {
         t.MustCreate(kNodes, {{"metadata", {{"name", "n1"}}}});
         return json::array({Ref("v1", "Node", "n1", "u-old-node")});
       },
       false, {}},
      {"kind the cluster does not serve: kept (upstream logs and retries)",
       [](auto&) { return json::array({Ref("apps/v1", "ReplicaSet", "rs", "u-rs")}); }, true, {"rs"}},
      {"unserved kind next to a missing owner: kept untouched",
       [](auto&) {
         return json::array({Ref("apps/v1", "ReplicaSet", "rs", "u-rs"), Ref("v1", "ConfigMap", "ghost", "u-ghost")});
       },
       true, {"rs", "ghost"}},
      {"reference without kind: kept", [](auto&) { return json::array({{{"name", "x"}, {"uid", "u-x"}}}); }, true,
       {"x"}},
      {"served CRD kind, missing owner",
       [](auto& t) {
         t.MustCreate(kCustomResourceDefinitions, json::parse(R"({"metadata":{"name":"clonesets.apps.kruise.io"},
           "spec":{"group":"apps.kruise.io","scope":"Namespaced","names":{"plural":"clonesets","singular":"cloneset",
           "kind":"CloneSet"},"versions":[{"name":"v1alpha1","served":true,"storage":true}]}})"));
         return json::array({Ref("apps.kruise.io/v1alpha1", "CloneSet", "web", "u-web")});
       },
       false, {}},
  };
  for (const auto& c : cases) {
    Cluster t;
    json pod = Pod("dep");
    pod["metadata"]["ownerReferences"] = c.refs(t);
    auto created = t.store.Create(kPods, pod);
    ASSERT_TRUE(created.ok()) << c.name << ": " << created.status();
    auto got = t.store.Get(kPods, "default", "dep");
    EXPECT_EQ(got.ok(), c.kept) << c.name;
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << c.name;
      continue;
    }
    std::vector<std::string> names;
    for (const auto& r : OwnerReferencesOf(*got)) names.push_back(r.name);
    EXPECT_EQ(names, c.refs_left) << c.name;
  }
}

TEST_F(GarbageCollectorStoreTest, WatchersSeeTheCollectedObjectDeleted) {
  auto w = WatchFromNow(kPods);
  json pod = Pod("dep");
  pod["metadata"]["ownerReferences"] = {Ref("v1", "ConfigMap", "ghost", "u-ghost")};
  MustCreate(kPods, pod);
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"ADDED dep", "DELETED dep"}));
  EXPECT_EQ(store_.ObjectCount(kPods), 0u);
}

TEST_F(GarbageCollectorStoreTest, FinalizersOfTheCollectedObjectAreHonoured) {
  auto w = WatchFromNow(kConfigMaps);
  json cm = ConfigMap("dep");
  cm["metadata"]["finalizers"] = {"example.com/keep"};
  cm["metadata"]["ownerReferences"] = {Ref("v1", "ConfigMap", "ghost", "u-ghost")};
  MustCreate(kConfigMaps, cm);
  auto kept = store_.Get(kConfigMaps, "default", "dep");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ((*kept)["metadata"]["finalizers"], json({"example.com/keep"}));
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"ADDED dep", "MODIFIED dep"}));
  auto done = store_.Mutate(kConfigMaps, "default", "dep", false, [](json& o) {
    o["metadata"].erase("finalizers");
    return absl::OkStatus();
  });
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "dep").ok());
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"MODIFIED dep", "DELETED dep"}));
}

TEST_F(GarbageCollectorStoreTest, ScheduledPodGetsItsGracePeriod) {
  json pod = Pod("dep");
  pod["spec"]["nodeName"] = "n1";
  pod["metadata"]["ownerReferences"] = {Ref("v1", "ConfigMap", "ghost", "u-ghost")};
  MustCreate(kPods, pod);
  auto terminating = store_.Get(kPods, "default", "dep");
  ASSERT_TRUE(terminating.ok());
  EXPECT_EQ((*terminating)["metadata"]["deletionTimestamp"], "2026-01-01T00:00:30Z");
  EXPECT_EQ((*terminating)["metadata"]["deletionGracePeriodSeconds"], 30);
}

// Dangling owner -> A -> B: an update that makes A's only owner dangling collects A, and B with it.
TEST_F(GarbageCollectorStoreTest, ChainIsCollected) {
  json a = MustCreate(kConfigMaps, ConfigMap("a"));
  json b = Pod("b");
  b["metadata"]["ownerReferences"] = {RefTo(a)};
  MustCreate(kPods, b);
  ASSERT_TRUE(store_.Get(kPods, "default", "b").ok());
  auto pods = WatchFromNow(kPods);
  auto cms = WatchFromNow(kConfigMaps);
  auto patched = store_.Mutate(kConfigMaps, "default", "a", false, [](json& o) {
    o["metadata"]["ownerReferences"] = {Ref("v1", "ConfigMap", "ghost", "u-ghost")};
    return absl::OkStatus();
  });
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "a").ok());
  EXPECT_FALSE(store_.Get(kPods, "default", "b").ok());
  EXPECT_EQ(Drain(*cms), (std::vector<std::string>{"MODIFIED a", "DELETED a"}));
  EXPECT_EQ(Drain(*pods), (std::vector<std::string>{"DELETED b"}));
}

// An object kept for an unserved owner kind stays through a label change and is collected by the update that
// re-points its reference at a missing owner. (That a label change skips the owner check is not observable here:
// the object would be kept either way.)
TEST_F(GarbageCollectorStoreTest, KeptObjectIsCollectedWhenAnUpdateMakesItsReferenceDangle) {
  json cm = ConfigMap("dep");
  cm["metadata"]["ownerReferences"] = {Ref("apps/v1", "ReplicaSet", "rs", "u-rs")};
  MustCreate(kConfigMaps, cm);
  auto labelled = Relabel("dep", "a", "b");
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  // Replacing the reference by one to a missing ConfigMap collects it.
  json next = *labelled;
  next["metadata"]["ownerReferences"] = {Ref("v1", "ConfigMap", "ghost", "u-ghost")};
  ASSERT_TRUE(store_.Update(kConfigMaps, next).ok());
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "dep").ok());
}

TEST_F(GarbageCollectorStoreTest, OrphanedDependentStaysUntilAStaleReferenceComesBack) {
  json owner = MustCreate(kConfigMaps, ConfigMap("owner"));
  json dep = ConfigMap("dep");
  dep["metadata"]["ownerReferences"] = {RefTo(owner)};
  MustCreate(kConfigMaps, dep);
  DeleteOptions orphan;
  orphan.propagation = Propagation::kOrphan;
  ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "owner", orphan).ok());
  auto kept = store_.Get(kConfigMaps, "default", "dep");
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE((*kept)["metadata"].contains("ownerReferences"));
  auto labelled = Relabel("dep", "orphaned", "yes");
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  // Re-applying the old manifest with the reference to the deleted owner makes it dangling: collected.
  json stale = *labelled;
  stale["metadata"]["ownerReferences"] = {RefTo(owner)};
  ASSERT_TRUE(store_.Update(kConfigMaps, stale).ok());
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "dep").ok());
}

TEST_F(GarbageCollectorStoreTest, OwnerDeletionStripsOnlyDanglingReferences) {
  json a = MustCreate(kConfigMaps, ConfigMap("a"));
  json b = MustCreate(kConfigMaps, ConfigMap("b"));
  json dep = Pod("dep");
  dep["metadata"]["ownerReferences"] = {RefTo(a), RefTo(b)};
  MustCreate(kPods, dep);
  ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "a").ok());
  auto kept = store_.Get(kPods, "default", "dep");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(RefUids(*kept), (std::vector<std::string>{b["metadata"]["uid"]}));
  ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "b").ok());
  EXPECT_FALSE(store_.Get(kPods, "default", "dep").ok());
}

// A new dependent of an owner deleted in the foreground has no solid owner: collected, and the owner still waits
// for the dependent that is terminating.
TEST_F(GarbageCollectorStoreTest, NewDependentOfAForegroundDeletingOwner) {
  json owner = MustCreate(kConfigMaps, ConfigMap("owner"));
  json running = Pod("running");
  running["spec"]["nodeName"] = "n1";
  running["metadata"]["ownerReferences"] = {RefTo(owner)};
  MustCreate(kPods, running);
  DeleteOptions fg;
  fg.propagation = Propagation::kForeground;
  ASSERT_TRUE(store_.Delete(kConfigMaps, "default", "owner", fg).ok());
  json late = Pod("late");
  late["metadata"]["ownerReferences"] = {RefTo(owner)};
  MustCreate(kPods, late);
  EXPECT_FALSE(store_.Get(kPods, "default", "late").ok());
  auto waiting = store_.Get(kConfigMaps, "default", "owner");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ((*waiting)["metadata"]["finalizers"], json({"foregroundDeletion"}));
  ASSERT_TRUE(store_.DeleteNow(kPods, "default", "running").ok());
  EXPECT_FALSE(store_.Get(kConfigMaps, "default", "owner").ok());
}

TEST_F(GarbageCollectorStoreTest, DryRunCollectsNothing) {
  json pod = Pod("dep");
  pod["metadata"]["ownerReferences"] = {Ref("v1", "ConfigMap", "ghost", "u-ghost")};
  WriteOptions dry;
  dry.dry_run = true;
  const int64_t rv = store_.CurrentResourceVersion();
  ASSERT_TRUE(store_.Create(kPods, pod, dry).ok());
  EXPECT_EQ(store_.CurrentResourceVersion(), rv);
}

}  // namespace
}  // namespace cloneset::devcluster
