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
#include "gtest/gtest.h"
#include "kube/rest_client.h"
#include "kube/testing/fake_apiserver.h"
#include "planapi/pod_table.h"

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

// What the index must give for `owner`: its pods (by name) and their table encoded from scratch.
using PodsByName = std::map<std::string, std::shared_ptr<const pb::Pod>>;

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
  const planapi::SnapshotPods got = index.Owned("ns", owner, true);
  ASSERT_EQ(got.pods.size(), owned.size()) << "step " << step << " owner " << owner;
  for (size_t i = 0; i < owned.size(); ++i) {
    ASSERT_EQ(got.pods[i].get(), owned[i]) << "step " << step << " owner " << owner << " pod " << i;
  }
  const absl::StatusOr<pb::PodTable> want = planapi::EncodePodTable(owned);
  ASSERT_TRUE(got.table.has_value());
  ASSERT_EQ(got.table->ok(), want.ok()) << "step " << step << ": " << got.table->status() << " vs " << want.status();
  if (!want.ok()) {
    EXPECT_EQ(got.table->status(), want.status()) << "step " << step;
    return;
  }
  EXPECT_EQ((*got.table)->SerializeAsString(), want->SerializeAsString())
      << "step " << step << " owner " << owner << "\nincremental: " << (*got.table)->ShortDebugString()
      << "\nfrom scratch: " << want->ShortDebugString();
}

TEST(PodRowIndexTest, RandomChangesKeepTheTableOfEveryOwnerAsIfEncodedFromScratch) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("CLONESET_POD_ROWS_SEED=", seed));
  PodMaker maker(seed);
  PodRowIndex index;
  PodsByName pods;  // the truth
  int rv = 1;
  for (int step = 0; step < 3000 && !::testing::Test::HasFailure(); ++step) {
    const std::string name = absl::StrCat("pod-", maker.Int(40));
    const auto it = pods.find(name);
    const int op = maker.Int(10);
    if (it != pods.end() && op < 3) {
      index.Remove(*it->second);
      pods.erase(it);
    } else if (it != pods.end() && op == 3) {
      index.Upsert(it->second);  // a resync: the same object again
    } else {
      auto pod = std::make_shared<const pb::Pod>(maker.Make(name, ++rv));
      index.Upsert(pod);
      pods[name] = pod;
    }
    for (const char* owner : kOwners) ExpectSameAsFromScratch(index, pods, owner, step);
    const auto it2 = pods.find(name);
    const Observed seen = index.Lookup("ns", name);
    EXPECT_EQ(seen.exists, it2 != pods.end()) << "step " << step;
    if (it2 != pods.end()) {
      EXPECT_EQ(seen.resource_version, it2->second->metadata().resource_version());
    }
  }
  for (const auto& [name, p] : pods) index.Remove(*p);
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
  index.Upsert(std::make_shared<const pb::Pod>(a));
  index.Upsert(std::make_shared<const pb::Pod>(b));
  const planapi::SnapshotPods got = index.Owned("ns", "uid-a", true);
  ASSERT_TRUE(got.table.has_value());
  const absl::StatusOr<pb::PodTable> want = planapi::EncodePodTable(std::vector<const pb::Pod*>{&a, &b});
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(got.table->status(), want.status());
  EXPECT_EQ(got.table->status().message().substr(0, 39), "pods[1].metadata.deletionTimestamp: sec");
  // Without a table only the pods are read.
  const planapi::SnapshotPods pods_only = index.Owned("ns", "uid-a", false);
  EXPECT_FALSE(pods_only.table.has_value());
  EXPECT_EQ(pods_only.pods.size(), 2u);
}

TEST(PodRowIndexTest, AnOwnerWithoutPodsHasAnEmptyTable) {
  PodRowIndex index;
  const planapi::SnapshotPods got = index.Owned("ns", "uid-a", true);
  ASSERT_TRUE(got.table.has_value());
  ASSERT_TRUE(got.table->ok());
  const absl::StatusOr<pb::PodTable> none = planapi::EncodePodTable(std::vector<const pb::Pod*>{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*got.table)->SerializeAsString(), none->SerializeAsString());
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

  const auto expect_table = [&](size_t pods_expected) {
    const planapi::SnapshotPods got = cache.PodSnapshot("ns", "uid-1", true);
    ASSERT_EQ(got.pods.size(), pods_expected);
    std::vector<const pb::Pod*> sorted;
    for (const auto& p : got.pods) sorted.push_back(p.get());
    ASSERT_TRUE(std::is_sorted(sorted.begin(), sorted.end(), [](const pb::Pod* a, const pb::Pod* b) {
      return a->metadata().name() < b->metadata().name();
    }));
    const std::vector<pb::Pod> copies = cache.PodsOwnedBy("ns", "uid-1");
    ASSERT_EQ(copies.size(), pods_expected);
    const absl::StatusOr<pb::PodTable> want = planapi::EncodePodTable(sorted);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.table.has_value() && got.table->ok());
    EXPECT_EQ((*got.table)->SerializeAsString(), want->SerializeAsString());
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
  EXPECT_EQ(stale.load(), 0) << "an enqueue ran before the pod's row was in the index";
  cache.Stop();
  server.Stop();
}

}  // namespace
}  // namespace cloneset::executor
