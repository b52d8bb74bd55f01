#!/usr/bin/env bash
# real.chart_install: the chart installed by real Helm on the real control plane, its pods real containers on a real
# kubelet, under Pod Security "restricted", as a user installs it: the commands are the fenced bash blocks of the
# README's "Install into your cluster" section, extracted from README.md and run as written (so the two cannot
# drift), against `./run up --cluster real --nodes 1 --real-nodes 1` in a private RUN_DIR (the shared control plane
# has no real node, and a release with namespaces of its own is more than its reset undoes) and its local registry.
#
# Before the README: the real node is made the cluster's only schedulable node (taint off, the kwok node cordoned),
# as on a user's cluster. The README's blocks then build and push the images (./run images --push), label the
# namespace restricted, helm install --wait (planner and executor pods Ready: their probes pass on the kubelet),
# move the agent into a privileged namespace of its own on the node's containerd socket, roll a CloneSet out
# through the in-cluster executor (clonesetctl rollout status) and read the executor's metrics.
# Then checked here: every pod of the release Running and Ready on the real node; the shard Lease
# held by executor pods; the CloneSet's pods made by the executor; an agent in the restricted namespace refused by
# the chart itself. Then `helm upgrade` to a new image tag in the middle of a CloneSet rollout: the executors are
# replaced one at a time (never fewer than 2 available), no planner call fails for want of an address while the
# planners are replaced, the rollout completes with its maxUnavailable held throughout. Last, mTLS between executor
# and planner from Secrets made with openssl (no cert-manager): the executor still gets plans.
#
# Cost: about 95 s under ctest on the 2-core machine with the images' base cached (up 11 s, the README's commands
# 14-29 s: images, push, install, agent, CloneSet; upgrade under rollout 25-30 s; mTLS 16-20 s); the timings are
# printed.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
export BUILD_DIR
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in kubectl:kubectl curl:curl docker:docker.io; do
  command -v "${t%%:*}" >/dev/null || fail "${t%%:*} is not installed (./run deps installs ${t#*:}; ./run docker ensure starts a daemon)"
done

export RUN_DIR="$BUILD_DIR/real-chart-install"
export KUBECACHEDIR="$RUN_DIR/kubecache"
mkdir -p "$RUN_DIR"
down() { "$SRC/run" down --purge >"$RUN_DIR/down.out" 2>&1 || { echo "./run down --purge failed:" >&2; tail -n 5 "$RUN_DIR/down.out" >&2; }; }
down  # what an interrupted run left
LOG="$RUN_DIR/test"
rm -rf "$LOG"; mkdir -p "$LOG"
# CHART_INSTALL_KEEP=1 leaves the cluster up after the test, to look at it (RUN_DIR above; the next run or
# `RUN_DIR=... ./run down --purge` removes it).
[ "${CHART_INSTALL_KEEP:-0}" = 1 ] || trap down EXIT

# diagnose: what the pods of the release and the node say, on a failure.
diagnose() {
  kubectl get pods -A -o wide 2>&1 | grep -v kube-system || true
  kubectl get events -A --sort-by=.lastTimestamp 2>/dev/null | tail -n 15 || true
  local p
  for p in $(kubectl -n cloneset-system get pods -o name 2>/dev/null); do
    echo "--- $p"; kubectl -n cloneset-system logs "$p" --tail=8 2>&1 || true
  done
}

t0=$SECONDS
"$SRC/run" up --cluster real --nodes 1 --real-nodes 1 --executors 0 --planners 0 --no-agents >"$LOG/up.out" 2>&1 ||
  { tail -n 30 "$LOG/up.out"; fail "./run up --cluster real --real-nodes 1"; }
echo "timing: control plane, real node and its services up $((SECONDS - t0)) s"
export KUBECONFIG="$RUN_DIR/kubeconfig"
node=real-node-0
registry=$(cat "$RUN_DIR/real/registry.addr")
helm=$("$SRC/run" tool helm helm.sh/helm/v3/cmd/helm helm 2>"$LOG/helm-tool.out") ||
  { cat "$LOG/helm-tool.out"; fail "building Helm (./run tool helm)"; }
export PATH="$(dirname "$helm"):$BUILD_DIR/bin:$PATH"
command -v clonesetctl >/dev/null || fail "clonesetctl is not built in $BUILD_DIR/bin (cmake --build build --target clonesetctl)"

