// updateStrategy.type OnDelete through the whole Plan (semantics §1.1): no pod is updated, pods deleted by anyone
// are replaced on the update revision, scale-in takes the current revision's pods first, the rolling fields are
// ignored, and expectedUpdatedReplicas is replicas. The first four rows are upstream's own controller cases for
// OnDelete (replicas, pods per revision -> pods per revision after the reconcile), in v1alpha1 and v1beta1 alike.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kruise/keys.h"
#include "planner/plan.h"
#include "planner/spec.h"
#include "planner/predicates.h"
#include "planner/testing/both_encodings.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

namespace t = testing;

constexpr char kOld[] = "cs-rev-old";
constexpr char kNew[] = "cs-rev-new";

struct OnDeleteCase {
  std::string name;
  int32_t replicas;
  int old_pods;
  int new_pods;
  // Rolling fields that OnDelete must ignore.
  std::function<void(t::CloneSetBuilder&)> edit;
  int want_created_new;
  int want_deleted_old;
  int want_deleted_new;
};

pb::Pod ReadyPod(const std::string& id, const std::string& revision) {
  return t::PodBuilder(absl::StrCat(t::kCloneSetName, "-", id))
      .Revision(revision)
      .Label(kPodTemplateHashLabel, std::string(ShortHash(revision)))
      .Lifecycle(kStateNormal)
      .Node("node-1")
      .Ready(t::Now() - absl::Hours(1));
}

pb::PlanRequest OnDeleteRequest(const OnDeleteCase& c, const std::string& api_version) {
  t::CloneSetBuilder cs = t::CloneSetBuilder().Replicas(c.replicas).UpdateType("OnDelete").Template(
      t::TemplateJson("nginx:1.26"));
  if (c.edit) c.edit(cs);
  pb::CloneSet set = cs.Status(kOld, kNew);
  set.set_api_version(api_version);
  std::vector<pb::Pod> pods;
  for (int i = 0; i < c.old_pods; ++i) pods.push_back(ReadyPod(absl::StrCat("old", i), kOld));
  for (int i = 0; i < c.new_pods; ++i) pods.push_back(ReadyPod(absl::StrCat("new", i), kNew));
  return t::Request(set, pods, {},
                    {t::RevisionBuilder(kOld, 1).Template(t::TemplateJson("nginx:1.25")),
                     t::RevisionBuilder(kNew, 2).Template(t::TemplateJson("nginx:1.26"))});
}

class OnDeletePlanTest : public ::testing::TestWithParam<OnDeleteCase> {};

TEST_P(OnDeletePlanTest, PodsMoveOnlyWhenDeleted) {
  const OnDeleteCase& c = GetParam();
  for (const char* api_version : {kruise::kV1alpha1, kruise::kV1beta1}) {
    SCOPED_TRACE(api_version);
    absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(OnDeleteRequest(c, api_version));
    ASSERT_TRUE(resp.ok()) << resp.status();
    ASSERT_EQ(resp->update_revision(), kNew);
    int created_new = 0, created_old = 0, deleted_old = 0, deleted_new = 0;
    for (const pb::Action& a : resp->actions()) {
      switch (a.kind_case()) {
        case pb::Action::kCreatePod:
          (a.create_pod().revision() == kNew ? created_new : created_old)++;
          break;
        case pb::Action::kDeletePod:
          (absl::StrContains(a.delete_pod().name(), "-old") ? deleted_old : deleted_new)++;
          break;
        case pb::Action::kPatchPod:
        case pb::Action::kStartInPlaceUpdates:
          ADD_FAILURE() << "OnDelete updated a pod: " << a.DebugString();
          break;
        default:
          break;
      }
    }
    EXPECT_EQ(created_new, c.want_created_new);
    EXPECT_EQ(created_old, 0);
    EXPECT_EQ(deleted_old, c.want_deleted_old);
    EXPECT_EQ(deleted_new, c.want_deleted_new);
    EXPECT_EQ(resp->summary().updated_now(), 0);
    if (resp->write_status()) {
      EXPECT_EQ(resp->status().expected_updated_replicas(), c.replicas);
      EXPECT_EQ(resp->status().current_revision(), c.old_pods == 0 && c.new_pods == c.replicas ? kNew : kOld);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, OnDeletePlanTest,
    ::testing::Values(
        OnDeleteCase{"replicas5_old5_nothing_updated", 5, 5, 0, nullptr, 0, 0, 0},
        OnDeleteCase{"replicas5_old3_two_created_on_the_update_revision", 5, 3, 0, nullptr, 2, 0, 0},
        OnDeleteCase{"replicas6_old3_new5_two_old_deleted", 6, 3, 5, nullptr, 0, 2, 0},
        OnDeleteCase{"replicas4_old3_new5_three_old_one_new_deleted", 4, 3, 5, nullptr, 0, 3, 1},
        // A partition would keep old-revision pods on scale-up; OnDelete has none.
        OnDeleteCase{"partition_ignored_on_scale_up", 5, 3, 0,
                     [](t::CloneSetBuilder& cs) { cs.Partition(t::Int(5)); }, 2, 0, 0},
        // Budgets that would stop or surge a rolling update change nothing: still no update, no surge.
        OnDeleteCase{"max_unavailable_and_surge_ignored", 4, 4, 0,
                     [](t::CloneSetBuilder& cs) { cs.MaxUnavailable(t::Int(4)).MaxSurge(t::Int(2)); }, 0, 0, 0},
        OnDeleteCase{"paused_ignored_replacement_created", 3, 2, 0,
                     [](t::CloneSetBuilder& cs) { cs.Paused(); }, 1, 0, 0},
        OnDeleteCase{"all_replaced_promotes_the_revision", 2, 0, 2, nullptr, 0, 0, 0}),
    [](const ::testing::TestParamInfo<OnDeleteCase>& info) { return info.param.name; });

TEST(OnDeletePlanTest, BlockedReasonSaysPodsMoveWhenDeleted) {
  absl::StatusOr<pb::PlanResponse> resp =
      t::PlanBothEncodings(OnDeleteRequest({"x", 3, 3, 0, nullptr, 0, 0, 0}, kruise::kV1alpha1));
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->summary().blocked_reasons_size(), 1);
  EXPECT_TRUE(absl::StrContains(resp->summary().blocked_reasons(0), "OnDelete")) << resp->summary().DebugString();
}

}  // namespace
}  // namespace cloneset::planner
