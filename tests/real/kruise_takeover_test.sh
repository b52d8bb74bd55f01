#!/usr/bin/env bash
# real.kruise_takeover: CloneSets that upstream's kruise-manager created and rolled are taken over by our executor
# without a single write to their pods, claims or revisions, on the real control plane (own RUN_DIR, audit log on),
# and handed back to kruise-manager the same way.
#
# 1. kruise-manager (tools/go/kruise, webhooks off as in the benchmarks) creates and rolls five CloneSets, each left
#    steady: `inplace` (image changed in place), `recreate` (env changed: pods recreated), `claims` (a
#    volumeClaimTemplate, scaled 2 -> 3), `canary` (image changed with partition 2: two revisions live) and
#    `collided` (the name of its first revision was taken by a foreign ControllerRevision beforehand, so
#    kruise-manager named it at collision count 1). The name is learnt from kruise-manager itself: the same
#    CloneSet created in a scratch namespace first (a revision's name depends on the template and the collision
#    count only). kruise-manager does not always keep the count it used: a reconcile that starts before its
#    informer has seen the first status write computes the name at count 0, finds the revision it created by
#    content, and writes status.collisionCount 0. Either status is one a takeover must leave as it is.
# 2. kruise-manager stops; our CRD replaces Kruise 1.8's; our planner and executor start (the chart's executor
#    identity, kruise-manager's --feature-gates as they are). Once the executor has reconciled every CloneSet and
#    gone quiet: every pod, claim and ControllerRevision has the resourceVersion kruise-manager left, and the audit
#    log holds no write of the executor to pods, claims or revisions.
# 3. A template change (`inplace`: image v3) and a partition move (`canary`: 2 -> 0) roll as kruise-manager would:
#    in place (same UIDs, restartCount + 1), at most maxUnavailable pods updating at a time.
# 4. Back to kruise-manager: our executor stops, every CloneSet is stored as v1alpha1 again under Kruise 1.8's CRD,
#    kruise-manager starts again and, once it has reconciled, has written nothing to any pod, claim or revision
#    either: the revision names and pod labels our executor wrote are the ones upstream computes.
#
# Needs the Go-built tools (./run toolchain: kube-apiserver, kwok, kruise-manager) and jq. About 4 minutes.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROOT="$SRC"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
export BUILD_DIR
# shellcheck source=tests/support/poll.sh
source "$SRC/tests/support/poll.sh"
for t in kubectl jq curl; do command -v "$t" >/dev/null || fail "$t is not installed (./run deps installs it)"; done
BIN="$BUILD_DIR/bin"
for b in cloneset-planner cloneset-executor clonesetctl; do
  [ -x "$BIN/$b" ] || fail "$BIN/$b is not built (./run build)"
done

export RUN_DIR="$BUILD_DIR/real-kruise-takeover"
export KUBECACHEDIR="$RUN_DIR/kubecache"
mkdir -p "$RUN_DIR"
KRUISE_PID="" PLANNER_PID="" EXECUTOR_PID=""
stop_pid() { [ -z "$1" ] || { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }; }
down() { "$SRC/run" down --purge >"$RUN_DIR/down.out" 2>&1 || { echo "./run down --purge failed:" >&2; tail -n 5 "$RUN_DIR/down.out" >&2; }; }
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    echo "--- state at the failure" >&2
    kubectl get clonesets.apps.kruise.io,pods,pvc,controllerrevisions -n takeover -o wide >&2 2>&1 || true
    for f in kruise-manager.log executor.log; do
      [ -f "$RUN_DIR/$f" ] && { echo "--- $f (tail)" >&2; tail -n 25 "$RUN_DIR/$f" >&2; }
    done
  fi
  stop_pid "$EXECUTOR_PID"; stop_pid "$PLANNER_PID"; stop_pid "$KRUISE_PID"
  [ "${TAKEOVER_KEEP:-0}" = 1 ] || down
}
down  # what an interrupted run left
trap cleanup EXIT

t0=$SECONDS
REAL_AUDIT_LOG=1 "$SRC/run" up --cluster real --nodes 2 --executors 0 --planners 0 --no-agents >"$RUN_DIR/up.out" 2>&1 ||
  { tail -n 30 "$RUN_DIR/up.out"; fail "./run up --cluster real"; }