# A cluster as a user's: the real node is the only schedulable one, and the release of the chart's identities that
# `./run up` installs (for components run as processes) is gone with its namespace, which the README creates.
kubectl taint node "$node" cloneset.test/real-node- >/dev/null
kubectl cordon kwok-node-0 >/dev/null
helm uninstall cloneset-local -n cloneset-system --wait --timeout 2m >"$LOG/uninstall.out" 2>&1 ||
  { cat "$LOG/uninstall.out"; fail "helm uninstall of ./run up's identities release"; }
kubectl delete namespace cloneset-system --timeout=120s >/dev/null || fail "deleting namespace cloneset-system"
# The CloneSet CRD is the chart's (a template: its conversion names the release's planner Service); `./run up`
# applied the file for its own processes, which a user's cluster does not have.
kubectl delete crd clonesets.apps.kruise.io --wait=true --timeout=120s >/dev/null || fail "deleting ./run up's CloneSet CRD"

# The README's commands, as written.
readme="$LOG/readme.sh"
awk '/^## Install into your cluster$/ { s = 1; next } /^## / { s = 0 }
     s && /^```bash$/ { f = 1; next } s && /^```$/ { f = 0; next } s && f' "$SRC/README.md" >"$readme"
[ "$(grep -c '^helm install ' "$readme")" = 1 ] ||
  fail "README.md's 'Install into your cluster' has no bash block with one helm install (extracted: $readme)"
export REGISTRY="$registry/cloneset" CRI_SOCKET="$RUN_DIR/real/nodes/$node/containerd.sock"
export SAMPLE_IMAGE="$registry/cloneset-test/web:v1"
t0=$SECONDS
(cd "$SRC" && bash -euo pipefail -x "$readme") >"$LOG/readme.out" 2>&1 ||
  { tail -n 40 "$LOG/readme.out"; diagnose; fail "the README's 'Install into your cluster' commands (log $LOG/readme.out)"; }
echo "timing: the README's commands (images, push, install, agent, CloneSet rollout, metrics) $((SECONDS - t0)) s"
grep -q '^controller_runtime_reconcile_total{.*controller="cloneset".*} [1-9]' "$LOG/readme.out" ||
  { tail -n 20 "$LOG/readme.out"; fail "the executor's metrics show no reconcile"; }

# Every pod of the release runs, Ready, on the real node: planner 2, executor 2, agent 1 (DaemonSet on the real
# node; the kwok node's agent is kwok's).
ready_on_node() { # NAMESPACE SELECTOR: "name node ready" of each pod
  kubectl -n "$1" get pods -l "$2" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'
}
for c in planner:2 executor:2; do
  got=$(ready_on_node cloneset-system "app.kubernetes.io/component=${c%%:*}" | awk -v n="$node" '$2 == n && $3 == "True"' | wc -l)
  [ "$got" = "${c#*:}" ] || { diagnose; fail "${c%%:*}: $got pods Ready on $node, want ${c#*:}"; }
done
[ "$(ready_on_node cloneset-node app.kubernetes.io/component=agent | awk -v n="$node" '$2 == n && $3 == "True"' | wc -l)" = 1 ] ||
  { diagnose; fail "no agent pod Ready on $node (namespace cloneset-node)"; }
kubectl get ns cloneset-system -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}' | grep -qx restricted ||
  fail "namespace cloneset-system does not enforce restricted"
# The containers run on the node's containerd, from the registry.
ctr --address "$CRI_SOCKET" -n k8s.io images ls -q | grep -q "^$REGISTRY/cloneset-executor:" ||
  fail "the node's containerd has no $REGISTRY/cloneset-executor image"
# The one shard's Lease (with one shard there are no membership Leases): its holder is an executor pod of the
# release.
holders=$(kubectl -n cloneset-system get lease -o jsonpath='{range .items[*]}{.metadata.name}={.spec.holderIdentity}{"\n"}{end}')
[ "$(wc -l <<<"$holders")" = 1 ] || fail "want 1 Lease (the shard's), got: $holders"
while IFS== read -r lease holder; do
  kubectl -n cloneset-system get pod "$holder" -o jsonpath='{.metadata.labels.app\.kubernetes\.io/component}' 2>/dev/null |
    grep -qx executor || fail "Lease $lease is held by '$holder', not by an executor pod"
done <<<"$holders"
holder=$(tr '\n' ' ' <<<"$holders")
for p in $(kubectl -n default get pods -l app=sample -o name); do
  [ "$(kubectl -n default get "$p" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.spec.nodeName}')" = "CloneSet/$node" ] ||
    fail "$p is not a CloneSet's pod on $node"
