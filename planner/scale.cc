#include "planner/scale.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/context_facts.h"
#include "planner/delete_order.h"
#include "planner/instance_ids.h"
#include "planner/lifecycle.h"
#include "planner/pod_factory.h"
#include "planner/pod_source.h"
#include "planner/predicates.h"
#include "planner/scale_diff.h"

namespace cloneset::planner {
namespace {

bool PvcHandlingKeepsPvcs(const PlanContext& ctx) { return ctx.spec.retain_pvcs; }
bool ReusesIds(const PlanContext& ctx) { return ctx.spec.pvc_reuse || ctx.spec.retain_pvcs; }

// The PVCs Scale works with: after cleanup (§4.8) only those of active pods remain unless reuse or Retain is on.
std::vector<const pb::PersistentVolumeClaim*> ScalePvcs(const PlanContext& ctx) {
  if (ctx.spec.pvc_reuse || ctx.spec.retain_pvcs) return ctx.pvcs;
  absl::flat_hash_set<std::string_view> active_ids;
  std::vector<PodColdFacts> scratch;
  for (const PodColdFacts& f : AllColdFacts(ctx, scratch)) active_ids.insert(f.instance_id);
  for (const auto* p : ctx.released_pods) active_ids.insert(InstanceId(*p));
  std::vector<const pb::PersistentVolumeClaim*> out;
  for (const auto* pvc : ctx.pvcs) {
    if (active_ids.contains(InstanceId(*pvc))) out.push_back(pvc);
  }
  return out;
}

ScaleOutcome Scaled() {
  ScaleOutcome outcome;
  outcome.scaling = true;
  return outcome;
}

bool IsUpdatedForScale(const PlanContext& ctx, const PodHotFacts& pod, const PodColdFacts& cold) {
  if (ctx.gates.preparing_update_as_update() && pod.lifecycle == Lifecycle::kPreparingUpdate) return true;
  return OnRevision(ctx, pod, cold, ctx.update_revision);
}

}  // namespace

std::vector<std::string> AvailableInstanceIds(const PlanContext& ctx, int32_t n, std::vector<std::string>* waiting) {
  std::set<std::string> result;
  if (n <= 0) return {};
  // Ids whose pod object still exists (active, released, terminating or finished) are never reused: the create
  // would fail with AlreadyExists until the old object is gone (docs/compatibility.md "Scale").
  absl::flat_hash_set<std::string_view> pod_ids, terminating_ids, pvc_ids;
  pod_ids.reserve(ctx.pods.size() + ctx.inactive_pods.size() + ctx.released_pods.size());
  std::vector<PodColdFacts> scratch;
  for (const PodColdFacts& f : AllColdFacts(ctx, scratch)) pod_ids.insert(f.instance_id);
  for (const auto* group : {&ctx.inactive_pods, &ctx.released_pods}) {
    for (const auto* p : *group) pod_ids.insert(InstanceId(*p));
  }
  for (const auto* p : ctx.inactive_pods) {
    if (IsSet(p->metadata().deletion_timestamp())) terminating_ids.insert(InstanceId(*p));
  }
  for (const auto& pvc : ctx.request->pvcs()) pvc_ids.insert(InstanceId(pvc));
  if (ReusesIds(ctx)) {
    std::set<std::string_view> blocked;
    for (const auto* pvc : ScalePvcs(ctx)) {
      const std::string_view id = InstanceId(*pvc);
      if (id.empty()) continue;
      if (!pod_ids.contains(id)) {
        if (static_cast<int32_t>(result.size()) < n) result.emplace(id);
      } else if (terminating_ids.contains(id)) {
        blocked.insert(id);
      }
    }
    // PVCs of a pod that is still terminating (deleted under Retain, or by someone else while reuse is on: the
    // controller deletes a pod's PVCs with it otherwise): their id comes back in a moment, so that many creations
    // wait for it instead of taking a fresh id and leaving the PVCs without a pod (docs/compatibility.md "Scale").
    for (const std::string_view id : blocked) {
      if (static_cast<int32_t>(result.size()) >= n) break;
      --n;
      if (waiting != nullptr) waiting->emplace_back(id);
    }
  }
  const int64_t fresh = static_cast<int64_t>(n) - static_cast<int64_t>(result.size());
  for (std::string& id : FreshInstanceIds(
           InstanceIdSeed(ctx.request->random_seed(), ctx.clone_set->metadata().uid()), fresh,
           [&](std::string_view id) {
             return pod_ids.contains(id) || pvc_ids.contains(id) || result.contains(std::string(id));
           },
           ctx.cancelled)) {
    result.insert(std::move(id));
  }
  return {result.begin(), result.end()};
}

namespace {

// The CloneSet controller ref of a PVC, by uid.
bool OwnedBy(const pb::ObjectMeta& meta, const std::string& uid) {
  for (const auto& ref : meta.owner_references()) {
    if (ref.uid() == uid) return true;
  }
  return false;
}

}  // namespace

bool PlanDeletePods(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods, PlanBuilder& plan) {
  const pb::LifecycleHook* pre_delete = PreDeleteHook(ctx);
  const std::vector<const pb::PersistentVolumeClaim*> pvcs = ScalePvcs(ctx);
  bool modified = false;
  for (const pb::Pod* pod : pods) {
    if (pre_delete != nullptr && IsHooked(pre_delete, *pod)) {
      if (SetLifecycleState(ctx, *pod, kStatePreparingDelete, pre_delete->mark_pod_not_ready(), nullptr, plan)) {
        modified = true;
      }
      continue;
    }
    pb::Action* action = plan.AddAction();
    action->set_stop_on_error(true);
    pb::DeletePod* del = action->mutable_delete_pod();
    del->set_name(pod->metadata().name());
    del->set_uid(pod->metadata().uid());
    if (!PvcHandlingKeepsPvcs(ctx)) {
      const std::string_view id = InstanceId(*pod);
      for (const auto* pvc : pvcs) {
        if (!id.empty() && InstanceId(*pvc) == id) del->add_pvc_names(pvc->metadata().name());
      }
    }
    plan.AddEvent(pb::NORMAL, "SuccessfulDelete", absl::StrCat("succeed to delete pod ", pod->metadata().name()),
                  pod->metadata().name());
    modified = true;
  }
  return modified;
}

namespace {

// PlanDeletePods for Scale, counting the deletions in the summary.
bool DeletePods(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods, PlanBuilder& plan) {
  const int before = plan.response()->actions_size();
  const bool modified = PlanDeletePods(ctx, pods, plan);
  int deleted = 0;
  for (int i = before; i < plan.response()->actions_size(); ++i) {
    if (plan.response()->actions(i).has_delete_pod()) ++deleted;
  }
  plan.summary()->set_scale_down(plan.summary()->scale_down() + deleted);
  return modified;
}

// Pods allowed to go now: unavailable pods always, available ones while the budget lasts. Upstream exempts only
// pods that are not ready (ctrlReady ignores minReadySeconds), so a pod that is ready but not yet available is
// charged to a budget that already counts it as unavailable: with a long minReadySeconds scale-in stalls
// (kruise#1478). Deleting an unavailable pod never lowers availability (docs/compatibility.md "Scale").
std::vector<const pb::Pod*> WithinReadyBudget(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods,
                                              int32_t& ready_limit) {
  std::vector<const pb::Pod*> out;
  for (const pb::Pod* pod : pods) {
    if (!IsAvailable(*pod, ctx.spec.min_ready_seconds, ctx.now)) {
      out.push_back(pod);
    } else if (ready_limit > 0) {
      out.push_back(pod);
      --ready_limit;
    }
  }
  return out;
}

ScaleOutcome CreatePods(const PlanContext& ctx, const ScaleDiff& diff, PlanBuilder& plan) {
  ScaleOutcome outcome;
  // Bounded per plan (plan_limits.h); the rest follows in the next plans.
  const int32_t creations = std::min(diff.scale_up_limit, kMaxCreationsPerPlan);
  const int32_t current_creations = diff.scale_up_num_old;
  std::vector<std::string> waiting;
  const std::vector<std::string> ids = AvailableInstanceIds(ctx, creations, &waiting);
  if (ids.size() + waiting.size() < static_cast<size_t>(creations) && !Cancelled(ctx)) {
    outcome.error = absl::ResourceExhaustedError(absl::StrCat(
        "no free instance id for ", static_cast<size_t>(creations) - ids.size() - waiting.size(), " of ", creations,
        " new pods: all ", kInstanceIdSpace, " ids are held by pods or PVCs of this CloneSet"));
    plan.AddEvent(pb::WARNING, "FailedCreate", std::string(outcome.error.message()));
  }
  for (const std::string& id : waiting) {
    plan.summary()->add_blocked_reasons(absl::StrCat("instance ", id,
                                                     " waits for its terminating pod to reuse its PVCs"));
  }
  if (!waiting.empty()) plan.PushRequeue(absl::Seconds(5));
  // One factory per revision, made when its first pod is built.
  std::optional<absl::StatusOr<PodFactory>> current_factory, update_factory;
  int32_t batch = 1, in_batch = 0, batch_size = 1;
  int64_t bytes = 0;
  size_t created = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i % 256 == 255 && Cancelled(ctx)) break;
    const bool current = static_cast<int32_t>(i) < current_creations;
    const std::string& revision = current ? ctx.current_revision : ctx.update_revision;
    const std::string& template_json = current ? ctx.current_template_json : ctx.update_template_json;
    std::optional<absl::StatusOr<PodFactory>>& factory = current ? current_factory : update_factory;
    if (!factory.has_value()) {
      factory = PodFactory::Create(ctx, template_json, revision);
      if (factory->ok() && !(*factory)->stand_in_volumes().empty()) {
        plan.AddEvent(pb::WARNING, "VolumeClaimTemplateRemoved",
                      absl::StrCat("revision ", revision, " uses volume(s) ",
                                   absl::StrJoin((*factory)->stand_in_volumes(), ", "),
                                   " that no volume or volumeClaimTemplate defines any more: its new pods get an "
                                   "emptyDir in place of each"));
      }
    }
    if (!factory->ok()) {
      outcome.error = factory->status();
      break;
    }
    NewPod pod = (*factory)->Build(ids[i]);
    int64_t size = static_cast<int64_t>(pod.pod_json.size());
    for (const std::string& pvc : pod.pvc_jsons) size += static_cast<int64_t>(pvc.size());
    if (created > 0 && bytes + size > kMaxCreationBytesPerPlan) break;
    bytes += size;
    ++created;
    pb::Action* action = plan.AddAction();
    action->set_stop_on_error(true);
    pb::CreatePod* create = action->mutable_create_pod();
    create->set_pod_json(std::move(pod.pod_json));
    for (auto& pvc : pod.pvc_jsons) create->add_pvc_jsons(std::move(pvc));
    for (auto& claim : pod.claim_names) create->add_claim_names(std::move(claim));
    create->set_instance_id(ids[i]);
    create->set_revision(revision);
    create->set_batch(batch);
    const std::string name = absl::StrCat(ctx.clone_set->metadata().name(), "-", ids[i]);
    plan.AddEvent(pb::NORMAL, "SuccessfulCreate", absl::StrCat("succeed to create pod ", name), name);
    outcome.scaling = true;
    if (++in_batch == batch_size) {
      ++batch;
      in_batch = 0;
      batch_size *= 2;
    }
  }
  plan.summary()->set_scale_up(static_cast<int32_t>(created));
  if ((created < ids.size() || creations < diff.scale_up_limit) && outcome.error.ok()) {
    // Cut by the per-plan bounds, not by a budget: say so, and come back for the rest.
    plan.summary()->set_scale_up_limited_to(static_cast<int32_t>(created));
    plan.PushRequeue(absl::Seconds(kScaleOutRequeueSeconds));
  }
  return outcome;
}

}  // namespace

