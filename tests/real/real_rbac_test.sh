#!/usr/bin/env bash
# The chart's RBAC enforced by a real Kubernetes 1.34 API server. `./run up --cluster real --executors 0
# --planners 0 --no-agents` (private RUN_DIR) installs the chart's ServiceAccounts and RBAC with Helm and writes
# $RUN_DIR/kubeconfig-executor and $RUN_DIR/kubeconfig-agent with TokenRequest tokens of those ServiceAccounts
# (tools/run.d/real_cluster.sh); other suites start their own executors with these paths, so they must exist even
# when up starts no component. Then, with each identity, real requests (kubectl): what the component does is
# allowed, and what it must not do is refused with 403 Forbidden naming its ServiceAccount:
#   agent:    Secrets other than the named pull Secret of a pull-secret namespace, pod writes other than
#             pods/status, ImagePullJobs, NodeImage spec writes, nodes;
#   executor: Secrets, ConfigMaps, node writes, Leases outside its lease namespace, CloneSet create/delete,
#             TokenRequests, RBAC, other workloads;
#   planner:  everything (it never talks to the API server; the chart binds it no role).
# Allowed writes use --dry-run=server: the API server authorizes them exactly as real writes. Then the same
# identities pre-download an image with the pull Secret: executor, cloneset-sim-cri and an agent on the kwok node.
# Needs: kubectl, openssl, curl and Go (the control plane and Helm are built once by ./run toolchain).
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
NS=cloneset-system
RELEASE=cloneset-local   # tools/run.d/real_cluster.sh REAL_RELEASE

