#!/usr/bin/env bash
# The CloneSet story on a real Kubernetes 1.34 control plane (`./run up --cluster real`: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler from tools/go/, kwok nodes, the test volume provisioner), in a private
# RUN_DIR, the executor running as the chart's executor ServiceAccount: the seed 000 manifests exactly as written;
# 3 pods Running and Ready, each with its own Bound PVC and status.readyReplicas 3; scale to 5 (kubectl scale, the CRD's scale subresource); an in-place image update
# (kubectl patch) after which every pod keeps its name and UID, runs the new image and restarted exactly once;
# then 95 s idle (server-closed keep-alive connections, etcd compaction) and a scale-down to 2 that keeps the PVCs;
# no API request of the executor or of the agents (one per kwok node) was refused (403) by the chart's RBAC.
# Every wait is bounded; a failure prints what the cluster showed and the components' log tails.
# Needs: BUILD_DIR (the build tree with cloneset-planner and cloneset-executor; ./run up builds them when missing),
# kubectl, openssl, curl and Go (./run deps; the control plane is built once by ./run toolchain).
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
SEED="$SRC/tests/data/seed000"
CS=video-transcoder
NEW_IMAGE=my-registry/video-transcoder:v1.2.1

for t in kubectl openssl curl; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-real-e2e.XXXXXX")"
export RUN_DIR="$TMP/run" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    echo "--- cluster state"
    kc get clonesets,pods,pvc,pv -o wide 2>&1 | head -40 || true
    kc get events --sort-by=.lastTimestamp 2>&1 | tail -25 || true
    local f; for f in "$RUN_DIR"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -8 "$f"; }; done
  fi
  local t0=$SECONDS
  "$SRC/run" down --purge >/dev/null 2>&1 || "$SRC/run" down >/dev/null 2>&1 || true
  echo "timing: down $((SECONDS - t0)) s"
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

POLL_INTERVAL=1
. "$(dirname "${BASH_SOURCE[0]}")/../support/poll.sh"  # fail, poll
kc() { kubectl --kubeconfig "$RUN_DIR/kubeconfig" --request-timeout=10s "$@"; }
step() { echo "timing: $1 $((SECONDS - STEP_START)) s"; STEP_START=$SECONDS; }

# pods_table: "name uid phase ready restartCount image pvc" per pod of the CloneSet, sorted by name.
pods_table() {
  kc get pods -l app=$CS -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.uid}{" "}{.status.phase}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.status.containerStatuses[0].restartCount}{" "}{.spec.containers[0].image}{" "}{.spec.volumes[?(@.name=="workspace")].persistentVolumeClaim.claimName}{"\n"}{end}' |
    sort
}

# settled N IMAGE: the CloneSet reports N ready and N updated-ready replicas of its newest revision, and exactly N
# pods exist, each Running, Ready, on IMAGE, with its own PVC that is Bound.
settled() {
  local n="$1" image="$2" gen observed replicas ready updated_ready
  read -r gen observed replicas ready updated_ready < <(kc get cloneset $CS -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.replicas} {.status.readyReplicas} {.status.updatedReadyReplicas}{"\n"}')
  [ "$observed" = "$gen" ] && [ "$replicas" = "$n" ] && [ "$ready" = "$n" ] && [ "$updated_ready" = "$n" ] || return 1
  local rows; rows=$(pods_table)
  [ "$(printf '%s\n' "$rows" | grep -c .)" = "$n" ] || return 1
  local name uid phase ready restarts img pvc
  while read -r name uid phase ready restarts img pvc; do
    [ "$phase" = Running ] && [ "$ready" = True ] && [ "$img" = "$image" ] || return 1
    [ "$pvc" = "workspace-$CS-${name#"$CS"-}" ] || return 1
    [ "$(kc get pvc "$pvc" -o jsonpath='{.status.phase}')" = Bound ] || return 1
  done <<<"$rows"
}

START=$SECONDS; STEP_START=$SECONDS
"$SRC/run" up --cluster real --nodes 3 >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "./run up --cluster real"; }
[ "$(cat "$RUN_DIR/kubeconfig.path")" = "$RUN_DIR/kubeconfig" ] || fail "./run up did not record the kubeconfig"
kc get --raw /readyz >/dev/null || fail "kube-apiserver /readyz"
server_version=$(kc get --raw /version | grep -o '"gitVersion": *"[^"]*"' | cut -d'"' -f4)
[ "$server_version" = v1.34.4 ] || fail "want kube-apiserver v1.34.4 (tools/go/kube), got '$server_version'"
step "up"

