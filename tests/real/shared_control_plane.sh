#!/usr/bin/env bash
# One real control plane shared by several e2e-real tests, one after another (docs/testing.md, "How long ./run test
# takes"): ctest starts it once (the fixture test real.control_plane_up, FIXTURES_SETUP real_control_plane) and
# stops it after the last test that needs it (real.control_plane_down, FIXTURES_CLEANUP). Each test using it
# (FIXTURES_REQUIRED real_control_plane, RESOURCE_LOCK real_control_plane: never two at once) finds it through
# CLONESET_E2E_REAL_RUN_DIR and leaves it as it found it (Stack::Start and Stack::Stop run `reset`, and so do
# tests/pyclient/pyclient_real_test.sh and tests/devcluster/claims_wait_test.sh before and after their checks).
#
#   shared_control_plane.sh up RUN_DIR     ./run up --cluster real --executors 0 --planners 0 --no-agents in RUN_DIR
#                                          (a leftover of an interrupted run there is purged first), and a guard
#                                          that runs `down` should ctest die before the cleanup test runs
#   shared_control_plane.sh down RUN_DIR   ./run down --purge, and the guard stopped
#   shared_control_plane.sh reset RUN_DIR  back to the state `up` left: no CloneSets or ImagePullJobs anywhere, no
#                                          namespace but default, kube-*, cloneset-system; in default no workloads,
#                                          pods, claims, revisions or events; no shard Leases. Waits (bounded) until
#                                          it is so; fails naming what is left.
# Needs BUILD_DIR (up), kubectl; a missing tool or an `up` that fails is a failure with its output, never a skip.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
what="${1:-}" dir="${2:-}"
[ -n "$what" ] && [ -n "$dir" ] || { echo "usage: $0 up|down|reset RUN_DIR" >&2; exit 2; }
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed (./run deps installs it)" >&2; exit 1; }
export RUN_DIR="$dir" KUBECACHEDIR="$dir/kubecache-shared"

kc() { kubectl --kubeconfig "$dir/kubeconfig" --request-timeout=30s "$@"; }

# Namespaces `up` makes or the control plane owns; every other one is a test's.
KEEP_NS='default|kube-system|kube-public|kube-node-lease|cloneset-system'

# _leftovers: one line "KIND NAMESPACE NAME DELETING FINALIZERS" per object a test left behind, "" when the cluster
# is as `up` left it; one request per kind, in one kubectl run (each run costs about a second under load).
_leftovers() {
  local out
  out=$(kc get clonesets.apps.kruise.io,imagepulljobs.apps.kruise.io,deployments,replicasets,controllerrevisions,pods,persistentvolumeclaims,leases,namespaces \
    -A -o jsonpath='{range .items[*]}{.kind}|{.metadata.namespace}|{.metadata.name}|{.metadata.deletionTimestamp}|{.metadata.finalizers}{"\n"}{end}') ||
    return 1
  awk -F'|' -v keep="^($KEEP_NS)\$" '
    { kind = $1; ns = $2; test_ns = ns != "" && ns !~ keep; left = 0 }
    kind == "CloneSet" || kind == "ImagePullJob" { left = 1 }
    kind ~ /^(Deployment|ReplicaSet|ControllerRevision|Pod|PersistentVolumeClaim)$/ && (ns == "default" || test_ns) { left = 1 }
    kind == "Lease" && ns == "cloneset-system" { left = 1 }
    kind == "Namespace" && $3 !~ keep { left = 1 }
    left { printf "%s %s %s %s %s\n", kind, (ns == "" ? "-" : ns), $3, ($4 == "" ? "-" : "deleting"), ($5 == "" ? "-" : $5) }' <<<"$out"
}

