#include "planner/update.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "planner/context_facts.h"
#include "planner/inplace.h"
#include "planner/inplace_patch.h"
#include "planner/lifecycle.h"
#include "planner/pod_facts.h"
#include "planner/pod_source.h"
#include "planner/predicates.h"
#include "planner/scale_diff.h"
#include "planner/update_order.h"

namespace cloneset::planner {
namespace {

// What starting an in-place update to one spec writes that is the same for every pod: formatted once per plan
// and spec, so each pod costs only its own names, IDs and the protobuf fields (a plan may start thousands).
struct InPlaceStart {
  InPlaceStart(const PlanContext& ctx, InPlaceUpdateSpec in_place)
      : spec(std::move(in_place)),
        revision_label(RevisionLabelValue(ctx, spec.revision)),
        template_hash(ShortHash(spec.revision)),
        event_suffix(absl::StrCat(" in-place(revision ", spec.revision, ")")),
        single_batch(spec, ctx.now) {
    if (spec.grace_seconds > 0) {
      InPlaceUpdateState state = FirstState(ctx);
      grace_state = FormatInPlaceState(state);
      grace_spec = FormatGraceSpec(spec);
    }
  }
  InPlaceStart(const InPlaceStart&) = delete;
  InPlaceStart& operator=(const InPlaceStart&) = delete;

  // The state before the first batch (upstream's PatchSpecToPod input).
  InPlaceUpdateState FirstState(const PlanContext& ctx) const {
    InPlaceUpdateState state;
    state.revision = spec.revision;
    state.update_timestamp = Rfc3339(ctx.now);
    state.update_env_from_metadata = spec.update_env_from_metadata;
    state.update_images = !spec.container_images.empty();
    state.update_resources = !spec.container_resources.empty();
    return state;
  }

  const InPlaceUpdateSpec spec;
  const std::string revision_label;  // kRevisionLabel value
  const std::string template_hash;   // kPodTemplateHashLabel value
  const std::string event_suffix;    // of SuccessfulUpdatePodInPlace
  const SingleBatchState single_batch;  // refers to `spec`
  std::string grace_state;           // with a grace period: the state and grace annotations
  std::string grace_spec;
};

// Ready=False in the kubelet's wording, written with InPlaceUpdateReady=False when the pod is ready now.
void SetGatesNotReadyCondition(const PlanContext& ctx, pb::Condition* not_ready) {
  not_ready->set_type("Ready");
  not_ready->set_status("False");
  not_ready->set_reason(Texts().gates_not_ready_reason);
  not_ready->set_message(Texts().gates_not_ready_message);
  SetTimestamp(ctx.now, not_ready->mutable_last_transition_time());
}

bool SetsNotReady(const PodFacts& facts) {
  return facts.has_ready_condition && !facts.ready_false && facts.containers_ready;
}

// The labels every start patch writes, and lifecycle Updating when `updating` (the CloneSet has a lifecycle, or the
// update leaves the pod ready: a resize that restarts no container).
void SetStartLabels(const PlanContext& ctx, const InPlaceStart& start, bool updating, pb::PatchPod* patch) {
  auto& labels = *patch->mutable_set_labels();
  labels[kRevisionLabel] = start.revision_label;
  labels[kPodTemplateHashLabel] = start.template_hash;
  if (updating) {
    labels[kLifecycleStateLabel] = kStateUpdating;
    (*patch->mutable_set_annotations())[kLifecycleTimestampAnnotation] = Rfc3339(ctx.now);
  }
}

constexpr char kStartStatusPurpose[] = "start-in-place-update";
constexpr char kStartPatchPurpose[] = "in-place-update";
constexpr char kStartEventReason[] = "SuccessfulUpdatePodInPlace";
constexpr char kStartEventPrefix[] = "successfully update pod ";

// Appends in-place update starts to StartInPlaceUpdates batches (PlanRequest.accept_in_place_batches): a pod
// joins the open batch when that batch is still the plan's last action, no event came after it, and the pod has
// the same spec and the same status write (readiness gate or not); else it opens a new batch. The batch's
// templates are what PerformInPlaceUpdate writes for every such pod, written by the same functions.
class InPlaceBatcher {
 public:
  // A hint for the batch about to open: how many pods may still join it.
  void set_remaining(int remaining) { remaining_ = remaining; }

  pb::StartInPlaceUpdates::Target* Add(const PlanContext& ctx, const InPlaceStart& start, bool gated,
                                       PlanBuilder& plan) {
    pb::PlanResponse* response = plan.response();
    if (batch_ == nullptr || start_ != &start || gated_ != gated || response->actions_size() != action_index_ + 1 ||
        response->events_size() != batch_->events_before()) {
      Open(ctx, start, gated, plan);
    }
    return batch_->add_targets();
  }

