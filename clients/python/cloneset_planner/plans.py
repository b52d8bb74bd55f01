"""Reading and applying a PlanResponse: in-place batch expansion and the rules of applying actions.

Applying a plan (the same rules the project's executor follows, docs/planner-api.md):

* actions run in stages, in plan order: each action that is not about one pod (revisions, PVC owners, the
  CloneSet, image pull jobs) is a stage of its own, and so is every run of pod actions (one slow-start batch of
  creations, or the other pod actions between two such barriers); inside a stage a pod's actions run together, in
  plan order, pods in the order of their first action (:func:`schedule`);
* a failed CreatePod ends the plan after its slow-start batch (``create_pod.batch``): no later batch starts;
* a failed action with ``stop_on_error``, or a :class:`Conflict` (the snapshot was stale: a uid or version
  precondition failed), stops the plan: no further action runs;
* any other failure is noted and the plan goes on;
* the CloneSet status (``status`` when ``write_status``) is written last, and only when nothing stopped the plan;
* the events are emitted last.
"""

from __future__ import annotations

import dataclasses
import json
from typing import List, Optional, Tuple

from cloneset_planner.v1 import planner_pb2 as pb

# The annotation every in-place update writes (StartInPlaceUpdates builds it from its prefix, suffix and target).
IN_PLACE_STATE_ANNOTATION = "apps.kruise.io/inplace-update-state"

ACTION_KINDS = tuple(f.name for f in pb.Action.DESCRIPTOR.oneofs_by_name["kind"].fields)


def expand_in_place_batches(plan: pb.PlanResponse) -> pb.PlanResponse:
    """The plan with every StartInPlaceUpdates action replaced by its per-pod actions and events.

    That is the plan the same request would get without ``accept_in_place_batches`` (proto/planner.proto,
    message StartInPlaceUpdates). A plan without batches is returned as a copy.
    """
    out = pb.PlanResponse()
    out.CopyFrom(plan)
    if not any(a.HasField("start_in_place_updates") for a in plan.actions):
        return out
    del out.actions[:]
    del out.events[:]
    batch_events: List[Tuple[int, List[pb.Event]]] = []
    for action in plan.actions:
        if not action.HasField("start_in_place_updates"):
            out.actions.add().CopyFrom(action)
            continue
        batch = action.start_in_place_updates
        events: List[pb.Event] = []
        for target in batch.targets:
            if batch.HasField("status_patch"):
                status = out.actions.add()
                status.stop_on_error = batch.status_stop_on_error
                s = status.patch_pod_status
                s.CopyFrom(batch.status_patch)
                s.name, s.uid, s.resource_version = target.name, target.uid, target.resource_version
                if target.set_not_ready:
                    s.set_conditions.add().CopyFrom(batch.not_ready_condition)
            patch = out.actions.add()
            patch.stop_on_error = batch.patch_stop_on_error
            p = patch.patch_pod
            p.CopyFrom(batch.patch)
            p.name, p.uid, p.resource_version = target.name, target.uid, target.resource_version
            p.set_annotations[IN_PLACE_STATE_ANNOTATION] = (
                batch.in_place_update_state_prefix + target.in_place_update_state + batch.in_place_update_state_suffix)
            if batch.event_reason:
                events.append(pb.Event(type=batch.event_type, reason=batch.event_reason,
                                       message=batch.event_message_prefix + target.name + batch.event_message_suffix,
                                       involved_pod=target.name))
        batch_events.append((batch.events_before, events))
    # A batch's events follow the first `events_before` events of the plan as sent, after those of earlier batches
    # with the same `events_before`.
    for position in range(len(plan.events) + 1):
        for before, events in batch_events:
            if before == position:
                out.events.extend(events)
        if position < len(plan.events):
            out.events.add().CopyFrom(plan.events[position])
    return out


