// What can be updated in place (semantics §5.7): the spec of an in-place update, computed from the JSON diff of
// two revisions' templates, and which revision a pod is on.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kruise/inplace_state.h"
#include "planner/context.h"
#include "planner/pod_facts.h"

namespace cloneset::planner {

// nullopt when the change from `old_template_json` to `new_template_json` cannot be applied in place; the reason
// ("spec.containers[0].env changed") is written to `why_not` when given.
std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdateSpec(const PlanContext& ctx,
                                                            const std::string& old_template_json,
                                                            const std::string& new_template_json,
                                                            const std::string& target_revision,
                                                            std::string* why_not = nullptr);

// The same for a pod on `old_revision` (nullptr: unknown revision) moving to `target_revision` (the current or
// update revision of `ctx`), including the volumeClaimTemplates rule: when both revisions carry a VCT hash and
// they differ, the pod is recreated (on by default, docs/compatibility.md), except under InPlaceOnly.
std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdate(const PlanContext& ctx,
                                                        const pb::ControllerRevision* old_revision,
                                                        const std::string& target_revision, std::string* why_not);

// True when moving the current revision's pods to the update revision can be done in place under the CloneSet's
// policy. The diff stage uses it to avoid surge pods for in-place-able rollouts (docs/compatibility.md, "maxSurge
// with an in-place-able rollout creates no surge pods").
bool RolloutIsInPlace(const PlanContext& ctx);

// The first revision (in ctx.revisions order) the pod's revision label matches, or nullptr.
const pb::ControllerRevision* PodRevision(const PlanContext& ctx, const pb::Pod& pod);
// The same from the pod's facts (its revision label), without the pod object.
const pb::ControllerRevision* PodRevision(const PlanContext& ctx, const PodFacts& pod);
// The VCT hash annotation of a revision known to `ctx` ("" if absent or unknown).
std::string RevisionVctHash(const PlanContext& ctx, const std::string& revision);

}  // namespace cloneset::planner
