#!/usr/bin/env bash
# Size: one driver and its cases, each a function the command line names; they share the helpers and the cluster
# that `up` starts once for all the cases of a run, which one file per case would start again.
# The two backends compared: the same assertions, each what a real kube-apiserver 1.34 (with kube-controller-manager
# and kube-scheduler) answers, run against the embedded cluster and against the real control plane. Each case starts
# from `./run up [--cluster real] --nodes 2 --no-agents` (planner and executor running) in a private RUN_DIR.
# Usage: compare_test.sh embedded|real REPO_ROOT CASE...     (BUILD_DIR names the build tree)
# Cases (one per compared item; docs/testing.md lists what each found):
#   pod_patches      which pod updates the API server accepts: metadata, image, activeDeadlineSeconds (decrease),
#                    tolerations (additions) -> 200; any other spec change -> 422 naming the field
#   pod_defaulting   the executor's pods as stored (defaulted by the server) keep their revision; an in-place image
#                    update is not read as a spec change (same UID, restartCount + 1, new revision, no recreate)
#   subresources     the CloneSet CRD's scale (GET/PUT/PATCH, kubectl scale) and status subresources: a status write
#                    ignores spec, a main write ignores status
#   watch_expired    after the API server restarts, a watch from a resourceVersion it no longer holds gets an ERROR
#                    event: 410 Expired, "too old resource version"; a relist's resourceVersion works, and the
#                    executor, still running, relists and acts
#   bookmarks        allowWatchBookmarks: BOOKMARK events; sendInitialEvents: the initial ADDED events then a
#                    BOOKMARK annotated k8s.io/initial-events-end
#   gc               a CloneSet with pods and PVCs deleted with propagation Background, Foreground and Orphan
#   server_side      kubectl apply --server-side of seed 000's CloneSet, then a field-manager conflict
#   kubectl133       kubectl 1.33 workflows of the seeds: get -w, edits, explain, auth can-i
#   pod_resize       the pods/resize subresource: cpu/memory change (and nothing else of the write), the
#                    generation; each refusal with its message; the pods endpoint refusing resources changes
#   pvc_resize       a Bound claim's storage request grown (its class allows expansion, or not) and shrunk to its
#                    capacity: the answer and message of each
#   refusals         admission's lasting refusals of a pod create, as the executor meets them: a ResourceQuota's
#                    pods limit (403 "exceeded quota: ...") and a namespace being terminated (403, cause
#                    NamespaceTerminating)
set -uo pipefail
BACKEND="${1:?usage: compare_test.sh embedded|real REPO_ROOT CASE...}"
ROOT="${2:?usage: compare_test.sh embedded|real REPO_ROOT CASE...}"
shift 2
[ $# -gt 0 ] || { echo "FAIL: no case named (usage: compare_test.sh embedded|real REPO_ROOT CASE...)" >&2; exit 1; }
case "$BACKEND" in embedded|real) ;; *) echo "FAIL: backend must be embedded or real, got '$BACKEND'" >&2; exit 1 ;; esac
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
for t in kubectl curl python3; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
KDIR=$(dirname "$(readlink -f "$(command -v kubectl)")")
K133="$KDIR/kubectl.1.33"
[ -x "$K133" ] || { echo "FAIL: no kubectl.1.33 beside $(command -v kubectl) (./run deps installs it)" >&2; exit 1; }
SEEDS="$ROOT/tests/data/seed000"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/compare.XXXXXX")"
export RUN_DIR="$TMP/run" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
PASS=0 FAIL=0 CASE=""

cleanup() {
  local rc=$?
  "$ROOT/run" down --purge >/dev/null 2>&1 || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # ctest's timeout: still take the cluster down

# real_only DIFFERENCE: true on the real control plane; on the embedded cluster it prints the difference (written in
# docs/compatibility.md) and the caller leaves the check out.
real_only() {
  [ "$BACKEND" = real ] && return 0
  echo "left out on embedded ($CASE): $1"
  return 1
}
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); local m="$*"; echo "FAIL [$BACKEND $CASE]: ${m:0:700}" >&2; }
expect_eq() { if [ "$2" == "$3" ]; then ok; else bad "$1: want [$2] got [$3]"; fi; }
expect_contains() { if [[ "$3" == *"$2"* ]]; then ok; else bad "$1: [$2] not in [$3]"; fi; }
kc() { kubectl --request-timeout=20s "$@"; }
# poll SECONDS DESCRIPTION COMMAND...: retry every 0.5 s until COMMAND succeeds; 1 (and a failure) on timeout.
poll() {
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then bad "timed out after ${secs}s waiting for $what"; return 1; fi
    sleep 0.5
  done
}
# api METHOD PATH [curl args...]: prints "<http code> <body>".
api() {
  local m="$1" p="$2"; shift 2
  # Not curl's own User-Agent: kube-apiserver pretty-prints JSON for curl and wget.
  curl -sk -o "$TMP/body" -w '%{http_code}' -X "$m" -H "Authorization: Bearer $TOKEN" -A compare-test "$@" "$SERVER$p"
  echo " $(cat "$TMP/body")"
}
code_of() { echo "${1%% *}"; }
# json EXPR: evaluates a Python expression over the JSON document on stdin (bound to d).
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

up() {
  local args=(--nodes 2 --no-agents)
  [ "$BACKEND" = real ] && args+=(--cluster real)
  "$ROOT/run" up "${args[@]}" >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log" >&2; echo "FAIL: ./run up ${args[*]}" >&2; exit 1; }
  export KUBECONFIG="$RUN_DIR/kubeconfig"
  SERVER=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
  TOKEN=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
  [ -n "$SERVER" ] && [ -n "$TOKEN" ] || { echo "FAIL: no server or token in $KUBECONFIG" >&2; exit 1; }
}

