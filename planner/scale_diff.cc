#include "planner/scale_diff.h"

#include <algorithm>
#include <cstdlib>

#include "planner/context_facts.h"
#include "planner/int_or_percent.h"
#include "planner/pod_facts.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

struct Bucket {
  int64_t count = 0;
  int64_t pre_delete = 0;
  int64_t active = 0;
  int64_t to_delete = 0;
  int64_t unavailable = 0;
};

bool IsNew(const PlanContext& ctx, const PodHotFacts& pod, const PodColdFacts& cold, RevisionCheck check) {
  if (check == RevisionCheck::kScale && ctx.gates.preparing_update_as_update() &&
      pod.lifecycle == Lifecycle::kPreparingUpdate) {
    return true;
  }
  return OnRevision(ctx, pod, cold, ctx.update_revision);
}

int32_t Clamp32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
}

// The surge a paused rollout keeps: upstream forces maxSurge to 0 while paused, which makes the next reconcile
// delete the surge pods it just created; we keep up to the configured surge, but only as many as the paused
// update still has pods to replace (`replacing`): with no update in flight a paused CloneSet scales in like any
// other (docs/compatibility.md "Scale").
int64_t PausedSurgeAllowance(const PlanContext& ctx, int64_t replacing) {
  if (!ctx.spec.paused || !ctx.spec.rolling_update || ctx.clone_set == nullptr || replacing <= 0) return 0;
  absl::StatusOr<int32_t> surge = ResolveScaled(ctx.clone_set->spec().update_strategy().max_surge(),
                                                ctx.spec.replicas, /*round_up=*/true, 0,
                                                "spec.updateStrategy.maxSurge");
  return surge.ok() ? std::min<int64_t>(std::max<int32_t>(*surge, 0), replacing) : 0;
}

}  // namespace

ScaleDiff CalculateDiff(const PlanContext& ctx, RevisionCheck check) {
  const ResolvedSpec& spec = ctx.spec;
  const int64_t replicas = spec.replicas;
  const int64_t partition = spec.rolling_update ? spec.partition : 0;
  const int64_t surge = spec.rolling_update && !spec.paused ? spec.max_surge : 0;
  const int64_t max_unavailable = spec.max_unavailable;
  const int64_t scale_max_unavailable = spec.scale_max_unavailable;

  Bucket fresh, old;
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  for (size_t i = 0; i < facts.size(); ++i) {
    const PodHotFacts& pod = facts[i];
    Bucket& b = IsNew(ctx, pod, cold[i], check) ? fresh : old;
    ++b.count;
    if (pod.lifecycle == Lifecycle::kPreparingDelete) {
      ++b.pre_delete;
      continue;
    }
    ++b.active;
    if (IsSpecifiedDelete(pod, cold[i], spec)) {
      ++b.to_delete;
    } else if (!IsAvailable(pod, spec.min_ready_seconds, ctx.now)) {
      ++b.unavailable;
    }
  }
  const int64_t num_pods = static_cast<int64_t>(ctx.pods.size());

  int64_t old_diff = old.active - partition;
  int64_t new_diff = fresh.active - (replicas - partition);
  const int64_t total_unavailable = fresh.pre_delete + old.pre_delete + fresh.unavailable + old.unavailable;
  if (ctx.update_revision == ctx.current_revision || !ctx.gates.clone_set_partition_rollback()) {
    old_diff = std::max<int64_t>(old_diff, 0);
    new_diff = std::min<int64_t>(new_diff, 0);
  }

  // Pods the update still replaces with new ones (surge covers them). An in-place rollout replaces no pod, so
  // surge pods would only be created and deleted again (kruise#2369). Upstream takes min(|oldDiff|, |newDiff|),
  // which counts unready replacements as done and shrinks the surge before the end (kruise#1741, #1442); this
  // never creates more than the partition allows either, because R + min(S, oldDiff) - old <= R - P new pods
  // (docs/compatibility.md "Update").
  const bool opposite = (old_diff > 0 && new_diff < 0) || (old_diff < 0 && new_diff > 0);
  const int64_t replacing = opposite && !ctx.rollout_in_place ? (old_diff > 0 ? old_diff : new_diff) : 0;

  ScaleDiff d;
  int64_t use_surge = 0, use_surge_old = 0;
  if (surge > 0) {
    const int64_t to_delete = fresh.to_delete + old.to_delete;
    int64_t scale_surge = 0, scale_surge_old = 0;
    if (to_delete > 0) {
      scale_surge = std::min(std::max<int64_t>(total_unavailable + to_delete - max_unavailable, 0), to_delete);
      if (scale_surge > fresh.to_delete) scale_surge_old = scale_surge - fresh.to_delete;
    }
    // Surge for specified-delete replacements (scale_surge) applies to in-place rollouts too.
    const int64_t update_surge = replacing;
    const int64_t update_surge_old = old_diff > 0 ? 0 : replacing;
    if (scale_surge >= update_surge) {
      use_surge = std::min(surge, scale_surge);
      use_surge_old = std::min(use_surge, scale_surge_old);
    } else {
      use_surge = std::min(surge, update_surge);
      use_surge_old = std::min(use_surge, update_surge_old);
    }
  }
  d.use_surge = Clamp32(use_surge);
  d.use_surge_old = Clamp32(use_surge_old);

  int64_t cur_total = num_pods;
  int64_t cur_old = old.count;
  if (spec.exclude_preparing_delete || ctx.gates.scaling_exclude_preparing_delete()) {
    cur_total -= old.pre_delete + fresh.pre_delete;
    cur_old -= old.pre_delete;
  }
  const int64_t exp_total = replicas + use_surge;
  const int64_t exp_old = partition + use_surge_old;

  if (exp_total - cur_total > 0) {
    d.scale_up_num = Clamp32(exp_total - cur_total);
    d.scale_up_num_old = Clamp32(std::max<int64_t>(exp_old - cur_old, 0));
    d.scale_up_limit =
        Clamp32(std::min<int64_t>(d.scale_up_num, std::max<int64_t>(scale_max_unavailable - total_unavailable, 0)));
  }
  const int64_t surplus = cur_total - old.to_delete - fresh.to_delete - exp_total;
  const int64_t kept_while_paused = std::min(PausedSurgeAllowance(ctx, replacing), std::max<int64_t>(surplus, 0));
  if (surplus - kept_while_paused > 0) {
    d.scale_down_num = Clamp32(surplus - kept_while_paused);
    d.scale_down_num_old = Clamp32(std::max<int64_t>(cur_old - old.to_delete - exp_old, 0));
  }
  if (fresh.to_delete > 0 || old.to_delete > 0 || d.scale_down_num > 0) {
    d.delete_ready_limit = Clamp32(std::max<int64_t>(max_unavailable + (num_pods - replicas) - total_unavailable, 0));
  }

  d.update_num = Clamp32(std::abs(old_diff) <= std::abs(new_diff) ? old_diff : -new_diff);
  if (d.update_num != 0) {
    // Without surge pods, maxUnavailable 0 would leave an in-place rollout no budget at all: maxSurge (the extra
    // capacity the user granted) becomes the in-place batch size instead (docs/compatibility.md "Update").
    const int64_t budget = max_unavailable == 0 && ctx.rollout_in_place ? surge : max_unavailable;
    d.update_max_unavailable = Clamp32(budget + num_pods - replicas);
  }
  return d;
}

}  // namespace cloneset::planner
