#include "planner/refresh.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/time_format.h"
#include "planner/context_facts.h"
#include "planner/inplace.h"
#include "planner/inplace_patch.h"
#include "planner/lifecycle.h"
#include "planner/pod_facts.h"
#include "planner/pod_source.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

// A pending update whose target is no longer the update revision (a rollback or a newer template arrived during
// the grace period) is undone: the pod gets back the labels of the revision it still runs (docs/compatibility.md,
// "Rollback during the grace period is undone").
void CancelGracePeriod(const PlanContext& ctx, const pb::Pod& pod, const InPlaceUpdateSpec& spec, PlanBuilder& plan) {
  pb::PatchPod* patch = AddPodPatch(pod, "cancel-grace", plan);
  RemoveGraceAnnotations(pod, patch);
  SetRevisionLabels(ctx, spec.old_revision, patch);
  for (const char* key : {kInPlaceStateAnnotation, kLegacyInPlaceStateAnnotation}) {
    if (pod.metadata().annotations().contains(key)) patch->add_remove_annotations(key);
  }
  if (HasReadinessGate(pod, kInPlaceUpdateReadyCondition)) MarkInPlaceReady(ctx, pod, plan);
  plan.AddEvent(pb::NORMAL, "CancelledUpdatePodInPlace",
                absl::StrFormat("cancelled the pending in-place update of pod %s to revision %s during its grace "
                                "period: the update revision is now %s",
                                pod.metadata().name(), spec.revision, ctx.update_revision),
                pod.metadata().name());
}

// §5.9 step 1. The pod has a grace annotation.
void RefreshGrace(const PlanContext& ctx, const pb::Pod& pod, std::string_view grace_json, PlanBuilder& plan) {
  absl::StatusOr<InPlaceUpdateSpec> spec = ParseGraceSpec(grace_json);
  if (!spec.ok() || !RevisionMatches(pod, spec->revision)) {
    if (!spec.ok()) {
      plan.AddEvent(pb::WARNING, "FailedUpdatePodInPlace",
                    absl::StrCat("dropped the unreadable grace annotation of pod ", pod.metadata().name(), ": ",
                                 spec.status().message()),
                    pod.metadata().name());
    }
    RemoveGraceAnnotations(pod, AddPodPatch(pod, "finish-grace", plan));
    return;
  }
  if (spec->revision != ctx.update_revision && !spec->old_revision.empty()) {
    CancelGracePeriod(ctx, pod, *spec, plan);
    return;
  }
  absl::StatusOr<InPlaceUpdateState> state = ParseInPlaceState(InPlaceStateAnnotation(pod));
  if (!state.ok()) return;  // upstream: silently no write
  const absl::StatusOr<absl::Time> parsed = base::ParseTime(state->update_timestamp);
  const absl::Time started = parsed.ok() ? *parsed : ctx.now;
  const absl::Duration remaining = absl::Seconds(spec->grace_seconds) - (ctx.now - started);
  if (remaining > absl::ZeroDuration()) {
    plan.PushRequeue(absl::Ceil(remaining, absl::Seconds(1)));
    return;
  }
  const InPlaceBatch batch = ApplyInPlaceBatch(pod, *spec, *std::move(state), ctx.now, /*apply_metadata=*/true);
  AddResizePod(pod, batch.container_resources, "finish-grace", plan);
  pb::PatchPod* patch = AddPodPatch(pod, "finish-grace", plan);
  ApplyBatchToPatch(batch, pod, patch);
  RemoveGraceAnnotations(pod, patch);
}

bool ContainersReady(const pb::Pod& pod, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    bool ready = false;
    for (const pb::ContainerStatus& status : pod.container_statuses()) {
      if (status.name() == name) ready = status.ready();
    }
    if (!ready) return false;
  }
  return true;
}

// §5.9: grace periods, next batches, InPlaceUpdateReady completion.
void RefreshInPlace(const PlanContext& ctx, const pb::Pod& pod, PlanBuilder& plan) {
  const std::string_view grace = InPlaceGraceAnnotation(pod);
  if (!grace.empty()) {
    RefreshGrace(ctx, pod, grace, plan);
    return;
  }
  const bool has_gate = HasReadinessGate(pod, kInPlaceUpdateReadyCondition);
  const pb::Condition* condition = has_gate ? FindCondition(pod, kInPlaceUpdateReadyCondition) : nullptr;
  const bool ready_true = condition != nullptr && condition->status() == "True" && condition->reason().empty() &&
                          condition->message().empty();
  const std::string_view state_json = InPlaceStateAnnotation(pod);
  // Fast path for the common steady pod: nothing to complete and no later batch pending, so the state JSON need
  // not be parsed (this runs for every pod of every plan).
  if (!state_json.empty() && (!ready_true || state_json.find("\"nextContainer") != std::string_view::npos)) {
    absl::StatusOr<InPlaceUpdateState> state = ParseInPlaceState(state_json);
    if (!state.ok()) {
      // Never complete (kruise/inplace_completion.h, semantics §5.9): InPlaceUpdateReady stays as it is until the
      // annotation is repaired or removed, as upstream's Refresh returns the parse error; said in an event.
      plan.AddEvent(pb::WARNING, "InvalidInPlaceUpdateState",
                    absl::StrCat("the in-place update of pod ", pod.metadata().name(),
                                 " cannot complete: ", state.status().message()),
                    pod.metadata().name());
      return;
    }
    if (!ContainersUpdateCompleted(pod, *state)) return;
    if (HasNextBatch(*state)) {
      if (!ContainersReady(pod, state->pre_check_containers_required_ready)) return;
      InPlaceUpdateSpec next;
      next.revision = state->revision;
      next.container_images = state->next_container_images;
      next.container_ref_metadata = state->next_container_ref_metadata;
      // Upstream drops a later batch that only resizes (its updateNextBatch looks at images and metadata only)
      // and the pod then never completes; it is applied here.
      next.container_resources = state->next_container_resources;
      const InPlaceBatch batch = ApplyInPlaceBatch(pod, next, *state, ctx.now, /*apply_metadata=*/false);
      AddResizePod(pod, batch.container_resources, "next-batch", plan);
      ApplyBatchToPatch(batch, pod, AddPodPatch(pod, "next-batch", plan));
      return;
    }
  }
  if (!has_gate || ready_true) return;
  MarkInPlaceReady(ctx, pod, plan);
}