for t in kubectl openssl curl; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-real-rbac.XXXXXX")"
export RUN_DIR="$TMP/run" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    local f; for f in "$RUN_DIR"/*.log "$RUN_DIR/real/helm.log"; do
      [ -f "$f" ] && { echo "--- $f (tail)"; tail -8 "$f"; }
    done
  fi
  "$SRC/run" down --purge >/dev/null 2>&1 || "$SRC/run" down >/dev/null 2>&1 || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$SRC/run" up --cluster real --nodes 1 --executors 0 --planners 0 --no-agents >"$TMP/up.log" 2>&1 ||
  { cat "$TMP/up.log"; fail "./run up --cluster real --executors 0 --planners 0 --no-agents"; }
admin() { kubectl --kubeconfig "$RUN_DIR/kubeconfig" --request-timeout=10s "$@"; }

# The release holds the ServiceAccounts and RBAC only (workloads.enabled=false): no Deployment, DaemonSet or
# Service runs the components as kwok pods beside the processes.
sel=app.kubernetes.io/instance=$RELEASE
workloads=$(admin get deployments,daemonsets,services,pods -A -l "$sel" -o name) || fail "listing the release's workloads"
[ -z "$workloads" ] || fail "the identities release runs workloads: $workloads"
[ "$(admin get serviceaccounts -n "$NS" -l "$sel" -o name | sort | tr '\n' ' ')" = \
  "serviceaccount/$RELEASE-agent serviceaccount/$RELEASE-executor serviceaccount/$RELEASE-planner " ] ||
  fail "want the agent, executor and planner ServiceAccounts of release $RELEASE in $NS"

# The planner's identity: the chart creates its ServiceAccount but binds it nothing, and up writes no kubeconfig
# for it (it does not call the API server). Mint a token here to show that it can do nothing.
[ ! -e "$RUN_DIR/kubeconfig-planner" ] || fail "up wrote a kubeconfig for the planner, which never calls the API"
planner_token=$(admin -n "$NS" create token "$RELEASE-planner" --duration=10m) || fail "TokenRequest for the planner"
sed -e "s#^    token: .*#    token: $planner_token#" -e "s#$RELEASE-executor#$RELEASE-planner#g" \
  "$RUN_DIR/kubeconfig-executor" >"$TMP/kubeconfig-planner"

# Each kubeconfig authenticates as its ServiceAccount, with a token from the TokenRequest API that outlives a long
# test run (up asks for 12 h; kube-apiserver may cap it, up refuses less than 6 h).
for c in executor agent planner; do
  kcfg="$RUN_DIR/kubeconfig-$c"; [ "$c" = planner ] && kcfg="$TMP/kubeconfig-planner"
  [ -s "$kcfg" ] || fail "$kcfg missing"
  user=$(kubectl --kubeconfig "$kcfg" --request-timeout=10s auth whoami -o jsonpath='{.status.userInfo.username}') ||
    fail "auth whoami with $kcfg"
  [ "$user" = "system:serviceaccount:$NS:$RELEASE-$c" ] || fail "$kcfg authenticates as '$user'"
  [ "$c" = planner ] && continue
  token=$(sed -n 's/^    token: //p' "$kcfg")
  payload=$(cut -d. -f2 <<<"$token" | tr '_-' '/+'); while [ $((${#payload} % 4)) != 0 ]; do payload="$payload="; done
  claims=$(base64 -d <<<"$payload" 2>/dev/null)
  iat=$(grep -o '"iat":[0-9]*' <<<"$claims" | cut -d: -f2); exp=$(grep -o '"exp":[0-9]*' <<<"$claims" | cut -d: -f2)
  [ -n "$iat" ] && [ -n "$exp" ] || fail "the $c token has no iat/exp: $claims"
  [ $((exp - iat)) -ge $((6 * 3600)) ] || fail "the $c token lives $((exp - iat)) s, want at least 6 h"
  echo "$c: $user, token valid $(((exp - iat) / 3600)) h"
done

# Objects the requests below touch, created as the admin: a pod on the kwok node, a pull Secret the agent may
# read and one it may not in the same namespace, a Secret elsewhere, a NodeImage, an ImagePullJob, a CloneSet.
admin apply -f - >/dev/null <<'EOF' || fail "creating the test objects"
apiVersion: v1
kind: Pod
metadata: {name: rbac-probe, namespace: default, labels: {app: rbac-probe}}
spec:
  nodeName: kwok-node-0
  containers: [{name: c, image: registry.example/probe:1}]
---
apiVersion: v1
kind: Secret
metadata: {name: cloneset-pull, namespace: default}
type: kubernetes.io/dockerconfigjson
stringData: {.dockerconfigjson: '{"auths":{}}'}
---
apiVersion: v1
kind: Secret
metadata: {name: other, namespace: default}
stringData: {k: v}
---
apiVersion: v1
kind: Namespace
metadata: {name: rbac-other}
---
apiVersion: v1
kind: Secret
metadata: {name: cloneset-pull, namespace: rbac-other}
stringData: {k: v}
---
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: kwok-node-0}
spec: {}
---
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: rbac-probe, namespace: default}
spec:
  image: registry.example/probe:2
---
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: rbac-probe, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: rbac-cs}}
  template:
    metadata: {labels: {app: rbac-cs}}
    spec:
      containers: [{name: c, image: registry.example/probe:1}]
EOF

# One check a line: COMPONENT EXPECT KUBECTL-ARGS... or COMPONENT EXPECT METHOD PATH PATCH-TYPE BODY (one request
# with curl). EXPECT: allow = kubectl exits 0 / HTTP 2xx; deny = the API server's 403 Forbidden, whose message
# names the component's ServiceAccount. Leading "#" lines are comments.
CHECKS=$(cat <<'EOF'
# The agent: reads pods (its own node's), patches pod status conditions, records events, reads its NodeImage and
# patches its status, gets the named pull Secret of a pull-secret namespace.
agent allow get pods -A
agent allow -n default get pod rbac-probe
# (kubectl patch GETs the object first, which the agent may not do for pods/status: the agent's own request, a
# PATCH alone, is sent with curl.)
agent allow PATCH /api/v1/namespaces/default/pods/rbac-probe/status?dryRun=All strategic {"status":{"conditions":[{"type":"InPlaceUpdateReady","status":"True"}]}}
agent allow -n default create -f EVENT --dry-run=server
agent allow get nodeimages.apps.kruise.io kwok-node-0
agent allow PATCH /apis/apps.kruise.io/v1alpha1/nodeimages/kwok-node-0/status?dryRun=All merge {"status":{"desired":0}}
agent deny PATCH /api/v1/namespaces/default/pods/rbac-probe?dryRun=All strategic {"metadata":{"labels":{"x":"y"}}}
agent deny PATCH /apis/apps.kruise.io/v1alpha1/nodeimages/kwok-node-0?dryRun=All merge {"spec":{"images":{}}}
agent allow -n default get secret cloneset-pull
# ...and nothing else: other Secrets, pod writes beyond pods/status, ImagePullJobs, NodeImage specs, nodes.
agent deny -n default get secret other
agent deny -n default get secrets
agent deny -n rbac-other get secret cloneset-pull
agent deny -n kube-system get secrets
agent deny -n default patch pod rbac-probe --type=merge -p {"metadata":{"labels":{"x":"y"}}}
agent deny -n default label pod rbac-probe x=y
agent deny -n default delete pod rbac-probe
agent deny -n default run rbac-agent-pod --image=registry.example/probe:1 --restart=Never --dry-run=server
agent deny create --raw /api/v1/namespaces/default/pods/rbac-probe/eviction -f POD_EVICTION
agent deny -n default get imagepulljobs.apps.kruise.io
agent deny PATCH /apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs/rbac-probe?dryRun=All merge {"spec":{"parallelism":2}}
agent deny -n default delete imagepulljobs.apps.kruise.io rbac-probe
agent deny delete nodeimages.apps.kruise.io kwok-node-0
agent deny get nodes
agent deny -n default get clonesets.apps.kruise.io
agent deny -n default get configmaps
# The executor: what it writes for CloneSets (pods, claims, revisions, status, events, pull jobs, NodeImages,
# its Leases) and the nodes it reads for topology.
executor allow get clonesets.apps.kruise.io -A
executor allow -n default patch clonesets.apps.kruise.io rbac-probe --subresource=status --type=merge -p {"status":{"observedGeneration":1}} --dry-run=server
executor allow -n default run rbac-executor-pod --image=registry.example/probe:1 --restart=Never --dry-run=server
executor allow -n default delete pod rbac-probe --dry-run=server
executor allow -n default auth can-i patch pods --subresource=resize
executor allow -n default create -f PVC --dry-run=server
executor allow -n default get controllerrevisions
executor allow -n default create -f EVENT --dry-run=server
executor allow get nodes
executor allow get storageclasses.storage.k8s.io
executor deny patch storageclasses.storage.k8s.io standard --type=merge -p {"allowVolumeExpansion":true} --dry-run=server
executor allow -n cloneset-system create -f LEASE --dry-run=server
executor allow -n default delete imagepulljobs.apps.kruise.io rbac-probe --dry-run=server
executor allow delete nodeimages.apps.kruise.io kwok-node-0 --dry-run=server
# ...and nothing else.
# Events are created and patched (kube/event_recorder.cc), never replaced.
executor deny PUT /api/v1/namespaces/default/events/rbac-probe?dryRun=All json {"apiVersion":"v1","kind":"Event","metadata":{"name":"rbac-probe","namespace":"default"},"involvedObject":{"kind":"Pod","name":"rbac-probe","namespace":"default"},"reason":"Probe"}
executor deny -n default get secret cloneset-pull
executor deny -n kube-system get secrets
executor deny -n default get configmaps
executor deny label node kwok-node-0 x=y
executor deny delete node kwok-node-0
executor deny -n kube-system get leases
executor deny -n kube-system create -f LEASE --dry-run=server
executor deny -n default get leases
executor deny -n default create -f CLONESET --dry-run=server
executor deny -n default delete clonesets.apps.kruise.io rbac-probe
executor deny -n cloneset-system create token cloneset-local-agent
executor deny create namespace rbac-executor-ns
executor deny -n default get deployments
executor deny get clusterroles
executor deny -n default create rolebinding rbac-escalate --clusterrole=cluster-admin --serviceaccount=cloneset-system:cloneset-local-executor
# The planner: nothing at all.
planner deny get pods -A
planner deny -n default get clonesets.apps.kruise.io
planner deny get nodes
planner deny -n cloneset-system get leases
EOF
)

# The cluster CA, for curl.
sed -n 's/^    certificate-authority-data: //p' "$RUN_DIR/kubeconfig" | base64 -d >"$TMP/ca.crt"

# Manifests named in CHECKS (kubectl -f takes files; -f - would need stdin per check).
cat >"$TMP/POD_EVICTION" <<'EOF'
apiVersion: policy/v1
kind: Eviction
metadata: {name: rbac-probe, namespace: default}
EOF
cat >"$TMP/EVENT" <<'EOF'
apiVersion: v1
kind: Event
metadata: {name: rbac-probe}
involvedObject: {kind: Pod, name: rbac-probe, namespace: default}
reason: Probe
message: RBAC probe
type: Normal
source: {component: rbac-test}
EOF
cat >"$TMP/PVC" <<'EOF'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: rbac-probe}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF
cat >"$TMP/LEASE" <<'EOF'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: rbac-probe}
spec: {holderIdentity: rbac-probe}
EOF
cat >"$TMP/CLONESET" <<'EOF'
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: rbac-probe-2}
spec:
  replicas: 0
  selector: {matchLabels: {app: rbac-cs2}}
  template:
    metadata: {labels: {app: rbac-cs2}}
    spec:
      containers: [{name: c, image: registry.example/probe:1}]
EOF

n=0 bad=0
while read -r component expect args; do
  [ -z "$component" ] || [ "${component:0:1}" = "#" ] && continue
  kcfg="$RUN_DIR/kubeconfig-$component"; [ "$component" = planner ] && kcfg="$TMP/kubeconfig-planner"
  read -r -a argv <<<"$args"
  for i in "${!argv[@]}"; do
    case "${argv[$i]}" in POD_EVICTION|PVC|LEASE|CLONESET|EVENT) argv[$i]="$TMP/${argv[$i]}" ;; esac
  done
  n=$((n + 1))
  case "${argv[0]}" in
    GET|POST|PUT|PATCH|DELETE)
      ctype=application/json
      case "${argv[2]:-}" in strategic) ctype=application/strategic-merge-patch+json ;;
        merge) ctype=application/merge-patch+json ;; esac
      server=$(sed -n 's/^    server: //p' "$kcfg")
      token=$(sed -n 's/^    token: //p' "$kcfg")
      code=$(curl -sS --max-time 10 --cacert "$TMP/ca.crt" -o "$TMP/body" -w '%{http_code}' -X "${argv[0]}" \
        -H "Authorization: Bearer $token" -H "Content-Type: $ctype" ${argv[3]:+--data-binary "${argv[3]}"} \
        "$server${argv[1]}") || code=000
      out="HTTP $code: $(tr -d '\\\n' <"$TMP/body")"  # the Status message without JSON's escapes
      rc=0; case "$code" in 2??) ;; *) rc=1 ;; esac
      [ "$expect" = allow ] || [ "$code" = 403 ] || rc=0 ;;  # a deny must be a 403, not any other refusal
    *) if out=$(kubectl --kubeconfig "$kcfg" --request-timeout=10s "${argv[@]}" 2>&1); then rc=0; else rc=$?; fi ;;
  esac
  sa="system:serviceaccount:$NS:$RELEASE-$component"
  case "$expect" in
    allow)
      if [ "$rc" != 0 ]; then echo "WANT ALLOWED: $component: $args: $out"; bad=$((bad + 1)); continue; fi
      echo "allowed  $component: $args" ;;
    deny)
      # The API server's 403 Status message, which kubectl prints: '... is forbidden: User "<sa>" cannot ...'.
      if [ "$rc" = 0 ] || ! grep -qF "forbidden: User \"$sa\" cannot" <<<"$out"; then
        echo "WANT 403 NAMING $sa: $component: $args (exit $rc): $out"; bad=$((bad + 1)); continue
      fi
      echo "denied   $component: $args: $(grep -o 'cannot .*' <<<"$out" | head -1 | sed 's/", *"reason".*//')" ;;
    *) fail "bad check line: $component $expect $args" ;;
  esac
