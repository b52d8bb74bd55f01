#!/usr/bin/env python3
"""The executor's CPU samples by reconcile phase: reads `perf script` output (DWARF call chains) on stdin and gives
each sample the first phase whose frame names appear in its call chain (in the order below), then prints each
phase's share of the samples. Used by bench/executor_rollout.sh with PERF_DIR (docs/performance.md, "End to end").

Usage: perf script -i DIR/cloneset-executor.data | bench/perf_phases.py
"""
import collections
import sys

# (phase, frame name fragments): first match wins, so the specific phases come before the ones that enclose them.
PHASES = [
    ("watch: read, split and decode pod events",
     ["ListWatch::", "JsonObjectSplitter", "Informer<", "ParseWatchEvent", "InformerCache::On"]),
    ("events (EventRecorder POSTs)", ["EventRecorder::", "RecorderSink::Event", "QueuedEventSink"]),
    ("CloneSet status write", ["Reconciler::PatchStatus"]),
    ("pod writes: decoding the returned pod and checking it",
     ["SameMetadataAndSpec", "PodFromJson", "ReadObjectMeta", "ExpectFromResponse"]),
    ("pod writes: patch bodies", ["ActionToPatch", "PodStatusPatchRequest"]),
    ("pod writes: HTTP round trip", ["Reconciler::PatchFromAction", "Reconciler::CreateObject", "Reconciler::ApplyAction"]),
    ("planner call (gRPC)", ["Reconciler::CallPlanner", "PlannerClient"]),
    ("snapshot: pods, pod table, request assembly",
     ["Reconciler::BuildRequest", "AssembleRequest", "EncodePodTable", "PodsOwnedBy", "ListPodsFresh"]),
    ("expectations gate", ["Expectations::"]),
    ("plan applier bookkeeping", ["PlanApplier::Apply", "RunGroups", "SchedulePlan"]),
    ("rest of the reconcile (validation, snapshot destruction, metrics)", ["Reconciler::Reconcile", "ProcessNextWorkItem"]),
    ("shards and leases", ["Shard", "Lease"]),
    ("gRPC threads", ["grpc", "gpr_"]),
]


def main() -> int:
    counts = collections.Counter()
    total = 0
    stack = []

    def flush():
        nonlocal total
        if not stack:
            return
        total += 1
        chain = "\n".join(stack)
        for name, fragments in PHASES:
            if any(f in chain for f in fragments):
                counts[name] += 1
                return
        counts["other (kernel scheduling, frames not unwound)"] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            stack = []
        elif line[0] in " \t":
            stack.append(line.strip())
    flush()
    if total == 0:
        print("perf_phases: no samples with call chains on stdin", file=sys.stderr)
        return 1
    for name, n in counts.most_common():
        print(f"{100.0 * n / total:5.1f}%  {name}")
    print(f"samples: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
