#!/usr/bin/env bash
# Claims that wait, with kubectl, on either backend (the same assertions, so the embedded cluster is held to what
# the real control plane does):
#  - a claim of a class that nothing provisions (kubernetes.io/no-provisioner, Immediate) stays Pending, and the pod
#    mounting it stays Pending with no node and kube-scheduler's FailedScheduling event "... pod has unbound
#    immediate PersistentVolumeClaims ...";
#  - a claim naming no class gets the cluster's default class ("standard" on both backends), is Bound, and the pod
#    mounting it runs;
#  - on real: kube-scheduler retries such a pod without any cluster event, and schedules it within seconds of its
#    claim being Bound (the pod would otherwise wait up to 5 minutes after a missed event).
# Usage: claims_wait_test.sh embedded DEVCLUSTER_BIN     (starts that cloneset-devcluster on 127.0.0.1 port 0)
#        claims_wait_test.sh real REPO_ROOT              (with CLONESET_E2E_REAL_RUN_DIR set, the shared control
#                                                         plane there (ctest's fixture real_control_plane), reset to
#                                                         what `./run up` left before and after, as the Stack suites
#                                                         do; else `./run up --cluster real --nodes 1 --executors 0
#                                                         --planners 0 --no-agents` in a private RUN_DIR; BUILD_DIR
#                                                         names the build tree)
# What it makes: a namespace (its claims and pods), a StorageClass and, on real, a PersistentVolume; it deletes the
# cluster-scoped two at the end even when it fails, so a shared control plane keeps none of them.
set -euo pipefail
BACKEND="${1:?usage: claims_wait_test.sh embedded|real DEVCLUSTER_BIN|REPO_ROOT}"
ARG="${2:?usage: claims_wait_test.sh embedded|real DEVCLUSTER_BIN|REPO_ROOT}"
for t in kubectl curl; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
TMP="$(mktemp -d "${TMPDIR:-/tmp}/claims-wait.XXXXXX")"
SERVER_PID=""
NS="claims-$RANDOM"
CLASS="$NS-none"
SHARED=""
[ "$BACKEND" != real ] || SHARED="${CLONESET_E2E_REAL_RUN_DIR:-}"
reset_shared() { "$ARG/tests/real/shared_control_plane.sh" reset "$SHARED"; }

. "$(dirname "${BASH_SOURCE[0]}")/../support/poll.sh"  # fail, poll
kc() { kubectl --request-timeout=10s "$@"; }
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ] && [ -n "${KUBECONFIG:-}" ]; then
    echo "--- cluster state"
    kc -n "$NS" get pods,pvc -o wide 2>&1 | head -20 || true
    kc -n "$NS" get events 2>&1 | tail -20 || true
  fi
  if [ -n "$SHARED" ]; then
    # Cluster-scoped, so the reset does not look for them: ours by name.
    kc --kubeconfig "$SHARED/kubeconfig" delete pv "$NS-stuck" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kc --kubeconfig "$SHARED/kubeconfig" delete storageclass "$CLASS" --ignore-not-found >/dev/null 2>&1 || true
    reset_shared || { echo "FAIL: the shared control plane was not reset after the test" >&2; [ "$rc" != 0 ] || rc=1; }
  elif [ "$BACKEND" = real ]; then
    "$ARG/run" down --purge >/dev/null 2>&1 || true
  elif [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

case "$BACKEND" in
  embedded)
    [ -x "$ARG" ] || fail "no cloneset-devcluster binary at '$ARG'"
    "$ARG" --listen=127.0.0.1:0 --kubeconfig="$TMP/kubeconfig" --nodes=1 --pod_start_delay=100ms \
      --pod_ready_delay=100ms >"$TMP/server.out" 2>"$TMP/server.err" &
    SERVER_PID=$!
    for _ in $(seq 1 200); do grep -q "^listening on" "$TMP/server.out" 2>/dev/null && break; sleep 0.05; done
    grep -q "^listening on" "$TMP/server.out" || { cat "$TMP/server.err" >&2; fail "cloneset-devcluster did not start"; }
    export KUBECONFIG="$TMP/kubeconfig" ;;
  real)
    if [ -n "$SHARED" ]; then
      export RUN_DIR="$SHARED" KUBECONFIG="$SHARED/kubeconfig"
      t0=$SECONDS
      reset_shared || fail "the shared control plane in $SHARED could not be reset before the test"
      echo "timing: reset $((SECONDS - t0)) s (the shared control plane)"
    else
      : "${BUILD_DIR:?BUILD_DIR must name the build tree}"
      export RUN_DIR="$TMP/run" BUILD_DIR
      "$ARG/run" up --cluster real --nodes 1 --executors 0 --planners 0 --no-agents >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "./run up --cluster real"; }
    fi
    export KUBECONFIG="$RUN_DIR/kubeconfig" ;;
  *) fail "backend must be embedded or real, got '$BACKEND'" ;;
