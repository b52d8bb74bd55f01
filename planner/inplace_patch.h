// How the update stages write in-place updates into pod patches: the revision labels, the batch and grace
// annotations, the InPlaceUpdateReady condition. Shared by refresh.cc (completion, grace periods, next batches) and
// update.cc (starting updates), so both write the same fields the same way.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "planner/context.h"
#include "planner/inplace.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

inline bool HasLifecycle(const PlanContext& ctx) { return ctx.clone_set->spec().has_lifecycle(); }

// The controller-revision-hash value of `revision` (the short hash with the CloneSetShortHash gate).
std::string RevisionLabelValue(const PlanContext& ctx, const std::string& revision);
// controller-revision-hash and pod-template-hash of `revision`.
void SetRevisionLabels(const PlanContext& ctx, const std::string& revision, pb::PatchPod* patch);

void RemoveGraceAnnotations(bool has_grace, bool has_legacy_grace, pb::PatchPod* patch);
void RemoveGraceAnnotations(const pb::Pod& pod, pb::PatchPod* patch);

// The container images and template metadata changes of an InPlaceBatch, or of the InPlaceUpdateSpec whose first
// batch takes them all (the same fields).
template <typename Changes>
void ApplyChangesToPatch(const Changes& changes, pb::PatchPod* patch) {
  for (const auto& [name, image] : changes.container_images) (*patch->mutable_container_images())[name] = image;
  for (const auto& [k, v] : changes.set_labels) (*patch->mutable_set_labels())[k] = v;
  for (const auto& [k, v] : changes.set_annotations) (*patch->mutable_set_annotations())[k] = v;
  for (const std::string& k : changes.remove_labels) patch->add_remove_labels(k);
  for (const std::string& k : changes.remove_annotations) patch->add_remove_annotations(k);
  for (const std::string& f : changes.add_finalizers) patch->add_add_finalizers(f);
  for (const std::string& f : changes.remove_finalizers) patch->add_remove_finalizers(f);
}

// The ResizePod that sets `resources` (a batch's) on `pod` through pods/resize, with only the values that differ
// from the pod's spec (upstream GenerateResourcePatch); appended to `plan` when anything differs. Comes right before
// the batch's PatchPod, as upstream resizes before it updates the pod.
void AddResizePod(const pb::Pod& pod, const std::map<std::string, ContainerResources>& resources,
                  std::string_view purpose, PlanBuilder& plan);

// Whether starting `spec` on `pod` makes the pod not ready (InPlaceUpdateReady=False), upstream
// CheckPodNeedsBeUnready with the InPlaceWorkloadVerticalScaling gate: always, unless only resources change and no
// container resized for a resource whose resizePolicy is RestartContainer (the containers keep running). `pod`
// must carry the InPlaceUpdateReady readiness gate for anything to be written.
bool ResizeRestartsContainers(const pb::Pod& pod, const InPlaceUpdateSpec& spec);

// The batch's changes and its state annotation (dropping the legacy one).
void ApplyBatchToPatch(const InPlaceBatch& batch, bool has_legacy_state, pb::PatchPod* patch);
void ApplyBatchToPatch(const InPlaceBatch& batch, const pb::Pod& pod, pb::PatchPod* patch);

// The constant texts written for every pod updated in place, as strings: protobuf's set_x(const char*) would copy
// a temporary std::string (one more allocation and free per field and pod).
struct InPlaceTexts {
  const std::string ready_type = kInPlaceUpdateReadyCondition;
  const std::string start_reason = "StartInPlaceUpdate";
  const std::string gates_not_ready_reason = "ReadinessGatesNotReady";
  // The kubelet's own wording (GeneratePodReadyCondition): the kubelet then finds Ready as it would write it and
  // does not write again, so the spec patch right after the status patch does not meet a 409.
  const std::string gates_not_ready_message =
      "the status of pod readiness gate \"InPlaceUpdateReady\" is not \"True\", but False";
};
const InPlaceTexts& Texts();

// Written where it lands (the response may be on an arena: no temporary to copy).
void SetInPlaceReadyCondition(const PlanContext& ctx, bool ready, pb::Condition* condition);

// The purpose of the InPlaceUpdateReady=True status patch (DropUnneededInPlaceReadyWrites finds them by it).
inline constexpr char kInPlaceReadyPurpose[] = "in-place-update-ready";
void MarkInPlaceReady(const PlanContext& ctx, const pb::Pod& pod, PlanBuilder& plan);

}  // namespace cloneset::planner