echo "timing: control plane up $((SECONDS - t0)) s"
export KUBECONFIG="$RUN_DIR/kubeconfig"
AUDIT_LOG="$RUN_DIR/kube-apiserver-audit.log"
[ -f "$AUDIT_LOG" ] || fail "kube-apiserver wrote no audit log at $AUDIT_LOG"
[ -f "$RUN_DIR/kubeconfig-executor" ] || fail "./run up wrote no executor kubeconfig ($RUN_DIR/kubeconfig-executor)"
# shellcheck source=bench/lib_real.sh
source "$SRC/bench/lib_real.sh"

ns_ready() { kubectl get serviceaccount default -n "$1"; }
kubectl create namespace takeover >/dev/null
kubectl create namespace scratch >/dev/null
poll 60 "the default ServiceAccount of namespace takeover" ns_ready takeover
poll 60 "the default ServiceAccount of namespace scratch" ns_ready scratch

cloneset() {  # cloneset NAME REPLICAS TYPE [VCT]: a CloneSet document (image v1, env MODE=a)
  local vct=""
  [ "${4:-}" != vct ] || vct='
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}'
  cat <<YAML
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  updateStrategy: {type: $3, maxUnavailable: 1}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers:
      - name: app
        image: registry.test/web:v1
        env: [{name: MODE, value: a}]$vct
YAML
}

# steady NS NAME UPDATED: kruise-manager's (or our) status says the CloneSet is where it will stay.
steady() {
  local s
  s=$(kubectl get clonesets.apps.kruise.io "$2" -n "$1" -o json) || return 1
  jq -e --argjson updated "$3" '.metadata.generation == .status.observedGeneration
    and .status.replicas == .spec.replicas and .status.readyReplicas == .spec.replicas
    and .status.availableReplicas == .spec.replicas and .status.updatedReplicas == $updated' <<<"$s" >/dev/null
}

# snapshot: "kind/name uid resourceVersion" of every pod, claim and revision in namespace takeover, sorted.
snapshot() {
  kubectl get pods,pvc,controllerrevisions -n takeover -o json |
    jq -r '.items[] | "\(.kind)/\(.metadata.name) \(.metadata.uid) \(.metadata.resourceVersion)"' | sort
}

