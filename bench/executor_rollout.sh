#!/usr/bin/env bash
# A large in-place rollout (issue 4 Performance): N pods, maxUnavailable 100%, an instant simulated kubelet
# (start/ready/grace delays 0). Measures the rollout's wall time (image patch -> status shows N updated and Ready)
# and the executor's writes during it; then, in the same cluster with the executor stopped, the cluster's write
# rate for the same kind of write (pod PATCHes from 16 parallel keep-alive connections, curl --parallel). Ideal =
# writes / write rate; target: wall time within 2x of ideal.
# Usage: bench/executor_rollout.sh [N=1000]     (BUILD_DIR=build-xx to pick binaries; EXECUTOR_FLAGS="--apply_parallelism=1"
# to pass flags to the executor)
set -euo pipefail
N="${1:-1000}"
RUN_DIR="$(mktemp -d /tmp/executor-rollout-XXXXXX)"
source "$(dirname "${BASH_SOURCE[0]}")/lib_stack.sh"
trap cleanup EXIT

nodes=$(( (N + 149) / 150 ))
start_devcluster --nodes="$nodes" --node_pods=200 --pod_start_delay=0s --pod_ready_delay=0s --pod_max_grace=0s \
  --watch_history=100000
start_planner
PLANNER_PID="${PIDS[-1]}"
# shellcheck disable=SC2086  # word splitting intended: a list of flags
start_executor ${EXECUTOR_FLAGS:-}

manifest() {
  cat <<YAML
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: big, namespace: default}
spec:
  replicas: $N
  selector: {matchLabels: {app: big}}
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: "100%"}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: main, image: "registry.local/big:$1"}]
YAML
}
settled() {  # settled: status caught up with the spec and every pod updated and Ready
  kubectl get clonesets.apps.kruise.io big -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.updatedReadyReplicas} {.status.readyReplicas} {.status.replicas}' |
    awk -v n="$N" '$1 == $2 && $3 == n && $4 == n && $5 == n { ok = 1 } END { exit !ok }'
}
wait_settled() {
  local deadline=$((SECONDS + 600))
  until settled; do
    [ $SECONDS -lt $deadline ] || { echo "timed out" >&2; kubectl get clonesets.apps.kruise.io big -o yaml >&2; exit 1; }
    sleep 0.1
  done
}

t0=$(date +%s.%N)
manifest v1 | kubectl apply -f - >/dev/null
wait_settled
create_s=$(echo "$(date +%s.%N) - $t0" | bc)
sleep 2
# cpu_s PID: CPU seconds (user + system) the process used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
cpu0="$(cpu_s "$DEVCLUSTER_PID") $(cpu_s "$EXECUTOR_PID") $(cpu_s "$PLANNER_PID")"
w0=$(writes_by cloneset-executor)
t0=$(date +%s.%N)
kubectl patch clonesets.apps.kruise.io big --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.local/big:v2"}]' >/dev/null
wait_settled
wall_s=$(echo "$(date +%s.%N) - $t0" | bc)
cpu1="$(cpu_s "$DEVCLUSTER_PID") $(cpu_s "$EXECUTOR_PID") $(cpu_s "$PLANNER_PID")"
sleep 1
w1=$(writes_by cloneset-executor)
writes=$((w1 - w0))
restarts=$(kubectl get pods -l app=big -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | awk '$1 == 1' | wc -l)

# The cluster's write rate, same cluster and pods, executor stopped: merge-patch a label on each pod, 4 rounds.
curl -sf "http://$EXECUTOR_METRICS/metrics" >"$RUN_DIR/executor-metrics.txt" || true
kill "$EXECUTOR_PID"; wait "$EXECUTOR_PID" 2>/dev/null || true
kubectl get pods -l app=big -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' >"$RUN_DIR/pods"
: >"$RUN_DIR/curl.cfg"
for round in 1 2 3 4; do
  while read -r pod; do
    printf 'url = "%s/api/v1/namespaces/default/pods/%s"\nrequest = "PATCH"\nheader = "Content-Type: application/merge-patch+json"\ndata = "{\\"metadata\\":{\\"labels\\":{\\"bench-round\\":\\"r%d\\"}}}"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n' \
      "$SERVER" "$pod" "$round" >>"$RUN_DIR/curl.cfg"
  done <"$RUN_DIR/pods"
done
sed -i '$d' "$RUN_DIR/curl.cfg"  # no "next" after the last URL
probe=$(grep -c '^url' "$RUN_DIR/curl.cfg")
t0=$(date +%s.%N)
curl -s --no-progress-meter --parallel --parallel-max 16 -K "$RUN_DIR/curl.cfg" >"$RUN_DIR/codes"
probe_s=$(echo "$(date +%s.%N) - $t0" | bc)
ok=$(grep -c '^200' "$RUN_DIR/codes" || true)
[ "$ok" = "$probe" ] || { echo "probe: only $ok of $probe PATCHes answered 200" >&2; sort "$RUN_DIR/codes" | uniq -c >&2; }
rate=$(echo "$probe / $probe_s" | bc -l)
ideal=$(echo "$writes / $rate" | bc -l)
echo "machine: $(machine)"
echo "| pods | create (scale-up) | rollout wall | pods restarted in place | executor writes | cluster write rate | ideal = writes / rate | wall / ideal |"
echo "|---|---|---|---|---|---|---|---|"
printf "| %d | %.1f s | %.2f s | %d | %d (%.2f/pod) | %.0f/s (%d PATCHes in %.2f s) | %.2f s | %.2fx |\n" "$N" "$create_s" \
  "$wall_s" "$restarts" "$writes" "$(echo "$writes / $N" | bc -l)" "$rate" "$probe" "$probe_s" "$ideal" \
  "$(echo "$wall_s / $ideal" | bc -l)"
# Where the machine's CPU went during the rollout (2 cores: at most 2 s of CPU per wall second for everyone).
echo "$cpu0 $cpu1" | awk -v w="$wall_s" '{ printf "rollout CPU: devcluster %.2f s, executor %.2f s, planner %.2f s (wall %.2f s)\n", $4 - $1, $5 - $2, $6 - $3, w }'
