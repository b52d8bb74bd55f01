#!/usr/bin/env python3
"""Rolls out a simulated fleet of instances with the CloneSet planner, using only the Python client.

The fleet is this program's own: instances held in memory, no Kubernetes. Each step builds a snapshot of the
fleet (plan_request), asks the planner for the next plan over gRPC (PlannerClient.plan), applies the plan's actions
to the fleet (apply_plan with the Fleet below as the PlanHandler) and moves the simulated clock to the next moment
something happens. It prints the timeline in the format of `clonesetctl simulate`: first the creation of the fleet
from zero instances, then the rollout of the spec's change.

The fleet's model is the one `clonesetctl simulate` uses (tests/vectors/planner/v1/examples/README.md), so for the
same spec both print the same batches: the ctest client_python_example checks that (clients/compare_timeline.py).

    fleet_rollout.py -f fleet.json --set image=registry.local/fleet:v2 --set partition=5 --fail-nth 4 \
        --planner 127.0.0.1:7070            # or --planner-binary build/bin/cloneset-planner to start its own
    fleet_rollout.py -f fleet.json          # without --set: the creation of the fleet from zero instances

-f is a CloneSet manifest (apps.kruise.io/v1alpha1, JSON); --fail-nth N makes the N-th container start of the
rollout never become ready; -o json prints the timeline as `clonesetctl simulate -o json` does.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import os
import sys
from typing import Dict, List, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # cloneset_planner, when run from the source tree

import cloneset_planner as cp  # noqa: E402
from cloneset_planner.v1 import planner_pb2 as pb  # noqa: E402

NANOS = 1_000_000_000
SECOND = NANOS
EPOCH = 1767225600 * NANOS  # 2026-01-01T00:00:00Z; only differences are shown
REVISION_LABEL = "controller-revision-hash"
LIFECYCLE_LABEL = "lifecycle.apps.kruise.io/state"
IN_PLACE_READY = "InPlaceUpdateReady"


# --- durations as clonesetctl prints them ------------------------------------------------------------------------

def format_duration(nanos: int) -> str:
    """"1m6s", "5s", "1.5s", "500ms", "0"."""
    if nanos == 0:
        return "0"
    sign, nanos = ("-", -nanos) if nanos < 0 else ("", nanos)
    if nanos < SECOND:
        return sign + _trim(f"{nanos / 1_000_000:.6f}") + "ms"
    hours, nanos = divmod(nanos, 3600 * SECOND)
    minutes, nanos = divmod(nanos, 60 * SECOND)
    out = sign + (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    if nanos:
        out += _trim(f"{nanos / SECOND:.9f}") + "s"
    return out


def _trim(number: str) -> str:
    return number.rstrip("0").rstrip(".") if "." in number else number


def format_offset(nanos: int) -> str:
    if nanos <= 0:
        return "+0s"
    return "+" + format_duration(nanos - nanos % (SECOND // 10))


# --- the fleet ---------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Model:
    start_delay: int = 1 * SECOND  # created or image changed -> running
    ready_after: int = 5 * SECOND  # running -> ready
    nodes: int = 3
    fail_nth: int = 0  # the N-th container start of the rollout never becomes ready (0: none)


@dataclasses.dataclass
class Kubelet:
    images: Dict[str, str] = dataclasses.field(default_factory=dict)
    running_at: int = 0
    ready_at: int = 0
    failing: bool = False


@dataclasses.dataclass
class Applied:
    created: List[str] = dataclasses.field(default_factory=list)
    deleted: List[str] = dataclasses.field(default_factory=list)
    updated_in_place: List[str] = dataclasses.field(default_factory=list)
    lifecycle: List[str] = dataclasses.field(default_factory=list)
    writes: int = 0


@dataclasses.dataclass
class Counts:
    desired: int = 0
    pods: int = 0
    ready: int = 0
    available: int = 0
    updated: int = 0
    unavailable: int = 0
    surge: int = 0


def condition(pod: pb.Pod, kind: str) -> Optional[pb.Condition]:
    return next((c for c in pod.conditions if c.type == kind), None)


def set_condition(pod: pb.Pod, kind: str, value: bool, now: int) -> bool:
    """Sets condition `kind`; its transition time moves only when its status changes (as a kubelet does)."""
    status = "True" if value else "False"
    c = condition(pod, kind)
    if c is not None and c.status == status:
        return False
    if c is None:
        c = pod.conditions.add(type=kind)
    c.status = status
    c.last_transition_time.CopyFrom(cp.timestamp(now))
    return True


def image_id(image: str) -> str:
    return f"sim://{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()[:16]}"


def is_active(pod: pb.Pod) -> bool:
    return pod.phase not in ("Succeeded", "Failed") and not pod.metadata.HasField("deletion_timestamp")


def is_ready(pod: pb.Pod) -> bool:
    c = condition(pod, "Ready")
    return c is not None and c.status == "True"


def is_available(pod: pb.Pod, min_ready_seconds: int, now: int) -> bool:
    state = pod.metadata.labels.get(LIFECYCLE_LABEL, "")
    if state not in ("", "Normal") or pod.phase != "Running" or not is_ready(pod):
        return False
    if min_ready_seconds > 0:
        ready = condition(pod, "Ready")
        if not ready.HasField("last_transition_time") or \
                cp.nanos_of(ready.last_transition_time) + min_ready_seconds * SECOND >= now:
            return False
    in_place = condition(pod, IN_PLACE_READY)
    return in_place is None or in_place.status == "True"


def short_hash(revision: str) -> str:
    return revision.rsplit("-", 1)[-1]


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class Fleet(cp.PlanHandler):
    """Instances in memory, with a simulated kubelet, that apply the planner's actions.

    Per instance: created -> placed on a node at once (round-robin) -> running `start_delay` later -> ready
    `ready_after` after that; ready when its container is ready and every readiness gate's condition is True. An
    image change restarts the container in place (restartCount + 1, a new image id) with the same delays. A failing
    instance's container runs but never becomes ready. Every change bumps a resourceVersion, as an API server does.
    """

    def __init__(self, model: Model):
        self.model = model
        self.fail_nth = 0  # set when the rollout starts: the N-th container start from then on fails
        self.starts = 0
        self.version = 100
        self.uid_counter = 0
        self.next_node = 0
        self.manifest: Optional[dict] = None
        self.clone_set = pb.CloneSet()
        self.pods: Dict[str, pb.Pod] = {}
        self.kubelets: Dict[str, Kubelet] = {}
        self.deleting_since: Dict[str, int] = {}
        self.pvcs: Dict[str, pb.PersistentVolumeClaim] = {}
        self.revisions: Dict[str, pb.ControllerRevision] = {}
        self.own_status_versions: Dict[str, str] = {}
        self.now = 0
        self.out = Applied()

    def next_version(self) -> str:
        self.version += 1
        return str(self.version)

    def apply_clone_set(self, manifest: dict, now: int) -> None:
        doc = copy.deepcopy(manifest)
        meta = doc.setdefault("metadata", {})
        generation = 1
        if self.manifest is not None:
            generation = self.manifest["metadata"].get("generation", 1)
            if self.manifest.get("spec") != doc.get("spec"):
                generation += 1
            meta["uid"] = self.manifest["metadata"]["uid"]
            meta["creationTimestamp"] = self.manifest["metadata"]["creationTimestamp"]
        else:
            meta["uid"] = "sim-cloneset-uid"
            meta["creationTimestamp"] = cp.format_rfc3339(now)
        meta.setdefault("namespace", "default")
        meta["generation"] = generation
        meta["resourceVersion"] = self.next_version()
        doc.pop("status", None)
        kept = pb.CloneSetStatus()
        kept.CopyFrom(self.clone_set.status)
        self.clone_set = cp.clone_set_from_manifest({k: v for k, v in doc.items() if k != "kind"})
        self.clone_set.status.CopyFrom(kept)
        self.manifest = doc

    def snapshot(self, now: int) -> pb.PlanRequest:
        return cp.plan_request(self.clone_set, self.pods.values(), now_nanos=now,
                               revisions=[self.revisions[n] for n in sorted(self.revisions)],
                               pvcs=[p for _, p in sorted(self.pvcs.items())
                                     if not p.metadata.HasField("deletion_timestamp")],
                               accept_in_place_batches=True)

    def apply(self, plan: pb.PlanResponse, now: int) -> Applied:
        self.now, self.out, self.own_status_versions = now, Applied(), {}
        result = cp.apply_plan(plan, self)
        if result.stopped:
            raise RuntimeError(f"the plan stopped: {result.stopped}")
        if result.failures:
            raise RuntimeError(f"actions failed: {[str(f.error) for f in result.failures]}")
        return self.out

    # --- PlanHandler: one method per action kind --------------------------------------------------------------

    def write_status(self, status: pb.CloneSetStatus) -> None:
        self.clone_set.status.CopyFrom(status)
        self.out.writes += 1

    def create_revision(self, action: pb.CreateRevision) -> None:
        rev = cp.revision_from_manifest(json.loads(action.revision_json))
        if rev.metadata.name in self.revisions:
            return  # AlreadyExists counts as done
        self.uid_counter += 1
        rev.metadata.uid = f"sim-rev-{self.uid_counter}"
        rev.metadata.resource_version = self.next_version()
        rev.metadata.creation_timestamp.CopyFrom(cp.timestamp(self.now))
        self.revisions[rev.metadata.name] = rev
        self.out.writes += 1

    def update_revision(self, action: pb.UpdateRevision) -> None:
        rev = self.revisions.get(action.name)
        if rev is None:
            raise KeyError(f"revision {action.name} not found")
        if action.resource_version and action.resource_version != rev.metadata.resource_version:
            raise cp.Conflict(f"revision {action.name} changed")
        if action.revision:
            rev.revision = action.revision
        rev.metadata.labels.update(action.set_labels)
        rev.metadata.annotations.update(action.set_annotations)
        rev.metadata.resource_version = self.next_version()
        self.out.writes += 1

    def delete_revision(self, action: pb.DeleteRevision) -> None:
        self.revisions.pop(action.name, None)
        self.out.writes += 1

    def _create_pvc(self, pvc: pb.PersistentVolumeClaim) -> None:
        if pvc.metadata.name in self.pvcs:
            return  # left over: reused
        self.uid_counter += 1
        pvc.metadata.uid = f"sim-pvc-{self.uid_counter}"
        pvc.metadata.resource_version = self.next_version()
        pvc.metadata.creation_timestamp.CopyFrom(cp.timestamp(self.now))
        pvc.phase = "Bound"
        self.pvcs[pvc.metadata.name] = pvc
        self.out.writes += 1

    def create_pvc(self, action: pb.CreatePvc) -> None:
        self._create_pvc(cp.pvc_from_manifest(json.loads(action.pvc_json)))

    def create_pod(self, action: pb.CreatePod) -> None:
        for pvc_json in action.pvc_jsons:
            self._create_pvc(cp.pvc_from_manifest(json.loads(pvc_json)))
        pod = cp.pod_from_manifest(json.loads(action.pod_json))
        name = pod.metadata.name
        if name in self.pods:
            return  # left over from an earlier attempt: reused
        self.uid_counter += 1
        pod.metadata.uid = f"sim-pod-uid-{self.uid_counter}"
        pod.metadata.resource_version = self.next_version()
        pod.metadata.creation_timestamp.CopyFrom(cp.timestamp(self.now))
        pod.node_name = f"sim-node-{self.next_node % self.model.nodes + 1}"
        self.next_node += 1
        pod.phase = "Pending"
        set_condition(pod, "PodScheduled", True, self.now)
        kubelet = self.kubelets.setdefault(name, Kubelet())
        self._start_containers(pod, kubelet)
        self.pods[name] = pod
        self.out.created.append(name)
        self.out.writes += 1

    def _start_containers(self, pod: pb.Pod, k: Kubelet) -> None:
        k.images = {c.name: c.image for c in pod.containers}
        k.running_at = self.now + self.model.start_delay
        k.ready_at = k.running_at + self.model.ready_after
        k.failing = False
        if self.fail_nth > 0:
            self.starts += 1
            k.failing = self.starts == self.fail_nth

    def patch_pod(self, action: pb.PatchPod) -> None:
        pod = self.pods.get(action.name)
        if pod is None:
            raise KeyError(f"pod {action.name} not found")
        meta = pod.metadata
        if action.uid and action.uid != meta.uid:
            raise cp.Conflict(f"pod {action.name}: uid precondition failed")
        if action.resource_version and action.resource_version != meta.resource_version:
            # A status write of this same plan moved the version: the patch applies on top of it.
            if self.own_status_versions.get(action.name) != meta.resource_version:
                raise cp.Conflict(f"pod {action.name}: the object has been modified")
        old_revision = meta.labels.get(REVISION_LABEL, "")
        old_state = meta.labels.get(LIFECYCLE_LABEL, "")
        meta.labels.update(action.set_labels)
        for key in action.remove_labels:
            meta.labels.pop(key, None)
        meta.annotations.update(action.set_annotations)
        for key in action.remove_annotations:
            meta.annotations.pop(key, None)
        for f in action.add_finalizers:
            if f not in meta.finalizers:
                meta.finalizers.append(f)
        kept = [f for f in meta.finalizers if f not in set(action.remove_finalizers)]
        del meta.finalizers[:]
        meta.finalizers.extend(kept)
        for c in pod.containers:
            if c.name in action.container_images:
                c.image = action.container_images[c.name]
        owners = [o for o in meta.owner_references if o.uid not in set(action.remove_owner_uids)]
        del meta.owner_references[:]
        meta.owner_references.extend(owners)
        meta.resource_version = self.next_version()
        self.out.writes += 1
        new_revision = meta.labels.get(REVISION_LABEL, "")
        if old_revision and new_revision != old_revision:
            self.out.updated_in_place.append(action.name)
        new_state = meta.labels.get(LIFECYCLE_LABEL, "")
        if new_state != old_state:
            self.out.lifecycle.append(f"{action.name}: {old_state or '-'} -> {new_state or '-'}")

    def patch_pod_status(self, action: pb.PatchPodStatus) -> None:
        self.out.writes += 1
        pod = self.pods.get(action.name)
        if pod is None:
            raise KeyError(f"pod {action.name} not found")
        if action.uid and action.uid != pod.metadata.uid:
            raise cp.Conflict(f"pod {action.name}: uid precondition failed")
        if action.resource_version and action.resource_version != pod.metadata.resource_version:
            raise cp.Conflict(f"pod {action.name} status: the object has been modified")
        for new in action.set_conditions:
            existing = condition(pod, new.type)
            if existing is not None:
                existing.CopyFrom(new)
            else:
                pod.conditions.add().CopyFrom(new)
        pod.metadata.resource_version = self.next_version()
        self.own_status_versions[action.name] = pod.metadata.resource_version

    def delete_pod(self, action: pb.DeletePod) -> None:
        pod = self.pods.get(action.name)
        self.out.writes += 1
        if pod is not None:
            if action.uid and action.uid != pod.metadata.uid:
                self.out.writes -= 1
                raise cp.Conflict(f"pod {action.name}: uid precondition failed")
            self.out.deleted.append(action.name)
            if not pod.metadata.HasField("deletion_timestamp"):
                pod.metadata.deletion_timestamp.CopyFrom(cp.timestamp(self.now))
                pod.metadata.resource_version = self.next_version()
                self.deleting_since[action.name] = self.now
            if not pod.metadata.finalizers:  # no graceful termination in this model
                del self.pods[action.name]
                self.kubelets.pop(action.name, None)
                self.deleting_since.pop(action.name, None)
        for pvc in action.pvc_names:
            if self.pvcs.pop(pvc, None) is not None:
                self.out.writes += 1

    def delete_pvc(self, action: pb.DeletePvc) -> None:
        self.pvcs.pop(action.name, None)
        self.out.writes += 1

    def update_pvc_owner(self, action: pb.UpdatePvcOwner) -> None:
        pvc = self.pvcs.get(action.name)
        if pvc is None:
            raise KeyError(f"pvc {action.name} not found")
        owners = [o for o in pvc.metadata.owner_references if o.uid != action.remove_owner_uid]
        del pvc.metadata.owner_references[:]
        pvc.metadata.owner_references.extend(owners)
        if action.HasField("add_owner"):
            pvc.metadata.owner_references.add().CopyFrom(action.add_owner)
        pvc.metadata.resource_version = self.next_version()
        self.out.writes += 1

    def patch_clone_set(self, action: pb.PatchCloneSet) -> None:
        self.out.writes += 1
        self.apply_clone_set(merge_patch(self.manifest, json.loads(action.merge_patch_json)), self.now)

    def create_image_pull_job(self, action: pb.CreateImagePullJob) -> None:
        self.out.writes += 1  # no node images in this model

    def delete_image_pull_job(self, action: pb.DeleteImagePullJob) -> None:
        self.out.writes += 1

    # --- the simulated kubelet --------------------------------------------------------------------------------

    def _step_pod(self, pod: pb.Pod, k: Kubelet, now: int) -> bool:
        changed = False
        restart = any(k.images.get(c.name) != c.image for c in pod.containers)
        if restart and now >= k.running_at:
            for cs in pod.container_statuses:
                for c in pod.containers:
                    if c.name == cs.name and k.images.get(c.name) != c.image:
                        cs.restart_count += 1
                        cs.ready = False
            saved, self.now = self.now, now
            self._start_containers(pod, k)
            self.now = saved
            changed = True
        if now >= k.running_at:
            if pod.phase != "Running":
                pod.phase = "Running"
                changed = True
            for c in pod.containers:
                status = next((s for s in pod.container_statuses if s.name == c.name), None)
                if status is None:
                    status = pod.container_statuses.add(name=c.name)
                    changed = True
                image = k.images.get(c.name, "")
                if status.image != image:
                    status.image = image
                    status.image_id = image_id(image)
                    status.container_id = f"sim://{pod.metadata.uid}/{c.name}/{status.restart_count}"
                    changed = True
                ready = now >= k.ready_at and not k.failing
                if status.ready != ready:
                    status.ready = ready
                    changed = True
        containers_ready = len(pod.container_statuses) == len(pod.containers) and now >= k.running_at and \
            all(s.ready for s in pod.container_statuses)
        changed |= set_condition(pod, "ContainersReady", containers_ready, now)
        ready = containers_ready
        for gate in pod.readiness_gates:
            c = condition(pod, gate)
            ready = ready and c is not None and c.status == "True"
        changed |= set_condition(pod, "Ready", ready, now)
        if changed:
            pod.metadata.resource_version = self.next_version()
        return changed

    def advance(self, now: int) -> bool:
        """Runs the kubelets up to `now`; True when an instance changed."""
        changed = False
        for name in sorted(self.pods):
            pod = self.pods[name]
            since = self.deleting_since.get(name)
            if since is not None and not pod.metadata.finalizers and now >= since:
                del self.pods[name]
                self.kubelets.pop(name, None)
                del self.deleting_since[name]
                changed = True
                continue
            changed |= self._step_pod(pod, self.kubelets.setdefault(name, Kubelet()), now)
        return changed

    def next_transition(self, now: int) -> Optional[int]:
        """The earliest future moment an instance changes by itself."""
        times = []
        min_ready = self.clone_set.spec.min_ready_seconds
        for name, pod in self.pods.items():
            if name in self.deleting_since:
                if not pod.metadata.finalizers:
                    times.append(self.deleting_since[name])
                continue
            k = self.kubelets.get(name)
            if k is None:
                continue
            times.append(k.running_at)
            if not k.failing:
                times.append(k.ready_at)
            ready = condition(pod, "Ready")
            if min_ready > 0 and ready is not None and ready.status == "True":
                times.append(cp.nanos_of(ready.last_transition_time) + min_ready * SECOND + 1_000_000)
        future = [t for t in times if t > now]
        return min(future) if future else None

    def counts(self, now: int) -> Counts:
        c = Counts(desired=self.clone_set.spec.replicas if self.clone_set.spec.HasField("replicas") else 1)
        update_revision = self.clone_set.status.update_revision
        for pod in self.pods.values():
            if not is_active(pod) or not any(o.uid == self.clone_set.metadata.uid
                                             for o in pod.metadata.owner_references):
                continue
            c.pods += 1
            c.ready += is_ready(pod)
            c.available += is_available(pod, self.clone_set.spec.min_ready_seconds, now)
            label = pod.metadata.labels.get(REVISION_LABEL, "")
            if update_revision and (label == update_revision or short_hash(label) == short_hash(update_revision)):
                c.updated += 1
        c.unavailable = max(c.desired - c.available, 0)
        c.surge = max(c.pods - c.desired, 0)
        return c

    def failed_starts(self) -> int:
        return sum(1 for name, k in self.kubelets.items() if k.failing and name in self.pods)


# --- the loop ----------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Step:
    at: int
    phase: str
    applied: Applied
    counts: Counts


@dataclasses.dataclass
class Timeline:
    name: str = ""
    namespace: str = ""
    changes: List[str] = dataclasses.field(default_factory=list)
    strategy: str = ""
    from_revision: str = ""
    to_revision: str = ""
    steps: List[Step] = dataclasses.field(default_factory=list)
    outcome: str = ""
    reasons: List[str] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)
    duration: int = 0
    peak_unavailable: int = 0
    peak_surge: int = 0
    writes: int = 0
    final: Counts = dataclasses.field(default_factory=Counts)


class Runner:
    """Plans and applies until nothing changes any more (the clock jumps to the next change or requeue)."""

    def __init__(self, planner: cp.PlannerClient, limit: int = 24 * 3600 * SECOND):
        self.planner = planner
        self.limit = limit
        self.now = EPOCH
        self.summary = pb.PlanSummary()
        self.warnings: List[str] = []

    def run(self, fleet: Fleet, start: int, timeline: Timeline) -> bool:
        """Returns False when the simulated time limit was reached."""
        same_instant = idle_wakeups = 0
        last_change = self.now

        def track_peaks():
            c = fleet.counts(self.now)
            timeline.peak_unavailable = max(timeline.peak_unavailable, c.unavailable)
            timeline.peak_surge = max(timeline.peak_surge, c.surge)

        timed_out = False
        while True:
            if fleet.advance(self.now):
                last_change, idle_wakeups = self.now, 0
            track_peaks()
            plan = self.planner.plan(fleet.snapshot(self.now))
            self.summary = plan.summary
            for e in cp.expand_in_place_batches(plan).events:
                line = f"{e.reason}: {e.message}"
                if e.type == pb.WARNING and line not in self.warnings:
                    self.warnings.append(line)
            status_changes = plan.write_status and plan.status != fleet.clone_set.status
            if plan.actions or status_changes:
                same_instant += 1
                if same_instant > 200:
                    raise RuntimeError(f"the plan does not settle at +{format_duration(self.now - start)}")
                applied = fleet.apply(plan, self.now)
                last_change, idle_wakeups = self.now, 0
                timeline.writes += applied.writes
                if applied.created or applied.deleted or applied.updated_in_place or applied.lifecycle:
                    phase = plan.summary.phase or ("create" if applied.created else "delete" if applied.deleted
                                                   else "update" if applied.updated_in_place else "lifecycle")
                    timeline.steps.append(Step(self.now - start, phase, applied, fleet.counts(self.now)))
                track_peaks()
                continue
            same_instant = 0
            following = fleet.next_transition(self.now)
            requeue = plan.requeue_after.seconds * SECOND + plan.requeue_after.nanos
            if requeue > 0 and (following is None or self.now + requeue < following):
                following = self.now + requeue
            if following is None:
                break
            idle_wakeups += 1
            if idle_wakeups > 3 and fleet.next_transition(self.now) is None:
                break
            if following - start > self.limit:
                timed_out = True
                break
            self.now = following
        timeline.duration = last_change - start
        return not timed_out


def strategy_of(cs: pb.CloneSet) -> str:
    u = cs.spec.update_strategy

    def ios(v: pb.IntOrString, unset: str) -> str:
        case = v.WhichOneof("value")
        return str(v.int_value) if case == "int_value" else v.str_value if case == "str_value" else unset

    text = (f"{u.type or 'ReCreate'}, maxUnavailable {ios(u.max_unavailable, '20%')}, "
            f"maxSurge {ios(u.max_surge, '0')}, partition {ios(u.partition, '0')}")
    return text + (", paused" if u.paused else "")


def apply_sets(manifest: dict, sets: List[str], changes: List[str]) -> dict:
    """The spec's changes (the `--set key=value` of clonesetctl simulate): image, replicas, partition,
    maxUnavailable, maxSurge."""
    doc = copy.deepcopy(manifest)
    for item in sets:
        key, _, value = item.partition("=")
        if key == "image":
            target, field = doc["spec"]["template"]["spec"]["containers"][0], "image"
            new = value
        elif key == "replicas":
            target, field, new = doc["spec"], "replicas", int(value)
        elif key in ("partition", "maxUnavailable", "maxSurge"):
            target, field = doc["spec"].setdefault("updateStrategy", {}), key
            new = int(value) if value.lstrip("-").isdigit() else value
        else:
            raise ValueError(f"set {item}: unknown key (known: image, replicas, partition, maxUnavailable, maxSurge)")
        old = target.get(field)
        changes.append(f"{key}: {'unset' if old is None else old} -> {new}")
        target[field] = new
    return doc


def validate(planner: cp.PlannerClient, cs: pb.CloneSet, old: Optional[pb.CloneSet] = None) -> None:
    response = planner.validate(pb.ValidateRequest(clone_set=cs, old=old))
    if response.errors:
        raise ValueError("invalid CloneSet: " + "; ".join(f"{e.field}: {e.message}" for e in response.errors))


def finish(fleet: Fleet, runner: Runner, timeline: Timeline, timed_out: bool, limit: int) -> None:
    timeline.to_revision = fleet.clone_set.status.update_revision
    timeline.final = c = fleet.counts(runner.now)
    timeline.warnings = list(runner.warnings)
    all_available = c.available == c.desired and c.pods == c.desired
    if all_available and c.updated == c.desired:
        timeline.outcome = "complete"
    elif all_available and c.updated == fleet.clone_set.status.expected_updated_replicas and c.updated < c.desired:
        timeline.outcome = "partition"
        timeline.reasons.append(f"partition keeps {c.desired - c.updated} of {c.desired} pods at the old revision")
    else:
        timeline.outcome = "stalled"
    if timeline.outcome != "complete":
        timeline.reasons.extend(runner.summary.blocked_reasons)
    if timeline.outcome == "stalled":
        if fleet.failed_starts():
            timeline.reasons.append(f"{fleet.failed_starts()} pods never became ready "
                                    "(simulated start failures, --fail-nth)")
        if timed_out:
            timeline.reasons.append(f"still changing after {format_duration(limit)}")
        if not timeline.reasons:
            timeline.reasons.append(f"{c.available} of {c.desired} pods available, {c.updated} updated; "
                                    "nothing more happens")


def simulate(planner: cp.PlannerClient, manifest: dict, sets: List[str], model: Model) -> Timeline:
    """The rollout of `sets` from the steady state (every instance ready at `manifest`), or without `sets` the
    creation of the fleet from zero instances."""
    rollout = bool(sets)
    timeline = Timeline()
    runner = Runner(planner)
    limit = runner.limit
    fleet = Fleet(model)
    fleet.apply_clone_set(manifest, runner.now)
    validate(planner, fleet.clone_set)
    timeline.name, timeline.namespace = fleet.clone_set.metadata.name, fleet.clone_set.metadata.namespace
    start = runner.now
    if rollout:
        updated = apply_sets(manifest, sets, timeline.changes)
        steady = Fleet(model)
        steady.apply_clone_set(manifest, runner.now)
        if not runner.run(steady, runner.now, Timeline()):
            raise RuntimeError("the spec as written never settles")
        c = steady.counts(runner.now)
        if c.available != c.desired or c.updated != c.desired:
            raise RuntimeError(f"the spec as written never reaches a steady state ({c.available}/{c.desired} available)")
        fleet = steady
        timeline.from_revision = fleet.clone_set.status.update_revision
        old = pb.CloneSet()
        old.CopyFrom(fleet.clone_set)
        fleet.apply_clone_set(updated, runner.now)
        validate(planner, fleet.clone_set, old)
        fleet.fail_nth = model.fail_nth  # failures start with the rollout
        start = runner.now
    timeline.strategy = strategy_of(fleet.clone_set)
    runner.warnings = []
    timed_out = not runner.run(fleet, start, timeline)
    finish(fleet, runner, timeline, timed_out, limit)
    return timeline


def render(t: Timeline, model: Model) -> str:
    """The table of `clonesetctl simulate`."""
    out = [f"CloneSet {t.namespace}/{t.name}",
           "Change:   " + (", ".join(t.changes) if t.changes else "none (creation from zero pods)"),
           f"Strategy: {t.strategy}"]
    if t.from_revision or t.to_revision:
        out.append(f"Revision: {t.from_revision or '-'} -> {t.to_revision}")
    out.append(f"Model:    container start {format_duration(model.start_delay)}, ready "
               f"{format_duration(model.ready_after)} later, failing start {model.fail_nth or 'none'}")
    out.append("")
    out.append(f"{'TIME':<8} {'PHASE':<16} {'CREATED':>7} {'DELETED':>7} {'IN-PLACE':>8} {'UNAVAILABLE':>11} "
               f"{'SURGE':>5} {'UPDATED':>7} {'READY':>5} {'DESIRED':>7}  PODS (+created -deleted ~in-place)")
    for s in t.steps:
        a, c = s.applied, s.counts
        pods = [f"+{n}" for n in a.created] + [f"-{n}" for n in a.deleted] + [f"~{n}" for n in a.updated_in_place]
        if a.lifecycle:
            pods.append(f"({a.lifecycle[0]})" if len(a.lifecycle) == 1 else f"(lifecycle of {len(a.lifecycle)} pods)")
        out.append(f"{format_offset(s.at):<8} {s.phase:<16} {len(a.created):>7} {len(a.deleted):>7} "
                   f"{len(a.updated_in_place):>8} {c.unavailable:>11} {c.surge:>5} {c.updated:>7} {c.ready:>5} "
                   f"{c.desired:>7}  {' '.join(pods)}")
    if not t.steps:
        out.append("(no pod changes)")
    out.append("")
    c = t.final
    if t.outcome == "complete":
        out.append(f"Result:   complete in {format_duration(t.duration)}: {c.updated}/{c.desired} pods updated and "
                   "available")
    elif t.outcome == "partition":
        out.append(f"Result:   stops at the partition after {format_duration(t.duration)}: {c.updated}/{c.desired} "
                   "pods updated")
    else:
        out.append(f"Result:   STALLS after {format_duration(t.duration)}: {c.updated}/{c.desired} updated, "
                   f"{c.available}/{c.desired} available")
    out.extend(f"          because {why}" for why in t.reasons)
    out.append(f"Peak:     {t.peak_unavailable} unavailable, {t.peak_surge} surge; {t.writes} API writes")
    out.extend(f"Warning:  {w}" for w in t.warnings)
    return "\n".join(out) + "\n"


def counts_json(c: Counts) -> dict:
    return dataclasses.asdict(c)


def timeline_json(t: Timeline) -> dict:
    """The form of `clonesetctl simulate -o json`."""
    return {
        "name": t.name, "namespace": t.namespace, "changes": t.changes, "strategy": t.strategy,
        "fromRevision": t.from_revision, "toRevision": t.to_revision,
        "steps": [{"atSeconds": s.at / SECOND, "phase": s.phase, "created": s.applied.created,
                   "deleted": s.applied.deleted, "updatedInPlace": s.applied.updated_in_place,
                   "lifecycle": s.applied.lifecycle, "counts": counts_json(s.counts)} for s in t.steps],
        "outcome": t.outcome, "finished": t.outcome == "complete", "reasons": t.reasons, "warnings": t.warnings,
        "durationSeconds": t.duration / SECOND, "peakUnavailable": t.peak_unavailable, "peakSurge": t.peak_surge,
        "apiWrites": t.writes, "final": counts_json(t.final),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-f", dest="manifest", required=True, help="the CloneSet manifest (JSON)")
    parser.add_argument("--set", action="append", default=[], help="a change of the spec, key=value (repeatable)")
    parser.add_argument("--fail-nth", type=int, default=0, help="the N-th container start of the rollout fails")
    parser.add_argument("--start-delay", type=float, default=1, help="seconds from created to running")
    parser.add_argument("--ready-after", type=float, default=5, help="seconds from running to ready")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("-o", dest="output", choices=("table", "json"), default="table")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--planner", help="the planner's host:port")
    where.add_argument("--planner-binary", help="start this cloneset-planner on 127.0.0.1 (port 0) and use it")
    args = parser.parse_args()
    if args.fail_nth < 0 or args.nodes < 1:
        parser.error("--fail-nth must be >= 0 and --nodes >= 1")
    with open(args.manifest) as f:
        manifest = json.load(f)
    model = Model(start_delay=int(args.start_delay * SECOND), ready_after=int(args.ready_after * SECOND),
                  nodes=args.nodes, fail_nth=args.fail_nth)
    process = None
    if args.planner_binary:
        sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "tests"))
        from planner_process import PlannerProcess
        process = PlannerProcess(args.planner_binary)
    try:
        with cp.PlannerClient(args.planner or process.address) as planner:
            timeline = simulate(planner, manifest, args.set, model)
    except (cp.PlannerError, ValueError, RuntimeError, KeyError) as e:
        print(f"fleet_rollout: {e}", file=sys.stderr)
        return 1
    finally:
        if process is not None:
            process.stop()
    if args.output == "json":
        print(json.dumps(timeline_json(timeline), indent=1))
    else:
        sys.stdout.write(render(timeline, model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
