#!/usr/bin/env bash
# End-to-end pre-download comparison on the embedded cluster: a CloneSet of 8 pods on 4 simulated nodes whose new
# image takes 2 s to pull, in-place rollout with pre-download parallelism 2, with and without cloneset-agent.
# Usage: agent/predownload_e2e.sh [BUILD_DIR]   Prints "agents=<0|1> rollout_seconds=<s>" per run.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/build}/bin"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

addr() { grep -m1 -o "$2 [a-z:/]*[0-9.]*:[0-9]*" "$1" 2>/dev/null | awk '{print $NF}' | sed 's#^[a-z]*://##'; }
wait_for() { local n=0; until eval "$1" >/dev/null 2>&1; do n=$((n + 1)); [ $n -gt 600 ] && { echo "timeout: $1" >&2; return 1; }; sleep 0.1; done; }

run_once() {
  local agents="$1" d; d="$(mktemp -d /tmp/a1-e2e-XXXXXX)"
  pids=()
  "$BIN/cloneset-devcluster" --listen=127.0.0.1:0 --data-dir="$d/dc" --kubeconfig="$d/kc" --nodes=4 \
    --image-pull-time='app:v2=2s' >"$d/dc.log" 2>&1 & pids+=($!)
  local kc=(kubectl --kubeconfig "$d/kc")
  wait_for "${kc[*]} get --raw /healthz"
  "${kc[@]}" apply -f "$ROOT/charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml" >/dev/null
  for c in imagepulljobs nodeimages; do "${kc[@]}" apply -f "$ROOT/charts/cloneset/crds/$c.apps.kruise.io.yaml" >/dev/null; done
  # (kubectl create namespace sends protobuf, which the embedded cluster does not speak; apply sends JSON)
  printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: cloneset-system}\n' | "${kc[@]}" apply -f - >/dev/null
  "$BIN/cloneset-planner" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 >"$d/planner.log" 2>&1 & pids+=($!)
  wait_for "[ -n \"\$(addr $d/planner.log 'listening on')\" ]"
  "$BIN/cloneset-executor" --kubeconfig="$d/kc" --planner_address="ipv4:$(addr "$d/planner.log" 'listening on')" \
    --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0 >"$d/executor.log" 2>&1 & pids+=($!)
  if [ "$agents" = 1 ]; then
    for i in 0 1 2 3; do
      wait_for "test -S $d/dc/nodes/devcluster-node-$i/cri.sock"
      "$BIN/cloneset-agent" --node_name="devcluster-node-$i" --cri_socket="unix://$d/dc/nodes/devcluster-node-$i/cri.sock" \
        --kubeconfig="$d/kc" --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0 >"$d/agent-$i.log" 2>&1 & pids+=($!)
    done
  fi
  "${kc[@]}" apply -f - >/dev/null <<YAML
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  namespace: default
  annotations:
    apps.kruise.io/image-predownload-parallelism: "2"
spec:
  replicas: 8
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "registry.local/app:v1"}]
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 2}
YAML
  wait_for "[ \"\$(${kc[*]} get clonesets.apps.kruise.io web -o jsonpath='{.status.readyReplicas}')\" = 8 ]"
  local old_rev; old_rev="$("${kc[@]}" get clonesets.apps.kruise.io web -o jsonpath='{.status.updateRevision}')"
  local start; start=$(date +%s.%N)
  "${kc[@]}" patch clonesets.apps.kruise.io web --type=merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.local/app:v2"}]}}}}' >/dev/null
  # Done = the status is about the new revision and all 8 pods are updated and ready.
  wait_for "[ \"\$(${kc[*]} get clonesets.apps.kruise.io web -o jsonpath='{.status.updateRevision}/{.status.updatedReadyReplicas}/{.status.readyReplicas}')\" != $old_rev/8/8 ] && [ \"\$(${kc[*]} get clonesets.apps.kruise.io web -o jsonpath='{.status.updatedReadyReplicas}/{.status.readyReplicas}')\" = 8/8 ]"
  local end; end=$(date +%s.%N)
  echo "agents=$agents rollout_seconds=$(echo "$end - $start" | bc)"
  "${kc[@]}" get imagepulljobs -A 2>/dev/null || true
  # After the rollout the planner deletes the jobs and the coordinator removes the NodeImages.
  if wait_for "[ -z \"\$(${kc[*]} get imagepulljobs -A -o name)\" ] && [ -z \"\$(${kc[*]} get nodeimages -o name)\" ]"; then
    echo "agents=$agents cleanup=ok after $(echo "$(date +%s.%N) - $end" | bc) s"
  else
    echo "agents=$agents cleanup=timeout"; "${kc[@]}" get imagepulljobs,nodeimages -A || true
  fi
  cleanup
  rm -rf "$d"
}

run_once 0
run_once 1
