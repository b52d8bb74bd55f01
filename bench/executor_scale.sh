#!/usr/bin/env bash
# Executor memory and startup at scale: CloneSets x pods created directly in the embedded
# cluster (bench/seed_cluster.py, no kubelet: --nodes=0), then the executor starts and lists/watches everything.
# Reports: time from process start to /readyz (caches listed and synced + a planner answering), RSS then, RSS and
# peak RSS once the first reconcile of every CloneSet is done, and the devcluster's list cost for comparison.
# Targets: RSS < 300 MB with 100 000 pods over 1 000 CloneSets; startup < 10 s.
# Usage: bench/executor_scale.sh [CLONESETS=1000] [PODS_PER=100]     (BUILD_DIR=build-xx to pick binaries)
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,7p' "$0"; exit 0 ;; esac
CLONESETS="${1:-1000}"
PODS_PER="${2:-100}"
for v in "$CLONESETS" "$PODS_PER"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "executor_scale: CLONESETS and PODS_PER must be positive numbers, got '$v'" >&2; exit 2; }
done
RUN_DIR="$(mktemp -d /tmp/executor-scale-XXXXXX)"
source "$(dirname "${BASH_SOURCE[0]}")/lib_stack.sh"
trap cleanup EXIT

start_devcluster --nodes=0 --watch_history=200000
start_planner
python3 "$ROOT/bench/seed_cluster.py" "$SERVER" "$TOKEN" --clonesets "$CLONESETS" --pods "$PODS_PER" --paused --procs 4
pods=$(curl -sf -H "Authorization: Bearer $TOKEN" "$SERVER/metrics" | awk '/^apiserver_storage_objects\{resource="pods"\}/ { print $NF }')
t0=$(date +%s.%N)
curl -sf -o /dev/null -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/pods"
list_s=$(echo "$(date +%s.%N) - $t0" | bc)

t0=$(date +%s.%N)
start_executor
until curl -sf -o /dev/null "http://$EXECUTOR_HEALTH/readyz"; do sleep 0.05; done
ready_s=$(echo "$(date +%s.%N) - $t0" | bc)
rss_ready=$(rss_mib "$EXECUTOR_PID")
# The first reconcile of every CloneSet: wait until the reconcile counter stops moving.
prev=-1
deadline=$((SECONDS + 300))
while [ $SECONDS -lt $deadline ]; do
  n=$(curl -sf "http://$EXECUTOR_METRICS/metrics" | awk '/^controller_runtime_reconcile_total\{/ { s += $NF } END { printf "%d", s }')
  [ "$n" -ge "$CLONESETS" ] && [ "$n" = "$prev" ] && break
  prev=$n
  sleep 2
done
settled_s=$(echo "$(date +%s.%N) - $t0" | bc)
echo "machine: $(machine)"
echo "| CloneSets | pods | devcluster LIST of all pods | executor start -> ready | RSS at ready | reconciles done after | RSS then | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
printf "| %d | %d | %.2f s | %.2f s | %d MiB | %.1f s (%d reconciles) | %d MiB | %d MiB |\n" "$CLONESETS" "$pods" "$list_s" \
  "$ready_s" "$rss_ready" "$settled_s" "$n" "$(rss_mib "$EXECUTOR_PID")" "$(hwm_mib "$EXECUTOR_PID")"
