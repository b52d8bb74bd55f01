#!/usr/bin/env bash
# real.control_plane_reset: `shared_control_plane.sh reset` leaves the shared control plane as `./run up` left it,
# whatever a test left behind: a CloneSet, a Deployment, a pod held by a finalizer, a claim, a ControllerRevision
# and an event in default; a test namespace with a CloneSet and a pod held by a finalizer; a shard Lease. Then a
# second reset finds nothing to do. Runs on the fixture real_control_plane (CLONESET_E2E_REAL_RUN_DIR).
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${CLONESET_E2E_REAL_RUN_DIR:?CLONESET_E2E_REAL_RUN_DIR must name the RUN_DIR of the shared control plane}"
DIR="$CLONESET_E2E_REAL_RUN_DIR"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-reset-test.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
export KUBECACHEDIR="$TMP/kubecache"
kc() { kubectl --kubeconfig "$DIR/kubeconfig" --request-timeout=30s "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

pod() {  # pod NAMESPACE NAME: a pod held by a finalizer of the test's
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, finalizers: [example.com/held]}
spec:
  containers: [{name: main, image: busybox}]
EOF
}
cloneset() {  # cloneset NAMESPACE
  sed "s/^  name: .*/  name: left/; /^  namespace:/d" "$SRC/tests/data/seed000/cloneset.yaml" |
    kc apply -n "$1" -f - >/dev/null
}

kc create namespace reset-test-ns >/dev/null
until kc get serviceaccount default -n reset-test-ns >/dev/null 2>&1; do sleep 1; done
cloneset default
cloneset reset-test-ns
pod default held | kc apply -f - >/dev/null
pod reset-test-ns held | kc apply -f - >/dev/null
kc create deployment left --image=busybox -n default >/dev/null
printf 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: left}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n' |
  kc apply -n default -f - >/dev/null
printf 'apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: left-1}\nrevision: 1\ndata: {}\n' |
  kc apply -n default -f - >/dev/null
printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: cloneset-shard-0}\nspec: {holderIdentity: gone}\n' |
  kc apply -n cloneset-system -f - >/dev/null
printf 'apiVersion: v1\nkind: Event\nmetadata: {name: left-event}\ninvolvedObject: {kind: Pod, name: held, namespace: default}\nreason: Left\nmessage: left by a test\ntype: Normal\n' |
  kc apply -n default -f - >/dev/null

out=$("$SRC/tests/real/shared_control_plane.sh" reset "$DIR") || fail "reset failed: $out"
echo "$out"
for what in "clonesets.apps.kruise.io -A" "pods -n default" "pvc -n default" "deployments -n default" \
            "controllerrevisions -n default" "events -n default" "leases -n cloneset-system"; do
  # shellcheck disable=SC2086
  left=$(kc get $what -o name) || fail "kubectl get $what failed"
  [ -z "$left" ] || fail "left after reset ($what): $left"
done
! kc get namespace reset-test-ns >/dev/null 2>&1 || fail "namespace reset-test-ns still exists after reset"
for ns in default kube-system cloneset-system; do
  kc get namespace "$ns" >/dev/null || fail "reset deleted namespace $ns"
done
kc get serviceaccount default -n default >/dev/null || fail "reset deleted the default ServiceAccount"
kc get storageclass standard >/dev/null || fail "reset deleted the default StorageClass"
kc get crd clonesets.apps.kruise.io >/dev/null || fail "reset deleted the CloneSet CRD"
out=$("$SRC/tests/real/shared_control_plane.sh" reset "$DIR") || fail "second reset failed: $out"
echo "second $out"
echo "PASS"
