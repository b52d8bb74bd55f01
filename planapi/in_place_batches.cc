#include "planapi/in_place_batches.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kruise/keys.h"

namespace cloneset::planapi {
namespace {

// Reorders `field` so that position k holds the element now at `order[k]` (`order` lists each index at most once;
// the elements it leaves out end up after it). Pointer swaps only: nothing is copied, on an arena or off it.
template <typename T>
void Permute(google::protobuf::RepeatedPtrField<T>* field, const std::vector<int>& order) {
  const int n = field->size();
  std::vector<int> at(n);     // at[p]: the original index of the element at position p
  std::vector<int> where(n);  // where[e]: the position of original element e
  for (int i = 0; i < n; ++i) at[i] = where[i] = i;
  for (int k = 0; k < static_cast<int>(order.size()); ++k) {
    const int p = where[order[k]];
    if (p == k) continue;
    field->SwapElements(k, p);
    std::swap(at[k], at[p]);
    where[at[k]] = k;
    where[at[p]] = p;
  }
}

void FillTargetAction(const pb::StartInPlaceUpdates& batch, const pb::StartInPlaceUpdates::Target& target,
                      bool status, pb::Action* action) {
  if (status) {
    action->set_stop_on_error(batch.status_stop_on_error());
    pb::PatchPodStatus* patch = action->mutable_patch_pod_status();
    *patch = batch.status_patch();
    patch->set_name(target.name());
    patch->set_uid(target.uid());
    patch->set_resource_version(target.resource_version());
    if (target.set_not_ready()) *patch->add_set_conditions() = batch.not_ready_condition();
    return;
  }
  action->set_stop_on_error(batch.patch_stop_on_error());
  pb::PatchPod* patch = action->mutable_patch_pod();
  *patch = batch.patch();
  patch->set_name(target.name());
  patch->set_uid(target.uid());
  patch->set_resource_version(target.resource_version());
  std::string& state = (*patch->mutable_set_annotations())[kruise::kInPlaceStateAnnotation];
  state.clear();
  state.reserve(batch.in_place_update_state_prefix().size() + target.in_place_update_state().size() +
                batch.in_place_update_state_suffix().size());
  state.append(batch.in_place_update_state_prefix())
      .append(target.in_place_update_state())
      .append(batch.in_place_update_state_suffix());
}

void FillTargetEvent(const pb::StartInPlaceUpdates& batch, const pb::StartInPlaceUpdates::Target& target,
                     pb::Event* event) {
  event->set_type(batch.event_type());
  event->set_reason(batch.event_reason());
  std::string message;
  message.reserve(batch.event_message_prefix().size() + target.name().size() + batch.event_message_suffix().size());
  message.append(batch.event_message_prefix()).append(target.name()).append(batch.event_message_suffix());
  event->set_message(std::move(message));
  event->set_involved_pod(target.name());
}

bool HasBatch(const pb::PlanResponse& plan) {
  return std::any_of(plan.actions().begin(), plan.actions().end(),
                     [](const pb::Action& a) { return a.has_start_in_place_updates(); });
}

}  // namespace

std::vector<ExpandedRef> ExpandedActionOrder(const pb::PlanResponse& plan) {
  int size = 0;
  for (const pb::Action& action : plan.actions()) {
    if (!action.has_start_in_place_updates()) {
      ++size;
      continue;
    }
    const pb::StartInPlaceUpdates& batch = action.start_in_place_updates();
    size += batch.targets_size() * (batch.has_status_patch() ? 2 : 1);
  }
  std::vector<ExpandedRef> order;
  order.reserve(size);
  for (int i = 0; i < plan.actions_size(); ++i) {
    const pb::Action& action = plan.actions(i);
    if (!action.has_start_in_place_updates()) {
      order.push_back({i, -1, false});
      continue;
    }
    const pb::StartInPlaceUpdates& batch = action.start_in_place_updates();
    const bool status = batch.has_status_patch();
    for (int t = 0; t < batch.targets_size(); ++t) {
      if (status) order.push_back({i, t, true});
      order.push_back({i, t, false});
    }
  }
  return order;
}

std::vector<ExpandedRef> ExpandedEventOrder(const pb::PlanResponse& plan) {
  const int own = plan.events_size();
  std::vector<ExpandedRef> order;
  order.reserve(own);
  int taken = 0;  // of the plan's own events, already placed
  for (int i = 0; i < plan.actions_size(); ++i) {
    const pb::Action& action = plan.actions(i);
    if (!action.has_start_in_place_updates()) continue;
    const pb::StartInPlaceUpdates& batch = action.start_in_place_updates();
    if (batch.event_reason().empty()) continue;
    // A planner never sends events_before out of order or range; another sender's batches still expand in order.
    const int before = std::clamp(batch.events_before(), taken, own);
    for (; taken < before; ++taken) order.push_back({taken, -1, false});
    for (int t = 0; t < batch.targets_size(); ++t) order.push_back({i, t, false});
  }
  for (; taken < own; ++taken) order.push_back({taken, -1, false});
  return order;
}

const pb::Action& ExpandedAction(const pb::PlanResponse& plan, const ExpandedRef& ref, pb::Action* scratch) {
  if (ref.target < 0) return plan.actions(ref.index);
  const pb::StartInPlaceUpdates& batch = plan.actions(ref.index).start_in_place_updates();
  scratch->Clear();
  FillTargetAction(batch, batch.targets(ref.target), ref.status, scratch);
  return *scratch;
}

const pb::Event& ExpandedEvent(const pb::PlanResponse& plan, const ExpandedRef& ref, pb::Event* scratch) {
  if (ref.target < 0) return plan.events(ref.index);
  const pb::StartInPlaceUpdates& batch = plan.actions(ref.index).start_in_place_updates();
  scratch->Clear();
  FillTargetEvent(batch, batch.targets(ref.target), scratch);
  return *scratch;
}

void ExpandInPlaceBatches(pb::PlanResponse* plan) {
  if (!HasBatch(*plan)) return;
  const std::vector<ExpandedRef> action_refs = ExpandedActionOrder(*plan);
  const std::vector<ExpandedRef> event_refs = ExpandedEventOrder(*plan);

  // The expanded actions and events are appended, then everything is put in order and the batches dropped from the
  // end. Elements of a RepeatedPtrField do not move when it grows: a batch stays valid while actions are added.
  auto* actions = plan->mutable_actions();
  auto* events = plan->mutable_events();
  actions->Reserve(actions->size() + static_cast<int>(action_refs.size()));
  events->Reserve(static_cast<int>(event_refs.size()));
  std::vector<int> action_order;
  action_order.reserve(action_refs.size());
  for (const ExpandedRef& ref : action_refs) {
    if (ref.target < 0) {
      action_order.push_back(ref.index);
      continue;
    }
    const pb::StartInPlaceUpdates& batch = actions->Get(ref.index).start_in_place_updates();
    FillTargetAction(batch, batch.targets(ref.target), ref.status, actions->Add());
    action_order.push_back(actions->size() - 1);
  }
  std::vector<int> event_order;
  event_order.reserve(event_refs.size());
  for (const ExpandedRef& ref : event_refs) {
    if (ref.target < 0) {
      event_order.push_back(ref.index);
      continue;
    }
    const pb::StartInPlaceUpdates& batch = actions->Get(ref.index).start_in_place_updates();
    FillTargetEvent(batch, batch.targets(ref.target), events->Add());
    event_order.push_back(events->size() - 1);
  }

  Permute(actions, action_order);
  actions->DeleteSubrange(static_cast<int>(action_order.size()),
                          actions->size() - static_cast<int>(action_order.size()));
  Permute(events, event_order);
}

}  // namespace cloneset::planapi
