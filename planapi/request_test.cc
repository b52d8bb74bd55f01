#include "planapi/request.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "planapi/pod_table.h"

namespace cloneset::planapi {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr char kSpreadTemplate[] =
    R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone"}],"containers":[]}})";

pb::CloneSet CloneSet(const std::string& template_json) {
  pb::CloneSet cs;
  cs.mutable_metadata()->set_name("cs");
  cs.mutable_metadata()->set_namespace_("ns");
  cs.mutable_metadata()->set_uid("uid-1");
  cs.mutable_metadata()->set_resource_version("100");
  cs.mutable_spec()->set_template_json(template_json);
  return cs;
}

pb::Pod Pod(const std::string& name, const std::string& rv, const std::string& node) {
  pb::Pod p;
  p.mutable_metadata()->set_name(name);
  p.mutable_metadata()->set_namespace_("ns");
  p.mutable_metadata()->set_resource_version(rv);
  p.set_node_name(node);
  return p;
}

pb::PersistentVolumeClaim Pvc(const std::string& name, bool deleting) {
  pb::PersistentVolumeClaim pvc;
  pvc.mutable_metadata()->set_name(name);
  if (deleting) pvc.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(1700000000);
  return pvc;
}

std::vector<std::string> Names(const std::vector<const pb::Pod*>& pods) {
  std::vector<std::string> out;
  for (const pb::Pod* p : pods) out.push_back(p->metadata().name());
  return out;
}

const absl::Time kNow = absl::FromUnixNanos(1700000000123456789);

// Options carrying gates that differ from upstream's defaults.
RequestOptions WithGates(bool pod_table) {
  RequestOptions o{.pod_table = pod_table};
  o.feature_gates.set_clone_set_short_hash(true);
  o.feature_gates.set_disable_in_place_update_env_from_metadata(true);
  o.feature_gates.set_scaling_exclude_preparing_delete(true);
  return o;
}

struct Case {
  std::string name;
  RequestOptions options;
  std::string template_json;
  std::vector<std::string> want_lookup;  // names asked for; empty: the lookup is not called
  std::vector<std::string> want_nodes;
};

class AssembleTest : public ::testing::TestWithParam<Case> {};

TEST_P(AssembleTest, FollowsTheContractRules) {
  const Case& tc = GetParam();
  OwnedObjects objects;
  objects.pods = {Pod("cs-c", "7", "n2"), Pod("cs-a", "5", "n1"), Pod("cs-b", "6", "n2"), Pod("cs-d", "8", "")};
  objects.pvcs = {Pvc("data-cs-a", false), Pvc("data-cs-x", true), Pvc("data-cs-b", false)};
  objects.revisions.emplace_back().mutable_metadata()->set_name("cs-rev1");
  std::vector<std::string> asked;
  bool called = false;
  const NodeLookup nodes = [&](const std::vector<std::string>& names) {
    called = true;
    asked = names;
    std::vector<pb::Node> out;
    for (const std::string& n : names) {
      if (n == "n3") continue;  // unreadable
      out.emplace_back().set_name(n);
    }
    return out;
  };
  absl::Status table_error;
  const pb::CloneSet cs = CloneSet(tc.template_json);
  RequestWithPods s = AssembleRequest(cs, objects, nodes, kNow, tc.options, &table_error);
  EXPECT_TRUE(table_error.ok()) << table_error;
  const pb::PlanRequest& req = s.request;
  EXPECT_THAT(Names(s.Pods()), ElementsAre("cs-a", "cs-b", "cs-c", "cs-d"));
  EXPECT_EQ(req.has_pod_table(), tc.options.pod_table);
  EXPECT_EQ(PodsInRequest(req), 4);
  EXPECT_EQ(req.accept_in_place_batches(), tc.options.in_place_batches);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(req.feature_gates(), tc.options.feature_gates))
      << req.feature_gates().ShortDebugString();
  // The seed is the state's: pods in name order, whatever the encoding.
  std::vector<pb::Pod> sorted = {Pod("cs-a", "5", "n1"), Pod("cs-b", "6", "n2"), Pod("cs-c", "7", "n2"),
                                 Pod("cs-d", "8", "")};
  EXPECT_EQ(req.random_seed(), PlanSeed(cs, sorted));
  EXPECT_EQ(called, !tc.want_lookup.empty());
  EXPECT_THAT(asked, ElementsAreArray(tc.want_lookup));
  std::vector<std::string> sent;
  for (const pb::Node& n : req.nodes()) sent.push_back(n.name());
  EXPECT_THAT(sent, ElementsAreArray(tc.want_nodes));
  // A claim being deleted is not the pod's any more.
  ASSERT_EQ(req.pvcs_size(), 2);
  EXPECT_EQ(req.pvcs(0).metadata().name(), "data-cs-a");
  EXPECT_EQ(req.pvcs(1).metadata().name(), "data-cs-b");
  ASSERT_EQ(req.revisions_size(), 1);
  EXPECT_EQ(req.now().seconds(), 1700000000);
  EXPECT_EQ(req.now().nanos(), 123456789);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AssembleTest,
    ::testing::Values(Case{"table_spread", {}, kSpreadTemplate, {"n1", "n2"}, {"n1", "n2"}},
                      Case{"objects_spread", {.pod_table = false}, kSpreadTemplate, {"n1", "n2"}, {"n1", "n2"}},
                      Case{"no_batches_plain", {.in_place_batches = false}, R"({"spec":{}})", {}, {}},
                      Case{"objects_plain", {.pod_table = false, .in_place_batches = false}, "", {}, {}},
                      // The caller's gates go into every request, whatever the pods' encoding.
                      Case{"table_gates", WithGates(true), "", {}, {}},
                      Case{"objects_gates", WithGates(false), "", {}, {}}),
    [](const auto& info) { return info.param.name; });

