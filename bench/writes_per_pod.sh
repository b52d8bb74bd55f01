#!/usr/bin/env bash
# API writes per pod made by the executor. Scenarios (semantics §11; upstream 4, 4, 7; targets 3, 3, 5):
#   scale-up of N pods with one PVC template, in-place image update of N pods, ReCreate update of N pods with one
#   PVC. Counts POST/PUT/PATCH/DELETE on pods (incl. subresources) and PVCs; CloneSet status writes and events
#   are per CloneSet and reported separately.
# Backends (--cluster, default embedded):
#   embedded  the embedded cluster's apiserver_request_total{verb,resource,user_agent}, User-Agent cloneset-executor.
#   real      `./run up --cluster real` (kube-apiserver 1.34, kwok nodes): kube-apiserver's apiserver_request_total
#             has no client label, so the executor's writes are counted from its audit log (REAL_AUDIT_LOG=1, by
#             User-Agent, bench/lib_real.sh) and the metric's before/after difference is printed beside them for
#             every client (the scheduler's bindings, kwok's pod status, the volume controllers' claim updates).
#   --controller kruise (real only): upstream OpenKruise's kruise-manager (tools/go/kruise, webhooks off) runs the
#             same scenarios in place of our planner and executor; its writes are counted the same way.
# Usage: bench/writes_per_pod.sh [--cluster embedded|real] [--controller ours|kruise] [N]
#   (starts its own stack in a temporary run directory)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER=embedded
CONTROLLER=ours
N=10
while [ $# -gt 0 ]; do
  case "$1" in
    --cluster) CLUSTER="${2:-}"; shift 2 ;;
    --cluster=*) CLUSTER="${1#*=}"; shift ;;
    --controller) CONTROLLER="${2:-}"; shift 2 ;;
    --controller=*) CONTROLLER="${1#*=}"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) N="$1"; shift ;;
  esac
done
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "writes_per_pod: N must be a positive number, got '$N'" >&2; exit 2; }
case "$CLUSTER" in
  embedded|real) ;;
  *) echo "writes_per_pod: --cluster must be embedded or real, got '$CLUSTER'" >&2; exit 2 ;;
esac
case "$CONTROLLER" in
  ours) CLIENT=cloneset-executor ;;
  kruise) CLIENT=kruise-manager
    [ "$CLUSTER" = real ] || { echo "writes_per_pod: --controller kruise needs --cluster real" >&2; exit 2; } ;;
  *) echo "writes_per_pod: --controller must be ours or kruise, got '$CONTROLLER'" >&2; exit 2 ;;
