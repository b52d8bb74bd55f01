// The executor's incrementally kept pod table (pod_rows.h) against the table encoded from scratch: after every
// step of random add / update / owner change / delete / resync sequences, each CloneSet's table assembled from the
// rows is byte for byte EncodePodTable of its pods in name order. Seeded: CLONESET_POD_ROWS_SEED=<n> replays a run
// (the seed is printed, and recorded as the test's property pod_rows_seed).
#include "executor/pod_rows.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "executor/informer_cache.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kube/rest_client.h"
#include "kube/testing/fake_apiserver.h"
#include "planapi/pod_table.h"
#include "snapshot/snapshot.h"

namespace cloneset::executor {
namespace {

uint64_t Seed() {
  uint64_t seed = 0;
  const char* env = std::getenv("CLONESET_POD_ROWS_SEED");
  if (env == nullptr || !absl::SimpleAtoi(env, &seed)) seed = static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
  std::cerr << "pod rows seed: CLONESET_POD_ROWS_SEED=" << seed << std::endl;
  ::testing::Test::RecordProperty("pod_rows_seed", std::to_string(seed));
  return seed;
}

constexpr const char* kOwners[] = {"uid-a", "uid-b"};

// A random pod: strings from small vocabularies (so that pods share them, and a shared string comes and goes),
// some unique ones, empty ones, every list of the table from empty to a few entries.
class PodMaker {
 public:
  explicit PodMaker(uint64_t seed) : rng_(seed) {}

  int Int(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool Coin() { return Int(2) == 0; }
  std::string Word(const char* prefix, int n) { return Int(5) == 0 ? "" : absl::StrCat(prefix, Int(n)); }

  pb::Pod Make(const std::string& name, int rv) {
    pb::Pod p;
    pb::ObjectMeta* m = p.mutable_metadata();
    m->set_name(name);
    m->set_namespace_("ns");
    m->set_uid(Coin() ? "u-" + name : absl::StrCat("u-", name, "-", rv));
    m->set_resource_version(std::to_string(rv));
    if (Coin()) m->set_generation(Int(4));
    m->mutable_creation_timestamp()->set_seconds(1700000000 + Int(1000));
    if (Int(6) == 0) m->mutable_deletion_timestamp()->set_seconds(1700005000);
    for (int i = Int(5); i > 0; --i) (*m->mutable_labels())[Word("label-", 6)] = Word("value-", 4);
    for (int i = Int(3); i > 0; --i) (*m->mutable_annotations())[Word("note-", 3)] = absl::StrCat("state-", rv, "-", i);
    for (int i = Int(3); i > 0; --i) m->add_finalizers(Word("example.com/f", 3));
    const int owners = Int(3);
    for (int i = 0; i < owners; ++i) {
      pb::OwnerReference* o = m->add_owner_references();
      o->set_api_version("apps.kruise.io/v1alpha1");
      o->set_kind(Coin() ? "CloneSet" : "ReplicaSet");
      o->set_name(Word("owner-", 2));
      o->set_uid(kOwners[Int(2)]);
      o->set_controller(Coin());
      o->set_block_owner_deletion(Coin());
    }
    p.set_node_name(Word("node-", 5));
    p.set_phase(Coin() ? "Running" : "Pending");
    for (int i = Int(3); i > 0; --i) p.add_readiness_gates(Word("gate-", 2));
    for (int i = Int(3); i > 0; --i) {
      pb::Container* c = p.add_containers();
      c->set_name(Word("c", 3));
      c->set_image(Word("registry.local/app:v", 3));
      if (Int(3) == 0) c->set_launch_priority(Int(7) - 3);
    }
    for (int i = Int(4); i > 0; --i) {
      pb::Condition* c = p.add_conditions();
      c->set_type(Word("Type", 3));
      c->set_status(Coin() ? "True" : "False");
      c->set_reason(Word("Reason", 2));
      c->set_message(Int(3) == 0 ? absl::StrCat("message ", rv) : "");
      if (Coin()) c->mutable_last_transition_time()->set_seconds(1700000000 + Int(100));
      if (Coin()) c->mutable_last_update_time()->set_nanos(Int(1000000000));
    }
    for (int i = Int(3); i > 0; --i) {
      pb::ContainerStatus* s = p.add_container_statuses();
      s->set_name(Word("c", 3));
      s->set_image(Word("registry.local/app:v", 3));
      s->set_image_id(Word("sha256:", 3));
      s->set_container_id(Coin() ? absl::StrCat("containerd://", name, "-", rv) : "");
      s->set_ready(Coin());
      s->set_restart_count(Int(3));
    }
    return p;
  }

 private:
  std::mt19937_64 rng_;
};

// What the index must give for `owner`: no pod objects, and the table encoded from scratch from its pods (by name);
// the pods materialized from that table, and the pods the index gives without a table, equal to them.
using PodsByName = std::map<std::string, std::shared_ptr<const pb::Pod>>;

void ExpectSamePods(const std::vector<std::shared_ptr<const pb::Pod>>& got, const std::vector<const pb::Pod*>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*got[i], *want[i]))
        << what << " pod " << i << "\ngot:  " << got[i]->ShortDebugString() << "\nwant: " << want[i]->ShortDebugString();
  }
}