TEST(AssembleTest, UnreadableNodesAreLeftOut) {
  OwnedObjects objects;
  objects.pods = {Pod("cs-a", "1", "n3"), Pod("cs-b", "2", "n1")};
  const RequestWithPods s = AssembleRequest(
      CloneSet(kSpreadTemplate), objects,
      [](const std::vector<std::string>& names) {
        std::vector<pb::Node> out;
        for (const std::string& n : names) {
          if (n != "n3") out.emplace_back().set_name(n);
        }
        return out;
      },
      kNow, {});
  ASSERT_EQ(s.request.nodes_size(), 1);
  EXPECT_EQ(s.request.nodes(0).name(), "n1");
}

TEST(AssembleTest, PodsTheTableCannotCarryGoAsObjects) {
  OwnedObjects objects;
  objects.pods = {Pod("cs-a", "1", "")};
  objects.pods[0].mutable_metadata()->mutable_creation_timestamp()->set_seconds(-20000000000);  // year 1336
  absl::Status table_error;
  const RequestWithPods s = AssembleRequest(CloneSet(""), objects, nullptr, kNow, {}, &table_error);
  EXPECT_FALSE(table_error.ok());
  EXPECT_FALSE(s.request.has_pod_table());
  EXPECT_EQ(s.request.pods_size(), 1);
  EXPECT_TRUE(s.table_pods.empty());
}

// The request's bytes in pieces (RequestWithPods::Serialize): concatenated, exactly request.SerializeAsString(), with
// the shared table's cached bytes as the middle piece, not serialized again.
std::string Concatenated(const RequestBytes& b) {
  return b.head + (b.table.has_value() ? b.table->bytes() : std::string()) + b.tail;
}

struct BytesCase {
  std::string name;
  RequestOptions options;
  std::string template_json;
  bool extras = false;        // feature gates and image pull jobs set too
  bool shared_table = false;  // the table handed in as the cache hands it (SnapshotPods.table)
  bool want_table_piece = true;
};

class SerializeTest : public ::testing::TestWithParam<BytesCase> {};