done
# The chart refuses to put the agent into the restricted namespace (lookup of its labels at install time).
if helm install refused "$SRC/charts/cloneset" -n cloneset-system --set agent.enabled=true --dry-run=server \
  >"$LOG/refused.out" 2>&1; then
  fail "helm accepted the agent in a namespace that enforces restricted"
fi
grep -q 'Pod Security "restricted" on namespace cloneset-system forbids' "$LOG/refused.out" ||
  { cat "$LOG/refused.out"; fail "the refusal does not name Pod Security and the namespace"; }
echo "checked: planner 2, executor 2, agent 1 Ready on $node; Leases $holder; agent refused in the restricted namespace"

# helm upgrade to a new image tag while a CloneSet rolls out: the same images retagged and pushed.
t0=$SECONDS
tag=upgrade-$RANDOM
for c in planner executor agent; do
  docker tag "ghcr.io/cloneset-cpp/cloneset-$c:dev" "$REGISTRY/cloneset-$c:$tag"
  docker push -q "$REGISTRY/cloneset-$c:$tag" >/dev/null || fail "docker push $REGISTRY/cloneset-$c:$tag"
done
kubectl -n default scale clone sample --replicas=4 >/dev/null
kubectl -n default wait clone/sample --for=jsonpath='{.status.readyReplicas}'=4 --timeout=90s >/dev/null ||
  { diagnose; fail "the CloneSet did not reach 4 ready pods before the upgrade"; }
# The upgrade first, the CloneSet's new image right after it: the executors are replaced during the rollout, which
# minReadySeconds stretches (each updated pod counts as available only after 5 s).
helm upgrade cloneset "$SRC/charts/cloneset" -n cloneset-system --reuse-values \
  --set planner.image.tag="$tag",executor.image.tag="$tag",agent.image.tag="$tag" >"$LOG/upgrade.out" 2>&1 &