# quiet SECONDS: the snapshot does not change for SECONDS in a row (within 120 s).
quiet() {
  local want="$1" deadline=$((SECONDS + 120)) last now since=$SECONDS
  last=$(snapshot)
  while [ $((SECONDS - since)) -lt "$want" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "pods, claims or revisions still changing after 120 s"
    sleep 1
    now=$(snapshot)
    [ "$now" = "$last" ] || { last=$now; since=$SECONDS; }
  done
}

# writes CLIENT: "verb resource code count" of CLIENT's writes to pods, claims and revisions in the audit log so far.
writes() {
  audit_writes | awk -v cl="$1" '$1 == cl && $3 ~ /^(pods|persistentvolumeclaims|controllerrevisions)(\/|$)/'
}

# The CloneSet CRD as each controller's release installs it. Ours serves v1alpha1 and v1beta1, stores v1beta1 and
# converts through the conversion webhook (`./run up` runs one and points the CRD at it); start_kruise_manager
# (bench/lib_real.sh) first makes it Kruise 1.8's (v1alpha1 only, every CloneSet stored as v1alpha1). Moving between
# them is what an operator does (docs/deployment.md, "The CloneSet CRD"): onto ours, apply it; back to Kruise 1.8,
# store every CloneSet as v1alpha1 first (our webhook converts), then Kruise's CRD.
CRD=clonesets.apps.kruise.io
crd_ours() {
  kubectl apply --server-side --force-conflicts -f "$SRC/charts/cloneset/files/crds/$CRD.yaml" >/dev/null ||
    fail "applying our CloneSet CRD"
  "$SRC/run" conversion >/dev/null || fail "./run conversion"
}

# --- 1. kruise-manager creates and rolls (holding its Lease, as Kruise's chart runs it).
t0=$SECONDS
export KRUISE_LEADER_ELECTION=1
start_kruise_manager
echo "timing: kruise-manager ready $((SECONDS - t0)) s"

# The collided CloneSet's first revision name, from kruise-manager itself, then taken by a foreign revision.
cloneset collided 2 InPlaceIfPossible | kubectl apply -n scratch -f - >/dev/null
poll 60 "kruise-manager to write collided's revision in namespace scratch" \
  sh -c '[ -n "$(kubectl get clonesets.apps.kruise.io collided -n scratch -o jsonpath={.status.updateRevision})" ]'
taken=$(kubectl get clonesets.apps.kruise.io collided -n scratch -o jsonpath='{.status.updateRevision}')
kubectl delete namespace scratch --wait=false >/dev/null
printf 'apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: %s}\nrevision: 1\ndata: {spec: {template: {$patch: replace, metadata: {labels: {taken: "true"}}}}}\n' \
  "$taken" | kubectl apply -n takeover -f - >/dev/null

cloneset inplace 3 InPlaceIfPossible | kubectl apply -n takeover -f - >/dev/null
cloneset recreate 2 ReCreate | kubectl apply -n takeover -f - >/dev/null
cloneset claims 2 InPlaceIfPossible vct | kubectl apply -n takeover -f - >/dev/null
cloneset canary 4 InPlaceIfPossible | kubectl apply -n takeover -f - >/dev/null
cloneset collided 2 InPlaceIfPossible | kubectl apply -n takeover -f - >/dev/null
for c in inplace:3 recreate:2 claims:2 canary:4 collided:2; do
  poll 180 "kruise-manager to bring ${c%%:*} up" steady takeover "${c%%:*}" "${c#*:}"
done
collided_count=$(kubectl get clonesets.apps.kruise.io collided -n takeover -o jsonpath='{.status.collisionCount}')
collided_revision=$(kubectl get clonesets.apps.kruise.io collided -n takeover -o jsonpath='{.status.updateRevision}')
[ "$collided_revision" != "$taken" ] || fail "collided's update revision is the taken name $taken"
# kruise-manager created one revision for it, under a name of its own, whatever count it kept.
[ "$(kubectl get controllerrevisions -n takeover -l app=collided -o jsonpath='{.items[*].metadata.name}')" = "$collided_revision" ] ||
  fail "collided should have one revision, its update revision $collided_revision"
case "$collided_count" in
  1) echo "collided: status.collisionCount 1, update revision $collided_revision (taken: $taken)" ;;
  0) echo "collided: status.collisionCount 0 (kruise-manager's later reconcile did not keep the count it named $collided_revision with; taken: $taken)" ;;
  *) fail "collided's status.collisionCount is '$collided_count' (0 or 1 expected after one collision)" ;;
esac

uids() { kubectl get pods -n takeover -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}' | tr ' ' '\n' | sort; }
inplace_before=$(uids inplace)
recreate_before=$(uids recreate)
kubectl patch clonesets.apps.kruise.io inplace -n takeover --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.test/web:v2"}]' >/dev/null
kubectl patch clonesets.apps.kruise.io recreate -n takeover --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/env/0/value","value":"b"}]' >/dev/null
kubectl patch clonesets.apps.kruise.io claims -n takeover --type=merge -p '{"spec":{"replicas":3}}' >/dev/null
# Patches in v1alpha1's shape (updateStrategy.partition) name the version: kubectl's default is v1beta1.
kubectl patch clonesets.v1alpha1.apps.kruise.io canary -n takeover --type=merge \
  -p '{"spec":{"updateStrategy":{"partition":2},"template":{"spec":{"containers":[{"name":"app","image":"registry.test/web:v2","env":[{"name":"MODE","value":"a"}]}]}}}}' >/dev/null
for c in inplace:3 recreate:2 claims:3 canary:2 collided:2; do
  poll 180 "kruise-manager to roll ${c%%:*}" steady takeover "${c%%:*}" "${c#*:}"
