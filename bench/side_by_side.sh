#!/usr/bin/env bash
# Ours and upstream kruise-manager side by side at scale on the real control plane (`./run up --cluster real`:
# kube-apiserver 1.34, etcd, kwok nodes of 110 pods), one after the other in the same run of the machine, each on a
# fresh control plane with the same workload: C CloneSets of P pods each (in-place updates, maxUnavailable 20 %).
# For each controller:
#   sync        the CloneSets exist, the controller starts: time until every CloneSet has all its pods Ready and its
#               status observed (the first start of a controller over a namespace full of CloneSets)
#   idle        then IDLE seconds with nothing changing: the controller's CPU seconds, its API requests per second
#               (its own rest_client_requests_total, the controller-runtime name both export) and its RSS
#   roll        an image change on R % of the CloneSets: time until they are all updated and Ready
#   restart     the controller killed and started again: time until it has reconciled every CloneSet once
#               (controller_runtime_reconcile_total), and the requests it made meanwhile
#   peak RSS    over the whole run (VmHWM)
# Ours is the executor and the planner (their CPU and memory added); upstream is kruise-manager v1.8.0 built from
# its module (tools/go/kruise), webhooks off, its default client limits, leader election on as its chart sets it
# (bench/lib_real.sh start_kruise_manager).
#
# Usage: bench/side_by_side.sh [--clonesets C=100] [--pods P=100] [--idle SECONDS=300] [--roll-percent R=10]
#                               [--controllers "ours kruise"] [--timeout SECONDS=3600]
# Prints one table with a column per controller, then the machine. Exits 0 when it measured every controller,
# 1 otherwise; stops every control plane it started (KEEP_RUN_DIR=1 keeps their run directories).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLONESETS=100
PODS=100
IDLE=300
ROLL_PERCENT=10
CONTROLLERS="ours kruise"
TIMEOUT=3600
while [ $# -gt 0 ]; do
  case "$1" in
    --clonesets) CLONESETS="${2:-}"; shift 2 ;;
    --pods) PODS="${2:-}"; shift 2 ;;
    --idle) IDLE="${2:-}"; shift 2 ;;
    --roll-percent) ROLL_PERCENT="${2:-}"; shift 2 ;;
    --controllers) CONTROLLERS="${2:-}"; shift 2 ;;
    --timeout) TIMEOUT="${2:-}"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "side_by_side: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
for v in CLONESETS PODS IDLE ROLL_PERCENT TIMEOUT; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "side_by_side: --${v,,} must be a positive number, got '${!v}'" >&2; exit 2; }
done
for c in $CONTROLLERS; do
  [ "$c" = ours ] || [ "$c" = kruise ] || { echo "side_by_side: --controllers takes ours and kruise, got '$c'" >&2; exit 2; }
done
for t in kubectl curl jq bc; do
  command -v "$t" >/dev/null || { echo "side_by_side: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
export BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
# shellcheck source=bench/lib_stack.sh
source "$ROOT/bench/lib_stack.sh"
# shellcheck source=bench/lib_real.sh
source "$ROOT/bench/lib_real.sh"

RESULTS="$(mktemp)"
RUN_DIR=""
KRUISE_PID=""
# Each controller's control plane is stopped before the next starts; the trap stops the one running at exit.
finish() {
  local rc=$?
  [ -z "$RUN_DIR" ] || stop_benchmark_stack_quiet
  rm -f "$RESULTS"
  exit "$rc"
}
# stop_benchmark_stack_quiet: stop_benchmark_stack without its exit (bench/lib_real.sh), for one control plane.
stop_benchmark_stack_quiet() { (stop_benchmark_stack) || true; RUN_DIR=""; KRUISE_PID=""; }
trap finish EXIT

NS=scale
TOTAL=$((CLONESETS * PODS))
ROLL=$(( (CLONESETS * ROLL_PERCENT + 99) / 100 ))

manifests() {  # manifests IMAGE [FIRST LAST]: the CloneSets cs-FIRST..cs-LAST (default all) with IMAGE
  local image="$1" first="${2:-1}" last="${3:-$CLONESETS}" i
  for i in $(seq "$first" "$last"); do
    cat <<YAML
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: cs-$i, namespace: $NS}
spec:
  replicas: $PODS
  selector: {matchLabels: {app: cs-$i}}
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 20%}
  template:
    metadata: {labels: {app: cs-$i}}
    spec:
      containers: [{name: main, image: "$image"}]
---
YAML
  done
}

