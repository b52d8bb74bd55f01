#!/usr/bin/env bash
# A large in-place rollout: N pods, maxUnavailable 100%, an instant simulated kubelet
# (start/ready/grace delays 0). Measures the rollout's wall time (image patch -> status shows N updated and Ready)
# and the executor's writes during it; then, in the same cluster with the executor stopped, the cluster's write
# rate for the same kind of write (pod PATCHes from 16 parallel keep-alive connections, curl --parallel). Ideal =
# writes / write rate; target: wall time within 2x of ideal. Beside it, the like-for-like ideal: every write the
# cluster committed during the rollout (its resourceVersion's advance: the executor's writes plus the simulated
# kubelet's status writes and events) at the same rate.
# Backends (--cluster, default embedded):
#   embedded  a cloneset-devcluster of its own (plain HTTP on loopback, bench/lib_stack.sh); the executor's writes
#             from its apiserver_request_total{user_agent}.
#   real      `./run up --cluster real` (kube-apiserver 1.34, etcd, kwok nodes: kwok's pod stages take 200-500 ms
#             to start a pod and to restart a container, tools/go/kwok/pod-stages.yaml); the executor's writes from
#             kube-apiserver's audit log (REAL_AUDIT_LOG=1, bench/lib_real.sh), the probe over HTTPS with the admin
#             token. EXECUTOR_FLAGS does not apply (./run up starts the executor). No agents, as on the embedded
#             cluster. --controller kruise: upstream OpenKruise's kruise-manager (tools/go/kruise, webhooks off)
#             instead of our planner and executor, same workload and measurements, plus its peak RSS.
# Usage: bench/executor_rollout.sh [--cluster embedded|real] [--controller ours|kruise] [N=1000]
#   (BUILD_DIR=build-xx to pick binaries;
# EXECUTOR_FLAGS="--apply_parallelism=1" to pass flags to the embedded backend's executor; DEVCLUSTER_TLS=1 to serve
#   the embedded cluster over HTTPS (what TLS alone costs); POD_PAD_BYTES=B to make its pods B bytes larger (below);
#   PIN_EXECUTOR=1 to give the controller a CPU of its own (below); PERF_DIR=DIR to profile the rollout with perf;
#   CALLGRIND_DIR=DIR to count the executor's instructions in the rollout (below);
#   PROFILE_DIR=DIR with --cluster real: Go CPU profiles of kube-apiserver and etcd)
set -euo pipefail
CLUSTER=embedded
CONTROLLER=ours
N=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --cluster) CLUSTER="${2:-}"; shift 2 ;;
    --cluster=*) CLUSTER="${1#*=}"; shift ;;
    --controller) CONTROLLER="${2:-}"; shift 2 ;;
    --controller=*) CONTROLLER="${1#*=}"; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) N="$1"; shift ;;
  esac
done
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "executor_rollout: N must be a positive number, got '$N'" >&2; exit 2; }
case "$CONTROLLER" in
  ours) CLIENT=cloneset-executor ;;
  kruise) CLIENT=kruise-manager
    [ "$CLUSTER" = real ] || { echo "executor_rollout: --controller kruise needs --cluster real" >&2; exit 2; } ;;
  *) echo "executor_rollout: --controller must be ours or kruise, got '$CONTROLLER'" >&2; exit 2 ;;
esac
RUN_DIR="$(mktemp -d /tmp/executor-rollout-XXXXXX)"
# CALLGRIND_DIR=DIR: the executor runs under callgrind with instrumentation off, switched on for the rollout only;
# its instructions per pod (DIR/executor.out*: the rollout's profile) count the executor's work whatever else the
# machine runs, which CPU seconds do not.
if [ -n "${CALLGRIND_DIR:-}" ]; then
  command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
    { echo "executor_rollout: CALLGRIND_DIR needs valgrind (callgrind_control)" >&2; exit 1; }
  [ "$CONTROLLER" = ours ] || { echo "executor_rollout: CALLGRIND_DIR is for our executor" >&2; exit 2; }
  mkdir -p "$CALLGRIND_DIR"
  CALLGRIND_DIR="$(cd "$CALLGRIND_DIR" && pwd)"
  rm -f "$CALLGRIND_DIR"/executor.out*
  export EXECUTOR_WRAPPER="valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$CALLGRIND_DIR/executor.out"