# namespace NAME: creates it and waits until pods may be created in it (on real, once the controller manager gave
# it its `default` ServiceAccount; the embedded cluster has no ServiceAccount admission).
namespace() {
  printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$1" | kc apply -f - >/dev/null
  [ "$BACKEND" = embedded ] || poll 60 "namespace $1 ready for pods" kc -n "$1" get serviceaccount default
}

# cloneset NS NAME REPLICAS IMAGE [CLAIM]: a small InPlaceIfPossible CloneSet (with a per-pod claim of the default
# class when CLAIM is "claim").
cloneset() {
  local vct=""
  [ "${5:-}" = claim ] && vct='
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}'
  kc apply -f - >/dev/null <<YAML
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: $2, namespace: $1, labels: {app: $2}}
spec:
  replicas: $3
  selector: {matchLabels: {app: $2}}
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 2}
  template:
    metadata: {labels: {app: $2}}
    spec:
      containers:
      - name: main
        image: $4
        env: [{name: MODE, value: test}]$( [ "${5:-}" = claim ] && printf '\n        volumeMounts: [{name: data, mountPath: /data}]' )$vct
YAML
}
# ready NS NAME N: the CloneSet has N ready pods, all updated, and observed its generation.
ready() {
  local s; s=$(kc -n "$1" get cloneset "$2" -o json) || return 1
  [ "$(echo "$s" | json '"%s %s %s" % (d["status"].get("readyReplicas",0), d["status"].get("updatedReadyReplicas",0), d["status"].get("observedGeneration")==d["metadata"]["generation"])')" = "$3 $3 True" ]
}
# pods NS APP: "name uid restartCount revision" per pod, sorted.
pods() {
  kc -n "$1" get pods -l "app=$2" -o json | json '"\n".join(sorted("%s %s %s %s" % (p["metadata"]["name"], p["metadata"]["uid"], sum(c.get("restartCount",0) for c in p["status"].get("containerStatuses",[])), p["metadata"]["labels"].get("controller-revision-hash","")) for p in d["items"] if not p["metadata"].get("deletionTimestamp")))'
}
gone() { ! kc -n "$1" get "$2" "$3" >/dev/null 2>&1; }
none_left() { [ -z "$(kc -n "$1" get "$2" -l "$3" -o name 2>/dev/null)" ]; }

# --- pod_patches -----------------------------------------------------------------------------------------------------
case_pod_patches() {
  local ns=cmp-patches p=/api/v1/namespaces/cmp-patches/pods/web
  namespace $ns
  kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: $ns, labels: {app: web}}
spec:
  activeDeadlineSeconds: 3600
  tolerations: [{key: a, operator: Exists, effect: NoSchedule}]
  containers:
  - {name: main, image: "busybox:1.36", env: [{name: A, value: "1"}]}