done
[ "$(uids inplace)" = "$inplace_before" ] || fail "kruise-manager recreated pods of inplace (an in-place update was expected)"
[ -z "$(comm -12 <(echo "$recreate_before") <(uids recreate))" ] || fail "kruise-manager kept a pod of recreate"
[ "$(kubectl get pvc -n takeover -l app=claims -o name | wc -l)" = 3 ] || fail "claims has not 3 claims"
quiet 5
echo "timing: kruise-manager created and rolled five CloneSets $((SECONDS - t0)) s"
kruise_writes=$(writes kruise-manager)
[ -n "$kruise_writes" ] || fail "the audit log shows no pod write of kruise-manager: the client name is not what lib_real.sh expects"

# clonesetctl's check: not while kruise-manager holds its Lease; safe once it has stopped (the Lease, not released
# on exit, counts as held for its 15 s duration plus a 5 s margin after the last renewal).
check() { "$BIN/clonesetctl" migrate from-kruise -A --kubeconfig "$KUBECONFIG" >"$RUN_DIR/check.out" 2>&1; }
if check; then cat "$RUN_DIR/check.out"; fail "clonesetctl migrate from-kruise said safe while kruise-manager runs"; fi
grep -q "Blocker: kruise-manager is running" "$RUN_DIR/check.out" ||
  { cat "$RUN_DIR/check.out"; fail "clonesetctl migrate from-kruise did not name the running kruise-manager"; }
stop_pid "$KRUISE_PID"; KRUISE_PID=""
crd_ours  # once kruise-manager is stopped: it would point the CRD's conversion at itself
deadline=$((SECONDS + 60))
until check; do
  [ "$SECONDS" -lt "$deadline" ] ||
    { cat "$RUN_DIR/check.out"; fail "clonesetctl migrate from-kruise not safe 60 s after kruise-manager stopped"; }
  sleep 2
done
grep -q "^Safe to take over: 5 CloneSets" "$RUN_DIR/check.out" || { cat "$RUN_DIR/check.out"; fail "unexpected report"; }
sed 's/^/check: /' "$RUN_DIR/check.out"
before=$(snapshot)
statuses() { kubectl get clonesets.apps.kruise.io -n takeover -o json |
  jq -c '[.items[] | {n: .metadata.name, c: .status.currentRevision, u: .status.updateRevision, k: (.status.collisionCount // 0)}]'; }
status_before=$(statuses)

# --- 2. Ours takes over (on our CRD: the CloneSets stay stored as v1alpha1 until written; the executor reads
# v1beta1 through the webhook meanwhile).
t0=$SECONDS
"$BIN/cloneset-planner" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 >"$RUN_DIR/planner.log" 2>&1 &
PLANNER_PID=$!
poll 30 "the planner to listen" grep -q "listening on" "$RUN_DIR/planner.log"
planner=$(grep -o "listening on [0-9.:]*" "$RUN_DIR/planner.log" | head -1 | awk '{print $3}')
start_ours() {
  "$BIN/cloneset-executor" --kubeconfig="$RUN_DIR/kubeconfig-executor" --planner_address="ipv4:$planner" \
    --lease_namespace=cloneset-system --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0 \
    --identity=takeover --feature-gates="$KRUISE_FEATURE_GATES" >>"$RUN_DIR/executor.log" 2>&1 &
  EXECUTOR_PID=$!
  poll 30 "the executor's metrics address" grep -q "metrics on" "$RUN_DIR/executor.log"
  metrics=$(grep -o "metrics on http://[0-9.:]*" "$RUN_DIR/executor.log" | tail -1 | sed 's|.*http://||')
}
# reconciled ADDRESS N: the controller whose /metrics is at ADDRESS finished at least N CloneSet reconciles
# without error (controller-runtime's metric, which kruise-manager and our executor both export).
reconciled() {
  curl -sf "http://$1/metrics" | awk -v n="$2" '/^controller_runtime_reconcile_total\{/ && /controller="cloneset(-controller)?"/ &&
    !/result="error"/ { s += $NF } END { exit !(s >= n) }'
}
start_ours
poll 60 "the executor to reconcile the five CloneSets" reconciled "$metrics" 5
quiet 8
echo "timing: executor started, reconciled and quiet $((SECONDS - t0)) s"
after=$(snapshot)
ours=$(writes cloneset-executor)
if [ "$before" != "$after" ] || [ -n "$ours" ]; then
  echo "changed objects:"; diff <(echo "$before") <(echo "$after") || true
  echo "executor writes to pods, claims and revisions:"; echo "${ours:-none}"
  fail "taking over kruise-manager's CloneSets wrote to their pods, claims or revisions"