fi
source "$(dirname "${BASH_SOURCE[0]}")/lib_stack.sh"
CURL_CFG_EXTRA=""
case "$CLUSTER" in
  embedded)
    trap cleanup EXIT
    nodes=$(( (N + 149) / 150 ))
    start_devcluster --nodes="$nodes" --node_pods=200 --pod_start_delay=0s --pod_ready_delay=0s --pod_max_grace=0s \
      --watch_history=100000
    start_planner
    PLANNER_PID="${PIDS[-1]}"
    # shellcheck disable=SC2086  # word splitting intended: a list of flags
    # --api_write_qps=0: the executor's own write limit (200/s by default, burst 400) would be the bound here,
    # not the executor or the cluster (13 s instead of 1.5 s for 1 000 pods); EXECUTOR_FLAGS can set it back.
    start_executor --api_write_qps=0 ${EXECUTOR_FLAGS:-}
    [ "${DEVCLUSTER_TLS:-0}" != 1 ] || CURL_CFG_EXTRA="cacert = \"$RUN_DIR/ca.crt\"
header = \"Authorization: Bearer $TOKEN\"
"
    SERVER_PIDS="devcluster $DEVCLUSTER_PID" API_NAME=devcluster API_PID=$DEVCLUSTER_PID ETCD_PID="" ;;
  real)
    command -v jq >/dev/null || { echo "executor_rollout: jq is not installed (./run deps installs it)" >&2; exit 1; }
    [ -z "${EXECUTOR_FLAGS:-}" ] || { echo "executor_rollout: EXECUTOR_FLAGS is for --cluster embedded" >&2; exit 2; }
    export RUN_DIR BUILD_DIR
    KRUISE_PID=""
    # shellcheck source=bench/lib_real.sh
    source "$ROOT/bench/lib_real.sh"
    trap stop_benchmark_stack EXIT
    # kwok nodes take 110 pods each.
    ours=(--no-agents)
    [ "$CONTROLLER" = ours ] || ours+=(--executors 0 --planners 0)
    export KUBECONFIG
    # up's progress goes to its log; the kubeconfig's path is in $RUN_DIR/kubeconfig.path.
    profiling=0; [ -z "${PROFILE_DIR:-}" ] || profiling=1
    REAL_AUDIT_LOG=1 REAL_PROFILING=$profiling "$ROOT/run" up --cluster real --nodes $(( N / 100 + 2 )) "${ours[@]}" \
      >"$RUN_DIR/up.out" ||
      { cat "$RUN_DIR/up.out"; echo "executor_rollout: ./run up --cluster real failed" >&2; exit 1; }
    KUBECONFIG="$(cat "$RUN_DIR/kubeconfig.path")"
    export KUBECACHEDIR="$RUN_DIR/kubecache"
    AUDIT_LOG="$RUN_DIR/kube-apiserver-audit.log"
    [ -f "$AUDIT_LOG" ] || { echo "executor_rollout: kube-apiserver wrote no audit log at $AUDIT_LOG" >&2; exit 1; }
    if [ "$CONTROLLER" = kruise ]; then
      start_kruise_manager
      EXECUTOR_PID=$KRUISE_PID PLANNER_PID="" EXECUTOR_METRICS=""
    else
      EXECUTOR_PID=$(cat "$RUN_DIR/executor-0.pid")
      PLANNER_PID=$(cat "$RUN_DIR/planner-0.pid")
      EXECUTOR_METRICS="$(wait_line "$RUN_DIR/executor-0.log" "metrics on")"
    fi
    SERVER="$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')"
    # Per URL of the probe's curl config (its "next" resets the options of the command line).
    CURL_CFG_EXTRA="cacert = \"$RUN_DIR/real/pki/ca.crt\"
header = \"Authorization: Bearer $(kubectl config view --raw -o jsonpath='{.users[0].user.token}')\"
"
    SERVER_PIDS=""
    for c in kube-apiserver etcd kwok kube-controller-manager kube-scheduler; do
      SERVER_PIDS+="$c $(cat "$RUN_DIR/$c.pid") "
    done
    API_NAME=kube-apiserver API_PID=$(cat "$RUN_DIR/kube-apiserver.pid") ETCD_PID=$(cat "$RUN_DIR/etcd.pid")
    # The executor's writes so far (audit log; leases are not logged).
    writes_by() { audit_writes | sum_counts "$1" '.'; } ;;
  *) echo "executor_rollout: --cluster must be embedded or real, got '$CLUSTER'" >&2; exit 2 ;;
