# Shared by the executor benchmarks: start a devcluster/planner/executor from $BUILD_DIR/bin in $RUN_DIR, with
# plain HTTP without authentication (loopback only) so the seeding tools need no TLS. Sourced, not run.
ROOT="${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
BIN="$BUILD_DIR/bin"
TOKEN=bench-token
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${KEEP_RUN_DIR:-}" ] || rm -rf "$RUN_DIR"
}

wait_line() {  # wait_line FILE PREFIX: prints the address after "PREFIX " once it appears
  local i
  for i in $(seq 1 300); do
    local a
    a="$(grep -o "$2 [^ \"]*" "$1" 2>/dev/null | head -1 | sed "s|$2 ||; s|.*://||")"
    if [ -n "$a" ]; then echo "$a"; return 0; fi
    sleep 0.1
  done
  echo "no '$2' in $1:" >&2; tail -20 "$1" >&2; return 1
}

# DEVCLUSTER_TLS=1: serve HTTPS with the cluster's own CA (in the kubeconfig, and at $RUN_DIR/ca.crt for curl) and
# the bearer token $TOKEN (kubectl asks for a password over HTTPS without one), for measuring what TLS alone costs
# a client against the same server and objects; plain HTTP without authentication otherwise.
start_devcluster() {  # start_devcluster EXTRA_FLAGS...
  local scheme=http transport=(--insecure_http --no_auth)
  if [ "${DEVCLUSTER_TLS:-0}" = 1 ]; then scheme=https transport=(--token="$TOKEN"); fi
  "$BIN/cloneset-devcluster" --listen=127.0.0.1:0 "${transport[@]}" \
    --kubeconfig="$RUN_DIR/kubeconfig" "$@" >"$RUN_DIR/devcluster.out" 2>"$RUN_DIR/devcluster.log" &
  PIDS+=($!)
  DEVCLUSTER_PID=$!
  SERVER="$scheme://$(wait_line "$RUN_DIR/devcluster.out" "listening on")"
  export KUBECONFIG="$RUN_DIR/kubeconfig" KUBECACHEDIR="$RUN_DIR/kubecache"
  if [ "$scheme" = https ]; then
    kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d \
      >"$RUN_DIR/ca.crt"
  fi
  kubectl apply -f "$ROOT/charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml" >/dev/null
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloneset-system\n' | kubectl apply -f - >/dev/null
  until kubectl get clonesets.apps.kruise.io >/dev/null 2>&1; do sleep 0.2; done
}

start_planner() {
  "$BIN/cloneset-planner" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 >"$RUN_DIR/planner.log" 2>&1 &
  PIDS+=($!)
  PLANNER="$(wait_line "$RUN_DIR/planner.log" "listening on")"
}

start_executor() {  # start_executor EXTRA_FLAGS...; sets EXECUTOR_PID, EXECUTOR_HEALTH, EXECUTOR_METRICS
  # EXECUTOR_WRAPPER="CMD ARGS": run the executor under CMD (a profiler), as `./run up` does.
  # shellcheck disable=SC2086  # word splitting intended: a command and its arguments
  ${EXECUTOR_WRAPPER:-} "$BIN/cloneset-executor" --kubeconfig="$RUN_DIR/kubeconfig" --planner_address="ipv4:$PLANNER" \
    --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0 --identity=bench "$@" >"$RUN_DIR/executor.log" 2>&1 &
  EXECUTOR_PID=$!
  PIDS+=($EXECUTOR_PID)
  EXECUTOR_HEALTH="$(wait_line "$RUN_DIR/executor.log" "listening on")"
  EXECUTOR_METRICS="$(wait_line "$RUN_DIR/executor.log" "metrics on")"
}

rss_mib() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
hwm_mib() { awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
# cpu_s PID: CPU seconds (user + system) the process used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }

# writes_by UA: write requests (create/update/patch/delete) so far from client UA, Lease renewals excluded.
writes_by() {
  local ca=()
  [ ! -f "$RUN_DIR/ca.crt" ] || ca=(--cacert "$RUN_DIR/ca.crt")
  curl -sf "${ca[@]}" -H "Authorization: Bearer $TOKEN" "$SERVER/metrics" | awk -v ua="$1" '
    /^apiserver_request_total\{/ && index($0, "user_agent=\"" ua "\"") && !/resource="leases/ &&
    /verb="(create|update|patch|delete|deletecollection)"/ { s += $NF }
    END { printf "%d\n", s }'
}

machine() {
  echo "$(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
