#include "planner/lifecycle.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "planner/inplace.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

constexpr char kNotReadyUserAgent[] = "Lifecycle";
constexpr char kPreDeleteKey[] = "preDeleteHook";
constexpr char kPreUpdateKey[] = "preUpdateHook";

using NotReadyKey = std::pair<std::string, std::string>;  // (userAgent, key)

// The KruisePodReady message is a JSON list of {userAgent, key}; anything unparsable counts as empty.
std::vector<NotReadyKey> ParseNotReadyKeys(const std::string& message) {
  std::vector<NotReadyKey> keys;
  if (message.empty()) return keys;
  const nlohmann::json doc = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) return keys;
  for (const nlohmann::json& item : doc) {
    if (!item.is_object()) continue;
    const auto agent = item.find("userAgent");
    const auto key = item.find("key");
    keys.emplace_back(agent != item.end() && agent->is_string() ? agent->get<std::string>() : "",
                      key != item.end() && key->is_string() ? key->get<std::string>() : "");
  }
  return keys;
}

std::string FormatNotReadyKeys(std::vector<NotReadyKey> keys) {
  std::sort(keys.begin(), keys.end());
  nlohmann::ordered_json doc = nlohmann::ordered_json::array();
  for (const auto& [agent, key] : keys) doc.push_back({{"userAgent", agent}, {"key", key}});
  return doc.dump();
}

bool HookMatchesAny(const pb::LifecycleHook& hook, const pb::Pod& pod) {
  for (const std::string& finalizer : hook.finalizers_handler()) {
    if (std::find(pod.metadata().finalizers().begin(), pod.metadata().finalizers().end(), finalizer) !=
        pod.metadata().finalizers().end()) {
      return true;
    }
  }
  for (const auto& [key, value] : hook.labels_handler()) {
    auto it = pod.metadata().labels().find(key);
    if (it != pod.metadata().labels().end() && it->second == value) return true;
  }
  return false;
}

const pb::Lifecycle* SpecLifecycle(const PlanContext& ctx) {
  if (ctx.clone_set == nullptr || !ctx.clone_set->spec().has_lifecycle()) return nullptr;
  return &ctx.clone_set->spec().lifecycle();
}

}  // namespace

bool IsHooked(const pb::LifecycleHook* hook, const pb::Pod& pod) {
  return hook != nullptr && HookMatchesAny(*hook, pod);
}

bool IsAllHooked(const pb::LifecycleHook* hook, const pb::Pod& pod) {
  if (hook == nullptr) return false;
  for (const std::string& finalizer : hook->finalizers_handler()) {
    if (std::find(pod.metadata().finalizers().begin(), pod.metadata().finalizers().end(), finalizer) ==
        pod.metadata().finalizers().end()) {
      return false;
    }
  }
  for (const auto& [key, value] : hook->labels_handler()) {
    auto it = pod.metadata().labels().find(key);
    if (it == pod.metadata().labels().end() || it->second != value) return false;
  }
  return true;
}

const pb::LifecycleHook* PreDeleteHook(const PlanContext& ctx) {
  const pb::Lifecycle* lifecycle = SpecLifecycle(ctx);
  return lifecycle != nullptr && lifecycle->has_pre_delete() ? &lifecycle->pre_delete() : nullptr;
}

const pb::LifecycleHook* InPlaceUpdateHook(const PlanContext& ctx) {
  const pb::Lifecycle* lifecycle = SpecLifecycle(ctx);
  return lifecycle != nullptr && lifecycle->has_in_place_update() ? &lifecycle->in_place_update() : nullptr;
}

const pb::LifecycleHook* PreNormalHook(const PlanContext& ctx) {
  const pb::Lifecycle* lifecycle = SpecLifecycle(ctx);
  return lifecycle != nullptr && lifecycle->has_pre_normal() ? &lifecycle->pre_normal() : nullptr;
}

namespace {

// Fills the target fields shared by PatchPod and PatchPodStatus. Each value goes in as a std::string rvalue:
// protobuf's set_x(const char*, size_t) copies a temporary string (one more allocation and free per field).
template <typename Patch>
Patch* FillTarget(Patch* patch, std::string_view name, std::string_view uid, std::string_view resource_version,
                  std::string_view purpose) {
  patch->set_name(std::string(name));
  patch->set_uid(std::string(uid));
  patch->set_resource_version(std::string(resource_version));
  patch->set_purpose(std::string(purpose));
  return patch;
}

pb::Action* AddStopOnErrorAction(PlanBuilder& plan) {
  pb::Action* action = plan.AddAction();
  action->set_stop_on_error(true);
  return action;
}

}  // namespace

pb::PatchPod* AddPodPatch(const pb::Pod& pod, std::string_view purpose, PlanBuilder& plan) {
  return FillTarget(AddStopOnErrorAction(plan)->mutable_patch_pod(), pod.metadata().name(), pod.metadata().uid(),
                    pod.metadata().resource_version(), purpose);
}