void PlanPvcCleanupAndRelease(const PlanContext& ctx, PlanBuilder& plan) {
  const std::string& uid = ctx.clone_set->metadata().uid();
  // Retain keeps every PVC of a removed pod for the next scale-up; reuse keeps them for vanished pods.
  if (!ctx.spec.pvc_reuse && !ctx.spec.retain_pvcs) {
    absl::flat_hash_set<std::string_view> active_ids;
    std::vector<PodColdFacts> scratch;
    for (const PodColdFacts& f : AllColdFacts(ctx, scratch)) active_ids.insert(f.instance_id);
    for (const auto* p : ctx.released_pods) active_ids.insert(InstanceId(*p));
    for (const auto* pvc : ctx.pvcs) {
      const std::string_view id = InstanceId(*pvc);
      if (active_ids.contains(id)) continue;
      const pb::Pod* inactive = nullptr;
      for (const auto* p : ctx.inactive_pods) {
        if (InstanceId(*p) == id) inactive = p;
      }
      pb::Action* action = plan.AddAction();
      if (inactive != nullptr) {
        // The PVC follows its terminating/finished pod to the garbage collector.
        action->set_stop_on_error(true);
        pb::UpdatePvcOwner* move = action->mutable_update_pvc_owner();
        move->set_name(pvc->metadata().name());
        move->set_resource_version(pvc->metadata().resource_version());
        move->set_remove_owner_uid(uid);
        pb::OwnerReference* owner = move->mutable_add_owner();
        owner->set_api_version("v1");
        owner->set_kind("Pod");
        owner->set_name(inactive->metadata().name());
        owner->set_uid(inactive->metadata().uid());
        owner->set_controller(true);
        owner->set_block_owner_deletion(true);
      } else {
        pb::DeletePvc* del = action->mutable_delete_pvc();
        del->set_name(pvc->metadata().name());
        del->set_uid(pvc->metadata().uid());
      }
    }
  }
  if (ctx.clone_set->metadata().has_deletion_timestamp()) return;
  for (const auto* pod : ctx.released_pods) {
    if (!OwnedBy(pod->metadata(), uid)) continue;
    pb::PatchPod* patch = plan.AddAction()->mutable_patch_pod();
    patch->set_name(pod->metadata().name());
    patch->set_uid(pod->metadata().uid());
    patch->set_resource_version(pod->metadata().resource_version());
    patch->add_remove_owner_uids(uid);
    patch->set_purpose("release");
  }
}

