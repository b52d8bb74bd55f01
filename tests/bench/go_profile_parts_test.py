#!/usr/bin/env python3
"""bench/go_profile_parts.py's split of `go tool pprof -traces` output: each sample once, to the first part on its
stack, units read right, the parts adding up to the total. No Go toolchain needed: the traces text is made here."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("go_profile_parts", ROOT / "bench" / "go_profile_parts.py")
parts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(parts)

TRACES = """File: kube-apiserver
Type: cpu
-----------+-------------------------------------------------------
      20ms   runtime.memmove
             k8s.io/apimachinery/pkg/util/managedfields/internal.(*FieldManager).Update
             k8s.io/apiserver/pkg/endpoints/handlers.(*patcher).patchResource
             net/http.HandlerFunc.ServeHTTP
-----------+-------------------------------------------------------
      10ms   runtime.scanobject
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
     500us   crypto/tls.(*Conn).Read
             net/http.(*conn).serve
-----------+-------------------------------------------------------
       1s    k8s.io/apiserver/pkg/storage/etcd3.(*store).GuaranteedUpdate
             net/http.HandlerFunc.ServeHTTP
-----------+-------------------------------------------------------
      30ms   somewhere.unknown
-----------+-------------------------------------------------------
"""


def main():
    total, by_part = parts.split(TRACES)
    failures = []

    def expect(name, want):
        got = round(by_part.get(name, 0.0), 6)
        if got != want:
            failures.append(f"{name}: got {got}, want {want}")

    if round(total, 6) != 1.0605:
        failures.append(f"total: got {total}, want 1.0605")
    expect(parts.PARTS[1][0], 0.02)  # managedFields, though the handler chain is on the stack too
    expect(parts.PARTS[0][0], 0.01)  # GC workers
    expect("TLS", 0.0005)
    expect("storage and gRPC: etcd client, storage codec, transactions", 1.0)
    expect("other", 0.03)
    if round(sum(by_part.values()), 6) != round(total, 6):
        failures.append("the parts do not add up to the total")
    if abs(parts.seconds("15ns") - 15e-9) > 1e-15 or parts.seconds("x") is not None:
        failures.append("seconds() misreads units")
    for f in failures:
        print("go_profile_parts:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
