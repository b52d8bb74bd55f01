// Scale (semantics §4.2-§4.8): PVC cleanup, pod release, scale out, pre-delete, specified delete, scale in.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// PVC cleanup (§4.8) and release of pods that no longer match the selector (§4.9). Runs before Scale.
void PlanPvcCleanupAndRelease(const PlanContext& ctx, PlanBuilder& plan);

// A live pod whose claim is missing from the snapshot (deleted by someone, or lost to a failed write) gets the
// claim created again from its volumeClaimTemplate: a CreatePvc per missing claim and a Warning MissingPVC event.
// Upstream leaves such a pod without its volume (docs/compatibility.md "Scale"). Runs before Scale.
void PlanMissingClaims(const PlanContext& ctx, PlanBuilder& plan);

struct ScaleOutcome {
  bool scaling = false;  // the plan scaled, so Update must not run (§0.5)
  absl::Status error;    // sets the FailedScale condition
};

ScaleOutcome PlanScale(const PlanContext& ctx, PlanBuilder& plan);

// deletePods (§4.5): pods hooked by lifecycle.preDelete move to PreparingDelete; the others get a DeletePod with
// the PVCs of their instance id (none under pvcRetentionPolicy Retain) and a SuccessfulDelete event. For the
// ReCreate update path, which deletes directly instead of labelling specified-delete first. True if anything was
// written.
bool PlanDeletePods(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods, PlanBuilder& plan);

// §4.7: up to `n` instance ids, sorted: ids of PVCs without a pod object first (when PVC reuse or Retain is on),
// then fresh ids from a PRNG seeded by request.random_seed and the CloneSet uid. Ids whose kept PVCs (Retain or
// reuse) belong to a pod that is still terminating are not replaced by fresh ids: they are listed in `waiting` and
// the result is that much shorter.
std::vector<std::string> AvailableInstanceIds(const PlanContext& ctx, int32_t n,
                                              std::vector<std::string>* waiting = nullptr);

}  // namespace cloneset::planner