# settled IMAGE [FIRST LAST]: every CloneSet in the range (default all) has all its pods updated and Ready, status observed.
settled() {
  local image="$1" first="${2:-1}" last="${3:-$CLONESETS}"
  kubectl get clonesets.apps.kruise.io -n "$NS" -o json | jq -e --argjson f "$first" --argjson l "$last" \
    --argjson n "$PODS" --arg image "$image" '
    [.items[] | select((.metadata.name | ltrimstr("cs-") | tonumber) as $i | $i >= $f and $i <= $l)
      | select(.status.observedGeneration == .metadata.generation and .status.readyReplicas == $n
               and .status.updatedReadyReplicas == $n and .status.replicas == $n
               and .spec.template.spec.containers[0].image == $image)] | length == ($l - $f + 1)' >/dev/null
}

wait_settled() {  # wait_settled WHAT ARGS...: waits (TIMEOUT) for settled ARGS, printing the seconds it took
  local what="$1" t0 deadline; shift
  t0=$(date +%s.%N); deadline=$((SECONDS + TIMEOUT))
  until settled "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "side_by_side: $CONTROLLER: $what not done in $TIMEOUT s" >&2; return 1; }
    sleep 2
  done
  echo "$(date +%s.%N) - $t0" | bc
}

# The controller's processes ("pid pid"), its metrics address and (re)start.
start_controller() {
  if [ "$CONTROLLER" = kruise ]; then
    # As Kruise's chart runs it: holding its Lease (ours always holds its shard Lease).
    KRUISE_LEADER_ELECTION=1 start_kruise_manager
    PIDS_NOW="$KRUISE_PID"; METRICS="$KRUISE_METRICS"
  else
    "$ROOT/run" up --cluster real --nodes "$NODES" --no-agents >>"$RUN_DIR/up.out" 2>&1 ||
      { tail -n 20 "$RUN_DIR/up.out" >&2; return 1; }
    PIDS_NOW="$(cat "$RUN_DIR/executor-0.pid") $(cat "$RUN_DIR/planner-0.pid")"
    METRICS="$(wait_line "$RUN_DIR/executor-0.log" "metrics on")"
  fi
}
stop_controller() {
  local pid
  if [ "$CONTROLLER" = kruise ]; then
    kill "$KRUISE_PID" 2>/dev/null || true; wait "$KRUISE_PID" 2>/dev/null || true; KRUISE_PID=""
  else
    pid=$(cat "$RUN_DIR/executor-0.pid"); kill "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
}
cpu_total() { local p s=0; for p in $PIDS_NOW; do s=$(echo "$s + $(cpu_s "$p")" | bc); done; echo "$s"; }
mib_total() { local p s=0; for p in $PIDS_NOW; do s=$((s + $("$1" "$p"))); done; echo "$s"; }
# metric_sum NAME [FILTER]: the sum of NAME's samples (matching the awk regex FILTER) in the controller's /metrics.
metric_sum() {
  curl -sf "http://$METRICS/metrics" | awk -v m="$1" -v f="${2:-.}" '
    index($0, m "{") == 1 && $0 ~ f { s += $NF } END { printf "%d\n", s }'
}
RECONCILES='controller="(cloneset|cloneset-controller)"'
# requests_by_method: "METHOD count" per method of the controller's rest_client_requests_total.
requests_by_method() {
  curl -sf "http://$METRICS/metrics" | awk 'index($0, "rest_client_requests_total{") == 1 {
    if (match($0, /method="[A-Z]+"/)) m[substr($0, RSTART + 8, RLENGTH - 9)] += $NF }
    END { for (k in m) printf "%s %d\n", k, m[k] }' | sort
}