esac
if [ -n "${PROFILE_DIR:-}" ]; then
  [ "$CLUSTER" = real ] || { echo "executor_rollout: PROFILE_DIR is for --cluster real (PERF_DIR profiles ours)" >&2; exit 2; }
  export PATH="$PATH:/usr/local/go/bin"  # where ./run's Go toolchain lives
  command -v go >/dev/null || { echo "executor_rollout: PROFILE_DIR needs Go for go tool pprof" >&2; exit 1; }
  mkdir -p "$PROFILE_DIR"
fi
# go_profiles TAG SECONDS: in the background, SECONDS-long CPU profiles of kube-apiserver (its /debug/pprof, as the
# admin) and etcd into PROFILE_DIR/{kube-apiserver,etcd}-TAG.pprof; their pids in GO_PROFILE_PIDS.
GO_PROFILE_PIDS=()
go_profiles() {
  local tag="$1" secs="$2" etcd_port
  etcd_port=$(sed -n 's/^ETCD_CLIENT=//p' "$RUN_DIR/real/ports")
  kubectl get --raw "/debug/pprof/profile?seconds=$secs" >"$PROFILE_DIR/kube-apiserver-$tag.pprof" &
  GO_PROFILE_PIDS+=($!)
  curl -sf "http://127.0.0.1:$etcd_port/debug/pprof/profile?seconds=$secs" -o "$PROFILE_DIR/etcd-$tag.pprof" &
  GO_PROFILE_PIDS+=($!)
}
# go_profiles_report TAG: waits for the profiles and writes PROFILE_DIR/<server>-TAG.txt: the CPU by part of the
# server (bench/go_profile_parts.py), then pprof's flat and cumulative tops (Go profiles carry their symbols).
go_profiles_report() {
  local tag="$1" server
  wait "${GO_PROFILE_PIDS[@]}" || echo "executor_rollout: a $tag profile failed" >&2
  GO_PROFILE_PIDS=()
  for server in kube-apiserver etcd; do
    { "$ROOT/bench/go_profile_parts.py" "$PROFILE_DIR/$server-$tag.pprof"
      go tool pprof -top -nodecount=45 "$PROFILE_DIR/$server-$tag.pprof"
      go tool pprof -top -cum -nodecount=70 "$PROFILE_DIR/$server-$tag.pprof"; } \
      >"$PROFILE_DIR/$server-$tag.txt" 2>&1 || echo "executor_rollout: go tool pprof failed on $server-$tag" >&2
  done
}

# POD_PAD_BYTES=B (embedded only): every pod carries B more bytes, in a field that neither the executor's decoder nor
# the simulated kubelet reads (a liveness probe's command), as kube-apiserver's pods carry managedFields: what the
# executor pays for larger objects alone, on the same server.
PAD_PROBE=""
if [ "${POD_PAD_BYTES:-0}" -gt 0 ]; then
  [ "$CLUSTER" = embedded ] || { echo "executor_rollout: POD_PAD_BYTES is for --cluster embedded" >&2; exit 2; }
  PAD_PROBE=", livenessProbe: {periodSeconds: 3600, exec: {command: [\"true\", \"$(head -c "$POD_PAD_BYTES" /dev/zero | tr '\0' x)\"]}}"
