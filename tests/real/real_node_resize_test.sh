#!/usr/bin/env bash
# In-place resize on a real kubelet: `./run up --cluster real --nodes 1 --real-nodes 1` in a private RUN_DIR (a
# kubelet v1.34.4 on containerd + runc; tools/run.d/real_node.sh), the executor with the InPlaceWorkloadVerticalScaling
# gate. Its own run directory, as real.node_inplace: it needs an executor and a planner beside a real node.
#
# 1. A CloneSet of 2 pods on the real node (InPlaceIfPossible, maxUnavailable 1; Burstable: requests cpu 50m
#    memory 32Mi, limits cpu 100m memory 64Mi). Its cpu and memory change (requests cpu 100m, limits cpu 200m
#    memory 96Mi): per pod, what kube-apiserver's pods/resize and the kubelet do: same UID, same container ID,
#    restartCount unchanged, the container's cgroup limits changed (cpu quota, memory limit, read inside the
#    container), the status resources the new ones, no resize condition left; the pods stayed Ready throughout
#    (recorded by a watch); the CloneSet rolled out.
# 2. A cpu request the node can never fit (1000 cpus): the kubelet answers PodResizePending/Infeasible; the first
#    pod stays Updating with its old resources, the other is not touched (maxUnavailable 1), nothing is recreated;
#    the CloneSet reports condition ResizePending (Infeasible) and a Warning event PodResizeInfeasible, which
#    `clonesetctl status` shows. Rolled back, the condition goes and the CloneSet rolls out with the same pods.
# Each step prints "timing: NAME SECONDS". Needs: BUILD_DIR, kubectl, curl and the real node's packages
# (./run deps); Go (./run toolchain).
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"

for t in kubectl curl; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-real-resize.XXXXXX")"
export RUN_DIR="$TMP/run" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
WATCH_PID=""
cleanup() {
  local rc=$?
  [ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null || true
  if [ "$rc" != 0 ]; then
    echo "--- cluster state"
    kc get clonesets,pods -o wide 2>&1 | head -30 || true
    kc get pods -o yaml 2>&1 | grep -A12 -E '^    conditions:|containerStatuses:' | head -80 || true
    kc get events --sort-by=.lastTimestamp 2>&1 | tail -25 || true
    local f; for f in "$RUN_DIR"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -8 "$f"; }; done
  fi
  local t0=$SECONDS
  "$SRC/run" down --purge >"$TMP/down.log" 2>&1 || { cat "$TMP/down.log"; rc=1; echo "FAIL: ./run down --purge"; }
  echo "timing: down $((SECONDS - t0)) s"
  if [ -n "$(awk -v d="$TMP/" 'index($5, d) == 1' /proc/self/mountinfo)" ]; then
    echo "FAIL: still mounted under $TMP after ./run down"; rc=1
  fi
  if [ "$rc" = 0 ]; then rm -rf "$TMP"; else echo "kept $TMP for inspection"; fi
  exit "$rc"
}
trap cleanup EXIT

POLL_INTERVAL=1
. "$SRC/tests/support/poll.sh"  # fail, poll
kc() { kubectl --kubeconfig "$RUN_DIR/kubeconfig" --request-timeout=20s "$@"; }
step() { echo "timing: $1 $((SECONDS - STEP_START)) s"; STEP_START=$SECONDS; }

# watch_pods LABEL FILE: every change of LABEL's pods, one line each: event type, name, uid, R=<Ready>.
watch_pods() {
  local jp='{.type} {.object.metadata.name} {.object.metadata.uid} R={.object.status.conditions[?(@.type=="Ready")].status}{"\n"}'
  kc get pods -l "$1" -w --output-watch-events -o jsonpath="$jp" >"$2" 2>"$2.err" &
  WATCH_PID=$!
  poll 20 "the watch of $1 to list the pods" grep -q ADDED "$2"
}
stop_watch() { kill "$WATCH_PID" 2>/dev/null || true; wait "$WATCH_PID" 2>/dev/null || true; WATCH_PID=""; }

pods_of() { kc get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }

# pod_row NAME: "uid containerID restartCount lifecycle statusCpuLimit statusMemoryLimit pendingReason" of the pod.
pod_row() {
  kc get pod "$1" -o jsonpath='{.metadata.uid} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount} {.metadata.labels.lifecycle\.apps\.kruise\.io/state} {.status.containerStatuses[0].resources.limits.cpu} {.status.containerStatuses[0].resources.limits.memory} {.status.conditions[?(@.type=="PodResizePending")].reason}{"\n"}'
}

# cgroup_limits NAME: "cpuQuotaMicroseconds memoryLimitBytes" of the container, read inside it (cgroup v2 or v1).
cgroup_limits() {
  kc exec "$1" -c main -- sh -c '
    if [ -f /sys/fs/cgroup/cpu.max ]; then
      echo "$(cut -d" " -f1 /sys/fs/cgroup/cpu.max) $(cat /sys/fs/cgroup/memory.max)"
    else
      echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
    fi'
}

