// A change of maxSurge during a rollout takes effect at the next plan (semantics §4.1): the planner keeps no state
// between plans, so the surge is resolved from the spec of each request. The rollout is held (ReCreate,
// maxUnavailable 0, the new pods ready but not yet available for minReadySeconds), as in a blue-green rollout
// where the number of new pods is steered by maxSurge.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/testing/both_encodings.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

namespace t = testing;

constexpr char kOld[] = "cs-rev-1";
constexpr char kNew[] = "cs-rev-2";

pb::Pod ReadyPod(const std::string& id, const std::string& revision, absl::Duration ready_for) {
  return t::PodBuilder(absl::StrCat(t::kCloneSetName, "-", id))
      .Revision(revision)
      .Label(kPodTemplateHashLabel, std::string(ShortHash(revision)))
      .Lifecycle(kStateNormal)
      .Node("node-1")
      .Ready(t::Now() - ready_for);
}

// 4 replicas rolling from revision 1 to 2; `new_pods` pods of revision 2 exist, ready for `new_ready_for` (a minute
// by default: not available with minReadySeconds 3600).
pb::PlanRequest HeldRollout(const pb::IntOrString& max_surge, int new_pods,
                            absl::Duration new_ready_for = absl::Minutes(1)) {
  pb::CloneSet cs = t::CloneSetBuilder()
                        .Replicas(4)
                        .UpdateType("ReCreate")
                        .MaxUnavailable(t::Int(0))
                        .MaxSurge(max_surge)
                        .MinReadySeconds(3600)
                        .Template(t::TemplateJson("nginx:1.26"))
                        .Status(kOld, kNew);
  std::vector<pb::Pod> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(ReadyPod(absl::StrCat("old", i), kOld, absl::Hours(2)));
  for (int i = 0; i < new_pods; ++i) pods.push_back(ReadyPod(absl::StrCat("new", i), kNew, new_ready_for));
  return t::Request(cs, pods, {},
                    {t::RevisionBuilder(kOld, 1).Template(t::TemplateJson("nginx:1.25")),
                     t::RevisionBuilder(kNew, 2).Template(t::TemplateJson("nginx:1.26"))});
}

struct SurgeCase {
  std::string name;
  pb::IntOrString max_surge;
  int new_pods;      // revision-2 pods that exist
  int want_created;  // on revision 2
  int want_deleted;
  absl::Duration new_ready_for = absl::Minutes(1);
};

class SurgeChangeTest : public ::testing::TestWithParam<SurgeCase> {};

TEST_P(SurgeChangeTest, TheSurgeOfThisSpecCounts) {
  const SurgeCase& c = GetParam();
  absl::StatusOr<pb::PlanResponse> resp = t::PlanBothEncodings(HeldRollout(c.max_surge, c.new_pods, c.new_ready_for));
  ASSERT_TRUE(resp.ok()) << resp.status();
  int created = 0, deleted = 0;
  for (const pb::Action& a : resp->actions()) {
    if (a.has_create_pod()) {
      EXPECT_EQ(a.create_pod().revision(), kNew);
      ++created;
    }
    if (a.has_delete_pod()) ++deleted;
  }
  EXPECT_EQ(created, c.want_created) << resp->summary().DebugString();
  EXPECT_EQ(deleted, c.want_deleted) << resp->summary().DebugString();
}

INSTANTIATE_TEST_SUITE_P(
    Table, SurgeChangeTest,
    ::testing::Values(
        // The rollout starts with maxSurge 2: two new pods.
        SurgeCase{"start_with_two", t::Int(2), 0, 2, 0},
        // They exist, are not available yet, and no old pod may go: nothing to do.
        SurgeCase{"two_held", t::Int(2), 2, 0, 0},
        // maxSurge raised to 4 (100 %) while held: the two missing new pods come at once. Upstream takes the surge
        // as min(maxSurge, new pods still missing) = 2, so raising it changes nothing there.
        SurgeCase{"raised_to_four", t::Int(4), 2, 2, 0},
        SurgeCase{"raised_to_percent", t::Str("100%"), 2, 2, 0},
        SurgeCase{"raised_to_three", t::Int(3), 2, 1, 0},
        // Lowered back to 2 with 4 new pods: no creation. Two pods are surplus now, and scale-in takes the old
        // revision's first (as upstream), but the old pods are all that is available and maxUnavailable is 0:
        // they go once new pods are available, here all four at once (every new pod is there).
        SurgeCase{"lowered_to_two", t::Int(2), 4, 0, 0},
        SurgeCase{"lowered_to_two_new_pods_available", t::Int(2), 4, 0, 4, absl::Hours(2)}),
    [](const ::testing::TestParamInfo<SurgeCase>& info) { return info.param.name; });

}  // namespace
}  // namespace cloneset::planner