kc apply -f "$SEED/" >"$TMP/apply.log" 2>&1 || { cat "$TMP/apply.log"; fail "kubectl apply -f $SEED"; }
poll 240 "3 ready pods with Bound PVCs" settled 3 my-registry/video-transcoder:v1.2.0
pods_table
# The volumes came from our provisioner through the PersistentVolume controller's binding, one per claim.
bound_pvs=$(kc get pv -o jsonpath='{range .items[*]}{.status.phase}{" "}{.spec.claimRef.name}{"\n"}{end}' | grep -c '^Bound workspace-')
[ "$bound_pvs" = 3 ] || fail "want 3 Bound PVs for the workspace claims, got $bound_pvs"
step "create-3"

kc scale cloneset $CS --replicas=5 >/dev/null || fail "kubectl scale --replicas=5"
poll 240 "5 ready pods with Bound PVCs" settled 5 my-registry/video-transcoder:v1.2.0
step "scale-5"

before=$(pods_table)
kc patch cloneset $CS --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\"$NEW_IMAGE\"}]" >/dev/null ||
  fail "kubectl patch of the image"
poll 300 "5 pods updated in place to $NEW_IMAGE" settled 5 "$NEW_IMAGE"
after=$(pods_table)
echo "$after"
# Same pods (name and UID), each restarted exactly once by the in-place update.
want=$(printf '%s\n' "$before" | awk -v img="$NEW_IMAGE" '{print $1, $2, "Running True", $5 + 1, img, $7}')
[ "$after" = "$want" ] || fail "in-place update: want
$want
got
$after"
step "inplace-update"

# Idle for longer than kube-apiserver's 90 s keep-alive idle timeout and than the first etcd compaction (60 s
# after start), then scale down: the executor's pooled connections were closed by the server (a request written to one fails) and its
# watches' starting revisions are compacted. Both must go unnoticed: no transport error in the executor's log.
sleep 95
etcd_client=$(sed -n 's/^ETCD_CLIENT=//p' "$RUN_DIR/real/ports")
compacted=$(curl -sf "http://127.0.0.1:$etcd_client/metrics" | sed -n 's/^etcd_debugging_mvcc_compact_revision //p')
[ "${compacted:-0}" -gt 0 ] || fail "etcd has not compacted after 95 s (compact revision '${compacted:-}')"
kc scale cloneset $CS --replicas=2 >/dev/null || fail "kubectl scale --replicas=2"
poll 120 "2 ready pods after scaling down" settled 2 "$NEW_IMAGE"
if grep -q UNAVAILABLE "$RUN_DIR/executor-0.log"; then
  grep UNAVAILABLE "$RUN_DIR/executor-0.log" | head -5
  fail "the executor's requests failed at the transport level (above)"
fi
# The executor ran as the chart's executor ServiceAccount (./run up --cluster real, tools/run.d/real_cluster.sh),
# and the chart's RBAC allowed everything the story needed: no request answered 403 (its client's
# rest_client_requests_total by code), nothing forbidden in its log.
grep -q -- "--kubeconfig=$RUN_DIR/kubeconfig-executor " "$RUN_DIR/executor-0.cmd" ||
  fail "the executor did not run with \$RUN_DIR/kubeconfig-executor: $(cat "$RUN_DIR/executor-0.cmd")"
exec_user=$(kubectl --kubeconfig "$RUN_DIR/kubeconfig-executor" --request-timeout=10s auth whoami \
  -o jsonpath='{.status.userInfo.username}')
[ "$exec_user" = system:serviceaccount:cloneset-system:cloneset-local-executor ] ||
  fail "kubeconfig-executor authenticates as '$exec_user', not the chart's executor ServiceAccount"
# The same for the agents (one per kwok node, the chart's agent ServiceAccount): they watched their pods and
# reported in-place readiness with no request refused.
for c in executor-0 agent-0 agent-1 agent-2; do
  metrics=$(curl -sf "$(grep -m1 -o 'metrics on http://[0-9.:]*' "$RUN_DIR/$c.log" | cut -d' ' -f3)/metrics") ||
    fail "$c's /metrics"
  grep -q '^rest_client_requests_total{code="20[01]"' <<<"$metrics" || fail "no successful API request in $c's metrics"
  if grep '^rest_client_requests_total{code="403"' <<<"$metrics" || grep -i -m5 'forbidden\|"403"' "$RUN_DIR/$c.log"; then
    fail "$c was refused by RBAC (above): a permission missing from the chart's ClusterRole (charts/cloneset/templates/rbac-*.yaml)"
  fi
done
grep -q -- "--kubeconfig=$RUN_DIR/kubeconfig-agent " "$RUN_DIR/agent-0.cmd" ||
  fail "the agents did not run with \$RUN_DIR/kubeconfig-agent: $(cat "$RUN_DIR/agent-0.cmd")"
# pvcRetentionPolicy: Retain keeps the claims of the 3 removed pods.
[ "$(kc get pvc --no-headers | grep -c '^workspace-')" = 5 ] || fail "want 5 workspace PVCs kept (Retain)"
step "idle-95s-then-scale-2"
echo "timing: total (without down) $((SECONDS - START)) s"
echo "PASS"
