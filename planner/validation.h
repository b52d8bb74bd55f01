// Defaulting and admission rules (semantics §2), plus the snapshot sanity checks Plan() needs.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "planner/context.h"

namespace cloneset::planner {

// Applies defaults in place (§1.1, §2.1; a missing selector is defaulted from the template labels).
void ApplyDefaults(pb::CloneSet* clone_set);

// Admission rules for create (old == nullptr) or update. Each error names its field.
std::vector<pb::FieldError> ValidateCloneSet(const pb::CloneSet& clone_set, const pb::CloneSet* old,
                                             const std::vector<const pb::Pod*>& pods);

// What Plan() requires of the CloneSet it acts on: ValidateCloneSet, the rules the Validate call applies, of the
// defaulted CloneSet as an update that changes nothing (so podsToDelete names that are no longer pods pass: Plan
// drops them from the spec, §4.10). INVALID_ARGUMENT "field: message" with the first error, OK otherwise.
absl::Status CheckCloneSetForPlan(const pb::CloneSet& clone_set);

// INVALID_ARGUMENT naming the first bad field of a Plan request outside its pods, OK otherwise. The per-pod checks
// are made by BuildContext (ClassifyPods) in its one pass over the pods, with PodLooksValid and PodError below, so
// a plan reads each pod once; Plan() runs both.
absl::Status ValidatePlanRequestExceptPods(const pb::PlanRequest& request);
// The fast per-pod check: a name and valid timestamps (metadata and conditions).
bool PodLooksValid(const pb::Pod& pod);
// The error of request.pods(index), which failed PodLooksValid or (duplicate) repeats an earlier pod's name.
absl::Status PodError(const pb::Pod& pod, int index, bool duplicate);

}  // namespace cloneset::planner
