"""Building a PlanRequest from your own instances, and reading the documents a plan carries.

The planner speaks apps.kruise.io CloneSet vocabulary; pods, claims and revisions travel as protobuf messages in a
request and as Kubernetes-style JSON documents in a plan (CreatePod.pod_json, CreateRevision.revision_json, ...).
These helpers convert between the two for the fields the planner reads, so a platform that is not Kubernetes can
keep its instances as plain objects.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Dict, Iterable, Optional

from google.protobuf import timestamp_pb2

from cloneset_planner.v1 import planner_pb2 as pb

NANOS = 1_000_000_000


# --- time ------------------------------------------------------------------------------------------------------

def timestamp(nanos: int) -> timestamp_pb2.Timestamp:
    """A protobuf Timestamp from nanoseconds since the Unix epoch."""
    return timestamp_pb2.Timestamp(seconds=nanos // NANOS, nanos=nanos % NANOS)


def nanos_of(ts: timestamp_pb2.Timestamp) -> int:
    return ts.seconds * NANOS + ts.nanos


def format_rfc3339(nanos: int) -> str:
    """"2026-01-01T00:00:00Z" (fractional seconds only when there are any), as Kubernetes writes times."""
    seconds, frac = divmod(nanos, NANOS)
    text = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += ("." + f"{frac:09d}").rstrip("0")
    return text + "Z"


def parse_rfc3339(text: str, field: str) -> int:
    try:
        ts = timestamp_pb2.Timestamp()
        ts.FromJsonString(text)
    except ValueError:
        raise ValueError(f"{field}: {text!r} is not an RFC 3339 time") from None
    return nanos_of(ts)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: how the planner stores templates and revision data."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- reading Kubernetes-style documents --------------------------------------------------------------------------

def _obj(value: Any, field: str) -> Dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{field}: expected an object")
    return value


def _str(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field}: expected a string")
    return value


def _int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{field}: expected an integer")
    return value


def _int_or_string(value: Any, field: str) -> pb.IntOrString:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{field}: expected an integer or a string like \"20%\"")
    return pb.IntOrString(int_value=value) if isinstance(value, int) else pb.IntOrString(str_value=value)


def _only(doc: Dict[str, Any], known: Iterable[str], field: str) -> None:
    unknown = sorted(set(doc) - set(known))
    if unknown:
        raise ValueError(f"{field}.{unknown[0]}: not supported by this client's converter")


def object_meta(doc: Any, field: str = "metadata") -> pb.ObjectMeta:
    """metav1.ObjectMeta (the fields the planner reads; others are ignored)."""
    m = _obj(doc, field)
    meta = pb.ObjectMeta(name=m.get("name", ""), namespace=m.get("namespace", ""), uid=m.get("uid", ""),
                         resource_version=str(m.get("resourceVersion", "")),
                         generation=int(m.get("generation", 0) or 0))
    meta.labels.update({k: _str(v, f"{field}.labels.{k}") for k, v in _obj(m.get("labels"), f"{field}.labels").items()})
    meta.annotations.update({k: _str(v, f"{field}.annotations.{k}")
                             for k, v in _obj(m.get("annotations"), f"{field}.annotations").items()})
    meta.finalizers.extend(m.get("finalizers") or [])
    for key, target in (("creationTimestamp", meta.creation_timestamp),
                        ("deletionTimestamp", meta.deletion_timestamp)):
        if m.get(key):
            target.CopyFrom(timestamp(parse_rfc3339(m[key], f"{field}.{key}")))
    for i, ref in enumerate(m.get("ownerReferences") or []):
        meta.owner_references.add(api_version=ref.get("apiVersion", ""), kind=ref.get("kind", ""),
                                  name=ref.get("name", ""), uid=ref.get("uid", ""),
                                  controller=bool(ref.get("controller", False)),
                                  block_owner_deletion=bool(ref.get("blockOwnerDeletion", False)))
    return meta


def label_selector(doc: Any, field: str) -> pb.LabelSelector:
    s = _obj(doc, field)
    _only(s, ("matchLabels", "matchExpressions"), field)
    out = pb.LabelSelector()
    out.match_labels.update(_obj(s.get("matchLabels"), f"{field}.matchLabels"))
    for i, e in enumerate(s.get("matchExpressions") or []):
        out.match_expressions.add(key=e.get("key", ""), operator=e.get("operator", ""), values=e.get("values") or [])
    return out


def clone_set_from_manifest(doc: Dict[str, Any]) -> pb.CloneSet:
    """An apps.kruise.io/v1alpha1 CloneSet document (as `kubectl apply` takes it) as a planner CloneSet.

    Covers replicas, selector, template, volumeClaimTemplates, minReadySeconds, revisionHistoryLimit, the update
    strategy (type, partition, maxUnavailable, maxSurge, paused, gracePeriodSeconds) and the scale strategy
    (podsToDelete, maxUnavailable, disablePVCReuse). Any other spec field is a ValueError naming it, never
    silently dropped.
    """
    doc = _obj(doc, "CloneSet")
    cs = pb.CloneSet(api_version=doc.get("apiVersion", "apps.kruise.io/v1alpha1"))
    if cs.api_version != "apps.kruise.io/v1alpha1":
        raise ValueError(f"apiVersion: {cs.api_version!r}: this converter reads apps.kruise.io/v1alpha1")
    cs.metadata.CopyFrom(object_meta(doc.get("metadata")))
    spec = _obj(doc.get("spec"), "spec")
    _only(spec, ("replicas", "selector", "template", "volumeClaimTemplates", "minReadySeconds",
                 "revisionHistoryLimit", "updateStrategy", "scaleStrategy"), "spec")
    s = cs.spec
    if "replicas" in spec:
        s.replicas = _int(spec["replicas"], "spec.replicas")
    if "selector" in spec:
        s.selector.CopyFrom(label_selector(spec["selector"], "spec.selector"))
    s.template_json = canonical_json(_obj(spec.get("template"), "spec.template"))
    for i, vct in enumerate(spec.get("volumeClaimTemplates") or []):
        s.volume_claim_templates_json.append(canonical_json(_obj(vct, f"spec.volumeClaimTemplates[{i}]")))
    if "minReadySeconds" in spec:
        s.min_ready_seconds = _int(spec["minReadySeconds"], "spec.minReadySeconds")
    if "revisionHistoryLimit" in spec:
        s.revision_history_limit = _int(spec["revisionHistoryLimit"], "spec.revisionHistoryLimit")
    u = _obj(spec.get("updateStrategy"), "spec.updateStrategy")
    _only(u, ("type", "partition", "maxUnavailable", "maxSurge", "paused", "inPlaceUpdateStrategy"),
          "spec.updateStrategy")
    if "type" in u:
        s.update_strategy.type = _str(u["type"], "spec.updateStrategy.type")
    for key, target in (("partition", s.update_strategy.partition),
                        ("maxUnavailable", s.update_strategy.max_unavailable),
                        ("maxSurge", s.update_strategy.max_surge)):
        if key in u:
            target.CopyFrom(_int_or_string(u[key], f"spec.updateStrategy.{key}"))
    if "paused" in u:
        s.update_strategy.paused = bool(u["paused"])
    grace = _obj(u.get("inPlaceUpdateStrategy"), "spec.updateStrategy.inPlaceUpdateStrategy")
    if "gracePeriodSeconds" in grace:
        s.update_strategy.grace_period_seconds = _int(
            grace["gracePeriodSeconds"], "spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds")
    sc = _obj(spec.get("scaleStrategy"), "spec.scaleStrategy")
    _only(sc, ("podsToDelete", "maxUnavailable", "disablePVCReuse"), "spec.scaleStrategy")
    s.scale_strategy.pods_to_delete.extend(sc.get("podsToDelete") or [])
    if "maxUnavailable" in sc:
        s.scale_strategy.max_unavailable.CopyFrom(_int_or_string(sc["maxUnavailable"], "spec.scaleStrategy.maxUnavailable"))
    if "disablePVCReuse" in sc:
        s.scale_strategy.enable_pvc_reuse = not bool(sc["disablePVCReuse"])
    return cs


def pod_from_manifest(doc: Dict[str, Any]) -> pb.Pod:
    """A v1 Pod document (CreatePod.pod_json) as the Pod message a PlanRequest carries.

    Reads metadata, spec.nodeName, spec.readinessGates, spec.containers (name, image), status.phase,
    status.conditions and status.containerStatuses.
    """
    doc = _obj(doc, "pod")
    pod = pb.Pod(metadata=object_meta(doc.get("metadata")))
    spec = _obj(doc.get("spec"), "spec")
    pod.node_name = spec.get("nodeName", "")
    pod.readiness_gates.extend(g.get("conditionType", "") for g in spec.get("readinessGates") or [])
    for c in spec.get("containers") or []:
        pod.containers.add(name=c.get("name", ""), image=c.get("image", ""))
    status = _obj(doc.get("status"), "status")
    pod.phase = status.get("phase", "")
    for i, c in enumerate(status.get("conditions") or []):
        cond = pod.conditions.add(type=c.get("type", ""), status=c.get("status", ""), reason=c.get("reason", ""),
                                  message=c.get("message", ""))
        if c.get("lastTransitionTime"):
            cond.last_transition_time.CopyFrom(
                timestamp(parse_rfc3339(c["lastTransitionTime"], f"status.conditions[{i}].lastTransitionTime")))
    for c in status.get("containerStatuses") or []:
        pod.container_statuses.add(name=c.get("name", ""), image=c.get("image", ""), image_id=c.get("imageID", ""),
                                   container_id=c.get("containerID", ""), ready=bool(c.get("ready", False)),
                                   restart_count=int(c.get("restartCount", 0)))
    return pod


def pvc_from_manifest(doc: Dict[str, Any]) -> pb.PersistentVolumeClaim:
    """A v1 PersistentVolumeClaim document (CreatePod.pvc_jsons, CreatePvc.pvc_json)."""
    doc = _obj(doc, "pvc")
    return pb.PersistentVolumeClaim(metadata=object_meta(doc.get("metadata")),
                                    phase=_obj(doc.get("status"), "status").get("phase", ""))


def revision_from_manifest(doc: Dict[str, Any]) -> pb.ControllerRevision:
    """An apps/v1 ControllerRevision document (CreateRevision.revision_json); data is kept canonical."""
    doc = _obj(doc, "revision")
    return pb.ControllerRevision(metadata=object_meta(doc.get("metadata")), revision=int(doc.get("revision", 0)),
                                 data_json=canonical_json(doc.get("data")))


# --- the request ---------------------------------------------------------------------------------------------------

def plan_seed(clone_set: pb.CloneSet, pods_by_name: Iterable[pb.Pod]) -> int:
    """A random_seed that is a function of the state (FNV-1a 64 over the CloneSet's uid and resourceVersion and
    the pods' resourceVersions in name order): the same snapshot always gets the same new instance ids. The
    project's executor uses the same rule."""
    h = 1469598103934665603
    for text in [clone_set.metadata.uid, clone_set.metadata.resource_version] + \
            [p.metadata.resource_version for p in pods_by_name]:
        for byte in text.encode():
            h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def plan_request(clone_set: pb.CloneSet, pods: Iterable[pb.Pod], *, now_nanos: int,
                 revisions: Iterable[pb.ControllerRevision] = (), pvcs: Iterable[pb.PersistentVolumeClaim] = (),
                 random_seed: Optional[int] = None, accept_in_place_batches: bool = False,
                 image_pull_jobs: Iterable[str] = ()) -> pb.PlanRequest:
    """A PlanRequest for one CloneSet: pods sorted by name (the planner's tie-breaks assume a defined order) and,
    unless given, the random seed of :func:`plan_seed`."""
    ordered = sorted(pods, key=lambda p: p.metadata.name)
    request = pb.PlanRequest(clone_set=clone_set, pods=ordered, revisions=list(revisions), pvcs=list(pvcs),
                             now=timestamp(now_nanos), accept_in_place_batches=accept_in_place_batches,
                             image_pull_jobs=list(image_pull_jobs))
    request.random_seed = plan_seed(clone_set, ordered) if random_seed is None else random_seed
    return request