reset() {
  [ -f "$dir/kubeconfig" ] || { echo "FAIL: no shared control plane in $dir (real.control_plane_up did not run or failed)" >&2; return 1; }
  local left; left=$(_leftovers) || { echo "FAIL: the shared control plane in $dir does not answer" >&2; return 1; }
  [ -n "$left" ] || return 0
  # Owners first: with the CloneSets and Deployments gone nothing recreates what is deleted next (no executor runs
  # between two tests; kube-controller-manager's ReplicaSet controller would). Pods are removed at once (kwok would
  # take its stage's time), claims after them (pvc-protection); a test namespace takes its contents with it.
  kc delete clonesets.apps.kruise.io,imagepulljobs.apps.kruise.io --all -A --wait=false >/dev/null
  kc delete -n default deployments,replicasets,controllerrevisions,persistentvolumeclaims --all --wait=false >/dev/null
  kc delete -n default pods --all --grace-period=0 --force --wait=false >/dev/null 2>&1
  kc delete -n cloneset-system leases --all --wait=false >/dev/null
  local ns; ns=$(awk '$1 == "Namespace" { printf "namespace/%s ", $3 }' <<<"$left")
  # shellcheck disable=SC2086
  [ -z "$ns" ] || kc delete $ns --wait=false >/dev/null
  local deadline=$((SECONDS + 180))
  while true; do
    left=$(_leftovers) || left="(the API server did not answer)"
    [ -n "$left" ] || break
    [ $SECONDS -lt $deadline ] || { echo "FAIL: the shared control plane still holds after 180 s:" >&2; echo "$left" >&2; return 1; }
    # A pod held by a finalizer of a test's (lifecycle hooks, a failed test) would keep its namespace forever; a pod
    # in default that is not deleting yet was made after the delete above.
    awk '$1 == "Pod" && (($4 == "deleting" && $5 != "-") || ($2 == "default" && $4 == "-")) { print $2, $3, $4 }' <<<"$left" |
      while read -r pns pname deleting; do
        if [ "$deleting" = deleting ]; then
          kc patch pod "$pname" -n "$pns" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
        else
          kc delete pod "$pname" -n "$pns" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
        fi
      done
    sleep 0.5
  done
  # Last: the events of what was deleted (the controllers write some while it goes).
  kc delete -n default events --all --wait=false >/dev/null
}

case "$what" in
  up)
    : "${BUILD_DIR:?BUILD_DIR must name the build tree}"
    export BUILD_DIR
    mkdir -p "$dir"
    "$SRC/run" down --purge >/dev/null 2>&1 || true  # what an interrupted run left
    [ ! -f "$dir/guard.pid" ] || kill "$(cat "$dir/guard.pid")" 2>/dev/null || true
    t0=$SECONDS
    "$SRC/run" up --cluster real --executors 0 --planners 0 --no-agents >"$dir/up.out" 2>&1 ||
      { cat "$dir/up.out"; "$SRC/run" down --purge >/dev/null 2>&1 || true
        echo "FAIL: ./run up --cluster real (the shared control plane of the e2e-real tests)" >&2; exit 1; }
    echo "timing: up $((SECONDS - t0)) s"
    # ctest is this script's parent: should it die (interrupted, killed) before real.control_plane_down runs, the
    # guard takes the control plane down. It outlives this script in a session of its own.
    setsid sh -c 'trap "" HUP INT; while kill -0 "$0" 2>/dev/null; do sleep 1; done; RUN_DIR="$1" BUILD_DIR="$2" "$3/run" down --purge' \
      "$PPID" "$dir" "$BUILD_DIR" "$SRC" >"$dir/guard.out" 2>&1 </dev/null &
    echo $! >"$dir/guard.pid"
    ;;
  down)
    t0=$SECONDS
    rc=0
    "$SRC/run" down --purge || rc=$?
    [ ! -f "$dir/guard.pid" ] || { kill "$(cat "$dir/guard.pid")" 2>/dev/null || true; rm -f "$dir/guard.pid"; }
    rm -rf "$dir/kubecache-shared" "$dir/guard.out" "$dir/up.out"
    echo "timing: down $((SECONDS - t0)) s"
    exit "$rc"
    ;;
  reset)
    t0=$SECONDS
    reset
    echo "timing: reset $((SECONDS - t0)) s"
    ;;
  *) echo "usage: $0 up|down|reset RUN_DIR" >&2; exit 2 ;;
esac