void PlanMissingClaims(const PlanContext& ctx, PlanBuilder& plan) {
  const pb::CloneSet& cs = *ctx.clone_set;
  if (cs.spec().volume_claim_templates_json().empty() || IsSet(cs.metadata().deletion_timestamp())) return;
  // A template that cannot be read is reported by validation, and Scale's pod factory fails on it as well.
  absl::StatusOr<std::vector<std::string>> vcts = ClaimTemplateNames(cs);
  if (!vcts.ok() || vcts->empty()) return;
  absl::flat_hash_set<std::string_view> existing;
  existing.reserve(ctx.pvcs.size());
  for (const auto* pvc : ctx.pvcs) existing.insert(pvc->metadata().name());
  std::optional<absl::StatusOr<PodFactory>> factory;
  std::vector<PodColdFacts> scratch;
  for (const PodColdFacts& f : AllColdFacts(ctx, scratch)) {
    if (f.instance_id.empty()) continue;
    const bool missing = std::any_of(vcts->begin(), vcts->end(), [&](const std::string& vct) {
      return !existing.contains(ClaimName(vct, cs.metadata().name(), f.instance_id));
    });
    if (!missing) continue;
    if (!factory.has_value()) factory = PodFactory::Create(ctx, ctx.update_template_json, ctx.update_revision);
    if (!factory->ok()) return;
    // The factory leaves out the claims the snapshot has, so these are exactly the missing ones.
    NewPod built = (*factory)->Build(std::string(f.instance_id));
    for (size_t i = 0; i < built.pvc_jsons.size(); ++i) {
      pb::CreatePvc* create = plan.AddAction()->mutable_create_pvc();
      create->set_pod_name(std::string(f.name));
      create->set_pvc_json(std::move(built.pvc_jsons[i]));
    }
    std::vector<std::string> claims;
    for (const std::string& claim : built.claim_names) {
      if (!existing.contains(claim)) claims.push_back(claim);
    }
    const std::string pod(f.name);
    plan.AddEvent(pb::WARNING, "MissingPVC",
                  absl::StrCat("pod ", pod, " mounts ", absl::StrJoin(claims, ", "),
                               " which does not exist: creating it again from the volumeClaimTemplate"),
                  pod);
  }
}

