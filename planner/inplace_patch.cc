#include "planner/inplace_patch.h"

#include "planner/lifecycle.h"
#include "planner/predicates.h"

namespace cloneset::planner {

std::string RevisionLabelValue(const PlanContext& ctx, const std::string& revision) {
  return ctx.gates.clone_set_short_hash() ? std::string(ShortHash(revision)) : revision;
}

void SetRevisionLabels(const PlanContext& ctx, const std::string& revision, pb::PatchPod* patch) {
  (*patch->mutable_set_labels())[kRevisionLabel] = RevisionLabelValue(ctx, revision);
  (*patch->mutable_set_labels())[kPodTemplateHashLabel] = std::string(ShortHash(revision));
}

void RemoveGraceAnnotations(bool has_grace, bool has_legacy_grace, pb::PatchPod* patch) {
  if (has_grace) patch->add_remove_annotations(kInPlaceGraceAnnotation);
  if (has_legacy_grace) patch->add_remove_annotations(kLegacyInPlaceGraceAnnotation);
}

void RemoveGraceAnnotations(const pb::Pod& pod, pb::PatchPod* patch) {
  const auto& annotations = pod.metadata().annotations();
  RemoveGraceAnnotations(annotations.contains(kInPlaceGraceAnnotation),
                         annotations.contains(kLegacyInPlaceGraceAnnotation), patch);
}

void ApplyBatchToPatch(const InPlaceBatch& batch, bool has_legacy_state, pb::PatchPod* patch) {
  ApplyChangesToPatch(batch, patch);
  (*patch->mutable_set_annotations())[kInPlaceStateAnnotation] = FormatInPlaceState(batch.state);
  if (has_legacy_state) patch->add_remove_annotations(kLegacyInPlaceStateAnnotation);
}

void ApplyBatchToPatch(const InPlaceBatch& batch, const pb::Pod& pod, pb::PatchPod* patch) {
  ApplyBatchToPatch(batch, pod.metadata().annotations().contains(kLegacyInPlaceStateAnnotation), patch);
}

const InPlaceTexts& Texts() {
  static const InPlaceTexts* const texts = new InPlaceTexts();
  return *texts;
}

void SetInPlaceReadyCondition(const PlanContext& ctx, bool ready, pb::Condition* condition) {
  condition->set_type(Texts().ready_type);
  condition->set_status(ready ? "True" : "False");
  if (!ready) condition->set_reason(Texts().start_reason);
  SetTimestamp(ctx.now, condition->mutable_last_transition_time());
}

void MarkInPlaceReady(const PlanContext& ctx, const pb::Pod& pod, PlanBuilder& plan) {
  SetInPlaceReadyCondition(ctx, true, AddPodStatusPatch(pod, kInPlaceReadyPurpose, plan)->add_set_conditions());
}

}  // namespace cloneset::planner
