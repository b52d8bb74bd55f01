#!/usr/bin/env python3
"""The CPU of a Go server's profile by part of the server: kube-apiserver's or etcd's.

Usage: bench/go_profile_parts.py PROFILE.pprof

Reads the profile's samples with `go tool pprof -traces` and gives each sample to the first part, in the order
below, that has a frame on its stack: a sample inside the managed-fields tracker of a PATCH goes to managedFields
even though the HTTP handler chain, validation or the storage update are on the same stack. Cumulative pprof tops
count a sample once per frame, so wrappers (the handler chain's filters) look as if they cost everything below
them; this split counts every sample once, and the parts add up to the profile's total. Prints one line per part
(share, CPU seconds, part) with the total first. Exit 2 on bad arguments, 1 when pprof cannot read the profile.
"""
import re
import subprocess
import sys
from collections import Counter

# (part, regular expression over the stack's frames). Order matters: the first part that matches takes the sample.
PARTS = [
    ("GC (background mark workers)", r"runtime\.gcBgMarkWorker"),
    ("managedFields tracking (server-side apply bookkeeping on every write)", r"managedfields"),
    ("audit log", r"k8s\.io/apiserver/pkg/audit\.|plugin/pkg/audit|processAuditEvent"),
    ("admission", r"/admission"),
    ("validation", r"[Vv]alidat"),
    ("applying the patch (strategic merge, JSON merge)", r"strategicpatch|jsonpatch|applyPatch"),
    ("watch: encoding and sending events to watchers", r"serveWatch|WatchServer"),
    ("watch cache and event dispatch", r"Cacher\)\.(dispatch|process|startDispatching)|cacheWatcher|watchCache"
                                       r"|dispatchEvent|reflector"),
    # etcd's own parts (an etcd profile has none of the above but the gRPC server, so they come before the API server's storage client).
    ("etcd: raft and the write-ahead log", r"go\.etcd\.io/raft|etcdserver/api/rafthttp|server/v3/storage/wal"
                                           r"|/wal\."),
    ("etcd: MVCC store and bbolt", r"server/v3/storage/mvcc|go\.etcd\.io/bbolt|storage/backend"),
    ("etcd: watch streams", r"server/v3/etcdserver/api/v3rpc\.\(\*watchServer|watchStream"),
    ("etcd: gRPC server (KV requests)", r"server/v3/etcdserver"),
    ("storage and gRPC: etcd client, storage codec, transactions", r"go\.etcd\.io/etcd/client|google\.golang\.org/grpc"
                                                          r"|storage/etcd3|GuaranteedUpdate"),
    ("TLS", r"crypto/tls|crypto/"),
    ("request and response encoding (JSON, protobuf)", r"serializer/|encoding/json|protobuf"),
    ("HTTP server and handler chain (authn, authz, priority and fairness, metrics, tracing)",
     r"net/http|golang\.org/x/net/http2|endpoints/filters|server/filters|flowcontrol"),
    ("Go runtime otherwise (scheduler, timers, syscalls)", r"runtime\."),
]

_VALUE = re.compile(r"^([0-9.]+)(ns|us|ms|s)$")
_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(token):
    m = _VALUE.match(token)
    return float(m.group(1)) * _SCALE[m.group(2)] if m else None


def samples(traces_text):
    """(seconds, frames) per stack of `go tool pprof -traces` output."""
    for block in traces_text.split("-----------+-"):
        value, frames = None, []
        for line in block.splitlines():
            parts = line.split()
            if not parts:
                continue
            if value is None:
                v = seconds(parts[0])
                if v is not None and len(parts) >= 2:
                    value = v
                    frames.append(parts[1])
            else:
                frames.append(parts[0])
        if value is not None:
            yield value, frames


def split(traces_text):
    total, by_part = 0.0, Counter()
    for value, frames in samples(traces_text):
        total += value
        stack = "\n".join(frames)
        part = next((name for name, rx in PARTS if re.search(rx, stack)), "other")
        by_part[part] += value
    return total, by_part


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    run = subprocess.run(["go", "tool", "pprof", "-traces", argv[1]], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"go_profile_parts: go tool pprof cannot read {argv[1]}: {run.stderr.strip()}", file=sys.stderr)
        return 1
    total, by_part = split(run.stdout)
    print(f"CPU in the profile: {total:.2f} s")
    for name in [n for n, _ in PARTS] + ["other"]:
        if by_part[name]:
            print(f"{by_part[name] / total * 100:5.1f}%  {by_part[name]:7.2f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