 private:
  void Open(const PlanContext& ctx, const InPlaceStart& start, bool gated, PlanBuilder& plan) {
    start_ = &start;
    gated_ = gated;
    action_index_ = plan.response()->actions_size();
    batch_ = plan.AddAction()->mutable_start_in_place_updates();
    if (gated) {
      pb::PatchPodStatus* status = batch_->mutable_status_patch();
      status->set_purpose(kStartStatusPurpose);
      SetInPlaceReadyCondition(ctx, false, status->add_set_conditions());
      batch_->set_status_stop_on_error(true);
      SetGatesNotReadyCondition(ctx, batch_->mutable_not_ready_condition());
    }
    pb::PatchPod* patch = batch_->mutable_patch();
    patch->set_purpose(kStartPatchPurpose);
    SetStartLabels(ctx, start, HasLifecycle(ctx), patch);
    ApplyChangesToPatch(start.spec, patch);
    batch_->set_patch_stop_on_error(true);
    batch_->set_event_type(pb::NORMAL);
    batch_->set_event_reason(kStartEventReason);
    batch_->set_event_message_prefix(kStartEventPrefix);
    batch_->set_event_message_suffix(start.event_suffix);
    batch_->set_events_before(plan.response()->events_size());
    batch_->set_in_place_update_state_prefix(start.single_batch.prefix());
    batch_->set_in_place_update_state_suffix(start.single_batch.suffix());
    if (remaining_ > 0) batch_->mutable_targets()->Reserve(remaining_);
  }