TEST_P(SerializeTest, PiecesAreTheRequestsBytes) {
  const BytesCase& tc = GetParam();
  OwnedObjects objects;
  objects.pods = {Pod("cs-c", "7", "n2"), Pod("cs-a", "5", "n1"), Pod("cs-b", "6", "n2")};
  objects.pods[0].mutable_metadata()->mutable_labels()->insert({"app", "web"});
  objects.pvcs = {Pvc("data-cs-a", false), Pvc("data-cs-b", false)};
  objects.revisions.emplace_back().mutable_metadata()->set_name("cs-rev1");
  const NodeLookup nodes = [](const std::vector<std::string>& names) {
    std::vector<pb::Node> out;
    for (const std::string& n : names) out.emplace_back().set_name(n);
    return out;
  };
  RequestWithPods s;
  if (tc.shared_table) {
    std::vector<const pb::Pod*> sorted = {&objects.pods[1], &objects.pods[2], &objects.pods[0]};
    SnapshotPods pods;
    pods.table = EncodePodTable(sorted);
    s = AssembleRequest(CloneSet(tc.template_json), std::move(pods), objects.pvcs, objects.revisions, nodes, kNow,
                        tc.options);
  } else {
    s = AssembleRequest(CloneSet(tc.template_json), objects, nodes, kNow, tc.options);
  }
  if (tc.extras) {
    s.request.mutable_feature_gates()->set_clone_set_short_hash(true);
    s.request.add_image_pull_jobs("cs-old-main");
    pb::StorageClass sc;
    sc.set_name("fast");
    sc.set_allow_volume_expansion(true);
    s.request.mutable_pvcs(0)->set_storage_class_name("fast");
    SetStorageClasses({sc}, &s.request);
  }
  const std::string want = s.request.SerializeAsString();
  const RequestBytes got = s.Serialize();
  EXPECT_EQ(got.table.has_value(), tc.want_table_piece);
  if (got.table.has_value()) {
    EXPECT_EQ(&got.table->message(), &s.request.pod_table()) << "the piece is the request's own table";
    EXPECT_EQ(got.table->bytes(), s.request.pod_table().SerializeAsString());
  }
  EXPECT_EQ(Concatenated(got), want);
  // The request is as it was: its table and flag came back.
  EXPECT_EQ(s.request.SerializeAsString(), want);
  EXPECT_EQ(s.request.has_pod_table(), tc.options.pod_table);
  EXPECT_EQ(s.request.accept_in_place_batches(), tc.options.in_place_batches);
  // The bytes parse back into the request.
  pb::PlanRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(Concatenated(got)));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parsed, s.request));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SerializeTest,
    ::testing::Values(BytesCase{"table_batches_spread", {}, kSpreadTemplate},
                      BytesCase{"table_no_batches", {.in_place_batches = false}, ""},
                      BytesCase{"table_batches_extras", {}, kSpreadTemplate, true},
                      BytesCase{"shared_table_batches", {}, "", false, true},
                      BytesCase{"shared_table_no_batches_extras", {.in_place_batches = false}, kSpreadTemplate, true,
                                true},
                      BytesCase{"objects_batches", {.pod_table = false}, kSpreadTemplate, true, false, false},
                      BytesCase{"objects_no_batches", {.pod_table = false, .in_place_batches = false}, "", false,
                                false, false}),
    [](const auto& info) { return info.param.name; });

TEST(SetStorageClasses, TheClassesTheClaimsNameSortedByName) {
  const auto cls = [](const std::string& name, bool allow) {
    pb::StorageClass sc;
    sc.set_name(name);
    sc.set_allow_volume_expansion(allow);
    return sc;
  };
  pb::PlanRequest req;
  req.add_pvcs()->set_storage_class_name("slow");
  req.add_pvcs()->set_storage_class_name("fast");
  req.add_pvcs()->set_storage_class_name("fast");
  req.add_pvcs();  // no class
  req.add_storage_classes()->set_name("stale");
  SetStorageClasses({cls("unused", true), cls("slow", false), cls("fast", true)}, &req);
  ASSERT_EQ(req.storage_classes_size(), 2);
  EXPECT_EQ(req.storage_classes(0).name(), "fast");
  EXPECT_TRUE(req.storage_classes(0).allow_volume_expansion());
  EXPECT_EQ(req.storage_classes(1).name(), "slow");
  EXPECT_FALSE(req.storage_classes(1).allow_volume_expansion());
  SetStorageClasses({}, &req);
  EXPECT_EQ(req.storage_classes_size(), 0);
}

TEST(SerializeTest, AnEmptyTableIsAPiece) {
  SnapshotPods pods;
  pods.table = SharedPodTable();
  RequestWithPods s = AssembleRequest(CloneSet(""), std::move(pods), {}, {}, nullptr, kNow, {});
  ASSERT_TRUE(s.request.has_pod_table());
  const RequestBytes got = s.Serialize();
  EXPECT_EQ(Concatenated(got), s.request.SerializeAsString());
}