measure() {
  CONTROLLER="$1"
  RUN_DIR="$(mktemp -d /tmp/side-by-side-XXXXXX)"; export RUN_DIR
  # kwok nodes take 110 pods each: room for every pod with 5 % to spare, and one node more. `./run up --cluster
  # real` makes at most 100 nodes, i.e. about 10 400 pods.
  NODES=$(( (TOTAL * 105 / 100 + 109) / 110 + 1 ))
  [ "$NODES" -le 100 ] || { echo "side_by_side: $TOTAL pods need $NODES kwok nodes, more than the 100 ./run up makes" >&2; return 1; }
  echo "side_by_side: $CONTROLLER: control plane with $NODES kwok nodes (run dir $RUN_DIR)" >&2
  "$ROOT/run" up --cluster real --nodes "$NODES" --executors 0 --planners 0 --no-agents >"$RUN_DIR/up.out" 2>&1 ||
    { tail -n 20 "$RUN_DIR/up.out" >&2; echo "side_by_side: ./run up --cluster real failed" >&2; return 1; }
  export KUBECONFIG; KUBECONFIG="$(cat "$RUN_DIR/kubeconfig.path")"
  export KUBECACHEDIR="$RUN_DIR/kubecache"
  [ "$CONTROLLER" = ours ] || kruise_crd_v1alpha1_only
  kubectl create namespace "$NS" >/dev/null
  manifests registry.local/app:v1 | kubectl apply -f - >/dev/null

  echo "side_by_side: $CONTROLLER: starting with $CLONESETS CloneSets of $PODS pods in place" >&2
  local t0 sync idle_cpu0 req0 idle_cpu req_rate rss roll restart_s restart_req rec0 deadline
  t0=$(date +%s.%N)
  start_controller
  wait_settled "the first sync" registry.local/app:v1 >/dev/null
  sync=$(echo "$(date +%s.%N) - $t0" | bc)  # from the controller's start, its own start-up included

  echo "side_by_side: $CONTROLLER: synced in ${sync} s; idle for $IDLE s" >&2
  idle_cpu0=$(cpu_total); req0=$(metric_sum rest_client_requests_total)
  local methods0; methods0=$(requests_by_method)
  sleep "$IDLE"
  idle_cpu=$(echo "$(cpu_total) - $idle_cpu0" | bc)
  # What the idle requests were, by method (a Lease renewal is a PUT, an event a POST).
  echo "side_by_side: $CONTROLLER: requests in the idle window by method:" \
    "$(awk 'NR == FNR { a[$1] = $2; next } { printf "%s%s %d", sep, $1, $2 - a[$1]; sep = ", " }' \
      <(echo "$methods0") <(requests_by_method))" >&2
  req_rate=$(echo "scale=2; ($(metric_sum rest_client_requests_total) - $req0) / $IDLE" | bc)
  rss=$(mib_total rss_mib)

  echo "side_by_side: $CONTROLLER: rolling $ROLL CloneSets" >&2
  manifests registry.local/app:v2 1 "$ROLL" | kubectl apply -f - >/dev/null
  roll=$(wait_settled "the roll of $ROLL CloneSets" registry.local/app:v2 1 "$ROLL")
  local peak; peak=$(mib_total hwm_mib)

  echo "side_by_side: $CONTROLLER: restart" >&2
  stop_controller
  t0=$(date +%s.%N)
  start_controller
  deadline=$((SECONDS + TIMEOUT))
  until [ "$(metric_sum controller_runtime_reconcile_total "$RECONCILES")" -ge "$CLONESETS" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "side_by_side: $CONTROLLER: no reconcile of every CloneSet after restart" >&2; return 1; }
    sleep 0.5
  done
  restart_s=$(echo "$(date +%s.%N) - $t0" | bc)
  restart_req=$(metric_sum rest_client_requests_total)
  settled registry.local/app:v1 $((ROLL + 1)) "$CLONESETS" || { echo "side_by_side: $CONTROLLER: unsettled after restart" >&2; return 1; }

  printf '%s\t%.1f s\t%.2f s\t%.2f/s\t%s MiB\t%.1f s\t%.1f s\t%s\t%s MiB\n' "$CONTROLLER" "$sync" "$idle_cpu" "$req_rate" \
    "$rss" "$roll" "$restart_s" "$restart_req" "$peak" >>"$RESULTS"
  stop_benchmark_stack_quiet
}

for c in $CONTROLLERS; do measure "$c"; done

echo "$CLONESETS CloneSets x $PODS pods ($TOTAL pods), real control plane with kwok nodes; idle $IDLE s; roll $ROLL CloneSets"
awk -F'\t' '
  { for (i = 1; i <= NF; i++) v[NR, i] = $i; n = NR }
  END {
    split("controller|start to all CloneSets synced|CPU over the idle window|API requests per second at idle|RSS at idle|roll of the CloneSets|restart to every CloneSet reconciled|requests during that restart|peak RSS", name, "|")
    h = "| measure"; s = "|---"; for (j = 1; j <= n; j++) { h = h " | " v[j, 1]; s = s "|---" }
    print h " |"; print s "|"
    for (i = 2; i <= 9; i++) { r = "| " name[i]; for (j = 1; j <= n; j++) r = r " | " v[j, i]; print r " |" }
  }' "$RESULTS"
echo "machine: $(machine); build $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
