#!/usr/bin/env python3
"""Rolls out a simulated fleet of instances with the CloneSet planner, using only the Python client.

The fleet is this program's own: instances held in memory, no Kubernetes. Each step builds a snapshot of the
fleet (plan_request), asks the planner for the next plan over gRPC (PlannerClient.plan), applies the plan's actions
to the fleet (apply_plan with the Fleet below as the PlanHandler) and moves the simulated clock to the next moment
something happens. It prints the timeline in the format of `clonesetctl simulate` (table or JSON).

The fleet (fleet.py) is modelled as `clonesetctl simulate` models its cluster, so for the same spec both print the
same batches: the ctest client_python_example checks that (clients/compare_timeline.py).

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
import json
import os
import sys
from typing import List, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # cloneset_planner, when run from the source tree
sys.path.insert(0, _HERE)  # fleet.py

import cloneset_planner as cp  # noqa: E402
from cloneset_planner.v1 import planner_pb2 as pb  # noqa: E402

from fleet import SECOND, Applied, Counts, Fleet, Model  # noqa: E402

EPOCH = 1767225600 * SECOND  # 2026-01-01T00:00:00Z; only differences are shown


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
    """The spec's changes, as `clonesetctl simulate --set key=value` takes them: image, image.<container>, replicas,
    minReadySeconds, partition, maxUnavailable, maxSurge, paused, type. `changes` gets "key: old -> new" lines."""
    doc = copy.deepcopy(manifest)

    def show(value) -> str:
        return "unset" if value is None else value if isinstance(value, str) else json.dumps(value)

    for item in sets:
        key, _, value = item.partition("=")
        if not value:
            raise ValueError(f"--set {item}: expected key=value")
        spec = doc.setdefault("spec", {})
        if key == "image" or key.startswith("image."):
            containers = spec.get("template", {}).get("spec", {}).get("containers") or []
            if not containers:
                raise ValueError("--set image: spec.template.spec.containers is empty")
            named = [c for c in containers if key == "image" or c.get("name") == key[len("image."):]]
            if not named:
                raise ValueError(f"--set {key}: no container named {key[len('image.'):]}")
            target, field, new = named[0] if key == "image" else named[-1], "image", value
        elif key in ("replicas", "minReadySeconds"):
            if not value.isdigit():
                raise ValueError(f"--set {key}: expected a non-negative integer")
            target, field, new = spec, key, int(value)
        elif key in ("partition", "maxUnavailable", "maxSurge", "paused"):
            target, field = spec.setdefault("updateStrategy", {}), key
            if key == "paused":
                if value not in ("true", "false"):
                    raise ValueError("--set paused: expected true or false")
                new = value == "true"
            else:
                new = int(value) if value.lstrip("-").isdigit() else value
        elif key == "type":
            target, field, new = spec.setdefault("updateStrategy", {}), "type", value
        else:
            raise ValueError(f"--set {key}: unknown key (known: image, image.<container>, replicas, partition, "
                             "maxUnavailable, maxSurge, paused, type, minReadySeconds)")
        changes.append(f"{key}: {show(target.get(field))} -> {show(new)}")
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
