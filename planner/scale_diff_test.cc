#include "planner/scale_diff.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using namespace ::cloneset::planner::testing;  // NOLINT

// A pod is written as a revision letter ('o' current, 'n' update) followed by flags:
//   r ready for an hour, y ready for 5 s, u not ready, d specified-delete, p PreparingDelete, U PreparingUpdate.
std::vector<pb::Pod> PodsFrom(const std::vector<std::string>& tokens) {
  std::vector<pb::Pod> pods;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    PodBuilder b("cs-p" + std::string(i < 10 ? "0" : "") + std::to_string(i));
    b.Revision(t[0] == 'n' ? "cs-new" : "cs-old").Node("n1");
    for (char f : t.substr(1)) {
      switch (f) {
        case 'r': b.Ready(Now() - absl::Hours(1)); break;
        case 'y': b.Ready(Now() - absl::Seconds(5)); break;
        case 'u': b.NotReady(Now() - absl::Hours(1)); break;
        case 'd': b.SpecifiedDelete(); break;
        case 'p': b.Lifecycle(kStatePreparingDelete); break;
        case 'U': b.Lifecycle(kStatePreparingUpdate); break;
        default: ADD_FAILURE() << "bad flag " << f;
      }
    }
    pods.push_back(b);
  }
  return pods;
}

struct DiffCase {
  std::string name;
  int32_t replicas;
  int32_t partition;
  int32_t surge;
  int32_t unavailable;
  std::vector<std::string> pods;
  ScaleDiff want;
  // Knobs, defaulted for the common case.
  int32_t scale_max_unavailable = INT32_MAX;
  bool same_revision = false;  // updateRevision == currentRevision
  bool rolling_update = true;
  bool exclude_preparing_delete = false;
  int32_t min_ready_seconds = 0;
  bool rollback_gate = false;
  bool preparing_update_as_update = false;
  RevisionCheck check = RevisionCheck::kScale;
  bool paused = false;
  int32_t configured_surge = 0;  // spec.updateStrategy.maxSurge in the CloneSet (for paused)
  bool in_place = false;         // PlanContext::rollout_in_place
};

ScaleDiff Want(int32_t up, int32_t up_old, int32_t up_limit, int32_t down, int32_t down_old, int32_t ready_limit,
               int32_t update_num, int32_t update_max_unavailable, int32_t surge = 0, int32_t surge_old = 0) {
  ScaleDiff d;
  d.scale_up_num = up;
  d.scale_up_num_old = up_old;
  d.scale_up_limit = up_limit;
  d.scale_down_num = down;
  d.scale_down_num_old = down_old;
  d.delete_ready_limit = ready_limit;
  d.update_num = update_num;
  d.update_max_unavailable = update_max_unavailable;
  d.use_surge = surge;
  d.use_surge_old = surge_old;
  return d;
}

DiffCase With(DiffCase c, void (*f)(DiffCase&)) {
  f(c);
  return c;
}

class ScaleDiffTest : public ::testing::TestWithParam<DiffCase> {};

TEST_P(ScaleDiffTest, Arithmetic) {
  const DiffCase& c = GetParam();
  CloneSetBuilder cs;
  cs.Replicas(c.replicas);
  if (c.configured_surge > 0) cs.MaxSurge(Int(c.configured_surge));
  pb::PlanRequest req = Request(cs, PodsFrom(c.pods));
  req.mutable_feature_gates()->set_clone_set_partition_rollback(c.rollback_gate);
  req.mutable_feature_gates()->set_preparing_update_as_update(c.preparing_update_as_update);
  ResolvedSpec spec;
  spec.replicas = c.replicas;
  spec.partition = c.partition;
  spec.max_surge = c.paused ? 0 : c.surge;
  spec.max_unavailable = c.unavailable;
  spec.scale_max_unavailable = c.scale_max_unavailable;
  spec.rolling_update = c.rolling_update;
  spec.exclude_preparing_delete = c.exclude_preparing_delete;
  spec.min_ready_seconds = c.min_ready_seconds;
  spec.paused = c.paused;
  PlanContext ctx = MakeContext(req, spec, c.same_revision ? "cs-new" : "cs-old", "cs-new");
  ctx.rollout_in_place = c.in_place;
  const ScaleDiff got = CalculateDiff(ctx, c.check);
  const ScaleDiff& w = c.want;
  EXPECT_EQ(got.scale_up_num, w.scale_up_num);
  EXPECT_EQ(got.scale_up_num_old, w.scale_up_num_old);
  EXPECT_EQ(got.scale_up_limit, w.scale_up_limit);
  EXPECT_EQ(got.scale_down_num, w.scale_down_num);
  EXPECT_EQ(got.scale_down_num_old, w.scale_down_num_old);
  EXPECT_EQ(got.delete_ready_limit, w.delete_ready_limit);
  EXPECT_EQ(got.update_num, w.update_num);
  EXPECT_EQ(got.update_max_unavailable, w.update_max_unavailable);
  EXPECT_EQ(got.use_surge, w.use_surge);
  EXPECT_EQ(got.use_surge_old, w.use_surge_old);
}