# settled CS N CPU_LIMIT: N updated, ready pods whose kubelet runs them with CPU_LIMIT, lifecycle Normal, no
# resize condition, and the CloneSet's newest revision is its current one.
settled() {
  local cs="$1" n="$2" cpu="$3" gen observed updated_ready current update rows
  read -r gen observed updated_ready current update < <(kc get cloneset "$cs" -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.updatedReadyReplicas} {.status.currentRevision} {.status.updateRevision}{"\n"}')
  [ "$observed" = "$gen" ] && [ "$updated_ready" = "$n" ] && [ "$current" = "$update" ] || return 1
  rows=$(kc get pods -l "app=$cs" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {.metadata.labels.lifecycle\.apps\.kruise\.io/state} {.status.containerStatuses[0].resources.limits.cpu} {.status.conditions[?(@.type=="PodResizePending")].status}{.status.conditions[?(@.type=="PodResizeInProgress")].status}|{"\n"}{end}')
  [ "$(grep -c . <<<"$rows")" = "$n" ] || return 1
  ! grep -qv "^True Normal $cpu |\$" <<<"$rows"
}

cloneset_rz() {  # cloneset_rz REQUESTS LIMITS
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: rz
spec:
  replicas: 2
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
  selector: {matchLabels: {app: rz}}
  template:
    metadata:
      labels: {app: rz}
    spec:
      nodeSelector: {type: real}
      tolerations: [{key: cloneset.test/real-node, operator: Exists, effect: NoSchedule}]
      dnsPolicy: Default
      terminationGracePeriodSeconds: 5
      containers:
      - name: main
        image: $REG/cloneset-test/web:v1
        resources:
          requests: $1
          limits: $2
        readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}
EOF
}

STEP_START=$SECONDS
START=$SECONDS
"$SRC/run" up --cluster real --nodes 1 --real-nodes 1 --executor-flag=--feature_gates=InPlaceWorkloadVerticalScaling=true \
  >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "./run up --cluster real --real-nodes 1"; }
NODE=real-node-0
REG=$(cat "$RUN_DIR/real/registry.addr")
[ "$(kc get node "$NODE" -o jsonpath='{.status.nodeInfo.kubeletVersion}')" = v1.34.4 ] ||
  fail "want kubelet v1.34.4 on $NODE"
grep -q -- "--feature_gates=InPlaceWorkloadVerticalScaling=true" "$RUN_DIR/executor-0.cmd" ||
  fail "the executor runs without the gate: $(cat "$RUN_DIR/executor-0.cmd")"
kc get --raw /api/v1 | grep -q '"name":"pods/resize"' || fail "kube-apiserver does not list pods/resize"
step "up"

# --- 1. cpu and memory resized in place ----------------------------------------------------------------------
cloneset_rz "{cpu: 50m, memory: 32Mi}" "{cpu: 100m, memory: 64Mi}" | kc apply -f - >/dev/null ||
  fail "kubectl apply of the CloneSet rz"
poll 180 "2 ready pods of rz" settled rz 2 100m
mapfile -t PODS < <(pods_of rz)
declare -A BEFORE
for p in "${PODS[@]}"; do
  [ "$(kc get pod "$p" -o jsonpath='{.spec.nodeName} {.status.qosClass}')" = "$NODE Burstable" ] ||
    fail "$p: not a Burstable pod on $NODE"
  BEFORE[$p]=$(pod_row "$p")
  read -r quota mem < <(cgroup_limits "$p")
  [ "$quota $mem" = "10000 67108864" ] || fail "$p: cgroup cpu quota/memory limit '$quota $mem', want '10000 67108864'"
done
step "create-2"

watch_pods app=rz "$TMP/watch-rz"
resize_start=$EPOCHREALTIME
cloneset_rz "{cpu: 100m, memory: 32Mi}" "{cpu: 200m, memory: 96Mi}" | kc apply -f - >/dev/null ||
  fail "kubectl apply of the new resources"
poll 180 "2 pods resized in place to a 200m cpu limit" settled rz 2 200m
stop_watch
echo "resize of 2 pods (maxUnavailable 1): $(awk -v a="$resize_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
[ "$(pods_of rz | tr '\n' ' ')" = "${PODS[*]} " ] || fail "the pods changed: before ${PODS[*]}, after $(pods_of rz | tr '\n' ' ')"
for p in "${PODS[@]}"; do
  read -r uid0 cid0 rc0 _ <<<"${BEFORE[$p]}"
  read -r uid1 cid1 rc1 state cpu mem pending <<<"$(pod_row "$p")"
  read -r quota cg_mem < <(cgroup_limits "$p")
  echo "$p: uid $uid1, container ${cid1:13:12}, restarts $rc0 -> $rc1, status limits $cpu/$mem, cgroup quota $quota memory $cg_mem"
  [ "$uid1" = "$uid0" ] || fail "$p: UID changed ($uid0 -> $uid1): the pod was recreated, not resized"
  [ "$cid1" = "$cid0" ] || fail "$p: container ID changed ($cid0 -> $cid1): the container was restarted"
  [ "$rc1" = "$rc0" ] || fail "$p: restartCount $rc0 -> $rc1"
  [ "$cpu $mem" = "200m 96Mi" ] || fail "$p: the kubelet reports limits $cpu/$mem, want 200m/96Mi"
  [ "$quota $cg_mem" = "20000 100663296" ] || fail "$p: cgroup cpu quota/memory limit '$quota $cg_mem', want '20000 100663296'"
  [ "$(kc get pod "$p" -o jsonpath='{.spec.containers[0].resources.requests.cpu} {.status.containerStatuses[0].allocatedResources.cpu}')" = "100m 100m" ] ||
    fail "$p: spec/allocated cpu request not 100m"
