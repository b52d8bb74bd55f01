import { clone, create } from "@bufbuild/protobuf";
import { ActionSchema, ConditionSchema, EventSchema, PatchPodSchema, PatchPodStatusSchema } from "./gen/planner_pb";
import type { Action, Event, PlanResponse } from "./gen/planner_pb";

// The annotation a StartInPlaceUpdates batch sets on each target (planner.proto).
export const IN_PLACE_STATE_ANNOTATION = "apps.kruise.io/inplace-update-state";

// Replaces every StartInPlaceUpdates action of `plan` by the per-pod actions it stands for and puts the targets'
// events among plan.events where they belong, as planner.proto's StartInPlaceUpdates says: the plan the same
// request without acceptInPlaceBatches gets. A plan without batches is left as it is.
export function expandInPlaceBatches(plan: PlanResponse): void {
  if (!plan.actions.some((a) => a.kind.case === "startInPlaceUpdates")) return;
  const old = plan.events;
  const actions: Action[] = [];
  const events: Event[] = [];
  let taken = 0; // of the plan's own events, already placed
  for (const a of plan.actions) {
    if (a.kind.case !== "startInPlaceUpdates") {
      actions.push(a);
      continue;
    }
    const batch = a.kind.value;
    for (const t of batch.targets) {
      if (batch.statusPatch) {
        const patch = clone(PatchPodStatusSchema, batch.statusPatch);
        patch.name = t.name;
        patch.uid = t.uid;
        patch.resourceVersion = t.resourceVersion;
        if (t.setNotReady) patch.setConditions.push(clone(ConditionSchema, batch.notReadyCondition ?? create(ConditionSchema)));
        actions.push(create(ActionSchema, { kind: { case: "patchPodStatus", value: patch }, stopOnError: batch.statusStopOnError }));
      }
      const patch = batch.patch ? clone(PatchPodSchema, batch.patch) : create(PatchPodSchema);
      patch.name = t.name;
      patch.uid = t.uid;
      patch.resourceVersion = t.resourceVersion;
      patch.setAnnotations[IN_PLACE_STATE_ANNOTATION] =
        batch.inPlaceUpdateStatePrefix + t.inPlaceUpdateState + batch.inPlaceUpdateStateSuffix;
      actions.push(create(ActionSchema, { kind: { case: "patchPod", value: patch }, stopOnError: batch.patchStopOnError }));
    }
    if (batch.eventReason === "") continue;
    // A planner never sends eventsBefore out of order or range; clamped so another sender's batches still expand
    // in order.
    const before = Math.min(Math.max(batch.eventsBefore, taken), old.length);
    events.push(...old.slice(taken, before));
    taken = before;
    for (const t of batch.targets) {
      events.push(create(EventSchema, {
        type: batch.eventType,
        reason: batch.eventReason,
        message: batch.eventMessagePrefix + t.name + batch.eventMessageSuffix,
        involvedPod: t.name,
      }));
    }
  }
  events.push(...old.slice(taken));
  plan.actions = actions;
  plan.events = events;
}