upgrade=$!
kubectl -n default patch clone sample --type=merge -p "{\"spec\":{\"minReadySeconds\":5,\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"$registry/cloneset-test/web:v2\"}]}}}}" >/dev/null
# Sampled twice a second until both are done: available executors (maxUnavailable 0: never below 2) and the
# CloneSet's ready pods (maxUnavailable 1 of 4: never below 3 once it had 4).
min_exec=9 min_ready=9 samples=0 deadline=$((SECONDS + 300)) done_rollout=0 overlap=0
while :; do
  avail=$(kubectl -n cloneset-system get deploy cloneset-executor -o jsonpath='{.status.availableReplicas}')
  ready=$(kubectl -n default get pods -l app=sample -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true)
  min_exec=$((${avail:-0} < min_exec ? ${avail:-0} : min_exec)); min_ready=$((ready < min_ready ? ready : min_ready))
  samples=$((samples + 1))
  new=$(kubectl -n cloneset-system get pods -l app.kubernetes.io/component=executor -o jsonpath='{range .items[*]}{.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c ":$tag True" || true)
  st=$(kubectl -n default get clone sample -o jsonpath='{.status.updatedReadyReplicas}/{.status.replicas}/{.spec.replicas}')
  [ "$st" = 4/4/4 ] && done_rollout=1
  # The point of the step: the CloneSet still rolling while an executor of the new tag already runs.
  [ "$done_rollout" = 1 ] || [ "$new" = 0 ] || overlap=1
  printf '%s executors-available=%s sample-ready=%s clone=%s\n' "$((SECONDS - t0))" "${avail:-0}" "$ready" "$st" >>"$LOG/samples.txt"
  kubectl -n cloneset-system get pods -l app.kubernetes.io/component=executor -o jsonpath='{range .items[*]}  {.metadata.name} {.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' >>"$LOG/samples.txt"
  if [ "$done_rollout" = 1 ] && [ "$new" = 2 ] && [ "$(kubectl -n cloneset-system get pods -l app.kubernetes.io/component=executor -o name | wc -l)" = 2 ]; then break; fi
  [ $SECONDS -lt $deadline ] || { diagnose; fail "after 300 s: CloneSet $st (updatedReady/replicas/spec), $new executors Ready on :$tag"; }
  sleep 0.5
done
wait "$upgrade" || { cat "$LOG/upgrade.out"; fail "helm upgrade to :$tag"; }
echo "upgrade under rollout: $samples samples, fewest available executors $min_exec, fewest ready CloneSet pods $min_ready"
[ "$overlap" = 1 ] || fail "the CloneSet's rollout was over before a new executor ran: the step tested no handover"
# No call to the planners failed for want of an address while they were replaced (planner.preStopSleepSeconds).
unreachable=$(for p in $(kubectl -n cloneset-system get pods -l app.kubernetes.io/component=executor -o name); do
  kubectl -n cloneset-system logs "$p"; done | grep -c 'connections to all backends failing' || true)
echo "planner calls failed on every address: $unreachable"
[ "$unreachable" = 0 ] || { diagnose; fail "the executors lost every planner $unreachable times during the upgrade"; }
[ "$min_exec" -ge 2 ] || { diagnose; fail "the executors were not replaced one at a time: $min_exec available at one point (samples: $LOG/samples.txt)"; }
[ "$min_ready" -ge 3 ] || { diagnose; fail "the rollout broke maxUnavailable 1 of 4: $min_ready pods ready at one point (samples: $LOG/samples.txt)"; }
kubectl -n default get pods -l app=sample -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' |
  grep -vq "cloneset-test/web:v2$" && fail "a CloneSet pod does not run web:v2 after the rollout"
echo "timing: upgrade under rollout $((SECONDS - t0)) s"

# mTLS between executor and planner without cert-manager (tls.certManager.enabled=false): the two Secrets in the
# layout NOTES.txt asks for (tls.crt, tls.key, ca.crt), made with openssl, then tls.enabled=true: the planner serves
# mTLS (its readiness falls back to a TCP check) and the executor still gets plans (a scale-down needs one).
t0=$SECONDS
command -v openssl >/dev/null || fail "openssl is not installed (./run deps installs it)"
pki="$LOG/mtls"; mkdir -p "$pki"
svc=cloneset-planner ns=cloneset-system
(
  set -e; cd "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt -days 2 \
    -subj /CN=cloneset-test-mtls-ca
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout planner.key -out planner.csr -subj "/CN=$svc"
  printf 'subjectAltName=DNS:%s,DNS:%s.%s.svc,DNS:%s-headless.%s.svc,DNS:*.%s-headless.%s.svc\nextendedKeyUsage=serverAuth\n' \
    "$svc" "$svc" "$ns" "$svc" "$ns" "$svc" "$ns" >planner.ext
  openssl x509 -req -in planner.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out planner.crt -days 2 -extfile planner.ext
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout executor.key -out executor.csr \
    -subj /CN=cloneset-executor
  printf 'extendedKeyUsage=clientAuth\n' >executor.ext
  openssl x509 -req -in executor.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out executor.crt -days 2 -extfile executor.ext
) >"$pki/openssl.out" 2>&1 || { cat "$pki/openssl.out"; fail "making the mTLS certificates with openssl"; }
for c in planner executor; do
  kubectl -n "$ns" create secret generic "cloneset-$c-tls" --from-file=tls.crt="$pki/$c.crt" \
    --from-file=tls.key="$pki/$c.key" --from-file=ca.crt="$pki/ca.crt" >/dev/null
done
helm upgrade cloneset "$SRC/charts/cloneset" -n "$ns" --reuse-values --set tls.enabled=true --wait --timeout 5m \
  >"$LOG/tls.out" 2>&1 || { cat "$LOG/tls.out"; diagnose; fail "helm upgrade --set tls.enabled=true"; }
# The planners of the upgraded release: pods of the old ReplicaSet may still be terminating (they keep serving for a
# while after they leave the Service) and are not asked.
planners=$(kubectl -n "$ns" get pods -l app.kubernetes.io/component=planner --no-headers \
             -o custom-columns=NAME:.metadata.name,DELETED:.metadata.deletionTimestamp | awk '$2 == "<none>" { print "pod/" $1 }')
[ "$(echo "$planners" | grep -c .)" = 2 ] || { diagnose; fail "want 2 planners after the mTLS upgrade, got: $planners"; }
for p in $planners; do
  kubectl -n "$ns" logs "$p" | grep -q '"mtls":true' || { diagnose; fail "$p does not serve mTLS"; }
done
kubectl -n default scale clone sample --replicas=2 >/dev/null
kubectl -n default wait clone/sample --for=jsonpath='{.status.replicas}'=2 --timeout=90s >/dev/null ||
  { diagnose; fail "the CloneSet did not scale to 2 over mTLS"; }
echo "timing: mTLS on, a scale-down planned over it $((SECONDS - t0)) s"
echo "PASS"