fi
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
      containers: [{name: main, image: "registry.local/big:$1"$PAD_PROBE}]
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
# cpus: "name cpu_s" for the executor, the planner and the cluster's processes.
cpus() {
  local name pid
  echo "$CLIENT $(cpu_s "$EXECUTOR_PID")"; [ -z "$PLANNER_PID" ] || echo "planner $(cpu_s "$PLANNER_PID")"
  set -- $SERVER_PIDS
  while [ $# -ge 2 ]; do echo "$1 $(cpu_s "$2")"; shift 2; done
}
# executor_counts: "reconciles planner_calls bytes_sent bytes_in_responses bytes_in_watches" of our executor so far
# (its /metrics, one scrape: controller_runtime_reconcile_total, the planner call histogram's count, the
# rest_client_*_size_bytes sums and the watch byte counter), empty for another controller.
executor_counts() {
  [ -n "$EXECUTOR_METRICS" ] || return 0
  curl -sf "http://$EXECUTOR_METRICS/metrics" | awk '/^controller_runtime_reconcile_total\{/ { r += $NF }
    /^cloneset_executor_planner_call_duration_seconds_count/ { p += $NF }
    /^rest_client_request_size_bytes_sum/ { s += $NF } /^rest_client_response_size_bytes_sum/ { b += $NF }
    /^cloneset_rest_client_watch_received_bytes_total/ { w += $NF }
    END { printf "%d %d %.0f %.0f %.0f\n", r, p, s, b, w }'
}
# cluster_rv: the cluster's resourceVersion now. It advances once per committed write, whoever wrote (the executor,
# the simulated kubelet, its events; on the real backend every component): the cluster's own count of its writes.
cluster_rv() {
  kubectl get --raw '/api/v1/namespaces/default/configmaps?limit=1' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'
}
# PIN_EXECUTOR=1: the controller gets the last CPU to itself, the planner and the cluster's processes the others
# (taskset, every thread): its CPU per pod without sharing a core, and its caches, with the control plane.
if [ "${PIN_EXECUTOR:-0}" = 1 ]; then
  command -v taskset >/dev/null || { echo "executor_rollout: PIN_EXECUTOR needs taskset (util-linux)" >&2; exit 1; }
  last_cpu=$(( $(nproc) - 1 ))
  [ "$last_cpu" -ge 1 ] || { echo "executor_rollout: PIN_EXECUTOR needs 2 CPUs or more" >&2; exit 1; }
  taskset -a -cp "$last_cpu" "$EXECUTOR_PID" >/dev/null
  set -- ${PLANNER_PID:-} $(echo "$SERVER_PIDS" | awk '{ for (i = 2; i <= NF; i += 2) print $i }')
  for pid in "$@"; do taskset -a -cp "0-$((last_cpu - 1))" "$pid" >/dev/null; done
fi
counts0="$(executor_counts)"
cpu0="$(cpus)"
w0=$(writes_by "$CLIENT")
rv0=$(cluster_rv)
# PERF_DIR=DIR: sample the controller, the planner and the embedded cluster with `perf record` (DWARF call graphs)
# during the rollout only; DIR/<process>.data and DIR/<process>.txt (perf report, children and self) afterwards,
# and DIR/cloneset-executor.phases.txt (bench/perf_phases.py: its samples by reconcile phase).
PERF_PIDS=()
if [ -n "${PERF_DIR:-}" ]; then
  command -v perf >/dev/null || { echo "executor_rollout: PERF_DIR is set but perf is not installed" >&2; exit 1; }
  mkdir -p "$PERF_DIR"
  for p in "$CLIENT:$EXECUTOR_PID" "planner:$PLANNER_PID" "devcluster:${DEVCLUSTER_PID:-}"; do
    [ -n "${p#*:}" ] || continue
    perf record -q -F 499 --call-graph dwarf,16384 -p "${p#*:}" -o "$PERF_DIR/${p%%:*}.data" 2>"$PERF_DIR/${p%%:*}.err" &
    PERF_PIDS+=($!)
  done
  sleep 1  # perf attaches before the first write
fi
[ -z "${PROFILE_DIR:-}" ] || go_profiles rollout "${PROFILE_SECONDS:-20}"
[ -z "${CALLGRIND_DIR:-}" ] || callgrind_control -i on "$EXECUTOR_PID" >/dev/null
t0=$(date +%s.%N)
kubectl patch clonesets.apps.kruise.io big --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.local/big:v2"}]' >/dev/null
wait_settled
wall_s=$(echo "$(date +%s.%N) - $t0" | bc)
cpu1="$(cpus)"
if [ -n "${CALLGRIND_DIR:-}" ]; then
  callgrind_control -d "$EXECUTOR_PID" >/dev/null
  callgrind_control -i off "$EXECUTOR_PID" >/dev/null
fi
counts1="$(executor_counts)"
if [ ${#PERF_PIDS[@]} -gt 0 ]; then
  kill -INT "${PERF_PIDS[@]}"; wait "${PERF_PIDS[@]}" || true
fi
[ -z "${PROFILE_DIR:-}" ] || go_profiles_report rollout
sleep 1
w1=$(writes_by "$CLIENT")
rv1=$(cluster_rv)
controller_hwm="$(hwm_mib "$EXECUTOR_PID") MiB peak RSS"
[ -z "$PLANNER_PID" ] || controller_hwm+="; planner $(hwm_mib "$PLANNER_PID") MiB peak RSS"
# The embedded cluster's too (its allocator and store are on the rollout's path).
[ "$CLUSTER" != embedded ] || controller_hwm+="; devcluster $(hwm_mib "$DEVCLUSTER_PID") MiB peak RSS"
writes=$((w1 - w0))
cluster_writes=$((rv1 - rv0))
restarts=$(kubectl get pods -l app=big -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | awk '$1 == 1' | wc -l)

# The cluster's write rate, same cluster and pods, executor stopped: merge-patch a label on each pod, 4 rounds.
[ -z "$EXECUTOR_METRICS" ] || curl -sf "http://$EXECUTOR_METRICS/metrics" >"$RUN_DIR/executor-metrics.txt" || true
kill "$EXECUTOR_PID"; wait "$EXECUTOR_PID" 2>/dev/null || while kill -0 "$EXECUTOR_PID" 2>/dev/null; do sleep 0.1; done
kubectl get pods -l app=big -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' >"$RUN_DIR/pods"
: >"$RUN_DIR/curl.cfg"
for round in 1 2 3 4; do
  while read -r pod; do
    printf 'url = "%s/api/v1/namespaces/default/pods/%s"\nrequest = "PATCH"\nheader = "Content-Type: application/merge-patch+json"\ndata = "{\\"metadata\\":{\\"labels\\":{\\"bench-round\\":\\"r%d\\"}}}"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n%snext\n' \
      "$SERVER" "$pod" "$round" "$CURL_CFG_EXTRA" >>"$RUN_DIR/curl.cfg"
  done <"$RUN_DIR/pods"
done
sed -i '$d' "$RUN_DIR/curl.cfg"  # no "next" after the last URL
probe=$(grep -c '^url' "$RUN_DIR/curl.cfg")
# With PERF_DIR, the embedded cluster is sampled during the probe too (DIR/devcluster-probe.*): what a plain PATCH
# costs it, beside what a rollout write does.
PROBE_PERF_PID=""
if [ -n "${PERF_DIR:-}" ] && [ -n "${DEVCLUSTER_PID:-}" ]; then
  perf record -q -F 499 --call-graph dwarf,16384 -p "$DEVCLUSTER_PID" -o "$PERF_DIR/devcluster-probe.data" \
    2>"$PERF_DIR/devcluster-probe.err" &
  PROBE_PERF_PID=$!
  sleep 1
fi
[ -z "${PROFILE_DIR:-}" ] || go_profiles probe "${PROBE_PROFILE_SECONDS:-8}"
probe_cpu0=$(cpu_s "$API_PID"); [ -z "$ETCD_PID" ] || probe_etcd0=$(cpu_s "$ETCD_PID")
t0=$(date +%s.%N)
curl -s --no-progress-meter --parallel --parallel-max 16 -K "$RUN_DIR/curl.cfg" >"$RUN_DIR/codes"
probe_s=$(echo "$(date +%s.%N) - $t0" | bc)
if [ -n "$PROBE_PERF_PID" ]; then kill -INT "$PROBE_PERF_PID"; wait "$PROBE_PERF_PID" || true; fi
probe_cpu=$(echo "$(cpu_s "$API_PID") - $probe_cpu0" | bc)
[ -z "$ETCD_PID" ] || probe_etcd=$(echo "$(cpu_s "$ETCD_PID") - $probe_etcd0" | bc)
[ -z "${PROFILE_DIR:-}" ] || go_profiles_report probe
ok=$(grep -c '^200' "$RUN_DIR/codes" || true)
[ "$ok" = "$probe" ] || { echo "probe: only $ok of $probe PATCHes answered 200" >&2; sort "$RUN_DIR/codes" | uniq -c >&2; }
rate=$(echo "$probe / $probe_s" | bc -l)
ideal=$(echo "$writes / $rate" | bc -l)
echo "backend: $CLUSTER; controller: $CLIENT ($controller_hwm); machine: $(machine)"
echo "| pods | create (scale-up) | rollout wall | pods restarted in place | executor writes | cluster write rate | ideal = writes / rate | wall / ideal |"
echo "|---|---|---|---|---|---|---|---|"
printf "| %d | %.1f s | %.2f s | %d | %d (%.2f/pod) | %.0f/s (%d PATCHes in %.2f s) | %.2f s | %.2fx |\n" "$N" "$create_s" \
  "$wall_s" "$restarts" "$writes" "$(echo "$writes / $N" | bc -l)" "$rate" "$probe" "$probe_s" "$ideal" \
  "$(echo "$wall_s / $ideal" | bc -l)"
# Where the machine's CPU went during the rollout (2 cores: at most 2 s of CPU per wall second for everyone).
awk -v w="$wall_s" 'NR == FNR { c0[$1] = $2; next } { out = out sprintf("%s%s %.2f s", sep, $1, $2 - c0[$1]); sep = ", " }
  END { printf "rollout CPU: %s (wall %.2f s)\n", out, w }' <(echo "$cpu0") <(echo "$cpu1")
# The cluster's CPU per write in the probe against the rollout's (the rollout also carries the simulated kubelet's
# restarts and status writes, and the watch events of every write): the part of wall / ideal the executor cannot
# remove.
echo "probe CPU: $API_NAME $probe_cpu s${ETCD_PID:+, etcd $probe_etcd s} for $probe PATCHes"
# The same per write, and their ratio: with the cluster CPU-bound, wall / ideal cannot go below it (docs/performance.md,
# "The executor's requests and watch stream").
awk -v w="$writes" -v p="$probe" -v pc="$probe_cpu" -v api="$API_NAME" 'NR == FNR { c0[$1] = $2; next }
  $1 == api && w > 0 && pc > 0 { r = ($2 - c0[$1]) / w; q = pc / p
    printf "%s CPU per write: rollout %.0f us per executor write, probe %.0f us per PATCH (%.2fx)\n", api, r * 1e6, q * 1e6, r / q }' \
  <(echo "$cpu0") <(echo "$cpu1")
# Like for like: the probe measures the rate of plain PATCHes, while a rollout write brings the simulated kubelet's
# writes with it; every write the cluster committed in the rollout at the probe's rate is the ideal that counts them.
awk -v cw="$cluster_writes" -v w="$writes" -v rate="$rate" -v wall="$wall_s" 'BEGIN {
  printf "like-for-like ideal (every write the cluster committed in the rollout at the probe rate): %d writes (executor %d, others %d) / %.0f/s = %.2f s; wall / like-for-like ideal %.2fx\n",
    cw, w, cw - w, rate, cw / rate, wall / (cw / rate) }'
awk -v cw="$cluster_writes" -v api="$API_NAME" 'NR == FNR { c0[$1] = $2; next }
  ($1 == api || $1 == "etcd") && cw > 0 {
    printf "%s CPU per committed write in the rollout: %.0f us\n", $1, ($2 - c0[$1]) / cw * 1e6 }' \
  <(echo "$cpu0") <(echo "$cpu1")
# How often the executor reconciled and planned during the rollout (a plan costs a snapshot of every pod).
[ -z "$counts0" ] || echo "$counts0 $counts1" | awk '{ printf "rollout reconciles: %d, planner calls: %d\n", $6 - $1, $7 - $2 }'
# What the executor's CPU per pod works through: the API bodies it sent and read per pod (HTTP and TLS framing
# not counted).
[ -z "$counts0" ] || echo "$counts0 $counts1" | awk -v n="$N" '{ s = $8 - $3; r = $9 - $4; w = $10 - $5
  printf "executor API bytes per pod: sent %.1f KiB, received %.1f KiB (responses %.1f, watch events %.1f)\n",
    s / n / 1024, (r + w) / n / 1024, r / n / 1024, w / n / 1024 }'
if [ -n "${CALLGRIND_DIR:-}" ]; then
  # The dump of the rollout: the file callgrind_control -d wrote (executor.out.1; executor.out is the exit's).
  ir=$(awk '/^summary:/ { print $2 }' "$CALLGRIND_DIR/executor.out.1" 2>/dev/null || true)
  [ -n "$ir" ] || { echo "executor_rollout: no callgrind summary in $CALLGRIND_DIR/executor.out.1" >&2; exit 1; }
  awk -v ir="$ir" -v n="$N" 'BEGIN { printf "executor instructions in the rollout: %.0f (%.2fM per pod); callgrind_annotate %s\n", ir, ir / n / 1e6, ENVIRON["CALLGRIND_DIR"] "/executor.out.1" }'
fi
if [ -n "${PERF_DIR:-}" ]; then
  for f in "$PERF_DIR"/*.data; do
    { perf report -i "$f" --no-children --percent-limit 0.5 --stdio -g none --sort symbol 2>/dev/null
      perf report -i "$f" --children --percent-limit 2 --stdio -g none --sort symbol 2>/dev/null; } |
      grep -v '^#' | cut -c1-220 >"${f%.data}.txt"
  done
  # The executor's samples by reconcile phase.
  [ "$CLIENT" != cloneset-executor ] || perf script -i "$PERF_DIR/$CLIENT.data" 2>/dev/null |
    "$ROOT/bench/perf_phases.py" >"$PERF_DIR/$CLIENT.phases.txt"
  echo "perf: $PERF_DIR/*.txt"
fi
[ -z "${PROFILE_DIR:-}" ] || echo "Go profiles (rollout, probe): $PROFILE_DIR/*.txt"
exit 0