def pod_of_action(action: pb.Action) -> str:
    """The pod an action is about; "" for actions that are not about one pod."""
    kind = action.WhichOneof("kind")
    if kind == "create_pod":
        try:
            return json.loads(action.create_pod.pod_json).get("metadata", {}).get("name", "")
        except (ValueError, AttributeError):
            return ""
    if kind in ("delete_pod", "patch_pod", "patch_pod_status", "resize_pod"):
        return getattr(action, kind).name
    if kind in ("create_pvc", "expand_pvc"):
        return getattr(action, kind).pod_name
    return ""


def schedule(plan: pb.PlanResponse) -> List[List[List[int]]]:
    """The plan's stages, each a list of per-pod groups of action indexes (see the module docstring)."""
    stages: List[List[List[int]]] = []
    stage_creates = False
    stage_batch = 0
    pod_stage = False
    group_of = {}
    for i, action in enumerate(plan.actions):
        pod = pod_of_action(action)
        if not pod:
            stages.append([[i]])
            pod_stage = False
            continue
        create = action.HasField("create_pod")
        same = pod_stage and stage_creates == create and (not create or action.create_pod.batch == stage_batch)
        if not same:
            stages.append([])
            group_of = {}
            pod_stage, stage_creates = True, create
        if create:
            stage_batch = action.create_pod.batch
        if pod not in group_of:
            group_of[pod] = len(stages[-1])
            stages[-1].append([])
        stages[-1][group_of[pod]].append(i)
    return stages


class Conflict(Exception):
    """Raised by a handler when a precondition (uid, resource_version) fails: the snapshot was stale."""


class PlanHandler:
    """Applies a plan's actions to your own system: override the methods of the action kinds you support.

    Each action method gets the action's message (e.g. ``create_pod(self, action: pb.CreatePod)``) and raises on
    failure (:class:`Conflict` for a failed precondition). A kind you do not override fails with
    NotImplementedError, so nothing is silently ignored.
    """

    def write_status(self, status: pb.CloneSetStatus) -> None:
        raise NotImplementedError("this handler does not write the CloneSet status")

    def event(self, event: pb.Event) -> None:
        """An event about the CloneSet (``involved_pod`` names the pod, if any). Ignored by default."""

    def __getattr__(self, name: str):
        if name in ACTION_KINDS:
            def unsupported(_message):
                raise NotImplementedError(f"this handler does not apply {name} actions")
            return unsupported
        raise AttributeError(name)


@dataclasses.dataclass
class Failure:
    index: int  # the action's position in the (expanded) plan
    kind: str
    error: BaseException


@dataclasses.dataclass
class AppliedPlan:
    plan: pb.PlanResponse  # the plan as applied (in-place batches expanded)
    applied: int = 0  # actions that succeeded
    failures: List[Failure] = dataclasses.field(default_factory=list)
    stopped: Optional[str] = None  # why the rest of the plan was skipped
    status_written: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures and self.stopped is None


def apply_plan(plan: pb.PlanResponse, handler: PlanHandler) -> AppliedPlan:
    """Applies `plan` through `handler` by the rules of this module's docstring."""
    plan = expand_in_place_batches(plan)
    result = AppliedPlan(plan=plan)
    for stage in schedule(plan):
        creation_failed = False
        for group in stage:
            for index in group:
                if result.stopped is not None:
                    break
                action = plan.actions[index]
                kind = action.WhichOneof("kind")
                if kind is None:
                    result.failures.append(Failure(index, "", ValueError("action without a kind")))
                    continue
                try:
                    getattr(handler, kind)(getattr(action, kind))
                    result.applied += 1
                except Exception as e:  # noqa: BLE001 - every failure is reported in the result
                    result.failures.append(Failure(index, kind, e))
                    if isinstance(e, Conflict):
                        result.stopped = f"conflict on {kind} (action {index}): {e}"
                    elif action.stop_on_error:
                        result.stopped = f"{kind} (action {index}) failed: {e}"
                    elif kind == "create_pod":
                        creation_failed = True
        if result.stopped is None and creation_failed:
            result.stopped = "a creation of this slow-start batch failed: the next batch must not start"
        if result.stopped is not None:
            break
    if result.stopped is None and plan.write_status:
        handler.write_status(plan.status)
        result.status_written = True
    for event in plan.events:
        handler.event(event)
    return result