void ExpectSameAsFromScratch(const PodRowIndex& index, const PodsByName& pods, const std::string& owner, int step) {
  std::vector<const pb::Pod*> owned;
  for (const auto& [name, p] : pods) {
    for (const auto& o : p->metadata().owner_references()) {
      if (o.uid() == owner) {
        owned.push_back(p.get());
        break;
      }
    }
  }
  const std::string what = absl::StrCat("step ", step, " owner ", owner);
  const planapi::SnapshotPods got = index.Owned("ns", owner, true);
  const absl::StatusOr<pb::PodTable> want = planapi::EncodePodTable(owned);
  ASSERT_TRUE(got.table.has_value());
  ASSERT_EQ(got.table->ok(), want.ok()) << "step " << step << ": " << got.table->status() << " vs " << want.status();
  ExpectSamePods(index.Owned("ns", owner, false).pods, owned, what + " without a table");
  if (!want.ok()) {
    EXPECT_EQ(got.table->status(), want.status()) << "step " << step;
    ExpectSamePods(got.pods, owned, what + " (sent as objects)");
    return;
  }
  EXPECT_TRUE(got.pods.empty()) << what << ": the cache keeps rows, not pods";
  EXPECT_EQ((*got.table)->message().SerializeAsString(), want->SerializeAsString())
      << what << "\nincremental: " << (*got.table)->message().ShortDebugString()
      << "\nfrom scratch: " << want->ShortDebugString();
  auto view = planapi::PodTableView::Open((*got.table)->message());
  ASSERT_TRUE(view.ok()) << view.status();
  ExpectSamePods((*view)->MaterializeAll(), owned, what + " materialized from the table");
}

TEST(PodRowIndexTest, RandomChangesKeepTheTableOfEveryOwnerAsIfEncodedFromScratch) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("CLONESET_POD_ROWS_SEED=", seed));
  PodMaker maker(seed);
  PodRowIndex index(/*cached_table_min_pods=*/8);  // owners of 8 or more pods keep their table between snapshots
  PodsByName pods;  // the truth
  int rv = 1;
  for (int step = 0; step < 3000 && !::testing::Test::HasFailure(); ++step) {
    const std::string name = absl::StrCat("pod-", maker.Int(40));
    const auto it = pods.find(name);
    const int op = maker.Int(10);
    if (it != pods.end() && op < 3) {
      index.Remove("ns", name);
      pods.erase(it);
    } else if (it != pods.end() && op == 3) {
      index.Upsert(*it->second);  // the same pod again
    } else {
      auto pod = std::make_shared<const pb::Pod>(maker.Make(name, ++rv));
      index.Upsert(*pod);
      pods[name] = pod;
    }
    // Twice: the second snapshot of a large owner is its kept table, which the step's change must have dropped.
    for (const char* owner : kOwners) ExpectSameAsFromScratch(index, pods, owner, step);
    for (const char* owner : kOwners) ExpectSameAsFromScratch(index, pods, owner, step);
    const auto it2 = pods.find(name);
    const Observed seen = index.Lookup("ns", name);
    EXPECT_EQ(seen.exists, it2 != pods.end()) << "step " << step;
    if (it2 != pods.end()) {
      EXPECT_EQ(seen.resource_version, it2->second->metadata().resource_version());
    }
  }
  for (const auto& [name, p] : pods) index.Remove("ns", name);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.shared_strings(), 0u) << "every shared string goes with the last row that held it";
}