esac
export KUBECACHEDIR="$TMP/kubecache"

default_class=$(kc get storageclass -o jsonpath='{range .items[?(@.metadata.annotations.storageclass\.kubernetes\.io/is-default-class=="true")]}{.metadata.name}{"\n"}{end}')
[ "$default_class" = standard ] || fail "want the default StorageClass 'standard', got '$default_class'"

kc create namespace "$NS" >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $CLASS}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: stuck, namespace: $NS}
spec: {storageClassName: $CLASS, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: stuck, namespace: $NS}
spec:
  containers: [{name: c, image: "busybox:1.36"}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: stuck}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ok, namespace: $NS}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: ok, namespace: $NS}
spec:
  containers: [{name: c, image: "busybox:1.36"}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: ok}}]
YAML
# (the class goes with the namespace at the end; a leftover in a private cluster is harmless)

phase() { kc -n "$NS" get "$1" "$2" -o jsonpath='{.status.phase}'; }
is_phase() { [ "$(phase "$1" "$2")" = "$3" ]; }
poll 90 "claim 'ok' (default class) Bound" is_phase pvc ok Bound
poll 90 "pod 'ok' Running" is_phase pod ok Running
[ "$(kc -n "$NS" get pvc ok -o jsonpath='{.spec.storageClassName}')" = standard ] ||
  fail "claim 'ok' did not get the default class: $(kc -n "$NS" get pvc ok -o yaml)"

failed_scheduling() {
  kc -n "$NS" get events --field-selector involvedObject.name=stuck,reason=FailedScheduling \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -F "pod has unbound immediate PersistentVolumeClaims"
}
poll 60 "a FailedScheduling event for pod 'stuck'" failed_scheduling
echo "FailedScheduling: $(failed_scheduling | head -1)"
sleep 5  # however long it waits, nothing binds the claim and the pod is not scheduled
is_phase pvc stuck Pending || fail "claim 'stuck' is $(phase pvc stuck), want Pending"
is_phase pod stuck Pending || fail "pod 'stuck' is $(phase pod stuck), want Pending"
node=$(kc -n "$NS" get pod stuck -o jsonpath='{.spec.nodeName}')
[ -z "$node" ] || fail "pod 'stuck' was scheduled to '$node' although its claim is not bound"
reason=$(kc -n "$NS" get pod stuck -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')
[ "$reason" = Unschedulable ] || fail "pod 'stuck' PodScheduled reason '$reason', want Unschedulable"


# Real only: kube-scheduler's retries of a pod that waits for its claim (tools/run.d/real_cluster.sh,
# _REAL_SCHEDULER_CONFIG). The embedded cluster has no unschedulable pool to leave (it re-checks a waiting pod on
# every pass) and its binder provisions claims itself instead of binding volumes created beforehand, so neither
# check has an embedded counterpart.
if [ "$BACKEND" = real ]; then
  # 1. Retried with no cluster event: kube-scheduler logs each failed attempt at -v=2. With its default
  #    --pod-max-in-unschedulable-pods-duration (5 min) the second attempt comes after 5 minutes; with 5 s, within
  #    about 35 s (the pool is flushed every 30 s).
  attempts() { grep -c "Unable to schedule pod; no fit; waiting\" pod=\"$NS/stuck\"" "$RUN_DIR/kube-scheduler.log" || true; }
  first=$(attempts)
  [ "$first" -ge 1 ] || fail "kube-scheduler logged no attempt for $NS/stuck (is it running with -v=2?)"
  retried() { [ "$(attempts)" -gt "$first" ]; }
  start=$SECONDS
  poll 90 "kube-scheduler to retry the unschedulable pod $NS/stuck without any cluster event" retried
  echo "retried without an event after $((SECONDS - start)) s (attempts before: $first)"
  # 2. The claim gets a volume (the controller manager's binder binds it to this pre-bound PV): the pod is scheduled
  #    a few seconds after the claim is Bound. The bound is generous for the loaded machine; a missed event costs at
  #    most the 35 s of check 1.
  kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $NS-stuck}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $CLASS
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: /tmp/$NS-stuck}
  claimRef: {namespace: $NS, name: stuck}
YAML
  poll 120 "claim 'stuck' Bound to the volume created for it" is_phase pvc stuck Bound
  bound=$SECONDS
  scheduled() { [ -n "$(kc -n "$NS" get pod stuck -o jsonpath='{.spec.nodeName}')" ]; }
  poll 60 "pod 'stuck' scheduled after its claim was Bound" scheduled
  echo "scheduled $((SECONDS - bound)) s after its claim was Bound"
  kc delete pv "$NS-stuck" --wait=false >/dev/null
fi

kc delete namespace "$NS" --wait=false >/dev/null
kc delete storageclass "$CLASS" >/dev/null
echo "PASS ($BACKEND)"