ScaleOutcome PlanScale(const PlanContext& ctx, PlanBuilder& plan) {
  const ResolvedSpec& spec = ctx.spec;
  std::vector<const pb::Pod*> specified, pre_delete;
  std::set<std::string_view> to_delete_names;
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    const PodHotFacts& f = facts[i];
    if (IsSpecifiedDelete(f, cold[i], spec)) {
      specified.push_back(&PodAt(ctx, i));
      to_delete_names.insert(cold[i].name);
    }
    if (f.lifecycle == Lifecycle::kPreparingDelete) {
      pre_delete.push_back(&PodAt(ctx, i));
      to_delete_names.insert(cold[i].name);
    }
  }
  const int64_t num_to_delete = static_cast<int64_t>(to_delete_names.size());

  // managePreparingDelete: replicas went back up, so regret some scale-in.
  const pb::LifecycleHook* pre_delete_hook = PreDeleteHook(ctx);
  const pb::LifecycleHook* in_place_hook = InPlaceUpdateHook(ctx);
  const bool mark_not_ready = (pre_delete_hook != nullptr && pre_delete_hook->mark_pod_not_ready()) ||
                              (in_place_hook != nullptr && in_place_hook->mark_pod_not_ready());
  if (!mark_not_ready) {
    int64_t d = spec.replicas - static_cast<int64_t>(ctx.pods.size()) + num_to_delete;
    bool patched = false;
    for (const pb::Pod* pod : pre_delete) {
      if (d <= 0) break;
      if (IsSpecifiedDelete(*pod, spec)) continue;
      if (SetLifecycleState(ctx, *pod, kStatePreparingNormal, false, nullptr, plan)) patched = true;
      --d;
    }
    if (patched) {
      plan.summary()->set_phase("pre-delete");
      return Scaled();
    }
  }

  const ScaleDiff diff = CalculateDiff(ctx, RevisionCheck::kScale);
  plan.summary()->set_use_surge(diff.use_surge);

  if (diff.scale_up_num > diff.scale_up_limit) {
    plan.AddEvent(pb::WARNING, "ScaleUpLimited",
                  absl::StrCat("scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ",
                               diff.scale_up_limit));
    plan.summary()->set_scale_up_limited_to(diff.scale_up_limit);
  }
  if (diff.scale_up_num > 0) {
    if (diff.scale_up_limit <= 0) return {};
    plan.summary()->set_phase("scale-out");
    return CreatePods(ctx, diff, plan);
  }

  if (!pre_delete.empty() && DeletePods(ctx, pre_delete, plan)) {
    plan.summary()->set_phase("pre-delete");
    return Scaled();
  }

  int32_t ready_limit = diff.delete_ready_limit;
  std::vector<const pb::Pod*> candidates;
  for (const pb::Pod* pod : specified) {
    if (LifecycleState(*pod) != kStatePreparingDelete) candidates.push_back(pod);
  }
  if (DeletePods(ctx, WithinReadyBudget(ctx, candidates, ready_limit), plan)) {
    plan.summary()->set_phase("specified-delete");
    return Scaled();
  }

  if (diff.scale_down_num > 0) {
    if (num_to_delete > 0) return {};
    // Every active pod is a deletion candidate here (built from a pod table only now, on scale-in).
    std::vector<const pb::Pod*> updated, not_updated;
    for (size_t i = 0; i < ctx.pods.size(); ++i) {
      (IsUpdatedForScale(ctx, facts[i], cold[i]) ? updated : not_updated).push_back(&PodAt(ctx, i));
    }
    const std::vector<const pb::Pod*> chosen =
        ChoosePodsToDelete(ctx, diff.scale_down_num, diff.scale_down_num_old, not_updated, updated);
    if (DeletePods(ctx, WithinReadyBudget(ctx, chosen, ready_limit), plan)) {
      plan.summary()->set_phase("scale-in");
      return Scaled();
    }
  }
  return {};
}

}  // namespace cloneset::planner