  pb::StartInPlaceUpdates* batch_ = nullptr;
  const InPlaceStart* start_ = nullptr;
  bool gated_ = false;
  int action_index_ = -1;
  int remaining_ = 0;
};

// §5.8 (with our write plan): status False, then one spec patch. Reads the pod's facts and containers only.
void PerformInPlaceUpdate(const PlanContext& ctx, const PodFacts& facts, const InPlaceStart& start,
                          PlanBuilder& plan, InPlaceBatcher& batcher, std::string& message) {
  const InPlaceUpdateSpec& spec = start.spec;
  std::optional<PodContainers> containers;
  if (spec.grace_seconds <= 0) containers.emplace(ContainersOf(ctx, facts));
  // The common start (one batch takes every container, nothing legacy to remove) as part of a batch.
  if (plan.in_place_batches() && containers.has_value() && start.single_batch.Covers(*containers) &&
      !facts.has_legacy_state && !facts.has_grace_key && !facts.has_legacy_grace) {
    pb::StartInPlaceUpdates::Target* target = batcher.Add(ctx, start, facts.in_place_gate, plan);
    target->set_name(std::string(facts.name));
    target->set_uid(std::string(facts.uid));
    target->set_resource_version(std::string(facts.resource_version));
    start.single_batch.AppendTo(*containers, target->mutable_in_place_update_state(), /*whole=*/false);
    target->set_set_not_ready(facts.in_place_gate && SetsNotReady(facts));
    return;
  }
  // With a resize (the InPlaceWorkloadVerticalScaling gate), the pod object: its spec's resources and resize
  // policies. A resize that restarts no container leaves the pod ready (no InPlaceUpdateReady=False, as upstream);
  // lifecycle Updating then keeps it unavailable until the kubelet has carried the resize out (§5.8).
  const bool resize = !spec.container_resources.empty();
  const pb::Pod* pod = resize ? &PodOf(ctx, facts) : nullptr;
  const bool not_ready = facts.in_place_gate && (!resize || ResizeRestartsContainers(*pod, spec));
  if (not_ready) {
    pb::PatchPodStatus* status = AddPodStatusPatch(facts, kStartStatusPurpose, plan);
    SetInPlaceReadyCondition(ctx, false, status->add_set_conditions());
    if (SetsNotReady(facts)) SetGatesNotReadyCondition(ctx, status->add_set_conditions());
  }
  std::optional<InPlaceBatch> batch;
  if (containers.has_value() && !start.single_batch.Covers(*containers)) {
    batch = ApplyInPlaceBatch(*containers, spec, start.FirstState(ctx), ctx.now, /*apply_metadata=*/true);
    if (resize) AddResizePod(*pod, batch->container_resources, kStartPatchPurpose, plan);
  }
  pb::PatchPod* patch = AddPodPatch(facts, kStartPatchPurpose, plan);
  SetStartLabels(ctx, start, HasLifecycle(ctx) || (resize && !not_ready), patch);
  if (containers.has_value()) {
    if (!batch.has_value()) {
      // ApplyBatchToPatch of the batch ApplyInPlaceBatch would make, written straight into the patch.
      ApplyChangesToPatch(spec, patch);
      std::string& state = (*patch->mutable_set_annotations())[kInPlaceStateAnnotation];
      state.clear();
      start.single_batch.AppendTo(*containers, &state);
      if (facts.has_legacy_state) patch->add_remove_annotations(kLegacyInPlaceStateAnnotation);
    } else {
      ApplyBatchToPatch(*batch, facts.has_legacy_state, patch);
    }
    RemoveGraceAnnotations(facts.has_grace_key, facts.has_legacy_grace, patch);
  } else {
    (*patch->mutable_set_annotations())[kInPlaceStateAnnotation] = start.grace_state;
    (*patch->mutable_set_annotations())[kInPlaceGraceAnnotation] = start.grace_spec;
    if (facts.has_legacy_state) {
      patch->add_remove_annotations(kLegacyInPlaceStateAnnotation);
    }
    plan.PushRequeue(absl::Seconds(spec.grace_seconds));
  }
  message.assign(kStartEventPrefix);
  message.append(facts.name);
  message.append(start.event_suffix);
  plan.AddEvent(pb::NORMAL, kStartEventReason, message, facts.name);
}

std::vector<std::string> PodPvcNames(const PlanContext& ctx, const pb::Pod& pod) {
  std::vector<std::string> names;
  const std::string_view id = InstanceId(pod);
  if (id.empty()) return names;
  for (const pb::PersistentVolumeClaim* pvc : ctx.pvcs) {
    if (InstanceId(*pvc) == id) names.push_back(pvc->metadata().name());
  }
  return names;
}

// ReCreate: delete now (instead of labelling specified-delete and waiting for a later Scale). A pod hooked by
// preDelete gets PreparingDelete plus the specified-delete label, and Scale deletes it once unhooked.
void RecreatePod(const PlanContext& ctx, const pb::Pod& pod, const std::string& target, PlanBuilder& plan) {
  const pb::LifecycleHook* pre_delete = PreDeleteHook(ctx);
  const std::string& name = pod.metadata().name();
  if (IsHooked(pre_delete, pod)) {
    if (SetLifecycleState(ctx, pod, kStatePreparingDelete, pre_delete->mark_pod_not_ready(), nullptr, plan)) {
      (*plan.response()->mutable_actions(plan.response()->actions_size() - 1)->mutable_patch_pod()->mutable_set_labels())
          [kSpecifiedDeleteLabel] = "true";
    }
    plan.AddEvent(pb::NORMAL, "SuccessfulUpdatePodReCreate",
                  absl::StrFormat("successfully patch pod %s specified-delete for update(revision %s)", name, target),
                  name);
    return;
  }
  pb::Action* action = plan.AddAction();
  action->set_stop_on_error(true);
  pb::DeletePod* del = action->mutable_delete_pod();
  del->set_name(name);
  del->set_uid(pod.metadata().uid());
  // Retain keeps the PVCs for the replacement (same data) unless the claim templates changed, which is exactly
  // when the pod must be recreated to get the new claims.
  const bool vct_changed = [&] {
    const pb::ControllerRevision* old = PodRevision(ctx, pod);
    if (old == nullptr) return false;
    auto it = old->metadata().annotations().find(kVctHashAnnotation);
    return it != old->metadata().annotations().end() && it->second != RevisionVctHash(ctx, target);
  }();
  if (!ctx.spec.retain_pvcs || vct_changed) {
    for (std::string& pvc : PodPvcNames(ctx, pod)) del->add_pvc_names(std::move(pvc));
  }
  plan.AddEvent(pb::NORMAL, "SuccessfulUpdatePodReCreate",
                absl::StrFormat("successfully delete pod %s for update(revision %s)", name, target), name);
  plan.AddEvent(pb::NORMAL, "SuccessfulDelete", absl::StrCat("succeed to delete pod ", name), name);
}

// In-place feasibility depends only on (pod revision, target): computed once per revision, not per pod, so a
// plan that updates thousands of pods parses and diffs the templates once.
class InPlaceSpecCache {
 public:
  InPlaceSpecCache(const PlanContext& ctx, const std::string& target) : ctx_(ctx), target_(target) {}

  struct Entry {
    std::unique_ptr<InPlaceStart> start;  // nullptr: not in place, for `why_not`
    std::string why_not;
  };

