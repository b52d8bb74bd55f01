#include "planapi/in_place_batches.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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
  std::string& state = (*patch->mutable_set_annotations())[kInPlaceStateAnnotation];
  state.clear();
  state.reserve(batch.in_place_update_state_prefix().size() + target.in_place_update_state().size() +
                batch.in_place_update_state_suffix().size());
  state.append(batch.in_place_update_state_prefix())
      .append(target.in_place_update_state())
      .append(batch.in_place_update_state_suffix());
}

}  // namespace

void ExpandInPlaceBatches(pb::PlanResponse* plan) {
  bool any = false;
  int added_actions = 0;
  int added_events = 0;
  for (const pb::Action& action : plan->actions()) {
    if (!action.has_start_in_place_updates()) continue;
    any = true;
    const pb::StartInPlaceUpdates& batch = action.start_in_place_updates();
    added_actions += batch.targets_size() * (batch.has_status_patch() ? 2 : 1);
    if (!batch.event_reason().empty()) added_events += batch.targets_size();
  }
  if (!any) return;

  // Actions: the expanded ones are appended, then everything is put in order and the batches dropped from the end.
  auto* actions = plan->mutable_actions();
  auto* events = plan->mutable_events();
  const int old_actions = actions->size();
  const int old_events = events->size();
  actions->Reserve(old_actions + added_actions);
  events->Reserve(old_events + added_events);
  std::vector<int> action_order;
  action_order.reserve(old_actions + added_actions);
  std::vector<int> event_order;
  event_order.reserve(old_events + added_events);
  int events_taken = 0;  // of the plan's own events, already placed in event_order
  for (int i = 0; i < old_actions; ++i) {
    if (!actions->Get(i).has_start_in_place_updates()) {
      action_order.push_back(i);
      continue;
    }
    // Elements of a RepeatedPtrField do not move when it grows: `batch` stays valid while actions are added.
    const pb::StartInPlaceUpdates& batch = actions->Get(i).start_in_place_updates();
    const bool status = batch.has_status_patch();
    for (const pb::StartInPlaceUpdates::Target& target : batch.targets()) {
      if (status) {
        FillTargetAction(batch, target, true, actions->Add());
        action_order.push_back(actions->size() - 1);
      }
      FillTargetAction(batch, target, false, actions->Add());
      action_order.push_back(actions->size() - 1);
    }
    if (batch.event_reason().empty()) continue;
    // A planner never sends events_before out of order or range; another sender's batches still expand in order.
    const int before = std::clamp(batch.events_before(), events_taken, old_events);
    for (; events_taken < before; ++events_taken) event_order.push_back(events_taken);
    for (const pb::StartInPlaceUpdates::Target& target : batch.targets()) {
      pb::Event* event = events->Add();
      event->set_type(batch.event_type());
      event->set_reason(batch.event_reason());
      std::string message;
      message.reserve(batch.event_message_prefix().size() + target.name().size() +
                      batch.event_message_suffix().size());
      message.append(batch.event_message_prefix()).append(target.name()).append(batch.event_message_suffix());
      event->set_message(std::move(message));
      event->set_involved_pod(target.name());
      event_order.push_back(events->size() - 1);
    }
  }
  for (; events_taken < old_events; ++events_taken) event_order.push_back(events_taken);

  Permute(actions, action_order);
  actions->DeleteSubrange(static_cast<int>(action_order.size()),
                          actions->size() - static_cast<int>(action_order.size()));
  Permute(events, event_order);
}

}  // namespace cloneset::planapi