TEST(PodRowIndexTest, ATimestampTheTableCannotCarryFailsAsTheEncoderDoes) {
  PodMaker maker(1);
  PodRowIndex index;
  pb::Pod a = maker.Make("a", 1);
  pb::Pod b = maker.Make("b", 2);
  for (pb::Pod* p : {&a, &b}) {
    p->mutable_metadata()->clear_owner_references();
    pb::OwnerReference* o = p->mutable_metadata()->add_owner_references();
    o->set_kind("CloneSet");
    o->set_uid("uid-a");
  }
  b.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(32503680000);  // the year 3000
  index.Upsert(a);
  index.Upsert(b);
  const planapi::SnapshotPods got = index.Owned("ns", "uid-a", true);
  ASSERT_TRUE(got.table.has_value());
  const absl::StatusOr<pb::PodTable> want = planapi::EncodePodTable(std::vector<const pb::Pod*>{&a, &b});
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(got.table->status(), want.status());
  EXPECT_EQ(got.table->status().message().substr(0, 39), "pods[1].metadata.deletionTimestamp: sec");
  // The request sends these pods as objects: the one the table cannot carry as it was decoded.
  ExpectSamePods(got.pods, {&a, &b}, "with the failed table");
  EXPECT_TRUE(index.Lookup("ns", "b").deleting);
  // Without a table only the pods are read.
  const planapi::SnapshotPods pods_only = index.Owned("ns", "uid-a", false);
  EXPECT_FALSE(pods_only.table.has_value());
  ExpectSamePods(pods_only.pods, {&a, &b}, "without a table");
}

// A full LIST replaces the cache: pods listed at the version the index holds are kept without being encoded again,
// changed ones replaced, and those not listed removed, each owner told once per pod that changed or went.
TEST(PodRowIndexTest, AListReplacesThePodsItDoesNotShow) {
  PodMaker maker(7);
  PodRowIndex index;
  std::map<std::string, pb::Pod> pods;
  for (const char* name : {"a", "b", "c"}) {
    pb::Pod p = maker.Make(name, 10);
    p.mutable_metadata()->clear_owner_references();
    pb::OwnerReference* o = p.mutable_metadata()->add_owner_references();
    o->set_kind("CloneSet");
    o->set_name(absl::StrCat("cs-", name));
    o->set_uid("uid-a");
    index.Upsert(p);
    pods[name] = p;
  }
  const uint64_t mark = index.Mark();
  PodRowIndex::OwnerKeys keys;
  EXPECT_TRUE(index.KeepIfUnchanged("ns", "a", "10"));
  EXPECT_FALSE(index.KeepIfUnchanged("ns", "b", "11"));
  EXPECT_FALSE(index.KeepIfUnchanged("ns", "d", "10"));
  pods["b"].mutable_metadata()->set_resource_version("11");
  pods["b"].set_phase("Succeeded");
  index.Upsert(pods["b"], &keys);
  index.RemoveUnmarked(mark, &keys);
  pods.erase("c");
  EXPECT_EQ(keys, (PodRowIndex::OwnerKeys{"ns/cs-b", "ns/cs-b", "ns/cs-c"}));
  EXPECT_FALSE(index.Lookup("ns", "c").exists);
  EXPECT_EQ(index.Lookup("ns", "b").resource_version, "11");
  PodsByName truth;
  for (const auto& [name, p] : pods) truth[name] = std::make_shared<const pb::Pod>(p);
  ExpectSameAsFromScratch(index, truth, "uid-a", 0);
  PodRowIndex::OwnerKeys all;
  index.AllOwnerKeys(&all);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (PodRowIndex::OwnerKeys{"ns/cs-a", "ns/cs-b"}));
}

TEST(PodRowIndexTest, AnOwnerWithoutPodsHasAnEmptyTable) {
  PodRowIndex index;
  const planapi::SnapshotPods got = index.Owned("ns", "uid-a", true);
  ASSERT_TRUE(got.table.has_value());
  ASSERT_TRUE(got.table->ok());
  const absl::StatusOr<pb::PodTable> none = planapi::EncodePodTable(std::vector<const pb::Pod*>{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*got.table)->message().SerializeAsString(), none->SerializeAsString());
  EXPECT_TRUE(got.pods.empty());
}

bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return cond();
}

std::string PodJson(const std::string& name, const std::string& image, bool ready) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","namespace":"ns","uid":"u-)", name,
      R"(","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web","controller-revision-hash":"cs-)", image,
      R"("},"ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs","uid":"uid-1",)"
      R"("controller":true}]},"spec":{"nodeName":"n1","readinessGates":[{"conditionType":"InPlaceUpdateReady"}],)"
      R"("containers":[{"name":"main","image":"img:)", image, R"("}]},"status":{"phase":"Running","conditions":[)"
      R"({"type":"Ready","status":")", ready ? "True" : "False",
      R"(","lastTransitionTime":"2026-01-01T00:01:00Z"}]}})");
}