fi
[ "$(statuses)" = "$status_before" ] || fail "the revisions in status changed on takeover: $status_before -> $(statuses)"
echo "takeover: 0 writes to $(echo "$after" | wc -l) pods, claims and revisions"
other=$(audit_writes | awk '$1 == "cloneset-executor" && $3 !~ /^(leases|events)/ { printf "%s %s %s x%s; ", $2, $3, $4, $5 }')
echo "executor's other writes (CloneSets, status): ${other:-none}"

# --- 3. A rollout after the takeover, in place as kruise-manager would make it.
restarts() { kubectl get pods -n takeover -l "app=$1" -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | sort | tr '\n' ' '; }
inplace_before=$(uids inplace)
[ "$(restarts inplace)" = "1 1 1 " ] || fail "inplace's pods do not each have restartCount 1 after kruise-manager's in-place update: $(restarts inplace)"
canary_before=$(uids canary)
kubectl patch clonesets.apps.kruise.io inplace -n takeover --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.test/web:v3"}]' >/dev/null
kubectl patch clonesets.v1alpha1.apps.kruise.io canary -n takeover --type=merge -p '{"spec":{"updateStrategy":{"partition":0}}}' >/dev/null
# At most maxUnavailable (1) pod of inplace not ready at any moment.
peak=0
until steady takeover inplace 3 && steady takeover canary 4; do
  n=$(kubectl get pods -n takeover -l app=inplace -o json |
    jq '[.items[] | select(([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length) == 0)] | length')
  [ "$n" -le "$peak" ] || peak=$n
  [ $((SECONDS - t0)) -lt 300 ] || fail "the rollout after the takeover did not finish"
  sleep 0.5
done
[ "$peak" -le 1 ] || fail "$peak pods of inplace unready at once (maxUnavailable 1)"
[ "$(uids inplace)" = "$inplace_before" ] || fail "our executor recreated pods of inplace (in place expected)"
[ "$(uids canary)" = "$canary_before" ] || fail "our executor recreated pods of canary (in place expected)"
[ "$(restarts inplace)" = "2 2 2 " ] || fail "inplace's restart counts after the second in-place update: $(restarts inplace)"
quiet 5
stop_pid "$EXECUTOR_PID"; EXECUTOR_PID=""
echo "rollout after takeover: in place, peak unready $peak"

# --- 4. Back to kruise-manager (on Kruise 1.8's CRD, every CloneSet stored as v1alpha1 again): nothing to write either.
before=$(snapshot)
status_before=$(statuses)
kruise_crd_v1alpha1_only || fail "the CRD as Kruise 1.8 installs it"
kruise_before=$(audit_writes)
t0=$SECONDS
start_kruise_manager
poll 60 "kruise-manager to reconcile the five CloneSets" reconciled "$KRUISE_METRICS" 5
quiet 8
after=$(snapshot)
back=$(diff_counts "$kruise_before" "$(audit_writes)" |
  awk '$1 == "kruise-manager" && $3 ~ /^(pods|persistentvolumeclaims|controllerrevisions)(\/|$)/')
if [ "$before" != "$after" ] || [ -n "$back" ]; then
  echo "changed objects:"; diff <(echo "$before") <(echo "$after") || true
  echo "kruise-manager writes to pods, claims and revisions:"; echo "${back:-none}"
  fail "handing the CloneSets back to kruise-manager wrote to their pods, claims or revisions"
fi
[ "$(statuses)" = "$status_before" ] || fail "kruise-manager changed the revisions in status: $status_before -> $(statuses)"
echo "back to kruise-manager: 0 writes to $(echo "$after" | wc -l) pods, claims and revisions ($((SECONDS - t0)) s)"
echo "PASS"