pb::PatchPodStatus* AddPodStatusPatch(const pb::Pod& pod, std::string_view purpose, PlanBuilder& plan) {
  return FillTarget(AddStopOnErrorAction(plan)->mutable_patch_pod_status(), pod.metadata().name(),
                    pod.metadata().uid(), pod.metadata().resource_version(), purpose);
}

pb::PatchPod* AddPodPatch(const PodFacts& pod, std::string_view purpose, PlanBuilder& plan) {
  return FillTarget(AddStopOnErrorAction(plan)->mutable_patch_pod(), pod.name, pod.uid, pod.resource_version,
                    purpose);
}

pb::PatchPodStatus* AddPodStatusPatch(const PodFacts& pod, std::string_view purpose, PlanBuilder& plan) {
  return FillTarget(AddStopOnErrorAction(plan)->mutable_patch_pod_status(), pod.name, pod.uid,
                    pod.resource_version, purpose);
}

bool ApplyNotReadyPolicy(const PlanContext& ctx, const pb::Pod& pod, std::string_view state, PlanBuilder& plan) {
  if (!HasReadinessGate(pod, kKruisePodReadyCondition)) return false;
  bool add = false;
  std::string key;
  if (state == kStatePreparingDelete) {
    add = true;
    key = kPreDeleteKey;
  } else if (state == kStatePreparingUpdate) {
    add = true;
    key = kPreUpdateKey;
  } else if (state == kStateUpdated) {
    key = kPreUpdateKey;
  } else {
    return false;
  }
  const pb::Condition* current = FindCondition(pod, kKruisePodReadyCondition);
  std::vector<NotReadyKey> keys = current == nullptr ? std::vector<NotReadyKey>{} : ParseNotReadyKeys(current->message());
  const NotReadyKey wanted{kNotReadyUserAgent, key};
  const bool present = std::find(keys.begin(), keys.end(), wanted) != keys.end();

  pb::Condition condition;
  condition.set_type(kKruisePodReadyCondition);
  SetTimestamp(ctx.now, condition.mutable_last_transition_time());
  if (add) {
    if (current != nullptr && current->status() != "True" && present) return false;
    if (!present) keys.push_back(wanted);
    // A condition created by this write gets an empty status upstream; "False" says the same thing plainly.
    condition.set_status("False");
  } else {
    if (!present) return false;
    keys.erase(std::remove(keys.begin(), keys.end(), wanted), keys.end());
    condition.set_status(keys.empty() ? "True" : (current != nullptr ? current->status() : "False"));
  }
  condition.set_message(keys.empty() ? "" : FormatNotReadyKeys(keys));

  pb::PatchPodStatus* patch = AddPodStatusPatch(pod, "mark-pod-not-ready", plan);
  *patch->add_set_conditions() = condition;
  // Adding a key makes a readiness gate false, so Ready follows once containers are ready (kubelet would do
  // the same a moment later; writing it now keeps traffic off the pod from this write on).
  const pb::Condition* ready = FindCondition(pod, "Ready");
  const pb::Condition* containers_ready = FindCondition(pod, "ContainersReady");
  if (add && ready != nullptr && ready->status() != "False" && containers_ready != nullptr &&
      containers_ready->status() == "True") {
    pb::Condition* not_ready = patch->add_set_conditions();
    not_ready->set_type("Ready");
    not_ready->set_status("False");
    not_ready->set_reason("ReadinessGatesNotReady");
    not_ready->set_message(  // the kubelet's wording, so it finds nothing to rewrite
        absl::StrCat("the status of pod readiness gate \"KruisePodReady\" is not \"True\", but ", condition.status()));
    SetTimestamp(ctx.now, not_ready->mutable_last_transition_time());
  }
  return true;
}

bool SetLifecycleState(const PlanContext& ctx, const pb::Pod& pod, std::string_view state, bool mark_pod_not_ready,
                       const pb::LifecycleHook* readd_handler, PlanBuilder& plan) {
  if (mark_pod_not_ready) ApplyNotReadyPolicy(ctx, pod, state, plan);
  if (LifecycleState(pod) == state) return false;
  pb::PatchPod* patch = AddPodPatch(pod, "lifecycle", plan);
  (*patch->mutable_set_labels())[kLifecycleStateLabel] = std::string(state);
  (*patch->mutable_set_annotations())[kLifecycleTimestampAnnotation] = Rfc3339(ctx.now);
  if (readd_handler != nullptr) {
    for (const auto& [key, value] : readd_handler->labels_handler()) (*patch->mutable_set_labels())[key] = value;
    for (const std::string& finalizer : readd_handler->finalizers_handler()) {
      if (std::find(pod.metadata().finalizers().begin(), pod.metadata().finalizers().end(), finalizer) ==
          pod.metadata().finalizers().end()) {
        patch->add_add_finalizers(finalizer);
      }
    }
  }
  return true;
}

}  // namespace cloneset::planner
