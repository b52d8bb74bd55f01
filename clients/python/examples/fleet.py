"""The example's own fleet: instances in memory with a simulated kubelet, applying the planner's actions.

The model is the one `clonesetctl simulate` uses (clonesetctl/sim_cluster.h), so that the example's timeline
can be compared with simulate's: same delays, same resourceVersion bumps (the planner's random seed is a function
of them, so both draw the same instance names), same round-robin placement.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from typing import Dict, List, Optional

import cloneset_planner as cp
from cloneset_planner.v1 import planner_pb2 as pb

NANOS = 1_000_000_000
SECOND = NANOS
REVISION_LABEL = "controller-revision-hash"
LIFECYCLE_LABEL = "lifecycle.apps.kruise.io/state"
IN_PLACE_READY = "InPlaceUpdateReady"

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

    def expand_pvc(self, action: pb.ExpandPvc) -> None:
        pass  # the fleet's claims carry no storage request, so none is ever expanded

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
