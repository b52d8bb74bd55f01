// What can be updated in place (semantics §5.7): the spec of an in-place update, computed from the JSON diff of
// two revisions' templates, and which revision a pod is on.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/context.h"
#include "planner/pod_facts.h"

namespace cloneset::planner {

// Label/annotation values a container reads through env valueFrom.fieldRef (env from metadata).
struct RefMetadata {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  bool operator==(const RefMetadata&) const = default;
};

// The cpu/memory requests and limits an in-place resize sets on one container (upstream ResourceRequirements):
// resource -> quantity in Go's canonical form ("500m", "1Gi").
struct ContainerResources {
  std::map<std::string, std::string> requests;
  std::map<std::string, std::string> limits;
  bool operator==(const ContainerResources&) const = default;
};

struct InPlaceUpdateSpec {
  std::string revision;
  std::string old_revision;  // the pod's revision before this update (ours; lets a rollback during grace undo it)
  std::map<std::string, std::string> container_images;               // container -> image
  std::map<std::string, RefMetadata> container_ref_metadata;         // container -> metadata it reads
  // container -> resources to resize to (only with the InPlaceWorkloadVerticalScaling gate).
  std::map<std::string, ContainerResources> container_resources;
  std::map<std::string, std::string> set_labels;                     // template metadata changes
  std::map<std::string, std::string> set_annotations;
  std::vector<std::string> remove_labels;
  std::vector<std::string> remove_annotations;
  std::vector<std::string> add_finalizers;
  std::vector<std::string> remove_finalizers;
  bool update_env_from_metadata = false;
  int32_t grace_seconds = 0;

  // Only resources change (upstream VerticalUpdateOnly): no image, no env from metadata.
  bool ResizeOnly() const {
    return !container_resources.empty() && container_images.empty() && !update_env_from_metadata;
  }
};

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