YAML
  local smp=(-H 'Content-Type: application/strategic-merge-patch+json') mp=(-H 'Content-Type: application/merge-patch+json')
  local jp=(-H 'Content-Type: application/json-patch+json') r
  r=$(api PATCH $p "${mp[@]}" -d '{"metadata":{"labels":{"tier":"front"},"annotations":{"note":"x"}}}')
  expect_eq "metadata patch" 200 "$(code_of "$r")"
  r=$(api PATCH $p "${smp[@]}" -d '{"spec":{"containers":[{"name":"main","image":"busybox:1.37"}]}}')
  expect_eq "image patch (strategic merge)" "200 busybox:1.37" "$(code_of "$r") $(echo "${r#* }" | json 'd["spec"]["containers"][0]["image"]')"
  r=$(api PATCH $p "${jp[@]}" -d '[{"op":"replace","path":"/spec/containers/0/image","value":"busybox:1.38"}]')
  expect_eq "image patch (JSON patch)" 200 "$(code_of "$r")"
  r=$(api PATCH $p "${mp[@]}" -d '{"spec":{"activeDeadlineSeconds":1800}}')
  expect_eq "activeDeadlineSeconds decreased" 200 "$(code_of "$r")"
  r=$(api PATCH $p "${mp[@]}" -d '{"spec":{"activeDeadlineSeconds":7200}}')
  expect_eq "activeDeadlineSeconds increased: 422" 422 "$(code_of "$r")"
  expect_contains "activeDeadlineSeconds increased: field" 'spec.activeDeadlineSeconds' "$r"
  r=$(api PATCH $p "${jp[@]}" -d '[{"op":"add","path":"/spec/tolerations/-","value":{"key":"b","operator":"Exists","effect":"NoExecute"}}]')
  expect_eq "toleration added" 200 "$(code_of "$r")"
  r=$(api PATCH $p "${jp[@]}" -d '[{"op":"remove","path":"/spec/tolerations/0"}]')
  expect_eq "toleration removed: 422" 422 "$(code_of "$r")"
  r=$(api PATCH $p "${smp[@]}" -d '{"spec":{"containers":[{"name":"main","env":[{"name":"A","value":"2"}]}]}}')
  expect_eq "env changed: 422" 422 "$(code_of "$r")"
  expect_contains "env changed: reason" '"reason":"Invalid"' "$r"
  expect_contains "env changed: field" 'spec: Forbidden: pod updates may not change fields other than' "$r"
  expect_contains "env changed: the mutable fields listed" 'spec.containers[*].image' "$r"
  r=$(api PATCH $p "${mp[@]}" -d '{"spec":{"restartPolicy":"Never"}}')
  expect_eq "restartPolicy changed: 422" 422 "$(code_of "$r")"
  r=$(api PATCH $p "${jp[@]}" -d '[{"op":"replace","path":"/spec/containers/0/name","value":"renamed"}]')
  expect_eq "container renamed: 422" 422 "$(code_of "$r")"
  # What was accepted is stored; what was refused is not.
  expect_eq "stored" "busybox:1.38 1800 2 1 front" "$(kc -n $ns get pod web -o json | json '"%s %s %s %s %s" % (d["spec"]["containers"][0]["image"], d["spec"]["activeDeadlineSeconds"], len(d["spec"]["tolerations"]) - sum(1 for t in d["spec"]["tolerations"] if t.get("key","").startswith("node.kubernetes.io/")), d["spec"]["containers"][0]["env"][0]["value"], d["metadata"]["labels"]["tier"])')"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- pod_defaulting --------------------------------------------------------------------------------------------------
case_pod_defaulting() {
  local ns=cmp-default
  namespace $ns
  cloneset $ns web 2 busybox:1.36
  poll 120 "2 ready pods" ready $ns web 2 || return
  local rev pod before
  rev=$(kc -n $ns get cloneset web -o jsonpath='{.status.updateRevision}')
  pod=$(kc -n $ns get pods -l app=web -o json | json 'json.dumps(d["items"][0])')
  # Fields the API server defaults on every pod (both backends), so the executor's pods as read back differ from
  # the template it wrote.
  expect_eq "defaulted pod fields" "File /dev/termination-log IfNotPresent Always ClusterFirst default-scheduler 30 True" \
    "$(echo "$pod" | json '"%s %s %s %s %s %s %s %s" % (d["spec"]["containers"][0].get("terminationMessagePolicy"), d["spec"]["containers"][0].get("terminationMessagePath"), d["spec"]["containers"][0].get("imagePullPolicy"), d["spec"].get("restartPolicy"), d["spec"].get("dnsPolicy"), d["spec"].get("schedulerName"), d["spec"].get("terminationGracePeriodSeconds"), d["spec"].get("enableServiceLinks"))')"
  expect_eq "pods on the update revision" "web-$rev web-$rev" \
    "$(kc -n $ns get pods -l app=web -o jsonpath='{range .items[*]}web-{.metadata.labels.controller-revision-hash}{" "}{end}' | sed 's/ $//')"
  before=$(pods $ns web)
  # Idle: the executor must not read the server's defaults as a template change (no update, no recreate).
  sleep 10
  expect_eq "idle: pods untouched" "$before" "$(pods $ns web)"
  expect_eq "idle: revision unchanged" "$rev" "$(kc -n $ns get cloneset web -o jsonpath='{.status.updateRevision}')"
  # An in-place image update: same pods, restarted once, on the new revision; then quiet again.
  kc -n $ns patch cloneset web --type=json \
    -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.37"}]' >/dev/null
  local newrev=""
  newrev_set() { newrev=$(kc -n $ns get cloneset web -o jsonpath='{.status.updateRevision}'); [ -n "$newrev" ] && [ "$newrev" != "$rev" ]; }
  poll 60 "a new update revision" newrev_set || return
  updated() { [ "$(kc -n $ns get cloneset web -o jsonpath='{.status.updatedReadyReplicas}/{.status.readyReplicas}')" = 2/2 ] &&
    [ "$(pods $ns web | awk '{print $3}' | sort -u)" = 1 ]; }
  poll 120 "both pods updated in place and ready" updated || return
  local after; after=$(pods $ns web)
  expect_eq "in place: same names and UIDs" "$(echo "$before" | awk '{print $1, $2}')" "$(echo "$after" | awk '{print $1, $2}')"
  expect_eq "in place: restarted once, new revision" "1 $newrev" "$(echo "$after" | awk '{print $3, $4}' | sort -u)"
  expect_eq "in place: image" "busybox:1.37 busybox:1.37" \
    "$(kc -n $ns get pods -l app=web -o jsonpath='{range .items[*]}{.spec.containers[0].image}{" "}{end}' | sed 's/ $//')"
  sleep 10
  expect_eq "after the update: pods untouched" "$after" "$(pods $ns web)"
  # A template change the API server refuses for a pod (env) is not done in place: the pods are recreated.
  kc -n $ns patch cloneset web --type=json \
    -p '[{"op":"replace","path":"/spec/template/spec/containers/0/env/0/value","value":"other"}]' >/dev/null
  recreated() { local now; now=$(pods $ns web); [ "$(echo "$now" | wc -l)" = 2 ] &&
    [ -z "$(comm -12 <(echo "$after" | awk '{print $2}' | sort) <(echo "$now" | awk '{print $2}' | sort))" ] && ready $ns web 2; }
  poll 180 "both pods recreated for the env change" recreated
  expect_eq "no refused pod write in the executor's log" "" \
    "$(grep -hE 'Forbidden: pod updates|Pod \\?"[^"]*\\?" is invalid' "$RUN_DIR"/executor-*.log | head -3)"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- subresources ----------------------------------------------------------------------------------------------------
case_subresources() {
  local ns=cmp-sub base=/apis/apps.kruise.io/v1alpha1/namespaces/cmp-sub/clonesets/web r
  namespace $ns
  cloneset $ns web 1 busybox:1.36
  poll 120 "1 ready pod" ready $ns web 1 || return
  r=$(api GET $base/scale)
  expect_eq "GET scale" "200 Scale autoscaling/v1 1 1 app=web" \
    "$(code_of "$r") $(echo "${r#* }" | json '"%s %s %s %s %s" % (d["kind"], d["apiVersion"], d["spec"]["replicas"], d["status"]["replicas"], d["status"].get("selector"))')"
  local scale rv; scale="${r#* }"
  scale=$(echo "$scale" | json 'json.dumps(dict(d, spec={"replicas": 2}))')
  r=$(api PUT $base/scale -H 'Content-Type: application/json' -d "$scale")
  expect_eq "PUT scale" "200 2" "$(code_of "$r") $(echo "${r#* }" | json 'd["spec"]["replicas"]')"
  r=$(api PATCH $base/scale -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"replicas":3}}')
  expect_eq "PATCH scale" "200 3" "$(code_of "$r") $(echo "${r#* }" | json 'd["spec"]["replicas"]')"
  r=$(api PUT $base/scale -H 'Content-Type: application/json' -d '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"cmp-sub","resourceVersion":"1"},"spec":{"replicas":4}}')
  expect_eq "PUT scale with a stale resourceVersion" 409 "$(code_of "$r")"
  r=$(api PATCH $base/scale -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"replicas":-1}}')
  expect_eq "negative scale: 422" 422 "$(code_of "$r")"
  expect_eq "kubectl scale" "cloneset.apps.kruise.io/web scaled" "$(kc -n $ns scale cloneset web --replicas=4 2>&1)"
  expect_eq "spec.replicas after scale" 4 "$(kc -n $ns get cloneset web -o jsonpath='{.spec.replicas}')"
  poll 120 "4 ready pods" ready $ns web 4
  expect_eq "scale status follows" 4 "$(api GET $base/scale | cut -d' ' -f2- | json 'd["status"]["replicas"]')"
  # Status write: spec changes in the body are ignored. Main write: status changes are ignored. (The executor writes
  # the status too, so a 409 is retried with a fresh read; read in v1alpha1, the version of $base, not kubectl's
  # default v1beta1.)
  local i out
  for i in 1 2 3 4 5; do
    out=$(kc -n $ns get clonesets.v1alpha1.apps.kruise.io web -o json | json 'json.dumps(dict(d, spec=dict(d["spec"], replicas=9), status=dict(d["status"], labelSelector="written-by-test")))')
    r=$(api PUT $base/status -H 'Content-Type: application/json' -d "$out")
    [ "$(code_of "$r")" = 409 ] || break
  done
  expect_eq "PUT status: spec ignored, status stored" "200 4 written-by-test" \
    "$(code_of "$r") $(echo "${r#* }" | json '"%s %s" % (d["spec"]["replicas"], d["status"].get("labelSelector"))')"
  for i in 1 2 3 4 5; do
    out=$(kc -n $ns get clonesets.v1alpha1.apps.kruise.io web -o json | json 'json.dumps(dict(d, spec=dict(d["spec"], minReadySeconds=1), status=dict(d["status"], replicas=77)))')
    r=$(api PUT $base -H 'Content-Type: application/json' -d "$out")
    [ "$(code_of "$r")" = 409 ] || break
  done
  expect_eq "PUT main: spec stored, status ignored" "200 1 True" \
    "$(code_of "$r") $(echo "${r#* }" | json '"%s %s" % (d["spec"]["minReadySeconds"], d["status"].get("replicas") != 77)')"
  r=$(api PATCH $base/status -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"replicas":1}}')
  expect_eq "PATCH status with a spec change: spec kept" "200 4" "$(code_of "$r") $(echo "${r#* }" | json 'd["spec"]["replicas"]')"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- watch_expired ---------------------------------------------------------------------------------------------------
# restart_api_server: kills the API server alone (kube-apiserver; the embedded cluster) and lets `./run up` restart
# it on the same address with the same data; the executor and planner keep running, so their informers, whose
# watches resume from resourceVersions older than the restarted server keeps, must relist.
restart_api_server() {
  local name=devcluster pid
  [ "$BACKEND" = real ] && name=kube-apiserver
  pid=$(cat "$RUN_DIR/$name.pid")
  kill -KILL "$pid"  # a crash: kube-apiserver's graceful shutdown drains watches for longer than the test waits
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  up
}
case_watch_expired() {
  local ns=cmp-watch p=/api/v1/namespaces/cmp-watch/configmaps sel='labelSelector=t%3Dw' out ev old_rv rv
  namespace $ns
  cloneset $ns web 1 busybox:1.36
  poll 120 "1 ready pod" ready $ns web 1 || return
  kc -n $ns create configmap one >/dev/null && kc -n $ns label configmap one t=w >/dev/null
  old_rv=$(api GET "$p" | cut -d' ' -f2- | json 'd["metadata"]["resourceVersion"]')
  kc -n $ns create configmap two >/dev/null  # a write after old_rv, so the restarted server starts past it
  # Before the restart the server still has old_rv: the watch resumes (and sees 'two' labelled).
  (sleep 1; kc -n $ns label configmap two t=w >/dev/null) &
  out=$(curl -sk -m 10 -A compare-test -H "Authorization: Bearer $TOKEN" "$SERVER$p?$sel&watch=1&resourceVersion=$old_rv&timeoutSeconds=4")
  wait
  expect_eq "watch from a kept resourceVersion" "ADDED two" \
    "$(echo "$out" | head -1 | json '"%s %s" % (d["type"], d["object"]["metadata"]["name"])' 2>&1)"
  restart_api_server
  # After it the server's watch history starts at its restart (kube-apiserver's watch cache at its first list; the
  # embedded cluster's history at the loaded state): a watch from old_rv gets one ERROR event, 410 Expired.
  out=$(curl -sk -m 10 -A compare-test -H "Authorization: Bearer $TOKEN" "$SERVER$p?$sel&watch=1&resourceVersion=$old_rv&timeoutSeconds=5")
  ev=$(echo "$out" | head -1)
  expect_eq "too old: one ERROR event, 410 Expired" "ERROR Status Failure Expired 410" \
    "$(echo "$ev" | json '"%s %s %s %s %s" % (d["type"], d["object"]["kind"], d["object"]["status"], d["object"]["reason"], d["object"]["code"])' 2>&1)"
  expect_contains "too old: message" "too old resource version: $old_rv (" "$ev"
  expect_eq "too old: nothing after the ERROR" 1 "$(echo "$out" | grep -c .)"
  # The client's answer (an informer's relist): list, then watch from the list's resourceVersion.
  rv=$(api GET "$p" | cut -d' ' -f2- | json 'd["metadata"]["resourceVersion"]')
  (sleep 1; kc -n $ns create configmap three >/dev/null; kc -n $ns label configmap three t=w >/dev/null) &
  out=$(curl -sk -m 10 -A compare-test -H "Authorization: Bearer $TOKEN" "$SERVER$p?$sel&watch=1&resourceVersion=$rv&timeoutSeconds=4")
  wait
  expect_eq "watch from the relist's resourceVersion" "ADDED three" \
    "$(echo "$out" | head -1 | json '"%s %s" % (d["type"], d["object"]["metadata"]["name"])' 2>&1)"
  # The executor kept running across the restart: its informers met the same 410, relisted, and it still acts.
  kc -n $ns scale cloneset web --replicas=2 >/dev/null
  poll 120 "the executor (informers relisted) to scale to 2 ready pods" ready $ns web 2
  # kubectl get -w relists the same way.
  timeout 8 "$K133" -n $ns get configmaps -l t=w -w --output-watch-events >"$TMP/w.out" 2>&1 &
  local wpid=$!
  sleep 3; kc -n $ns label configmap one t- >/dev/null; sleep 3
  kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
  expect_contains "kubectl get -w sees the change" "DELETED one" "$(tr -s ' ' <"$TMP/w.out")"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- bookmarks -------------------------------------------------------------------------------------------------------
case_bookmarks() {
  local ns=cmp-bm p=/api/v1/namespaces/cmp-bm/configmaps out sel='labelSelector=t%3Dbm'
  namespace $ns
  # (labelled: a real namespace also holds the controller manager's kube-root-ca.crt ConfigMap)
  kc -n $ns create configmap a >/dev/null && kc -n $ns label configmap a t=bm >/dev/null
  kc -n $ns create configmap b >/dev/null && kc -n $ns label configmap b t=bm >/dev/null
  # sendInitialEvents (the streaming list): ADDED for each object, then a BOOKMARK annotated
  # k8s.io/initial-events-end "true" whose resourceVersion resumes the watch.
  local events='
import json, sys
seen = []
for line in sys.stdin:
    e = json.loads(line)
    m = e["object"]["metadata"]
    if e["type"] == "BOOKMARK":
        seen.append("BOOKMARK:" + m.get("annotations", {}).get("k8s.io/initial-events-end", "-"))
        break
    seen.append(e["type"] + ":" + m["name"])
print(" ".join(seen))'
  out=$(curl -sk -m 10 -A compare-test -H "Authorization: Bearer $TOKEN" \
    "$SERVER$p?$sel&watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=3")
  expect_eq "initial events then the end bookmark" "ADDED:a ADDED:b BOOKMARK:true" "$(echo "$out" | python3 -c "$events" 2>&1)"
  local bm; bm=$(echo "$out" | grep '"BOOKMARK"' | head -1)
  expect_eq "bookmark object: kind and a resourceVersion" "ConfigMap True" \
    "$(echo "$bm" | json '"%s %s" % (d["object"]["kind"], d["object"]["metadata"]["resourceVersion"].isdigit())' 2>&1)"
  # Without allowWatchBookmarks: accepted, the initial events come, and no bookmark marks their end.
  out=$(curl -sk -m 10 -A compare-test -H "Authorization: Bearer $TOKEN" \
    "$SERVER$p?$sel&watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2")
  expect_eq "sendInitialEvents without bookmarks" "ADDED:a ADDED:b" "$(echo "$out" | python3 -c "$events" 2>&1)"
  # resourceVersionMatch other than NotOlderThan, or without sendInitialEvents, on a watch: 422 naming the field.
  out=$(api GET "$p?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact&resourceVersion=1&timeoutSeconds=1")
  expect_eq "sendInitialEvents with resourceVersionMatch=Exact: 422" 422 "$(code_of "$out")"
  expect_contains "... naming the field" "resourceVersionMatch" "$out"
  out=$(api GET "$p?watch=1&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
  expect_eq "resourceVersionMatch on a watch without sendInitialEvents: 422" 422 "$(code_of "$out")"
  # sendInitialEvents on a plain list is refused.
  out=$(api GET "$p?sendInitialEvents=true")
  expect_eq "sendInitialEvents on a list: 422" 422 "$(code_of "$out")"
  expect_contains "... naming the field" "sendInitialEvents" "$out"
  # (Progress bookmarks of an idle watch: kube-apiserver sends them about once a minute, the embedded cluster about
  # once a second; a minute-long watch per backend is left to tests/pyclient, docs/compatibility.md has the rest.)
  kc delete namespace $ns --wait=false >/dev/null
}

# --- gc --------------------------------------------------------------------------------------------------------------
case_gc() {
  local ns=cmp-gc name
  namespace $ns
  for name in bg fg orphan; do cloneset $ns $name 2 busybox:1.36 claim; done
  for name in bg fg orphan; do poll 180 "$name: 2 ready pods with claims" ready $ns $name 2 || return; done
  claims() { kc -n $ns get pvc -o json | json '" ".join(sorted(p["metadata"]["name"] for p in d["items"] if p["metadata"]["name"].startswith("data-'"$1"'-") and not p["metadata"].get("deletionTimestamp")))'; }
  local orphan_pods orphan_claims; orphan_pods=$(pods $ns orphan | awk '{print $1, $2}'); orphan_claims=$(claims orphan)
  expect_eq "claims per CloneSet" "2 2 2" "$(for n in bg fg orphan; do claims $n | wc -w; done | xargs)"
  # Background: the CloneSet goes at once; the garbage collector then deletes its pods and claims.
  kc -n $ns delete cloneset bg --cascade=background --wait=false >/dev/null
  poll 30 "bg deleted" gone $ns cloneset bg
  poll 120 "bg's pods collected" none_left $ns pods app=bg
  poll 120 "bg's claims collected" test -z "$(claims bg)"
  # Foreground: the CloneSet stays, with the foregroundDeletion finalizer, until its pods are gone; the executor
  # must not replace the pods the garbage collector deletes. One pod is held by a finalizer of the test's, so the
  # CloneSet's wait is seen whatever the machine's speed.
  local held; held=$(kc -n $ns get pods -l app=fg -o jsonpath='{.items[0].metadata.name}')
  kc -n $ns patch pod "$held" --type=merge -p '{"metadata":{"finalizers":["compare.test/hold"]}}' >/dev/null
  kc -n $ns delete cloneset fg --cascade=foreground --wait=false >/dev/null
  held_alone() { [ "$(kc -n $ns get pods -l app=fg -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.deletionTimestamp}{" "}{end}' | wc -w)" = 1 ] &&
    [ -n "$(kc -n $ns get pod "$held" -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
  poll 120 "fg: only the held pod left, being deleted" held_alone
  expect_contains "fg: waits with the foregroundDeletion finalizer" "foregroundDeletion" \
    "$(kc -n $ns get cloneset fg -o jsonpath='{.metadata.finalizers} {.metadata.deletionTimestamp}' 2>&1)"
  sleep 3
  expect_eq "fg: no replacement pod while the CloneSet is deleted" "$held" "$(kc -n $ns get pods -l app=fg -o jsonpath='{.items[*].metadata.name}')"
  kc -n $ns patch pod "$held" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
  poll 120 "fg deleted after its pods" gone $ns cloneset fg
  expect_eq "fg: no pod left" "" "$(kc -n $ns get pods -l app=fg -o name 2>&1)"
  poll 120 "fg's claims collected" test -z "$(claims fg)"
  # Orphan: the CloneSet goes; its pods and claims stay, without the owner reference to it.
  kc -n $ns delete cloneset orphan --cascade=orphan --wait=false >/dev/null
  poll 30 "orphan deleted" gone $ns cloneset orphan
  sleep 5
  expect_eq "orphan: pods kept" "$orphan_pods" "$(pods $ns orphan | awk '{print $1, $2}')"
  expect_eq "orphan: claims kept" "$orphan_claims" "$(claims orphan)"
  expect_eq "orphan: no owner reference left on the pods" "" \
    "$(kc -n $ns get pods -l app=orphan -o jsonpath='{range .items[*]}{.metadata.ownerReferences[*].kind}{end}')"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- server_side -----------------------------------------------------------------------------------------------------
case_server_side() {
  local ns=cmp-ssa out
  namespace $ns
  kc -n $ns apply -f "$SEEDS/configmap.yaml" >/dev/null
  expect_eq "server-side apply: created" "cloneset.apps.kruise.io/video-transcoder serverside-applied" \
    "$("$K133" -n $ns apply --server-side -f "$SEEDS/cloneset.yaml" 2>&1)"
  expect_eq "re-apply: unchanged content" "cloneset.apps.kruise.io/video-transcoder serverside-applied" \
    "$("$K133" -n $ns apply --server-side -f "$SEEDS/cloneset.yaml" 2>&1)"
  if real_only "no field managers: managedFields are not kept, so server-side apply never conflicts"; then
    expect_eq "managed by kubectl" "kubectl Apply" "$(kc -n $ns get cloneset video-transcoder --show-managed-fields -o json |
      json '" ".join("%s %s" % (m["manager"], m["operation"]) for m in d["metadata"]["managedFields"] if m["operation"] == "Apply")')"
    sed 's/replicas: 3/replicas: 4/' "$SEEDS/cloneset.yaml" >"$TMP/cs4.yaml"
    out=$("$K133" -n $ns apply --server-side --field-manager=platform -f "$TMP/cs4.yaml" 2>&1)
    expect_contains "another manager: conflict" 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' "$out"
    expect_eq "conflict: nothing changed" 3 "$(kc -n $ns get cloneset video-transcoder -o jsonpath='{.spec.replicas}')"
    expect_eq "force-conflicts" "cloneset.apps.kruise.io/video-transcoder serverside-applied" \
      "$("$K133" -n $ns apply --server-side --field-manager=platform --force-conflicts -f "$TMP/cs4.yaml" 2>&1)"
    expect_eq "platform owns spec.replicas now" "4 platform" "$(kc -n $ns get cloneset video-transcoder --show-managed-fields -o json |
      json '"%s %s" % (d["spec"]["replicas"], " ".join(m["manager"] for m in d["metadata"]["managedFields"] if "f:replicas" in m.get("fieldsV1",{}).get("f:spec",{})))')"
    # kubectl's apply again: spec.replicas is no longer its own, so its 3 conflicts with platform's 4.
    out=$("$K133" -n $ns apply --server-side -f "$SEEDS/cloneset.yaml" 2>&1)
    expect_contains "the first manager now conflicts" 'conflict with "platform"' "$out"
  else
    # What the embedded cluster does: the applied change is merged in.
    sed 's/replicas: 3/replicas: 4/' "$SEEDS/cloneset.yaml" >"$TMP/cs4.yaml"
    expect_eq "another manager's apply is merged" "cloneset.apps.kruise.io/video-transcoder serverside-applied 4" \
      "$("$K133" -n $ns apply --server-side --field-manager=platform -f "$TMP/cs4.yaml" 2>&1) $(kc -n $ns get cloneset video-transcoder -o jsonpath='{.spec.replicas}')"
  fi
  # The CRD's schema still applies to server-side apply.
  sed 's/replicas: 3/replicas: -2/' "$SEEDS/cloneset.yaml" >"$TMP/neg.yaml"
  expect_contains "invalid apply: 422 naming the field" "spec.replicas" \
    "$("$K133" -n $ns apply --server-side --force-conflicts -f "$TMP/neg.yaml" 2>&1)"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- kubectl133 ------------------------------------------------------------------------------------------------------
case_kubectl133() {
  local ns=cmp-kubectl out
  namespace $ns
  kc -n $ns apply -f "$SEEDS/configmap.yaml" >/dev/null
  "$K133" -n $ns apply -f "$SEEDS/cloneset.yaml" >/dev/null
  # get -w: one row now, one per change.
  timeout 12 "$K133" -n $ns get cloneset video-transcoder -w >"$TMP/w.out" 2>&1 &
  local wpid=$!
  sleep 3
  "$K133" -n $ns scale cloneset video-transcoder --replicas=4 >/dev/null
  local seen_4=0
  for _ in $(seq 1 16); do grep -q '^video-transcoder   4 ' "$TMP/w.out" && { seen_4=1; break; }; sleep 0.5; done
  kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
  expect_eq "get -w header" "NAME DESIRED UPDATED UPDATED_READY UPDATED_AVAILABLE READY TOTAL AGE" "$(head -1 "$TMP/w.out" | tr -s ' ')"
  expect_eq "get -w row for the scale" 1 "$seen_4"
  # Rollout-like edits: image by JSON patch, partition by merge patch, pause by merge patch; generation counts them.
  # kubectl's default version of CloneSets is v1beta1 (the CRD serves v1alpha1 too): rolling fields under rollingUpdate.
  local gen; gen=$("$K133" -n $ns get cloneset video-transcoder -o jsonpath='{.metadata.generation}')
  "$K133" -n $ns patch cloneset video-transcoder --type=json \
    -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"my-registry/video-transcoder:v1.3.0"}]' >/dev/null
  "$K133" -n $ns patch cloneset video-transcoder --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2,"paused":true}}}}' >/dev/null
  expect_eq "edits stored, generation +2" "my-registry/video-transcoder:v1.3.0 2 true $((gen + 2))" \
    "$("$K133" -n $ns get cloneset video-transcoder -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.updateStrategy.rollingUpdate.partition} {.spec.updateStrategy.rollingUpdate.paused} {.metadata.generation}')"
  out=$("$K133" -n $ns patch cloneset video-transcoder -p '{"spec":{"replicas":5}}' 2>&1)
  expect_contains "strategic merge patch of a custom resource: refused" "is not supported by apps.kruise.io/v1beta1, Kind=CloneSet" "$out"
  out=$("$K133" -n $ns set image cloneset/video-transcoder transcoder=x:1 2>&1)
  expect_contains "kubectl set image does not know CloneSets" 'error: no kind "CloneSet" is registered' "$out"
  # explain from the CRD's published schema.
  out=$("$K133" explain cloneset 2>&1)
  expect_contains "explain: kind" "KIND:       CloneSet" "$out"
  expect_contains "explain: group" "GROUP:      apps.kruise.io" "$out"
  expect_contains "explain: version" "VERSION:    v1beta1" "$out"
  out=$("$K133" explain cloneset.spec.updateStrategy.rollingUpdate.partition 2>&1)
  expect_contains "explain: a field" "FIELD: partition" "$out"
  # auth can-i: SelfSubjectAccessReview for the admin, SubjectAccessReview (--as) for the executor's identity.
  expect_eq "can-i: admin" "yes" "$("$K133" auth can-i delete clonesets.apps.kruise.io -n $ns 2>&1)"
  expect_eq "can-i --list works" 0 "$("$K133" auth can-i --list -n $ns >/dev/null 2>&1; echo $?)"
  "$K133" -n $ns delete cloneset video-transcoder --wait=false >/dev/null
  kc delete namespace $ns --wait=false >/dev/null
}

# --- pod_resize ------------------------------------------------------------------------------------------------------
case_pod_resize() {
  local ns=cmp-resize p=/api/v1/namespaces/cmp-resize/pods/web
  namespace $ns
  # Bound to a node that does not exist: no kubelet reports on it, so it has no container statuses and the API
  # server takes every resize (it refuses one only for running containers without status resources). Burstable.
  kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: $ns}
spec:
  nodeName: cmp-no-such-node
  containers:
  - name: main
    image: "busybox:1.36"
    resources:
      requests: {cpu: 100m, memory: 64Mi, ephemeral-storage: 1Gi}
      limits: {cpu: 200m, memory: 128Mi}
  - {name: side, image: "busybox:1.36"}
YAML
  local smp=(-H 'Content-Type: application/strategic-merge-patch+json') jp=(-H 'Content-Type: application/json-patch+json')
  local r gen
  gen=$(kc -n $ns get pod web -o jsonpath='{.metadata.generation}')
  expect_eq "qosClass set at creation" Burstable "$(kc -n $ns get pod web -o jsonpath='{.status.qosClass}')"
  r=$(api PATCH $p/resize "${smp[@]}" -d '{"metadata":{"labels":{"x":"y"}},"spec":{"containers":[{"name":"main","image":"busybox:1.37","resources":{"limits":{"cpu":"300m"},"requests":{"cpu":"150m"}}}]}}')
  expect_eq "resize: cpu changed, image and labels dropped" "200 300m 150m busybox:1.36 False $((gen + 1))"     "$(code_of "$r") $(echo "${r#* }" | json '"%s %s %s %s %s" % (d["spec"]["containers"][0]["resources"]["limits"]["cpu"], d["spec"]["containers"][0]["resources"]["requests"]["cpu"], d["spec"]["containers"][0]["image"], "x" in d["metadata"].get("labels", {}), d["metadata"]["generation"])')"
  expect_eq "GET pods/web/resize is the pod" "200 Pod web"     "$(r=$(api GET $p/resize); echo "$(code_of "$r") $(echo "${r#* }" | json '"%s %s" % (d["kind"], d["metadata"]["name"])')")"
  refused() {  # refused WHAT CONTENT_TYPE_ARGS... BODY MESSAGE
    local what="$1" body="${@: -2:1}" message="${@: -1}"
    r=$(api PATCH $p/resize "${@:2:$#-3}" -d "$body")
    expect_eq "$what: 422" 422 "$(code_of "$r")"
    expect_eq "$what: message" "Pod \"web\" is invalid: $message" "$(echo "${r#* }" | json 'd.get("message")')"
  }
  refused "other resource" "${smp[@]}" '{"spec":{"containers":[{"name":"main","resources":{"requests":{"ephemeral-storage":"2Gi"}}}]}}'     'spec: Forbidden: only cpu and memory resources are mutable'
  refused "limits removed" "${smp[@]}" '{"spec":{"containers":[{"name":"main","resources":{"limits":null}}]}}'     'spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed'
  refused "request above limit" "${smp[@]}" '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1"}}}]}}'     'spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 300m'
  refused "QoS class change" "${smp[@]}" '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"300m","memory":"128Mi"}}},{"name":"side","resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}}]}}'     'spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing'
  refused "container renamed" "${jp[@]}" '[{"op":"replace","path":"/spec/containers/1/name","value":"other"}]'     'spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize'
  r=$(api PATCH $p "${smp[@]}" -d '{"spec":{"containers":[{"name":"main","resources":{"limits":{"cpu":"400m"}}}]}}')
  expect_eq "resources through the pods endpoint: 422" 422 "$(code_of "$r")"
  expect_contains "resources through the pods endpoint: message" 'spec: Forbidden: pod updates may not change fields other than' "$r"
  expect_eq "only the accepted resize is stored" "300m 150m 128Mi"     "$(kc -n $ns get pod web -o jsonpath='{.spec.containers[0].resources.limits.cpu} {.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.limits.memory}')"
  expect_eq "not for configmaps" 404 "$(code_of "$(api GET /api/v1/namespaces/$ns/configmaps/x/resize)")"
  kc delete namespace $ns --wait=false >/dev/null
}

# --- pvc_resize ------------------------------------------------------------------------------------------------------
case_pvc_resize() {
  local ns=cmp-pvc-resize c=/api/v1/namespaces/cmp-pvc-resize/persistentvolumeclaims
  namespace $ns
  local allow
  for allow in true false; do
    kc apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: cmp-expand-$allow}
provisioner: cloneset.test/hostpath-provisioner
allowVolumeExpansion: $allow
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim-$allow, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: cmp-expand-$allow
  resources: {requests: {storage: 1Gi}}
YAML
  done
  local i phases
  for i in $(seq 1 60); do
    phases=$(kc -n $ns get pvc claim-true claim-false -o jsonpath='{.items[*].status.phase}')
    [ "$phases" = "Bound Bound" ] && break
    sleep 1
  done
  expect_eq "both claims bound" "Bound Bound" "$phases"
  local mp=(-H 'Content-Type: application/merge-patch+json') r
  r=$(api PATCH $c/claim-false "${mp[@]}" -d '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
  expect_eq "grow, class without expansion: 403" 403 "$(code_of "$r")"
  expect_eq "grow, class without expansion: message" \
    'persistentvolumeclaims "claim-false" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize' \
    "$(echo "${r#* }" | json 'd.get("message")')"
  r=$(api PATCH $c/claim-true "${mp[@]}" -d '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
  expect_eq "grow, class with expansion" "200 2Gi" "$(code_of "$r") $(echo "${r#* }" | json 'd["spec"]["resources"]["requests"]["storage"]')"
  r=$(api PATCH $c/claim-true "${mp[@]}" -d '{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}')
  expect_eq "shrink to the capacity: 422" 422 "$(code_of "$r")"
  expect_eq "shrink to the capacity: message" \
    'PersistentVolumeClaim "claim-true" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity' \
    "$(echo "${r#* }" | json 'd.get("message")')"
  kc delete namespace $ns --wait=false >/dev/null
  kc delete storageclass cmp-expand-true cmp-expand-false --wait=false >/dev/null
}

# --- refusals --------------------------------------------------------------------------------------------------------
case_refusals() {
  local ns=cmp-refusals held=cmp-terminating r
  namespace $ns
  printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cap, namespace: %s}\nspec: {hard: {pods: "1"}}\n' $ns \
    | kc apply -f - >/dev/null
  # kube-apiserver refuses pods until the quota controller has filled in the quota's status.
  [ "$BACKEND" = embedded ] || poll 60 "quota status" bash -c \
    "kubectl -n $ns get resourcequota cap -o jsonpath='{.status.hard.pods}' | grep -qx 1"
  pod() { printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"main","image":"img:v1"}]}}' "$1"; }
  local ct=(-H 'Content-Type: application/json')
  expect_eq "a pod within the quota" 201 "$(code_of "$(api POST /api/v1/namespaces/$ns/pods "${ct[@]}" -d "$(pod p1)")")"
  r=$(api POST /api/v1/namespaces/$ns/pods "${ct[@]}" -d "$(pod p2)")
  expect_eq "a pod beyond the quota: code, reason" "403 Forbidden" "$(code_of "$r") $(echo "${r#* }" | json 'd["reason"]')"
  expect_eq "a pod beyond the quota: message" \
    'pods "p2" is forbidden: exceeded quota: cap, requested: pods=1, used: pods=1, limited: pods=1' \
    "$(echo "${r#* }" | json 'd["message"]')"
  namespace $held
  kc patch namespace $held --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
  kc delete namespace $held --wait=false >/dev/null
  poll 30 "namespace $held terminating" bash -c \
    "kubectl get namespace $held -o jsonpath='{.metadata.deletionTimestamp}' | grep -q ."
  r=$(api POST /api/v1/namespaces/$held/pods "${ct[@]}" -d "$(pod p3)")
  expect_eq "a pod in a terminating namespace: code, reason, cause" "403 Forbidden NamespaceTerminating" \
    "$(code_of "$r") $(echo "${r#* }" | json '"%s %s" % (d["reason"], d["details"]["causes"][0]["reason"])')"
  expect_eq "a pod in a terminating namespace: message" \
    "pods \"p3\" is forbidden: unable to create new content in namespace $held because it is being terminated" \
    "$(echo "${r#* }" | json 'd["message"]')"
  kc patch namespace $held --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
  kc delete namespace $ns --wait=false >/dev/null
}

up
for CASE in "$@"; do
  declare -F "case_$CASE" >/dev/null || { bad "no such case"; continue; }
  start=$SECONDS
  before=$FAIL
  "case_$CASE"
  echo "$CASE ($BACKEND): $([ "$FAIL" = "$before" ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
done
echo "$BACKEND: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