// §6.2 refresh rows. Returns true when a lifecycle PatchPod was appended.
bool RefreshLifecycle(const PlanContext& ctx, const pb::Pod& pod, PlanBuilder& plan) {
  const std::string_view state = LifecycleState(pod);
  const pb::LifecycleHook* hook = InPlaceUpdateHook(ctx);
  const bool mark = hook != nullptr && hook->mark_pod_not_ready();
  // Upstream goes Updating -> Updated -> Normal when lifecycle is set without an inPlaceUpdate hook; Updated
  // would leave at once (hook == nullptr), so we go straight to Normal and save a write (docs/compatibility.md).
  const auto after_update = [&]() -> std::string_view {
    return hook != nullptr && !IsAllHooked(hook, pod) ? kStateUpdated : kStateNormal;
  };
  std::string_view target;
  if (state == kStatePreparingNormal) {
    const pb::LifecycleHook* pre_normal = PreNormalHook(ctx);
    if (pre_normal == nullptr ? !pod.node_name().empty() : IsAllHooked(pre_normal, pod)) target = kStateNormal;
  } else if (state == kStatePreparingUpdate) {
    if (RevisionMatches(pod, ctx.update_revision)) target = after_update();
  } else if (state == kStateUpdating) {
    if (InPlaceUpdateCompleted(pod)) target = after_update();
  } else if (state == kStateUpdated) {
    if (!HasLifecycle(ctx) || hook == nullptr || IsAllHooked(hook, pod)) target = kStateNormal;
  }
  if (target.empty()) return false;
  // Leaving the update states for Normal also takes back the preUpdateHook not-ready key (upstream forgets it
  // when a pod skips Updated).
  if (mark && target == kStateNormal && state != kStatePreparingNormal) {
    ApplyNotReadyPolicy(ctx, pod, kStateUpdated, plan);
  }
  return SetLifecycleState(ctx, pod, target, mark, nullptr, plan);
}

// True when RefreshInPlace, RefreshLifecycle and the pod-template-hash backfill would all leave the pod alone:
// the steady pod of every plan, decided from its facts without touching the protobuf again.
bool NothingToRefresh(const PodHotFacts& f, const PodColdFacts& cold) {
  if (f.has_in_place_grace || !f.has_template_hash_label) return false;
  switch (f.lifecycle) {
    case Lifecycle::kPreparingNormal:
    case Lifecycle::kPreparingUpdate:
    case Lifecycle::kUpdating:
    case Lifecycle::kUpdated:
      return false;
    default:
      break;
  }
  const bool ready_true = f.in_place_gate && f.in_place_settled;
  if (f.has_in_place_state &&
      (!ready_true || cold.in_place_state.find("\"nextContainer") != std::string_view::npos)) {
    return false;
  }
  return !f.in_place_gate || ready_true;
}

}  // namespace

void DropUnneededInPlaceReadyWrites(bool scaling, PlanBuilder& plan) {
  auto* actions = plan.response()->mutable_actions();
  const auto is_ready_write = [](const pb::Action& a) {
    return a.has_patch_pod_status() && a.patch_pod_status().purpose() == kInPlaceReadyPurpose;
  };
  absl::flat_hash_set<std::string_view> deleted;
  bool any = false;
  for (const pb::Action& a : *actions) {
    if (a.has_delete_pod()) deleted.insert(a.delete_pod().name());
    any = any || is_ready_write(a);
  }
  if (!any || (!scaling && deleted.empty())) return;
  int kept = 0;
  for (int i = 0; i < actions->size(); ++i) {
    const pb::Action& a = actions->Get(i);
    if (is_ready_write(a) && (scaling || deleted.contains(a.patch_pod_status().name()))) continue;
    if (kept != i) actions->SwapElements(kept, i);
    ++kept;
  }
  actions->DeleteSubrange(kept, actions->size() - kept);
}

bool PlanRefresh(const PlanContext& ctx, PlanBuilder& plan, absl::Status* error) {
  if (error != nullptr) *error = absl::OkStatus();
  bool modified = false;
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    if (NothingToRefresh(facts[i], cold[i])) continue;
    const pb::Pod* pod = &PodAt(ctx, i);
    RefreshInPlace(ctx, *pod, plan);
    bool patched = RefreshLifecycle(ctx, *pod, plan);
    static const std::string* const kTemplateHashKey = new std::string(kPodTemplateHashLabel);
    if (!pod->metadata().labels().contains(*kTemplateHashKey)) {
      const std::string hash(ShortHash(Label(pod->metadata(), kRevisionLabel)));
      pb::PatchPod* patch = patched ? plan.response()->mutable_actions(plan.response()->actions_size() - 1)
                                          ->mutable_patch_pod()
                                    : AddPodPatch(*pod, "pod-template-hash", plan);
      (*patch->mutable_set_labels())[kPodTemplateHashLabel] = hash;
      patched = true;
    }
    modified = modified || patched;
  }
  return modified;
}

}  // namespace cloneset::planner