done
! grep -v ' R=True$' "$TMP/watch-rz" | grep -q . ||
  fail "a pod was not Ready during the resize: $(grep -v ' R=True$' "$TMP/watch-rz" | head -3)"
kc get events --field-selector involvedObject.kind=CloneSet -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' |
  grep -q SuccessfulUpdatePodInPlace || fail "no SuccessfulUpdatePodInPlace event"
step "resize-in-place"

# --- 2. a resize the node can never fit ------------------------------------------------------------------------
cloneset_rz "{cpu: '1000', memory: 32Mi}" "{cpu: '1000', memory: 96Mi}" | kc apply -f - >/dev/null ||
  fail "kubectl apply of 1000 cpus"
poll 120 "the CloneSet reporting an Infeasible resize" sh -c \
  "kubectl --kubeconfig '$RUN_DIR/kubeconfig' get cloneset rz -o jsonpath='{.status.conditions[?(@.type==\"ResizePending\")].reason}' | grep -qx Infeasible"
message=$(kc get cloneset rz -o jsonpath='{.status.conditions[?(@.type=="ResizePending")].message}')
echo "ResizePending: $message"
[[ "$message" == *"(Infeasible: Node didn't have enough capacity: cpu, requested: 1000000, capacity: "* ]] ||
  fail "the condition does not carry the kubelet's message: $message"
poll 30 "a PodResizeInfeasible event" sh -c \
  "kubectl --kubeconfig '$RUN_DIR/kubeconfig' get events -o jsonpath='{range .items[*]}{.reason}{\"\n\"}{end}' | grep -qx PodResizeInfeasible"
sleep 5  # what must not happen: the second pod updated, a pod recreated
infeasible=0 untouched=0
for p in "${PODS[@]}"; do
  read -r uid1 cid1 rc1 state cpu mem pending <<<"$(pod_row "$p")"
  read -r uid0 cid0 rc0 _ <<<"${BEFORE[$p]}"
  [ "$uid1" = "$uid0" ] && [ "$cid1" = "$cid0" ] || fail "$p was recreated or restarted"
  [ "$cpu" = 200m ] || fail "$p: the kubelet changed its cpu limit to $cpu"
  if [ "$pending" = Infeasible ] && [ "$state" = Updating ]; then infeasible=$((infeasible + 1)); fi
  if [ -z "$pending" ] && [ "$(kc get pod "$p" -o jsonpath='{.spec.containers[0].resources.limits.cpu}')" = 200m ]; then
    untouched=$((untouched + 1))
  fi
done
[ "$infeasible $untouched" = "1 1" ] || fail "want one pod Infeasible and Updating, one untouched; got $infeasible and $untouched"
status_out=$("$BUILD_DIR/bin/clonesetctl" --kubeconfig "$RUN_DIR/kubeconfig" status rz) || fail "clonesetctl status rz"
grep -q "^Condition ResizePending=True (Infeasible)" <<<"$status_out" ||
  fail "clonesetctl status does not show the condition: $status_out"
grep -q "Updating" <<<"$status_out" || fail "clonesetctl status does not show the Updating pod: $status_out"
step "infeasible"

cloneset_rz "{cpu: 100m, memory: 32Mi}" "{cpu: 200m, memory: 96Mi}" | kc apply -f - >/dev/null ||
  fail "kubectl apply of the rollback"
poll 120 "the rollback settled" settled rz 2 200m
[ -z "$(kc get cloneset rz -o jsonpath='{.status.conditions[?(@.type=="ResizePending")].type}')" ] ||
  fail "the ResizePending condition stayed after the rollback"
for p in "${PODS[@]}"; do
  read -r uid1 cid1 rc1 _ <<<"$(pod_row "$p")"
  read -r uid0 cid0 rc0 _ <<<"${BEFORE[$p]}"
  [ "$uid1 $cid1 $rc1" = "$uid0 $cid0 $rc0" ] || fail "$p: not the same pod and container after the rollback"
done
step "rollback"
echo "timing: total (without down) $((SECONDS - START)) s"
echo "PASS"