// The informer cache keeps the rows from the pod watch: the table it assembles is the one encoded from its pods,
// after adds, updates and deletes, and a CloneSet's key is enqueued only once the row of the pod that changed is
// in the index (so the reconcile it starts sees the change).
TEST(InformerCachePodRows, TableFollowsTheWatchAndRowsComeBeforeTheEnqueue) {
  kube::testing::FakeApiServer server;
  ASSERT_TRUE(server.Start().ok());
  auto client = kube::NewHttpRestClient(kube::ClientConfig{.server = server.url()});
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string pods = "/api/v1/namespaces/ns/pods";
  server.Upsert(pods, PodJson("cs-b", "v1", true));
  server.Upsert(pods, PodJson("cs-a", "v1", false));

  std::atomic<int> enqueued{0}, stale{0};
  std::atomic<InformerCache*> cache_ptr{nullptr};
  std::mutex mu;
  std::string watched_name, watched_rv;  // the pod whose change the next enqueue must already show
  InformerCache cache(**client, [&](const std::string& key) {
    EXPECT_EQ(key, "ns/cs");
    std::lock_guard l(mu);
    if (InformerCache* c = cache_ptr.load(); c != nullptr && !watched_name.empty()) {
      const Observed seen = c->Lookup(ObjectKind::kPod, "ns", watched_name);
      const bool shown = watched_rv.empty() ? !seen.exists : seen.resource_version == watched_rv;
      if (!shown) ++stale;
    }
    ++enqueued;
  });
  cache_ptr = &cache;
  cache.Start();
  // Every pod event enqueues its CloneSet's key: an add and a delete once, an update for the new and the old
  // owner (the same here). Each step waits for its enqueues, so the next one checks its own event's.
  ASSERT_TRUE(WaitFor([&] { return cache.HasSynced() && enqueued.load() == 2; }));

  // The truth: the server's pods, decoded from a fresh LIST and sorted by name.
  const auto expect_table = [&](size_t pods_expected) {
    auto body = (*client)->List(pods, {});
    ASSERT_TRUE(body.ok()) << body.status();
    auto listed = snapshot::PodListFromJson(*body);
    ASSERT_TRUE(listed.ok()) << listed.status();
    std::sort(listed->begin(), listed->end(),
              [](const pb::Pod& a, const pb::Pod& b) { return a.metadata().name() < b.metadata().name(); });
    std::vector<const pb::Pod*> sorted;
    for (const pb::Pod& p : *listed) sorted.push_back(&p);
    ASSERT_EQ(sorted.size(), pods_expected);
    const planapi::SnapshotPods got = cache.PodSnapshot("ns", "uid-1", true);
    EXPECT_TRUE(got.pods.empty()) << "the cache keeps rows, not pods";
    const absl::StatusOr<pb::PodTable> want = planapi::EncodePodTable(sorted);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.table.has_value() && got.table->ok());
    EXPECT_EQ((*got.table)->message().SerializeAsString(), want->SerializeAsString());
    std::vector<std::shared_ptr<const pb::Pod>> copies;
    for (pb::Pod& p : cache.PodsOwnedBy("ns", "uid-1")) copies.push_back(std::make_shared<const pb::Pod>(p));
    ExpectSamePods(copies, sorted, "PodsOwnedBy");
  };
  expect_table(2);

  {
    std::lock_guard l(mu);
    watched_name = "cs-a";
    watched_rv = std::to_string(server.Upsert(pods, PodJson("cs-a", "v2", true)));
  }
  ASSERT_TRUE(WaitFor([&] { return enqueued.load() == 4; }));
  EXPECT_EQ(cache.Lookup(ObjectKind::kPod, "ns", "cs-a").resource_version, watched_rv);
  expect_table(2);
  {
    std::lock_guard l(mu);
    watched_name = "cs-b";
    watched_rv.clear();
    server.Remove(pods, "cs-b");
  }
  ASSERT_TRUE(WaitFor([&] { return enqueued.load() == 5; }));
  EXPECT_FALSE(cache.Lookup(ObjectKind::kPod, "ns", "cs-b").exists);
  expect_table(1);
  // A pod the decoder refuses is skipped, counted, and its error names the field; the cache goes on.
  server.Upsert(pods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"cs-bad","namespace":"ns",)"
                      R"("creationTimestamp":"yesterday","ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1",)"
                      R"("kind":"CloneSet","name":"cs","uid":"uid-1","controller":true}]}})");
  ASSERT_TRUE(WaitFor([&] { return cache.pod_decode_errors() == 1; }));
  EXPECT_NE(cache.last_pod_decode_error().message().find("metadata.creationTimestamp"), std::string::npos)
      << cache.last_pod_decode_error();
  EXPECT_FALSE(cache.Lookup(ObjectKind::kPod, "ns", "cs-bad").exists);
  EXPECT_EQ(enqueued.load(), 5);
  EXPECT_EQ(stale.load(), 0) << "an enqueue ran before the pod's row was in the index";
  cache.Stop();
  server.Stop();
}