esac
for t in kubectl curl $([ "$CLUSTER" = real ] && echo jq); do
  command -v "$t" >/dev/null || { echo "writes_per_pod: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
export RUN_DIR="$(mktemp -d /tmp/writes-bench-XXXXXX)"
export BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
KRUISE_PID=""
# shellcheck source=bench/lib_real.sh
source "$ROOT/bench/lib_real.sh"
trap stop_benchmark_stack EXIT
if [ "$CLUSTER" = real ]; then
  # 2N pods at once (the in-place CloneSet stays while the ReCreate one runs); kwok nodes take 110 pods each.
  # No agents, as on the embedded cluster (an agent reports InPlaceUpdateReady itself, which takes writes away
  # from the executor).
  ours=(--no-agents)
  [ "$CONTROLLER" = ours ] || ours+=(--executors 0 --planners 0)
  REAL_AUDIT_LOG=1 "$ROOT/run" up --cluster real --nodes $(( 2 * N / 100 + 3 )) "${ours[@]}" >"$RUN_DIR/up.out" ||
    { cat "$RUN_DIR/up.out"; echo "writes_per_pod: ./run up --cluster real failed" >&2; exit 1; }
  AUDIT_LOG="$RUN_DIR/kube-apiserver-audit.log"
  [ -f "$AUDIT_LOG" ] || { echo "writes_per_pod: kube-apiserver wrote no audit log at $AUDIT_LOG" >&2; exit 1; }
else
  "$ROOT/run" up --no-agents >"$RUN_DIR/up.out" ||
    { cat "$RUN_DIR/up.out"; echo "writes_per_pod: ./run up failed" >&2; exit 1; }
fi
KC="$(cat "$RUN_DIR/kubeconfig.path")"  # up's progress went to its log
export KUBECONFIG="$KC" KUBECACHEDIR="$RUN_DIR/kubecache"
if [ "$CONTROLLER" = kruise ]; then
  # ./run up installed our CRD (the same apps.kruise.io/v1alpha1 CloneSet schema); upstream's manager serves it.
  start_kruise_manager
fi

# writes RESOURCE_REGEX: executor writes so far on matching resources.
writes() {
  if [ "$CLUSTER" = real ]; then audit_writes | sum_counts "$CLIENT" "$1"; return; fi
  kubectl get --raw /metrics | awk -v re="$1" '
    /^apiserver_request_total\{/ && /user_agent="cloneset-executor"/ && /verb="(create|update|patch|delete|POST|PUT|PATCH|DELETE)"/ {
      match($0, /resource="[^"]*"/); r = substr($0, RSTART + 10, RLENGTH - 11)
      if (r ~ re) s += $NF }
    END { print s + 0 }'
}
pod_writes() { writes '^(pods|persistentvolumeclaims)'; }
status_writes() { writes '^clonesets'; }
event_writes() { writes '^events'; }

manifest() {  # manifest NAME STRATEGY IMAGE REPLICAS
  cat <<YAML
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: $1, namespace: default}
spec:
  replicas: $4
  selector: {matchLabels: {app: $1}}
  updateStrategy: {type: $2, maxUnavailable: "100%"}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers: [{name: main, image: "$3"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
YAML
}

wait_for() {  # wait_for NAME IMAGE: N pods Ready on IMAGE and the status caught up
  local deadline=$((SECONDS + 180))
  while [ $SECONDS -lt $deadline ]; do
    local ready
    ready="$(kubectl get pods -l app="$1" -o jsonpath='{range .items[*]}{.spec.containers[0].image}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' |
      awk -v img="$2" '$1 == img && $2 == "True" && NF == 2' | wc -l)"
    local updated
    updated="$(kubectl get clonesets.apps.kruise.io "$1" -o jsonpath='{.status.updatedReadyReplicas}')"
    if [ "$ready" = "$N" ] && [ "${updated:-0}" = "$N" ]; then sleep 3; return 0; fi
    sleep 0.5
  done
  echo "timed out waiting for $1" >&2; kubectl get pods -o wide >&2; return 1
}

# breakdown: "server verb resource code count" for the executor's writes (the embedded cluster's view), then
# "executor action result count" from the executor's own cloneset_executor_actions_total, which tells a pod
# status patch (PatchPodStatus) from a spec patch (PatchPod): the server's metric has no subresource label.
EXECUTOR_METRICS=""
[ "$CONTROLLER" = kruise ] ||
  EXECUTOR_METRICS="$(grep -m1 -oE 'metrics on [^ "]+' "$RUN_DIR/executor-0.log" | awk '{print $NF}' | sed 's#^[a-z]*://##')"
breakdown() {
  if [ "$CLUSTER" = real ]; then
    # The executor's writes (audit log) by verb, resource/subresource and code, then every client's writes on
    # pods, claims, volumes, bindings and events from apiserver_request_total.
    audit_writes | awk -v cl="$CLIENT" '$1 == cl { print "audit", $2, $3, $4, $5 }'
    audit_writes | awk -v cl="$CLIENT" '$1 != cl && $3 ~ /^(pods|persistentvolumeclaims|persistentvolumes|events)/ {
      k = "audit:" $1 " " $2 " " $3 " " $4; n[k] += $5 } END { for (k in n) print k, n[k] }'
    metric_writes | awk '$3 ~ /^(pods|persistentvolumeclaims|persistentvolumes|events|clonesets)/'
  else
  kubectl get --raw /metrics | awk '
    /^apiserver_request_total\{/ && /user_agent="cloneset-executor"/ && /verb="(create|update|patch|delete)"/ {
      match($0, /verb="[^"]*"/); v = substr($0, RSTART + 6, RLENGTH - 7)
      match($0, /resource="[^"]*"/); r = substr($0, RSTART + 10, RLENGTH - 11)
      match($0, /code="[^"]*"/); c = substr($0, RSTART + 6, RLENGTH - 7)
      print "server", v, r, c, $NF }'
  fi
  [ -n "$EXECUTOR_METRICS" ] || return 0
  curl -sf "http://$EXECUTOR_METRICS/metrics" | awk '
    /^cloneset_executor_actions_total\{/ {
      match($0, /type="[^"]*"/); t = substr($0, RSTART + 6, RLENGTH - 7)
      match($0, /result="[^"]*"/); r = substr($0, RSTART + 8, RLENGTH - 9)
      print "executor", t, r, "-", $NF }'
}
BREAKDOWN=""
measure() {  # measure LABEL COMMAND...: runs the command, prints writes per pod
  local label="$1"; shift
  local p0 s0 e0 b0; p0=$(pod_writes); s0=$(status_writes); e0=$(event_writes); b0="$(breakdown)"
  "$@"
  local p1 s1 e1 b1; p1=$(pod_writes); s1=$(status_writes); e1=$(event_writes); b1="$(breakdown)"
  awk -v l="$label" -v n="$N" -v p=$((p1 - p0)) -v s=$((s1 - s0)) -v e=$((e1 - e0)) \
    'BEGIN { printf "| %s | %d | %d | %.2f | %d | %d |\n", l, n, p, p / n, s, e }'
  BREAKDOWN+="$(awk -v l="$label" 'NR == FNR { before[$1 " " $2 " " $3 " " $4] = $5; next }
    { k = $1 " " $2 " " $3 " " $4; d = $5 - before[k]; if (d > 0) printf "| %s | %s | %s | %s | %s | %d |\n", l, $1, $2, $3, $4, d }' \
    <(echo "$b0") <(echo "$b1") | sort)"$'\n'
}

scale_up() { manifest inplace InPlaceIfPossible img:v1 "$N" | kubectl apply -f - >/dev/null; wait_for inplace img:v1; }
inplace() { manifest inplace InPlaceIfPossible img:v2 "$N" | kubectl apply -f - >/dev/null; wait_for inplace img:v2; }
recreate_setup() { manifest recreate ReCreate img:v1 "$N" | kubectl apply -f - >/dev/null; wait_for recreate img:v1; }
recreate() { manifest recreate ReCreate img:v2 "$N" | kubectl apply -f - >/dev/null; wait_for recreate img:v2; }

echo "backend: $CLUSTER; controller: $CLIENT; machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| scenario | pods | pod+PVC writes | writes/pod | CloneSet writes | events |"
echo "|---|---|---|---|---|---|"
measure "scale-up, 1 PVC template" scale_up
measure "in-place image update" inplace
recreate_setup
measure "ReCreate update, 1 PVC" recreate
echo
if [ "$CLUSTER" = real ]; then
  echo "Breakdown (audit: the executor's writes in kube-apiserver's audit log; audit:CLIENT: other clients' writes;"
  echo "all: apiserver_request_total of every client; executor: the executor's own action counter):"
else
  echo "Breakdown (server: verb resource code; executor: action result):"
fi
echo "| scenario | seen by | verb / action | resource / result | code | count |"
echo "|---|---|---|---|---|---|"
printf '%s' "$BREAKDOWN"