  // Keyed by the pod's revision label: PodRevision is a function of it, so it runs once per distinct label.
  const Entry& Get(const PodFacts& pod) {
    // Pods mostly share one label: the last answer saves the hash lookup.
    if (last_ != nullptr && pod.revision == last_label_) return *last_;
    auto it = by_label_.find(absl::string_view(pod.revision.data(), pod.revision.size()));
    if (it == by_label_.end()) {
      const pb::ControllerRevision* revision = PodRevision(ctx_, pod);
      const std::string key = revision == nullptr ? std::string() : revision->metadata().name();
      auto entry = cache_.find(key);
      if (entry == cache_.end()) {
        Entry fresh;
        std::optional<InPlaceUpdateSpec> spec = CalculateInPlaceUpdate(ctx_, revision, target_, &fresh.why_not);
        if (spec.has_value()) fresh.start = std::make_unique<InPlaceStart>(ctx_, *std::move(spec));
        entry = cache_.emplace(key, std::move(fresh)).first;
      }
      it = by_label_.emplace(std::string(pod.revision), &entry->second).first;
    }
    last_label_ = it->first;
    last_ = it->second;
    return *last_;
  }

 private:
  const PlanContext& ctx_;
  const std::string& target_;
  std::map<std::string, Entry> cache_;
  absl::flat_hash_map<std::string, const Entry*> by_label_;
  std::string last_label_;  // a copy: flat_hash_map moves its keys when it grows
  const Entry* last_ = nullptr;
};

// §5.6 for one selected pod. Returns an error for InPlaceOnly pods that cannot be updated in place. The pod object
// is built (PodOf) only off the common path: lifecycle hooks, recreation, errors.
absl::Status UpdatePod(const PlanContext& ctx, const PodFacts& facts, const std::string& target, PlanBuilder& plan,
                       InPlaceSpecCache& specs, InPlaceBatcher& batcher, std::string& message, bool* updated) {
  *updated = false;
  const absl::string_view name(facts.name.data(), facts.name.size());  // for absl formatting
  if (ctx.spec.policy != PodUpdatePolicy::kReCreate) {
    const InPlaceSpecCache::Entry& in_place = specs.Get(facts);
    const std::string& why_not = in_place.why_not;
    if (in_place.start != nullptr) {
      const Lifecycle state = facts.lifecycle;
      const pb::LifecycleHook* hook = InPlaceUpdateHook(ctx);
      const bool mark = hook != nullptr && hook->mark_pod_not_ready();
      if (state == Lifecycle::kNone || state == Lifecycle::kPreparingNormal || state == Lifecycle::kNormal) {
        if (hook != nullptr && IsHooked(hook, PodOf(ctx, facts))) {
          SetLifecycleState(ctx, PodOf(ctx, facts), kStatePreparingUpdate, mark, nullptr, plan);
          return absl::OkStatus();
        }
      } else if (state == Lifecycle::kUpdated) {
        if (hook != nullptr) SetLifecycleState(ctx, PodOf(ctx, facts), kStatePreparingUpdate, mark, hook, plan);
        return absl::OkStatus();
      } else if (state == Lifecycle::kPreparingUpdate) {
        if (hook != nullptr && IsHooked(hook, PodOf(ctx, facts))) {
          plan.summary()->add_blocked_reasons(
              absl::StrCat("pod ", name, " waits for its inPlaceUpdate hook to be removed"));
          return absl::OkStatus();
        }
      } else if (state != Lifecycle::kUpdating) {
        return absl::FailedPreconditionError(absl::StrFormat("not allowed to in-place update pod %s in state %s",
                                                             name, LifecycleState(PodOf(ctx, facts))));
      }
      PerformInPlaceUpdate(ctx, facts, *in_place.start, plan, batcher, message);
      *updated = true;
      return absl::OkStatus();
    }
    if (ctx.spec.policy == PodUpdatePolicy::kInPlaceOnly) {
      const std::string message = absl::StrFormat(
          "find Pod %s update strategy is InPlaceOnly but can not update in-place: %s", name, why_not);
      plan.AddEvent(pb::WARNING, "FailedUpdatePodInPlace", message, facts.name);
      plan.summary()->add_blocked_reasons(message);
      return absl::FailedPreconditionError(message);
    }
    plan.AddEvent(pb::NORMAL, "InPlaceUpdateNotPossible",
                  absl::StrFormat("pod %s cannot be updated in place to revision %s (%s), so it is recreated", name,
                                  target, why_not),
                  facts.name);
  }
  RecreatePod(ctx, PodOf(ctx, facts), target, plan);
  *updated = true;
  return absl::OkStatus();
}

}  // namespace

absl::Status PlanUpdate(const PlanContext& ctx, PlanBuilder& plan) {
  pb::PlanSummary* summary = plan.summary();
  if (!ctx.spec.rolling_update) {
    summary->add_blocked_reasons("updateStrategy.type is OnDelete: pods move to the new revision when deleted");
    return absl::OkStatus();
  }
  if (ctx.spec.paused) {
    summary->add_blocked_reasons("updateStrategy.paused is true");
    return absl::OkStatus();
  }
  const ScaleDiff diff = CalculateDiff(ctx, RevisionCheck::kUpdate);
  summary->set_update_num(diff.update_num);
  summary->set_update_max_unavailable(diff.update_num != 0 ? diff.update_max_unavailable : 0);
  if (diff.update_num == 0) return absl::OkStatus();
  const std::string& target = diff.update_num > 0 ? ctx.update_revision : ctx.current_revision;

  // §5.3 candidates, in pod order.
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& all_facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& all_cold = AllColdFacts(ctx, cold_scratch);
  std::vector<int> candidates;
  candidates.reserve(ctx.pods.size());
  int waiting_in_grace = 0;
  for (int i = 0; i < static_cast<int>(ctx.pods.size()); ++i) {
    const PodHotFacts& facts = all_facts[i];
    const bool on_update = facts.on_update_revision;
    if (diff.update_num > 0 ? on_update : !on_update) continue;
    if (facts.lifecycle == Lifecycle::kPreparingDelete) continue;
    if (facts.lifecycle != Lifecycle::kUpdated && facts.has_in_place_grace) {
      ++waiting_in_grace;
      continue;
    }
    candidates.push_back(i);
  }
  // Priority and scatter terms read any label of any candidate: only they need the pods as objects.
  const pb::UpdateStrategy& strategy = ctx.clone_set->spec().update_strategy();
  std::vector<const pb::Pod*> pod_scratch;
  const std::vector<const pb::Pod*>& pods =
      strategy.has_priority_strategy() || strategy.scatter_strategy_size() > 0 ? AllPods(ctx, pod_scratch) : ctx.pods;
  std::vector<int> ordered =
      SortUpdateCandidates(strategy, pods, std::move(candidates), all_facts.data(), all_cold.data());
  if (ordered.size() > static_cast<size_t>(std::abs(diff.update_num))) ordered.resize(std::abs(diff.update_num));

  // §5.5 limit.
  int unavailable = 0;
  int target_unavailable = 0;
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    const PodHotFacts& facts = all_facts[i];
    if (IsAvailable(facts, ctx.spec.min_ready_seconds, ctx.now)) continue;
    ++unavailable;
    if (OnRevision(ctx, facts, all_cold[i], target)) ++target_unavailable;
  }
  size_t can = 0;
  for (int index : ordered) {
    if (target_unavailable + static_cast<int>(can) >= diff.update_max_unavailable) break;
    if (IsAvailable(all_facts[index], ctx.spec.min_ready_seconds, ctx.now)) {
      if (unavailable >= diff.update_max_unavailable) break;
      ++unavailable;
    }
    ++can;
  }
  if (can < ordered.size()) {
    summary->add_blocked_reasons(absl::StrFormat(
        "maxUnavailable: %d of %d pods may update now (update budget %d, %d unavailable)", can, ordered.size(),
        diff.update_max_unavailable, unavailable));
  }
  if (waiting_in_grace > 0) {
    summary->add_blocked_reasons(absl::StrFormat("%d pods are in their in-place grace period", waiting_in_grace));
  }

  absl::Status first_error;
  int updated_now = 0;
  InPlaceSpecCache specs(ctx, target);
  InPlaceBatcher batcher;
  // Batches need no room for per-pod actions (the batch reserves its targets).
  if (!plan.in_place_batches()) plan.Reserve(2 * static_cast<int>(can), static_cast<int>(can));
  std::string message;  // event text, reused across pods
  for (size_t i = 0; i < can; ++i) {
    bool updated = false;
    batcher.set_remaining(static_cast<int>(can - i));
    const int pod = ordered[i];
    absl::Status status =
        UpdatePod(ctx, PodFacts(all_facts[pod], all_cold[pod]), target, plan, specs, batcher, message, &updated);
    if (updated) ++updated_now;
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  summary->set_updated_now(summary->updated_now() + updated_now);
  return first_error;
}

}  // namespace cloneset::planner
