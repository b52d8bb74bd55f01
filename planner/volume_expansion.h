// Growing claims (semantics §4.11): a live pod's claim whose storage request is below its volumeClaimTemplate's is
// expanded in place (ExpandPvc) when its StorageClass allows volume expansion, and otherwise held as before (the
// claim keeps its size until its pod is recreated); claims are never shrunk.
#pragma once

#include <string>
#include <vector>

#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// One live pod's claim whose storage request differs from its volumeClaimTemplate's.
struct ClaimGrowth {
  const pb::PersistentVolumeClaim* pvc = nullptr;
  std::string pod;        // the live pod that mounts it
  std::string template_name;  // its volumeClaimTemplate's metadata.name
  std::string storage;    // the template's spec.resources.requests.storage, as the template spells it
  bool shrink = false;    // the template asks for less than the claim holds: never done
  // Growth only: empty when the claim is Bound and its StorageClass allows expansion, else why it is held
  // ("StorageClass slow does not allow volume expansion", "StorageClass fast is unknown", "the claim names no
  // StorageClass", "the claim is Pending").
  std::string held;
};

// The claims of the CloneSet's live pods (not being deleted, not in PreparingDelete) whose storage request differs
// from their template's, in pod order then template order. A template or a claim whose storage request is absent
// or not a quantity is left out (validation reports a bad template; the API server never stores a bad claim).
std::vector<ClaimGrowth> ClaimGrowths(const PlanContext& ctx);

// An ExpandPvc action and a Normal event ExpandingPVC for each claim that may grow; a blocked reason for each held
// claim and for each template smaller than its claims. Nothing for a CloneSet being deleted.
//
// When every claim that differs can grow, every pod is on the update revision, and the templates differ from those
// the update revision's volumeClaimTemplate hash annotation was made of only in the storage the claims now grow to
// (the hash of the templates with the claims' present storage requests is that annotation), the annotation is set to
// the templates' hash first (UpdateRevision): the claims will match the templates, so a later template change
// updates those pods in place instead of recreating them for a claim-template change (§3.3).
void PlanVolumeExpansion(const PlanContext& ctx, PlanBuilder& plan);

// The VolumeExpansionHeld condition of `status` (whose conditions are the CloneSet's): True with reason
// ExpansionNotAllowed while some claim is held, naming up to five; removed once none is. Each change of it is one
// Warning event VolumeExpansionNotAllowed.
void SetVolumeExpansionHeld(const PlanContext& ctx, pb::CloneSetStatus& status, PlanBuilder& plan);

}  // namespace cloneset::planner
