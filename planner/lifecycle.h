// Lifecycle hook state machine (semantics §6).
#pragma once

#include <string_view>

#include "planner/context.h"
#include "planner/plan_builder.h"
#include "planner/pod_facts.h"

namespace cloneset::planner {

bool IsHooked(const pb::LifecycleHook* hook, const pb::Pod& pod);     // hooked(h, pod); false for nullptr
bool IsAllHooked(const pb::LifecycleHook* hook, const pb::Pod& pod);  // allHooked(h, pod); false for nullptr

// Returns the hook if set in spec.lifecycle, else nullptr.
const pb::LifecycleHook* PreDeleteHook(const PlanContext& ctx);
const pb::LifecycleHook* InPlaceUpdateHook(const PlanContext& ctx);
const pb::LifecycleHook* PreNormalHook(const PlanContext& ctx);

// Appends the writes that move `pod` to lifecycle `state` (§6.3, §6.4): the KruisePodReady condition write when
// `mark_pod_not_ready`, then one PatchPod of the state label and timestamp (skipped when already in `state`).
// With `readd_handler` the handler's labels and finalizers ride along in the same patch.
// Returns true if a PatchPod was appended.
// Appends an empty PatchPod / PatchPodStatus for `pod` (name, uid, listed resource_version, purpose) and returns it.
pb::PatchPod* AddPodPatch(const pb::Pod& pod, std::string_view purpose, PlanBuilder& plan);
pb::PatchPodStatus* AddPodStatusPatch(const pb::Pod& pod, std::string_view purpose, PlanBuilder& plan);
// The same from the pod's facts (name, uid, resourceVersion), for paths that never build the pod object.
pb::PatchPod* AddPodPatch(const PodFacts& pod, std::string_view purpose, PlanBuilder& plan);
pb::PatchPodStatus* AddPodStatusPatch(const PodFacts& pod, std::string_view purpose, PlanBuilder& plan);

// The KruisePodReady write of markPodNotReady (§6.4) for a move to `state`; nothing when the pod lacks the
// KruisePodReady readiness gate, the state has no not-ready key, or the condition already says so.
// Returns true if a PatchPodStatus was appended.
bool ApplyNotReadyPolicy(const PlanContext& ctx, const pb::Pod& pod, std::string_view state, PlanBuilder& plan);

bool SetLifecycleState(const PlanContext& ctx, const pb::Pod& pod, std::string_view state, bool mark_pod_not_ready,
                       const pb::LifecycleHook* readd_handler, PlanBuilder& plan);

}  // namespace cloneset::planner