done <<<"$CHECKS"
[ "$bad" = 0 ] || fail "$bad of $n RBAC checks did not get the expected answer (above)"
echo "$n RBAC checks as expected"

# The same identities at work: `./run up` again in this RUN_DIR starts the planner, an executor and, on the kwok
# node, cloneset-sim-cri and an agent. An ImagePullJob with the pull Secret: the executor asks the node's NodeImage
# for the image, the agent reads the Secret (its one allowed get), pulls through CRI and reports, the job completes;
# neither component gets a 403.
"$SRC/run" up --cluster real --nodes 1 >"$TMP/up2.log" 2>&1 || { cat "$TMP/up2.log"; fail "./run up --cluster real --nodes 1"; }
admin apply -f - >/dev/null <<'EOF' || fail "creating the ImagePullJob"
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: rbac-pull, namespace: default}
spec:
  image: registry.example/probe:3
  pullSecrets: [cloneset-pull]
  podSelector: {matchLabels: {app: rbac-probe}}
EOF
deadline=$((SECONDS + 60))
until [ "$(admin get imagepulljobs.apps.kruise.io rbac-pull -n default -o jsonpath='{.status.phase}/{.status.succeeded}')" = Complete/1 ]; do
  [ $SECONDS -lt $deadline ] || { admin get imagepulljobs.apps.kruise.io,nodeimages.apps.kruise.io -A -o yaml | tail -40
    fail "the ImagePullJob did not complete on kwok-node-0 within 60 s"; }
  sleep 1
done
grep -q '"msg":"pulled".*registry.example/probe:3\|registry.example/probe:3.*"msg":"pulled"' "$RUN_DIR/agent-0.log" ||
  fail "agent-0 did not log the pull of registry.example/probe:3"
for c in executor-0 agent-0; do
  metrics=$(curl -sf "$(grep -m1 -o 'metrics on http://[0-9.:]*' "$RUN_DIR/$c.log" | cut -d' ' -f3)/metrics") ||
    fail "$c's /metrics"
  if grep '^rest_client_requests_total{code="403"' <<<"$metrics"; then fail "$c was refused by RBAC (above)"; fi
done
echo "pre-download with the pull Secret completed on kwok-node-0 (executor and agent identities, no 403)"
echo "PASS"