// The informer decodes every event into one reused message: a pod whose next version lost fields (labels,
// annotations, finalizers, a second owner, conditions, container statuses, a launch priority, its deletion
// timestamp) has a row with none of them, the row of a fresh decode.
TEST(InformerCachePodRows, APodThatLosesFieldsKeepsNoneOfThemInItsRow) {
  kube::testing::FakeApiServer server;
  ASSERT_TRUE(server.Start().ok());
  auto client = kube::NewHttpRestClient(kube::ClientConfig{.server = server.url()});
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string pods = "/api/v1/namespaces/ns/pods";
  const std::string owner = R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs","uid":"uid-1",)"
                            R"("controller":true})";
  const std::string full = absl::StrCat(
      R"({"metadata":{"name":"p","namespace":"ns","uid":"u-p","creationTimestamp":"2026-01-01T00:00:00Z",)",
      R"("deletionTimestamp":"2026-01-02T00:00:00Z","labels":{"a":"1","b":"2"},"annotations":{"n":"x"},)",
      R"("finalizers":["example.com/f"],"ownerReferences":[)", owner,
      R"(,{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"cm"}]},)",
      R"("spec":{"nodeName":"n1","readinessGates":[{"conditionType":"InPlaceUpdateReady"}],"containers":[)",
      R"({"name":"main","image":"img:1","env":[{"name":"KRUISE_CONTAINER_PRIORITY","value":"5"}]},)",
      R"({"name":"side","image":"img:2"}]},"status":{"phase":"Running","conditions":[{"type":"Ready",)",
      R"("status":"True","reason":"r","message":"m","lastTransitionTime":"2026-01-01T00:01:00Z"}],)",
      R"("containerStatuses":[{"name":"main","image":"img:1","imageID":"sha256:1","containerID":"c://1",)",
      R"("ready":true,"restartCount":2}]}})");
  const std::string bare = absl::StrCat(R"({"metadata":{"name":"p","namespace":"ns","uid":"u-p",)",
                                        R"("ownerReferences":[)", owner, R"(]},"spec":{"containers":[{"name":"main"}]}})");
  server.Upsert(pods, full);
  InformerCache cache(**client, [](const std::string&) {});
  cache.Start();
  ASSERT_TRUE(WaitFor([&] { return cache.HasSynced(); }));
  // The truth: the pod the server holds now, decoded into a new message.
  const auto expect_row_of = [&](size_t labels, const std::string& rv) {
    ASSERT_TRUE(WaitFor([&] { return cache.Lookup(ObjectKind::kPod, "ns", "p").resource_version == rv; }));
    auto body = (*client)->Get(pods + "/p");
    ASSERT_TRUE(body.ok()) << body.status();
    auto fresh = snapshot::PodFromJson(*body);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    ASSERT_EQ(fresh->metadata().resource_version(), rv);
    ASSERT_EQ(fresh->metadata().labels().size(), labels);
    std::vector<std::shared_ptr<const pb::Pod>> got;
    for (pb::Pod& p : cache.PodsOwnedBy("ns", "uid-1")) got.push_back(std::make_shared<const pb::Pod>(p));
    ExpectSamePods(got, {&*fresh}, "rv " + rv);
  };
  expect_row_of(2, cache.Lookup(ObjectKind::kPod, "ns", "p").resource_version);
  expect_row_of(0, std::to_string(server.Upsert(pods, bare)));
  expect_row_of(2, std::to_string(server.Upsert(pods, full)));
  cache.Stop();
  server.Stop();
}

}  // namespace
}  // namespace cloneset::executor