// Snapshots share the table they are given: no copy of it, moved or not; a copied snapshot owns a copy.
TEST(SerializeTest, TheTableIsSharedNotCopied) {
  OwnedObjects objects;
  objects.pods = {Pod("cs-a", "1", ""), Pod("cs-b", "2", "")};
  std::vector<const pb::Pod*> sorted = {&objects.pods[0], &objects.pods[1]};
  absl::StatusOr<pb::PodTable> encoded = EncodePodTable(sorted);
  ASSERT_TRUE(encoded.ok());
  const SharedPodTable table(*encoded);
  const auto snapshot = [&] {
    SnapshotPods pods;
    pods.table = table;
    return AssembleRequest(CloneSet(""), std::move(pods), {}, {}, nullptr, kNow, {});
  };
  RequestWithPods a = snapshot();
  RequestWithPods b = snapshot();
  EXPECT_EQ(&a.request.pod_table(), &table.message());
  EXPECT_EQ(&b.request.pod_table(), &table.message());
  RequestWithPods moved = std::move(a);
  EXPECT_EQ(&moved.request.pod_table(), &table.message());
  EXPECT_EQ(moved.Serialize().table.has_value(), true);
  RequestWithPods assigned;
  assigned = std::move(moved);
  EXPECT_EQ(&assigned.request.pod_table(), &table.message());
  const RequestWithPods copy = assigned;
  EXPECT_NE(&copy.request.pod_table(), &table.message());
  EXPECT_EQ(copy.request.pod_table().SerializeAsString(), table.bytes());
  // Objects instead: the shared table leaves the request untouched.
  b.SendPodsAsObjects();
  EXPECT_FALSE(b.request.has_pod_table());
  EXPECT_EQ(b.request.pods_size(), 2);
  EXPECT_FALSE(b.Serialize().table.has_value());
  EXPECT_EQ(table.message().SerializeAsString(), encoded->SerializeAsString());
}

TEST(RequestPlanTest, ExpandsBatchesAndResendsObjectsToAPlannerThatDidNotReadTheTable) {
  OwnedObjects objects;
  objects.pods = {Pod("cs-a", "1", ""), Pod("cs-b", "2", "")};
  RequestWithPods s = AssembleRequest(CloneSet(""), objects, nullptr, kNow, {});
  ASSERT_TRUE(s.request.has_pod_table());
  std::vector<bool> tables;
  absl::Status unread;
  auto plan = RequestPlan(
      s,
      [&](const pb::PlanRequest& req) {
        tables.push_back(req.has_pod_table());
        pb::PlanResponse resp;
        // An old planner reads `pods` only.
        resp.set_pods_read(req.pods_size());
        pb::StartInPlaceUpdates* batch = resp.add_actions()->mutable_start_in_place_updates();
        batch->add_targets()->set_name("cs-a");
        return absl::StatusOr<pb::PlanResponse>(resp);
      },
      &unread);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(tables, ElementsAre(true, false));
  EXPECT_FALSE(unread.ok());
  EXPECT_EQ(plan->pods_read(), 2);
  EXPECT_EQ(s.request.pods_size(), 2);
  ASSERT_EQ(plan->actions_size(), 1);
  EXPECT_TRUE(plan->actions(0).has_patch_pod());
  EXPECT_EQ(plan->actions(0).patch_pod().name(), "cs-a");
}

TEST(RequestPlanTest, APlannerThatReadTheTableIsAskedOnce) {
  OwnedObjects objects;
  objects.pods = {Pod("cs-a", "1", "")};
  RequestWithPods s = AssembleRequest(CloneSet(""), objects, nullptr, kNow, {});
  int calls = 0;
  absl::Status unread;
  auto plan = RequestPlan(
      s,
      [&](const pb::PlanRequest& req) {
        ++calls;
        pb::PlanResponse resp;
        resp.set_pods_read(PodsInRequest(req));
        return absl::StatusOr<pb::PlanResponse>(resp);
      },
      &unread);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(unread.ok());
  EXPECT_TRUE(s.request.has_pod_table());
}

TEST(RequestPlanTest, AFailedCallIsReturned) {
  RequestWithPods s = AssembleRequest(CloneSet(""), {}, nullptr, kNow, {});
  auto plan = RequestPlan(s, [](const pb::PlanRequest&) -> absl::StatusOr<pb::PlanResponse> {
    return absl::UnavailableError("down");
  });
  EXPECT_TRUE(absl::IsUnavailable(plan.status()));
}

}  // namespace
}  // namespace cloneset::planapi