// Every expected number below is worked out by hand from the formulas of semantics §4.1.
INSTANTIATE_TEST_SUITE_P(
    Cases, ScaleDiffTest,
    ::testing::Values(
        // oldDiff 0, newDiff 0: nothing to do.
        DiffCase{"Steady", 3, 0, 0, 1, {"nr", "nr", "nr"}, Want(0, 0, 0, 0, 0, 0, 0, 0), INT32_MAX, true},
        // expTotal 5 - curTotal 3 = 2 up, none old.
        DiffCase{"ScaleUp", 5, 0, 0, 1, {"nr", "nr", "nr"}, Want(2, 0, 2, 0, 0, 0, 0, 0), INT32_MAX, true},
        DiffCase{"ScaleUpFromZero", 2, 0, 0, 1, {}, Want(2, 0, 2, 0, 0, 0, 0, 0), INT32_MAX, true},
        // §4.3: R 5->8, partition 3, 3 old + 2 new: 3 up, scaleUpNumOld max(3-3,0)=0.
        DiffCase{"PartitionScaleUpOldSatisfied", 8, 3, 0, 2, {"or", "or", "or", "nr", "nr"},
                 Want(3, 0, 3, 0, 0, 0, 0, 0)},
        // §4.3: 5 old: oldDiff 2, newDiff -5, updateNum 2, updateMaxUnavailable 2+5-8 = -1.
        DiffCase{"PartitionScaleUpAllOld", 8, 3, 0, 2, {"or", "or", "or", "or", "or"}, Want(3, 0, 3, 0, 0, 0, 2, -1)},
        // 1 old + 1 new, R 4 partition 3: scaleUpNumOld = 3-1 = 2 (the first 2 new pods stay on current).
        DiffCase{"PartitionScaleUpNeedsOld", 4, 3, 0, 1, {"or", "nr"}, Want(2, 2, 2, 0, 0, 0, 0, 0)},
        // 4 -> 2: 2 down; deleteReadyLimit = 1 + (4-2) - 0 = 3.
        DiffCase{"ScaleDown", 2, 0, 0, 1, {"nr", "nr", "nr", "nr"}, Want(0, 0, 0, 2, 0, 3, 0, 0), INT32_MAX, true},
        // 2 old + 2 new -> 2: scaleDownNumOld = 2 - 0 - 0 = 2; updateNum -newDiff = 0.
        DiffCase{"ScaleDownPrefersOld", 2, 0, 0, 1, {"or", "or", "nr", "nr"}, Want(0, 0, 0, 2, 2, 3, 0, 0)},
        // Partition 1 keeps one old: scaleDownNumOld = 2 - 1 = 1.
        DiffCase{"ScaleDownOldAbovePartition", 2, 1, 0, 1, {"or", "or", "nr", "nr"}, Want(0, 0, 0, 2, 1, 3, 0, 0)},
        // Unavailable pods shrink deleteReadyLimit: 1 + 2 - 2 = 1.
        DiffCase{"ScaleDownUnavailable", 2, 0, 0, 1, {"nr", "nr", "nu", "nu"}, Want(0, 0, 0, 2, 0, 1, 0, 0),
                 INT32_MAX, true},
        // Rolling update without surge: updateNum 3, updateMaxUnavailable = U = 1.
        DiffCase{"UpdateNoSurge", 3, 0, 0, 1, {"or", "or", "or"}, Want(0, 0, 0, 0, 0, 0, 3, 1)},
        // Half way: oldDiff 1, newDiff -1, updateNum 1.
        DiffCase{"UpdateHalfway", 2, 0, 0, 1, {"or", "nr"}, Want(0, 0, 0, 0, 0, 0, 1, 1)},
        // Partition 2 of 3 with 1 new: oldDiff 0 -> nothing to update.
        DiffCase{"UpdatePartitionReached", 3, 2, 0, 1, {"or", "or", "nr"}, Want(0, 0, 0, 0, 0, 0, 0, 0)},
        // Surge: 4 old, S 1, U 0: updSurge 4, useSurge 1: create 1; updateNum 4, updateMaxUnavailable 0.
        DiffCase{"SurgeStart", 4, 0, 1, 0, {"or", "or", "or", "or"}, Want(1, 0, 1, 0, 0, 0, 4, 0, 1, 0)},
        // Surge pod created but not ready: oldDiff 4 > |newDiff| 3 -> updSurge 3, useSurge 1; no scale;
        // updateNum 3, updateMaxUnavailable 0 + 5 - 4 = 1.
        DiffCase{"SurgeWaiting", 4, 0, 1, 0, {"or", "or", "or", "or", "nu"}, Want(0, 0, 0, 0, 0, 0, 3, 1, 1, 0)},
        // Surge with partition (kruise#286): S 2, P 2 of 4: updSurge 2; creates 2 new, none old.
        DiffCase{"SurgeWithPartition", 4, 2, 2, 0, {"or", "or", "or", "or"}, Want(2, 0, 2, 0, 0, 0, 2, 0, 2, 0)},
        // The last old pod: newDiff 0 so no surge; the surplus old pod goes by scale-in (down 1, old 1,
        // deleteReadyLimit 0 + 1 - 0 = 1).
        DiffCase{"SurgeEnd", 4, 0, 1, 0, {"or", "nr", "nr", "nr", "nr"}, Want(0, 0, 0, 1, 1, 1, 0, 0)},
        // Done: surge pod is surplus: scaleDown 1; deleteReadyLimit 0 + (5-4) - 0 = 1.
        DiffCase{"SurgeSurplusRemoved", 4, 0, 1, 0, {"nr", "nr", "nr", "nr", "nr"}, Want(0, 0, 0, 1, 0, 1, 0, 0),
                 INT32_MAX, true},
        // Specified delete with surge: scaleSurge = min(max(0+1-0,0),1) = 1 -> replacement created first.
        DiffCase{"SpecifiedDeleteSurge", 3, 0, 1, 0, {"nr", "nr", "nrd"}, Want(1, 0, 1, 0, 0, 0, 0, 0, 1, 0),
                 INT32_MAX, true},
        // Old specified-delete pod, P 1: scaleSurgeOld 1 -> the replacement is old (scaleUpNumOld 2-1 = 1).
        DiffCase{"SpecifiedDeleteSurgeOld", 3, 1, 1, 0, {"ord", "nr", "nr"}, Want(1, 1, 1, 0, 0, 0, 0, 0, 1, 1)},
        // Without surge: no replacement first; deleteReadyLimit = 1 + 0 - 0 = 1.
        DiffCase{"SpecifiedDeleteNoSurge", 3, 0, 0, 1, {"nr", "nr", "nrd"}, Want(0, 0, 0, 0, 0, 1, 0, 0), INT32_MAX,
                 true},
        // Specified-delete pods are not counted unavailable even when not ready: limit 1 + 0 - 0 = 1.
        DiffCase{"SpecifiedDeleteNotReadyNotCounted", 3, 0, 0, 1, {"nr", "nr", "nud"}, Want(0, 0, 0, 0, 0, 1, 0, 0),
                 INT32_MAX, true},
        // PreparingDelete counts as unavailable and as a pod: scaleDown 1, limit 1 + 1 - 1 = 1.
        DiffCase{"PreparingDeleteCounted", 3, 0, 0, 1, {"nr", "nr", "nr", "nrp"}, Want(0, 0, 0, 1, 0, 1, 0, 0),
                 INT32_MAX, true},
        // Excluding PreparingDelete: curTotal 3 -> nothing.
        With(DiffCase{"PreparingDeleteExcluded", 3, 0, 0, 1, {"nr", "nr", "nr", "nrp"}, Want(0, 0, 0, 0, 0, 0, 0, 0),
                      INT32_MAX, true},
             [](DiffCase& c) { c.exclude_preparing_delete = true; }),
        // Excluded PreparingDelete pod is replaced: scaleUp 1.
        With(DiffCase{"PreparingDeleteExcludedReplaced", 3, 0, 0, 1, {"nr", "nr", "nrp"}, Want(1, 0, 1, 0, 0, 0, 0, 0),
                      INT32_MAX, true},
             [](DiffCase& c) { c.exclude_preparing_delete = true; }),
        DiffCase{"PreparingDeleteNotReplaced", 3, 0, 0, 1, {"nr", "nr", "nrp"}, Want(0, 0, 0, 0, 0, 0, 0, 0),
                 INT32_MAX, true},
        // scaleStrategy.maxUnavailable 1 with 2 unavailable: limit max(1-2,0) = 0.
        DiffCase{"ScaleMaxUnavailableBlocks", 5, 0, 0, 1, {"nu", "nu", "nr"}, Want(2, 0, 0, 0, 0, 0, 0, 0), 1, true},
        DiffCase{"ScaleMaxUnavailablePartial", 5, 0, 0, 1, {"nu", "nu", "nr"}, Want(2, 0, 1, 0, 0, 0, 0, 0), 3, true},
        DiffCase{"ScaleMaxUnavailableFromZero", 5, 0, 0, 1, {}, Want(5, 0, 2, 0, 0, 0, 0, 0), 2, true},
        // minReadySeconds 10: a pod ready for 5 s is unavailable and uses the scale budget.
        With(DiffCase{"MinReadySecondsUnavailable", 4, 0, 0, 1, {"nr", "nr", "ny"}, Want(1, 0, 0, 0, 0, 0, 0, 0), 1,
                      true},
             [](DiffCase& c) { c.min_ready_seconds = 10; }),
        DiffCase{"MinReadySecondsZero", 4, 0, 0, 1, {"nr", "nr", "ny"}, Want(1, 0, 1, 0, 0, 0, 0, 0), 1, true},
        // minReadySeconds reduces deleteReadyLimit: 1 + 1 - 1 = 1 (instead of 2).
        With(DiffCase{"MinReadySecondsDeleteLimit", 2, 0, 0, 1, {"nr", "nr", "ny"}, Want(0, 0, 0, 1, 0, 1, 0, 0),
                      INT32_MAX, true},
             [](DiffCase& c) { c.min_ready_seconds = 10; }),
        // Raising partition without the rollback gate: diffs clamp -> no update.
        DiffCase{"PartitionRaisedNoGate", 4, 3, 0, 1, {"nr", "nr", "nr", "nr"}, Want(0, 0, 0, 0, 0, 0, 0, 0)},
        // With the gate: oldDiff -3, newDiff 3: updateNum -3, updateMaxUnavailable 1.
        With(DiffCase{"PartitionRaisedWithGate", 4, 3, 0, 1, {"nr", "nr", "nr", "nr"}, Want(0, 0, 0, 0, 0, 0, -3, 1)},
             [](DiffCase& c) { c.rollback_gate = true; }),
        // Gate on but one revision: still clamped.
        With(DiffCase{"GateSameRevision", 4, 3, 0, 1, {"nr", "nr", "nr", "nr"}, Want(0, 0, 0, 0, 0, 0, 0, 0),
                      INT32_MAX, true},
             [](DiffCase& c) { c.rollback_gate = true; }),
        // PreparingUpdate counts as updated in the scale phase under the gate: updateNum 1.
        With(DiffCase{"PreparingUpdateAsUpdate", 2, 0, 0, 1, {"or", "orU"}, Want(0, 0, 0, 0, 0, 0, 1, 1)},
             [](DiffCase& c) { c.preparing_update_as_update = true; }),
        // ... but not in the update phase: updateNum 2.
        With(DiffCase{"PreparingUpdateUpdatePhase", 2, 0, 0, 1, {"or", "orU"}, Want(0, 0, 0, 0, 0, 0, 2, 1)},
             [](DiffCase& c) {
               c.preparing_update_as_update = true;
               c.check = RevisionCheck::kUpdate;
             }),
        // rollingUpdate nil (OnDelete): partition ignored, updateNum 3.
        With(DiffCase{"OnDeleteIgnoresPartition", 3, 2, 0, 0, {"or", "or", "or"}, Want(0, 0, 0, 0, 0, 0, 3, 0)},
             [](DiffCase& c) { c.rolling_update = false; }),
        // Paused: upstream would delete the surge pod (scaleDown 1); we keep up to the configured surge.
        With(DiffCase{"PausedKeepsSurgePod", 4, 0, 1, 0, {"or", "or", "or", "or", "nr"}, Want(0, 0, 0, 0, 0, 0, 3, 1)},
             [](DiffCase& c) {
               c.paused = true;
               c.configured_surge = 1;
             }),
        // Paused with more surplus than the surge: 1 of the 2 surplus pods goes; scaleDownNumOld 4 - 0 - 0 = 4;
        // deleteReadyLimit 0 + 2 - 0 = 2; oldDiff 4 > |newDiff| 2 so updateNum 2, updateMaxUnavailable 0 + 5 - 3.
        With(DiffCase{"PausedSurplusBeyondSurge", 3, 0, 1, 0, {"or", "or", "or", "or", "nr"},
                      Want(0, 0, 0, 1, 4, 2, 2, 2)},
             [](DiffCase& c) {
               c.paused = true;
               c.configured_surge = 1;
             }),
        // Paused with nothing rolling out: no surge pod to keep, so replicas 10 -> 7 deletes 3;
        // deleteReadyLimit 1 + 10 - 7 - 0 = 4.
        With(DiffCase{"PausedNothingRollingOutScalesIn", 7, 0, 3, 1,
                      {"nr", "nr", "nr", "nr", "nr", "nr", "nr", "nr", "nr", "nr"}, Want(0, 0, 0, 3, 0, 4, 0, 0),
                      INT32_MAX, true},
             [](DiffCase& c) {
               c.paused = true;
               c.configured_surge = 3;
             }),
        // Paused in-place rollout: it replaces no pod, so no pod counts as surge: 5 pods for 4 replicas, one goes.
        With(DiffCase{"PausedInPlaceKeepsNoSurge", 4, 0, 1, 0, {"or", "or", "or", "or", "nr"},
                      Want(0, 0, 0, 1, 4, 1, 3, 1)},
             [](DiffCase& c) {
               c.paused = true;
               c.configured_surge = 1;
               c.in_place = true;
             }),
        // In-place rollout (kruise#2369): no surge pod; maxUnavailable 0 so maxSurge is the batch size:
        // updateMaxUnavailable 1 + 4 - 4 = 1 (SurgeStart above creates a pod and has budget 0).
        With(DiffCase{"InPlaceNoSurgePod", 4, 0, 1, 0, {"or", "or", "or", "or"}, Want(0, 0, 0, 0, 0, 0, 4, 1)},
             [](DiffCase& c) { c.in_place = true; }),
        // maxSurge 3 as the batch: 3 + 8 - 8 = 3.
        With(DiffCase{"InPlaceSurgeIsBatch", 8, 0, 3, 0, {"or", "or", "or", "or", "or", "or", "or", "or"},
                      Want(0, 0, 0, 0, 0, 0, 8, 3)},
             [](DiffCase& c) { c.in_place = true; }),
        // maxUnavailable 1 stays the budget: 1 + 4 - 4 = 1, no pod created although maxSurge is 2.
        With(DiffCase{"InPlaceKeepsMaxUnavailable", 4, 0, 2, 1, {"or", "or", "or", "or"}, Want(0, 0, 0, 0, 0, 0, 4, 1)},
             [](DiffCase& c) { c.in_place = true; }),
        // A missing pod still shrinks the budget: up 1; updateNum 3, 1 + 3 - 4 = 0.
        With(DiffCase{"InPlaceMissingPod", 4, 0, 1, 0, {"or", "or", "or"}, Want(1, 0, 1, 0, 0, 0, 3, 0)},
             [](DiffCase& c) { c.in_place = true; }),
        // A surge pod left from before (e.g. the rollout was ReCreate): surplus 1 goes, old first (4 - 0 - 0);
        // deleteReadyLimit 0 + 1 - 0 = 1; oldDiff 4 > |newDiff| 3: updateNum 3, 1 + 5 - 4 = 2.
        With(DiffCase{"InPlaceLeftoverSurgeRemoved", 4, 0, 1, 0, {"or", "or", "or", "or", "nr"},
                      Want(0, 0, 0, 1, 4, 1, 3, 2)},
             [](DiffCase& c) { c.in_place = true; }),
        // Specified delete still gets its replacement first: scaleSurge 1, scaleSurgeOld 1; up 1, up old
        // max(0 + 1 - 3, 0) = 0; deleteReadyLimit 0; updateNum 3, budget 1 + 3 - 3 = 1.
        With(DiffCase{"InPlaceSpecifiedDeleteStillSurges", 3, 0, 1, 0, {"or", "or", "ord"},
                      Want(1, 0, 1, 0, 0, 0, 3, 1, 1, 1)},
             [](DiffCase& c) { c.in_place = true; }),
        // kruise#1741: R 8, S 3, 4 old + 6 new of which 2 unready. Upstream's surge min(3, 4, 2) = 2 creates nothing
        // and the rollout narrows to 2 pods in flight; ours is min(3, oldDiff 4) = 3: up 11 - 10 = 1, none old;
        // updateNum -newDiff 2, updateMaxUnavailable 0 + 10 - 8 = 2.
        DiffCase{"SurgeKeptWhileOldPodsRemain", 8, 0, 3, 0, {"or", "or", "or", "or", "nr", "nr", "nr", "nr", "nu", "nu"},
                 Want(1, 0, 1, 0, 0, 0, 2, 2, 3, 0)},
        // ... and it never exceeds the partition: P 3, 4 old + 2 new unready: surge min(3, oldDiff 1) = 1; up
        // 9 - 6 = 3; new pods then 2 + 3 = 5 = R - P. updateNum oldDiff 1, 0 + 6 - 8 = -2.
        DiffCase{"SurgeBoundedByPartition", 8, 3, 3, 0, {"or", "or", "or", "or", "nu", "nu"},
                 Want(3, 0, 3, 0, 0, 0, 1, -2, 1, 0)},
        // Rolling back with the gate: P 3, 1 old + 4 new: the surge covers the 3 excess new pods (upstream
        // min(2, 3) = 2): useSurge 3, old 3; up 7 - 5 = 2, up old max(3 + 3 - 1, 0) = 5; updateNum oldDiff -2,
        // 0 + 5 - 4 = 1.
        With(DiffCase{"RollbackSurgeCoversExcessNewPods", 4, 3, 3, 0, {"or", "nr", "nr", "nr", "nr"},
                      Want(2, 5, 2, 0, 0, 0, -2, 1, 3, 3)},
             [](DiffCase& c) { c.rollback_gate = true; }),
        // Paused does not create surge pods: useSurge 0, nothing to create.
        With(DiffCase{"PausedNoNewSurge", 4, 0, 1, 0, {"or", "or", "or", "or"}, Want(0, 0, 0, 0, 0, 0, 4, 0)},
             [](DiffCase& c) {
               c.paused = true;
               c.configured_surge = 1;
             })),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace cloneset::planner
