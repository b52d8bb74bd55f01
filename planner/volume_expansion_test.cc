// Growing claims (semantics §4.11): a volumeClaimTemplate's storage request raised expands the live pods' claims in
// place when their StorageClass allows it (and rolls no pod), holds them visibly when it does not, never shrinks.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "kruise/keys.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/revision.h"
#include "planner/testing/both_encodings.h"
#include "planner/testing/fixtures.h"
#include "planner/volume_expansion.h"

namespace cloneset::planner {
namespace {

namespace t = testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Json = nlohmann::json;

constexpr char kRev[] = "cs-rev-1";

std::string Vct(const std::string& storage) {
  Json v = Json::parse(t::VctJson("data"));
  v["spec"]["resources"]["requests"]["storage"] = storage;
  return v.dump();
}

struct Claim {
  std::string id;       // instance id; the pod is cs-<id>, its claim data-cs-<id>
  std::string storage;  // the claim's spec.resources.requests.storage
  std::string cls;      // its storageClassName
  std::string pod_state = kStateNormal;  // lifecycle state; "deleting" = the pod has a deletionTimestamp
  std::string phase = "Bound";           // the claim's status.phase
};

// A steady CloneSet (every pod ready on the one revision) whose template asks for `storage`.
pb::PlanRequest Steady(const std::string& storage, const std::vector<Claim>& claims,
                       const std::vector<std::pair<std::string, bool>>& classes) {
  pb::CloneSet cs = t::CloneSetBuilder().Replicas(static_cast<int32_t>(claims.size())).Vct(Vct(storage)).Status(
      kRev, kRev);
  std::vector<pb::Pod> pods;
  std::vector<pb::PersistentVolumeClaim> pvcs;
  for (const Claim& c : claims) {
    t::PodBuilder pod("cs-" + c.id);
    pod.Revision(kRev).Label(kPodTemplateHashLabel, std::string(ShortHash(kRev))).Node("node-1").Ready(
        t::Now() - absl::Hours(1));
    if (c.pod_state == "deleting") {
      pod.Lifecycle(kStateNormal).Deleting(t::Now());
    } else {
      pod.Lifecycle(c.pod_state);
    }
    pods.push_back(pod);
    pb::PersistentVolumeClaim pvc = t::PvcBuilder("data-cs-" + c.id, c.id);
    pvc.mutable_metadata()->set_resource_version("rv-" + c.id);
    pvc.set_storage_request(c.storage);
    pvc.set_storage_class_name(c.cls);
    pvc.set_phase(c.phase);
    pvcs.push_back(pvc);
  }
  pb::PlanRequest request = t::Request(cs, pods, pvcs, {t::RevisionBuilder(kRev, 1)});
  for (const auto& [name, allow] : classes) {
    pb::StorageClass* sc = request.add_storage_classes();
    sc->set_name(name);
    sc->set_allow_volume_expansion(allow);
  }
  return request;
}

// Each action as "kind name [storage]".
std::vector<std::string> Actions(const pb::PlanResponse& resp) {
  std::vector<std::string> out;
  for (const pb::Action& a : resp.actions()) {
    switch (a.kind_case()) {
      case pb::Action::kExpandPvc:
        EXPECT_FALSE(a.stop_on_error()) << "a refused expansion must not hold back the rest of the plan";
        out.push_back(absl::StrCat("expand ", a.expand_pvc().name(), " ", a.expand_pvc().storage(), " rv=",
                                   a.expand_pvc().resource_version(), " uid=", a.expand_pvc().uid(), " pod=",
                                   a.expand_pvc().pod_name()));
        break;
      case pb::Action::kUpdateRevision:
        EXPECT_TRUE(a.stop_on_error());
        out.push_back(absl::StrCat("annotate ", a.update_revision().name(), " rv=",
                                   a.update_revision().resource_version(), " vct-hash=",
                                   a.update_revision().set_annotations().at(kVctHashAnnotation)));
        break;
      default:
        out.push_back(absl::StrCat("other ", a.ShortDebugString()));
    }
  }
  return out;
}

const pb::Condition* Held(const pb::CloneSetStatus& status) {
  for (const pb::Condition& c : status.conditions()) {
    if (c.type() == kVolumeExpansionHeldCondition) return &c;
  }
  return nullptr;
}

std::vector<std::string> Events(const pb::PlanResponse& resp) {
  std::vector<std::string> out;
  for (const pb::Event& e : resp.events()) {
    out.push_back(absl::StrCat(e.type() == pb::WARNING ? "Warning " : "Normal ", e.reason(), ": ", e.message()));
  }
  return out;
}

struct Case {
  std::string name;
  std::string template_storage;
  std::vector<Claim> claims;
  std::vector<std::pair<std::string, bool>> classes;
  std::vector<std::string> actions;
  std::vector<std::string> events;
  std::vector<std::string> blocked;
  std::string condition;  // the VolumeExpansionHeld message, "" = no condition
  // Whether the plan writes no pod. A pod in PreparingDelete without a preDelete hook goes back to
  // PreparingNormal (§6.2), which has nothing to do with its claims.
  bool pods_untouched = true;
};

class VolumeExpansionTest : public ::testing::TestWithParam<Case> {};

TEST_P(VolumeExpansionTest, Plan) {
  const Case& c = GetParam();
  absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(Steady(c.template_storage, c.claims, c.classes));
  ASSERT_TRUE(resp.ok()) << resp.status();
  std::vector<std::string> actions = Actions(*resp);
  if (!c.pods_untouched) std::erase_if(actions, [](const std::string& a) { return a.starts_with("other patch_pod"); });
  EXPECT_EQ(actions, c.actions) << "no pod is touched: the claims grow under running pods";
  EXPECT_EQ(Events(*resp), c.events);
  EXPECT_THAT(resp->summary().blocked_reasons(), ::testing::ElementsAreArray(c.blocked));
  const pb::Condition* held = Held(resp->status());
  if (c.condition.empty()) {
    EXPECT_EQ(held, nullptr) << held->ShortDebugString();
    return;
  }
  ASSERT_TRUE(resp->write_status());
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->status(), "True");
  EXPECT_EQ(held->reason(), "ExpansionNotAllowed");
  EXPECT_EQ(held->message(), c.condition);
}

const char kHeldTail[] = "; they keep their size until their pods are recreated";

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeExpansionTest,
    ::testing::Values(
        Case{"grow, the class allows expansion",
             "20Gi",
             {{"aaaaa", "10Gi", "fast"}, {"bbbbb", "10Gi", "fast"}},
             {{"fast", true}},
             {"expand data-cs-aaaaa 20Gi rv=rv-aaaaa uid=uid-data-cs-aaaaa pod=cs-aaaaa",
              "expand data-cs-bbbbb 20Gi rv=rv-bbbbb uid=uid-data-cs-bbbbb pod=cs-bbbbb"},
             {"Normal ExpandingPVC: expanding PVC data-cs-aaaaa of pod cs-aaaaa from 10Gi to 20Gi",
              "Normal ExpandingPVC: expanding PVC data-cs-bbbbb of pod cs-bbbbb from 10Gi to 20Gi"},
             {},
             ""},
        Case{"grow, the class does not allow expansion",
             "20Gi",
             {{"aaaaa", "10Gi", "slow"}},
             {{"slow", false}},
             {},
             {absl::StrCat("Warning VolumeExpansionNotAllowed: 1 PVC is below the volumeClaimTemplate's storage and "
                           "not expanded: data-cs-aaaaa (10Gi < 20Gi: StorageClass slow does not allow volume "
                           "expansion)",
                           kHeldTail)},
             {"PVC data-cs-aaaaa is not expanded to 20Gi: StorageClass slow does not allow volume expansion"},
             absl::StrCat("1 PVC is below the volumeClaimTemplate's storage and not expanded: data-cs-aaaaa (10Gi < "
                          "20Gi: StorageClass slow does not allow volume expansion)",
                          kHeldTail)},
        Case{"grow, the class is not in the request",
             "20Gi",
             {{"aaaaa", "10Gi", "fast"}, {"bbbbb", "10Gi", ""}},
             {},
             {},
             {absl::StrCat("Warning VolumeExpansionNotAllowed: 2 PVCs are below the volumeClaimTemplate's storage "
                           "and not expanded: data-cs-aaaaa (10Gi < 20Gi: StorageClass fast is unknown); "
                           "data-cs-bbbbb (10Gi < 20Gi: the claim names no StorageClass)",
                           kHeldTail)},
             {"PVC data-cs-aaaaa is not expanded to 20Gi: StorageClass fast is unknown",
              "PVC data-cs-bbbbb is not expanded to 20Gi: the claim names no StorageClass"},
             absl::StrCat("2 PVCs are below the volumeClaimTemplate's storage and not expanded: data-cs-aaaaa (10Gi < "
                          "20Gi: StorageClass fast is unknown); data-cs-bbbbb (10Gi < 20Gi: the claim names no "
                          "StorageClass)",
                          kHeldTail)},
        Case{"grow, the claim is not bound",
             "20Gi",
             {{"aaaaa", "10Gi", "fast", kStateNormal, "Pending"}},
             {{"fast", true}},
             {},
             {absl::StrCat("Warning VolumeExpansionNotAllowed: 1 PVC is below the volumeClaimTemplate's storage and "
                           "not expanded: data-cs-aaaaa (10Gi < 20Gi: the claim is Pending)",
                           kHeldTail)},
             {"PVC data-cs-aaaaa is not expanded to 20Gi: the claim is Pending"},
             absl::StrCat("1 PVC is below the volumeClaimTemplate's storage and not expanded: data-cs-aaaaa (10Gi < "
                          "20Gi: the claim is Pending)",
                          kHeldTail)},
        Case{"shrink is never done",
             "5Gi",
             {{"aaaaa", "10Gi", "fast"}},
             {{"fast", true}},
             {},
             {},
             {"PVC data-cs-aaaaa holds 10Gi, more than its template's 5Gi: claims are never shrunk"},
             ""},
        Case{"claims at the template's size, in any spelling",
             "20Gi",
             {{"aaaaa", "20Gi", "fast"}, {"bbbbb", "20480Mi", "fast"}, {"ccccc", "21474836480", "slow"}},
             {{"fast", true}, {"slow", false}},
             {},
             {},
             {},
             ""},
        Case{"a pod being deleted or in PreparingDelete keeps its claim as it is",
             "20Gi",
             {{"aaaaa", "10Gi", "fast", "deleting"}, {"bbbbb", "10Gi", "fast", kStatePreparingDelete},
              {"ccccc", "10Gi", "fast"}},
             {{"fast", true}},
             {"expand data-cs-ccccc 20Gi rv=rv-ccccc uid=uid-data-cs-ccccc pod=cs-ccccc"},
             {"Normal ExpandingPVC: expanding PVC data-cs-ccccc of pod cs-ccccc from 10Gi to 20Gi"},
             {},
             "",
             false}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name;
      for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

// The Warning comes once: a plan whose CloneSet already shows the same condition emits no event and writes no status
// for it; the condition goes once the class allows expansion.
TEST(VolumeExpansionHeld, WarnsOnceAndClearsWhenTheClassAllowsExpansion) {
  pb::PlanRequest request = Steady("20Gi", {{"aaaaa", "10Gi", "slow"}}, {{"slow", false}});
  absl::StatusOr<pb::PlanResponse> first = t::PlanBothEncodings(request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->write_status());
  *request.mutable_clone_set()->mutable_status() = first->status();
  absl::StatusOr<pb::PlanResponse> again = t::PlanBothEncodings(request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Events(*again), IsEmpty());
  EXPECT_FALSE(again->write_status());
  EXPECT_EQ(again->summary().phase(), "blocked");

  request.mutable_storage_classes(0)->set_allow_volume_expansion(true);
  absl::StatusOr<pb::PlanResponse> allowed = t::PlanBothEncodings(request);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_THAT(Actions(*allowed),
              ElementsAre("expand data-cs-aaaaa 20Gi rv=rv-aaaaa uid=uid-data-cs-aaaaa pod=cs-aaaaa"));
  EXPECT_TRUE(allowed->write_status());
  EXPECT_EQ(Held(allowed->status()), nullptr);
}

// A CloneSet being deleted expands nothing.
TEST(VolumeExpansionHeld, NothingWhileTheCloneSetIsDeleted) {
  pb::PlanRequest request = Steady("20Gi", {{"aaaaa", "10Gi", "fast"}}, {{"fast", true}});
  *request.mutable_clone_set()->mutable_metadata()->mutable_deletion_timestamp() = t::Ts(t::Now());
  absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(request);
  ASSERT_TRUE(resp.ok()) << resp.status();
  for (const pb::Action& a : resp->actions()) EXPECT_FALSE(a.has_expand_pvc()) << a.ShortDebugString();
}

// A storage growth alone creates no revision and moves no pod (semantics §3.3): the plan holds the expansions only.
TEST(VolumeExpansionRevision, AGrowthAloneRollsNoPod) {
  absl::StatusOr<pb::PlanResponse> resp =
      t::PlanBothEncodings(Steady("20Gi", {{"aaaaa", "10Gi", "fast"}}, {{"fast", true}}));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->update_revision(), kRev);
  EXPECT_EQ(resp->summary().phase(), "housekeeping");
  EXPECT_EQ(resp->summary().update_num(), 0);
}

std::string VctHash(const std::string& vct_json) {
  pb::CloneSetSpec spec;
  spec.add_volume_claim_templates_json(vct_json);
  absl::StatusOr<std::string> hash = VolumeClaimTemplatesHash(spec);
  EXPECT_TRUE(hash.ok()) << hash.status();
  return hash.ok() ? *hash : "";
}

// The update revision's claim-template hash follows a growth the claims follow in place, so that a later template
// change updates the pods in place rather than recreating them for a claim-template change (§3.3); only when the
// growth is the templates' only change, every claim can grow and no rollout is under way.
TEST(VolumeExpansionRevision, TheUpdateRevisionsHashFollowsAStorageOnlyGrowth) {
  Json rwx = Json::parse(Vct("10Gi"));
  rwx["spec"]["accessModes"] = Json::array({"ReadWriteMany"});
  struct Case {
    std::string name;
    std::string annotated;  // the claim templates the revision's hash annotation was made of
    std::vector<Claim> claims;
    bool allowed = true;
    bool refreshed;
  };
  const std::vector<Case> cases = {
      {"storage only", Vct("10Gi"), {{"aaaaa", "10Gi", "fast"}, {"bbbbb", "10240Mi", "fast"}}, true, true},
      {"a claim created after the growth", Vct("10Gi"), {{"aaaaa", "10Gi", "fast"}, {"bbbbb", "20Gi", "fast"}},
       true, true},
      {"access modes changed too", rwx.dump(), {{"aaaaa", "10Gi", "fast"}}, true, false},
      {"claims of two sizes", Vct("10Gi"), {{"aaaaa", "10Gi", "fast"}, {"bbbbb", "15Gi", "fast"}}, true, false},
      {"a claim is held", Vct("10Gi"), {{"aaaaa", "10Gi", "fast"}}, false, false},
      {"already the templates' hash", Vct("20Gi"), {{"aaaaa", "10Gi", "fast"}}, true, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::PlanRequest request = Steady("20Gi", c.claims, {{"fast", c.allowed}});
    pb::ControllerRevision* rev = request.mutable_revisions(0);
    rev->mutable_metadata()->set_resource_version("rev-rv");
    (*rev->mutable_metadata()->mutable_annotations())[kVctHashAnnotation] = VctHash(c.annotated);
    absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(request);
    ASSERT_TRUE(resp.ok()) << resp.status();
    const std::vector<std::string> actions = Actions(*resp);
    const std::string refresh = absl::StrCat("annotate ", kRev, " rv=rev-rv vct-hash=", VctHash(Vct("20Gi")));
    if (c.refreshed) {
      EXPECT_EQ(actions[0], refresh) << "before the claims grow";
      EXPECT_EQ(std::count(actions.begin(), actions.end(), refresh), 1);
    } else {
      EXPECT_EQ(std::count(actions.begin(), actions.end(), refresh), 0);
    }
  }
}

// During a rollout (pods on two revisions) the hash stays: the claims still grow.
TEST(VolumeExpansionRevision, NoRefreshDuringARollout) {
  pb::PlanRequest request = Steady("20Gi", {{"aaaaa", "10Gi", "fast"}}, {{"fast", true}});
  (*request.mutable_revisions(0)->mutable_metadata()->mutable_annotations())[kVctHashAnnotation] =
      VctHash(Vct("10Gi"));
  request.mutable_clone_set()->mutable_status()->set_current_revision("cs-rev-0");
  *request.add_revisions() = t::RevisionBuilder("cs-rev-0", 0).Template(t::TemplateJson("nginx:1.24"));
  request.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->set_paused(true);
  absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(request);
  ASSERT_TRUE(resp.ok()) << resp.status();
  for (const pb::Action& a : resp->actions()) EXPECT_FALSE(a.has_update_revision()) << a.ShortDebugString();
}

}  // namespace
}  // namespace cloneset::planner
