#include "planner/inplace_patch.h"

#include <tuple>
#include <utility>

#include "common/resources.h"

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

void AddResizePod(const pb::Pod& pod, const std::map<std::string, ContainerResources>& resources,
                  std::string_view purpose, PlanBuilder& plan) {
  pb::ResizePod resize;
  for (const pb::Container& container : pod.containers()) {
    const auto want = resources.find(container.name());
    if (want == resources.end()) continue;
    pb::ResizePod::ContainerResources changed;
    changed.set_name(container.name());
    for (const auto& [target, have, from] :
         {std::tuple{changed.mutable_requests(), &container.resource_requests(), &want->second.requests},
          std::tuple{changed.mutable_limits(), &container.resource_limits(), &want->second.limits}}) {
      for (const auto& [name, quantity] : *from) {
        const auto it = have->find(name);
        if (it != have->end() && common::SameQuantity(it->second, quantity)) continue;
        (*target)[name] = quantity;
      }
    }
    if (!changed.requests().empty() || !changed.limits().empty()) *resize.add_containers() = std::move(changed);
  }
  if (resize.containers().empty()) return;
  resize.set_name(pod.metadata().name());
  resize.set_uid(pod.metadata().uid());
  resize.set_resource_version(pod.metadata().resource_version());
  resize.set_purpose(std::string(purpose));
  pb::Action* action = plan.AddAction();
  action->set_stop_on_error(true);
  *action->mutable_resize_pod() = std::move(resize);
}

bool ResizeRestartsContainers(const pb::Pod& pod, const InPlaceUpdateSpec& spec) {
  if (!spec.ResizeOnly()) return true;
  for (const pb::Container& container : pod.containers()) {
    const auto resized = spec.container_resources.find(container.name());
    if (resized == spec.container_resources.end()) continue;
    for (const std::string& resource : container.restart_on_resize()) {
      if (resized->second.requests.contains(resource) || resized->second.limits.contains(resource)) return true;
    }
  }
  return false;
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
