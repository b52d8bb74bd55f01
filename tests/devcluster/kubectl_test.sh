#!/usr/bin/env bash
# Integration tests: start cloneset-devcluster on 127.0.0.1:0 with a fresh KUBECACHEDIR and drive real kubectl
# through the workflows of the seeds and the README's kubectl section. Usage: kubectl_test.sh <suite> <binary> <repo-root>
# With the binary "real", the same suite runs against the real control plane instead (`./run up --cluster real
# --nodes 1 --executors 0 --planners 0 --no-agents` in a private RUN_DIR, BUILD_DIR naming the build tree; the CRD
# that `up` installs is deleted first, so the suite starts from the same empty cluster). Checks of the embedded
# server's own answers are marked `embedded_only` with the reason; suites that test only those refuse to run on real.
set -uo pipefail
SUITE="$1" BIN="$2" ROOT="$3"
BACKEND=embedded
[ "$BIN" = real ] && BACKEND=real
WORK=$(mktemp -d /tmp/devcluster-kubectl-XXXXXX)
SEEDS="$ROOT/tests/data/seed000"
CRD="$ROOT/charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml"
KDIR=$(dirname "$(readlink -f "$(command -v kubectl)")")
K127="$KDIR/kubectl.1.27" K133="$KDIR/kubectl.1.33"
PASS=0 FAIL=0 SERVER_PID=""

cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  [ "$BACKEND" = real ] && RUN_DIR="$WORK/run" "$ROOT/run" down --purge >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }
expect_eq() {  # name want got
  if [ "$2" == "$3" ]; then ok; else bad "$1: want [$2] got [$3]"; fi
}
expect_contains() {  # name needle haystack
  if [[ "$3" == *"$2"* ]]; then ok; else bad "$1: [$2] not in [$3]"; fi
}

# embedded_only REASON: true on the embedded cluster; on real, says which check is left out and why.
embedded_only() {
  [ "$BACKEND" = embedded ] && return 0
  echo "embedded only ($SUITE): $1"
  return 1
}

start_real() {
  export RUN_DIR="$WORK/run"
  : "${BUILD_DIR:?BUILD_DIR must name the build tree}"
  export BUILD_DIR
  "$ROOT/run" up --cluster real --nodes 1 --executors 0 --planners 0 --no-agents >"$WORK/up.log" 2>&1 ||
    { cat "$WORK/up.log" >&2; echo "FAIL: ./run up --cluster real" >&2; exit 1; }
  export KUBECONFIG="$RUN_DIR/kubeconfig" KUBECACHEDIR="$WORK/cache-$RANDOM"
  URL=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
  TOKEN=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
  kubectl delete crd clonesets.apps.kruise.io --wait=true >/dev/null 2>&1
}

# on_real_point_conversion: after the CloneSet CRD was (re)created from its file, kube-apiserver converts between its
# versions through this run's webhook (`./run conversion`); the embedded cluster converts in process.
on_real_point_conversion() {
  [ "$BACKEND" = real ] || return 0
  "$ROOT/run" conversion >/dev/null || { echo "FAIL: ./run conversion" >&2; exit 1; }
}

start_server() {  # extra flags...
  if [ "$BACKEND" = real ]; then start_real; return; fi
  "$BIN" --listen=127.0.0.1:0 --kubeconfig="$WORK/kubeconfig" --nodes=0 "$@" >"$WORK/server.out" 2>>"$WORK/server.err" &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    grep -q "listening on" "$WORK/server.out" 2>/dev/null && break
    sleep 0.05
  done
  URL=$(sed -n 's/^listening on //p' "$WORK/server.out")
  [ -n "$URL" ] || { echo "server did not start" >&2; cat "$WORK/server.err" >&2; exit 1; }
  TOKEN=$(sed -n 's/^ *token: //p' "$WORK/kubeconfig")
  export KUBECONFIG="$WORK/kubeconfig" KUBECACHEDIR="$WORK/cache-$RANDOM"
}
stop_server() {  # signal
  kill "-${1:-TERM}" "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
}
api() {  # method path [curl args...] -> prints "<code> <body>"
  local m="$1" p="$2"; shift 2
  # Not curl's User-Agent: kube-apiserver pretty-prints JSON for curl.
  curl -sk -o "$WORK/body" -w '%{http_code}' -X "$m" -H "Authorization: Bearer $TOKEN" -A kubectl-test "$@" "$URL$p"
  echo " $(head -c 2000 "$WORK/body")"
}

suite_workflows() {
  start_server
  local want_minor='"32"'
  [ "$BACKEND" = real ] && want_minor='"34"'
  expect_eq "version minor" "$want_minor" "$(kubectl version -o json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["serverVersion"]["minor"]))')"
  expect_eq "apply crd" "customresourcedefinition.apiextensions.k8s.io/clonesets.apps.kruise.io created" "$(kubectl apply -f "$CRD" 2>&1)"
  on_real_point_conversion
  expect_eq "crd established" "customresourcedefinition.apiextensions.k8s.io/clonesets.apps.kruise.io condition met" \
    "$(kubectl wait --for condition=established crd/clonesets.apps.kruise.io --timeout=10s 2>&1)"
  local want_created=("storageclass.storage.k8s.io/fast-ssd created" "configmap/transcoder-config created"
    "service/video-transcoder-service created" "cloneset.apps.kruise.io/video-transcoder created")
  local i=0
  for f in storageclass configmap service cloneset; do
    expect_eq "apply $f" "${want_created[$i]}" "$(kubectl apply -f "$SEEDS/$f.yaml" 2>&1)"; i=$((i + 1))
  done
  expect_eq "re-apply unchanged" "cloneset.apps.kruise.io/video-transcoder unchanged" "$(kubectl apply -f "$SEEDS/cloneset.yaml" 2>&1)"
  local header; header=$(kubectl get clone 2>&1 | head -1)
  expect_contains "get clone header" "NAME               DESIRED   UPDATED   UPDATED_READY" "$header"
  expect_contains "get clone header tail" "READY   TOTAL   AGE" "$header"
  expect_contains "get clone row" "video-transcoder   3" "$(kubectl get clone 2>&1 | tail -1)"
  expect_contains "wide columns" "CONTAINERS   IMAGES" "$(kubectl get clone -o wide 2>&1 | head -1)"
  expect_eq "no pods yet" "No resources found in default namespace." "$(kubectl get pods 2>&1)"
  # Modified apply: 3-way merge patch.
  sed -e 's/replicas: 3/replicas: 4/' -e 's#video-transcoder:v1.2.0#video-transcoder:v1.2.1#' "$SEEDS/cloneset.yaml" >"$WORK/cs2.yaml"
  expect_eq "apply configured" "cloneset.apps.kruise.io/video-transcoder configured" "$(kubectl apply -f "$WORK/cs2.yaml" 2>&1)"
  expect_eq "replicas+generation" "4 2 my-registry/video-transcoder:v1.2.1" \
    "$(kubectl get clone video-transcoder -o jsonpath='{.spec.replicas} {.metadata.generation} {.spec.template.spec.containers[0].image}')"
  expect_eq "scale" "cloneset.apps.kruise.io/video-transcoder scaled" "$(kubectl scale clone video-transcoder --replicas=5 2>&1)"
  expect_eq "merge patch" "cloneset.apps.kruise.io/video-transcoder patched" \
    "$(kubectl patch clone video-transcoder --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}' 2>&1)"
  local rv_before; rv_before=$(kubectl get clone video-transcoder -o jsonpath='{.metadata.resourceVersion}')
  expect_eq "no-op patch" "cloneset.apps.kruise.io/video-transcoder patched (no change)" \
    "$(kubectl patch clone video-transcoder --type=merge -p '{"spec":{"replicas":5}}' 2>&1)"
  expect_eq "no-op keeps rv" "$rv_before" "$(kubectl get clone video-transcoder -o jsonpath='{.metadata.resourceVersion}')"
  expect_eq "json patch" "cloneset.apps.kruise.io/video-transcoder patched" \
    "$(kubectl patch clone video-transcoder --type=json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"my-registry/video-transcoder:v1.3.0"}]' 2>&1)"
  expect_eq "image after json patch" "my-registry/video-transcoder:v1.3.0" \
    "$(kubectl get clone video-transcoder -o jsonpath='{.spec.template.spec.containers[0].image}')"
  expect_contains "strategic patch on CR is 415" "is not supported by apps.kruise.io/v1beta1, Kind=CloneSet" \
    "$(kubectl patch clone video-transcoder -p '{"spec":{"replicas":6}}' 2>&1)"
  expect_eq "label" "cloneset.apps.kruise.io/video-transcoder labeled" "$(kubectl label clone video-transcoder tier=media 2>&1)"
  expect_contains "-L column" "TIER" "$(kubectl get clone -L tier | head -1)"
  expect_contains "-L value" "media" "$(kubectl get clone -L tier | tail -1)"
  expect_contains "show-labels" "app=video-transcoder,tier=media" "$(kubectl get clone --show-labels | tail -1)"
  local desc; desc=$(kubectl describe clone video-transcoder 2>&1)
  expect_contains "describe name" "Name:         video-transcoder" "$desc"
  expect_contains "describe events" "Events:" "$desc"
  expect_eq "wait jsonpath met" "cloneset.apps.kruise.io/video-transcoder condition met" \
    "$(kubectl wait --for=jsonpath='{.spec.replicas}'=5 cloneset/video-transcoder --timeout=10s 2>&1)"
  local out rc
  out=$(kubectl wait --for=jsonpath='{.status.updatedReadyReplicas}'=5 cloneset/video-transcoder --timeout=2s 2>&1); rc=$?
  expect_eq "wait timeout rc" "1" "$rc"
  expect_contains "wait timeout message" "timed out waiting for the condition" "$out"
  # get -w streams Table rows for changes.
  timeout 6 kubectl get clone -w >"$WORK/watch.out" 2>&1 &
  local wpid=$!
  sleep 1.5
  kubectl scale clone video-transcoder --replicas=7 >/dev/null
  sleep 1.5
  kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
  expect_eq "get -w rows" "2" "$(grep -c '^video-transcoder' "$WORK/watch.out")"
  expect_contains "get -w shows new replicas" "video-transcoder   7" "$(tail -1 "$WORK/watch.out")"
  # Built-in kinds: strategic merge patch on re-apply, service ports, pods, PVC selectors.
  sed 's/port: 80$/port: 81/' "$SEEDS/service.yaml" >"$WORK/svc.yaml"
  expect_eq "service configured" "service/video-transcoder-service configured" "$(kubectl apply -f "$WORK/svc.yaml" 2>&1)"
  expect_eq "service ports" "81/8080" "$(kubectl get svc video-transcoder-service -o jsonpath='{range .spec.ports[*]}{.port}/{.targetPort}{end}')"
  cat >"$WORK/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: worker
  labels: {app: worker}
spec:
  containers:
  - name: main
    image: busybox:1.36
  - name: side
    image: busybox:1.36
YAML
  expect_eq "pod created" "pod/worker created" "$(kubectl apply -f "$WORK/pod.yaml" 2>&1)"
  sed -i '0,/busybox:1.36/s//busybox:1.37/' "$WORK/pod.yaml"
  expect_eq "pod configured (SMP)" "pod/worker configured" "$(kubectl apply -f "$WORK/pod.yaml" 2>&1)"
  expect_eq "pod images" "busybox:1.37 busybox:1.36" "$(kubectl get pod worker -o jsonpath='{.spec.containers[0].image} {.spec.containers[1].image}')"
  # (column widths follow the content: a restarted container's "1 (5s ago)" widens RESTARTS)
  expect_eq "pod table" "NAME READY STATUS RESTARTS AGE" "$(kubectl get pods | head -1 | tr -s ' ')"
  expect_contains "pod label selector" "worker" "$(kubectl get pods -l 'app in (worker,x)' -o name)"
  expect_eq "pod label selector miss" "" "$(kubectl get pods -l 'app!=worker' -o name 2>/dev/null)"
  cat >"$WORK/pvc.yaml" <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-video-transcoder-abcde
  labels: {apps.kruise.io/cloneset-instance-id: abcde}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast-ssd
  resources: {requests: {storage: 50Gi}}
YAML
  kubectl apply -f "$WORK/pvc.yaml" >/dev/null
  expect_eq "pvc existence selector" "persistentvolumeclaim/data-video-transcoder-abcde" \
    "$(kubectl get pvc -l apps.kruise.io/cloneset-instance-id -o name)"
  expect_eq "pvc not-exists selector" "" "$(kubectl get pvc -l '!apps.kruise.io/cloneset-instance-id' -o name 2>/dev/null)"
  expect_eq "delete pod" 'pod "worker" deleted' "$(kubectl delete pod worker 2>&1)"
  expect_eq "delete dry-run" 'cloneset.apps.kruise.io "video-transcoder" deleted (server dry run)' \
    "$(kubectl delete clone video-transcoder --dry-run=server 2>&1)"
  expect_eq "delete clone" 'cloneset.apps.kruise.io "video-transcoder" deleted' "$(kubectl delete clone video-transcoder 2>&1)"
  out=$(kubectl get clone video-transcoder 2>&1); rc=$?
  expect_eq "get deleted rc" "1" "$rc"
  expect_eq "get deleted" 'Error from server (NotFound): clonesets.apps.kruise.io "video-transcoder" not found' "$out"
  embedded_only "apiserver_request_total by user_agent and apiserver_storage_objects are the embedded cluster's own metrics (kube-apiserver's have no client label)" || return 0
  local metrics; metrics=$(curl -sk "$URL/metrics")
  expect_contains "metrics requests" 'apiserver_request_total{code="200",resource="clonesets.apps.kruise.io",user_agent="kubectl",verb="patch"}' "$metrics"
  expect_contains "metrics objects" 'apiserver_storage_objects{resource="configmaps"} 1' "$metrics"
}

suite_versions() {
  start_server
  kubectl apply -f "$CRD" >/dev/null
  on_real_point_conversion
  for kc in "$K127" "$K133"; do
    export KUBECACHEDIR="$WORK/cache-$(basename "$kc")"
    local v; v=$(basename "$kc")
    expect_eq "$v apply create" "cloneset.apps.kruise.io/video-transcoder created" "$("$kc" apply -f "$SEEDS/cloneset.yaml" 2>&1)"
    expect_eq "$v apply configmap" "configmap/transcoder-config created" "$("$kc" apply -f "$SEEDS/configmap.yaml" 2>&1)"
    sed 's/replicas: 3/replicas: 4/' "$SEEDS/cloneset.yaml" >"$WORK/cs.yaml"
    expect_eq "$v apply update" "cloneset.apps.kruise.io/video-transcoder configured" "$("$kc" apply -f "$WORK/cs.yaml" 2>&1)"
    expect_eq "$v scale" "cloneset.apps.kruise.io/video-transcoder scaled" "$("$kc" scale clone video-transcoder --replicas=6 2>&1)"
    expect_eq "$v get" "6" "$("$kc" get clone video-transcoder -o jsonpath='{.spec.replicas}')"
    expect_contains "$v table" "UPDATED_READY" "$("$kc" get clone 2>&1 | head -1)"
    expect_eq "$v label" "cloneset.apps.kruise.io/video-transcoder labeled" "$("$kc" label clone video-transcoder v=1 2>&1)"
    expect_eq "$v delete" 'cloneset.apps.kruise.io "video-transcoder" deleted' "$("$kc" delete clone video-transcoder 2>&1)"
    "$kc" delete -f "$SEEDS/configmap.yaml" >/dev/null
  done
}

# Imperative create commands: kubectl >= 1.32 sends their bodies as Kubernetes protobuf (1.27 sends JSON).
suite_imperative() {
  start_server
  for kc in kubectl "$K127" "$K133"; do
    local v; v=$(basename "$kc"); local s=${v//./}
    export KUBECACHEDIR="$WORK/cache-$v"
    expect_eq "$v create namespace" "namespace/ns-$s created" "$("$kc" create namespace "ns-$s" 2>&1)"
    expect_eq "$v create configmap" "configmap/cm-$s created" \
      "$("$kc" create configmap "cm-$s" -n "ns-$s" --from-literal=a=b --from-literal=empty= 2>&1)"
    expect_eq "$v create secret" "secret/s-$s created" \
      "$("$kc" create secret generic "s-$s" -n "ns-$s" --from-literal=user=admin 2>&1)"
    expect_eq "$v create serviceaccount" "serviceaccount/sa-$s created" "$("$kc" create serviceaccount "sa-$s" -n "ns-$s" 2>&1)"
    expect_eq "$v create deployment" "deployment.apps/d-$s created" \
      "$("$kc" create deployment "d-$s" -n "ns-$s" --image=nginx:1.27 --port=80 --replicas=2 2>&1)"
    expect_eq "$v namespace stored" "ns-$s Active" "$("$kc" get ns "ns-$s" -o jsonpath='{.metadata.name} {.status.phase}')"
    expect_eq "$v configmap stored" '{"a":"b","empty":""}' "$("$kc" get cm "cm-$s" -n "ns-$s" -o jsonpath='{.data}')"
    expect_eq "$v secret stored" "YWRtaW4= Opaque" "$("$kc" get secret "s-$s" -n "ns-$s" -o jsonpath='{.data.user} {.type}')"
    expect_eq "$v serviceaccount stored" "sa-$s ns-$s" \
      "$("$kc" get sa "sa-$s" -n "ns-$s" -o jsonpath='{.metadata.name} {.metadata.namespace}')"
    expect_eq "$v deployment stored" "2 app=d-$s nginx:1.27 80" \
      "$("$kc" get deploy "d-$s" -n "ns-$s" -o jsonpath='{.spec.replicas} app={.spec.selector.matchLabels.app} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort}')"
    expect_contains "$v already exists" "AlreadyExists" "$("$kc" create namespace "ns-$s" 2>&1)"
    local n="-n ns-$s"
    expect_eq "$v create service" "service/web created" "$("$kc" create service clusterip web $n --tcp=80:8080 2>&1)"
    expect_eq "$v service stored" "80 8080 web" \
      "$("$kc" get svc web $n -o jsonpath='{.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.selector.app}')"
    expect_eq "$v create pdb" "poddisruptionbudget.policy/web created" \
      "$("$kc" create pdb web $n --selector=app=web --min-available=50% 2>&1)"
    expect_eq "$v pdb stored" "50% web" "$("$kc" get pdb web $n -o jsonpath='{.spec.minAvailable} {.spec.selector.matchLabels.app}')"
    expect_eq "$v create role" "role.rbac.authorization.k8s.io/reader created" \
      "$("$kc" create role reader $n --verb=get,list --resource=pods 2>&1)"
    expect_eq "$v create rolebinding" "rolebinding.rbac.authorization.k8s.io/reader created" \
      "$("$kc" create rolebinding reader $n --role=reader --serviceaccount="ns-$s:sa-$s" 2>&1)"
    expect_eq "$v rbac stored" "get,list pods Role/reader ServiceAccount/sa-$s" \
      "$("$kc" get role reader $n -o jsonpath='{.rules[0].verbs[0]},{.rules[0].verbs[1]} {.rules[0].resources[0]}') $("$kc" get rolebinding reader $n -o jsonpath='{.roleRef.kind}/{.roleRef.name} {.subjects[0].kind}/{.subjects[0].name}')"
    expect_eq "$v create clusterrole" "clusterrole.rbac.authorization.k8s.io/cr-$s created" \
      "$("$kc" create clusterrole "cr-$s" --verb=get --non-resource-url=/logs 2>&1)"
    expect_eq "$v create clusterrolebinding" "clusterrolebinding.rbac.authorization.k8s.io/cr-$s created" \
      "$("$kc" create clusterrolebinding "cr-$s" --clusterrole="cr-$s" --group=ops 2>&1)"
  done
  local cm='/api/v1/namespaces/default/configmaps' pb='Content-Type: application/vnd.kubernetes.protobuf'
  if embedded_only "the embedded cluster decodes protobuf for the kinds kubectl's create commands send and says so; kube-apiserver decodes every kind"; then
  expect_contains "unsupported kind is 415 naming the kinds" \
    '415 {"apiVersion":"v1","code":415,"kind":"Status","message":"protobuf bodies are decoded for v1 ConfigMap, v1 Namespace' \
    "$(api POST /api/v1/namespaces/default/pods -H "$pb" --data-binary @<(printf 'k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod'))"
  expect_contains "protobuf without magic" '400 {"apiVersion":"v1","code":400' "$(api POST $cm -H "$pb" -d '{"metadata":{}}')"
  expect_contains "protobuf truncated" 'runtime.Unknown envelope is not a valid protobuf message' \
    "$(api POST $cm -H "$pb" --data-binary @<(printf 'k8s\0\x0a\x7f'))"
  fi
  # Strategic merge patch: policy/v1 PDB spec.selector is patchStrategy "replace", not merged.
  cat >"$WORK/pdb.yaml" <<'YAML'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web, tier: front}}
YAML
  kubectl apply -f "$WORK/pdb.yaml" >/dev/null
  expect_eq "pdb strategic patch" "poddisruptionbudget.policy/web patched" \
    "$(kubectl patch pdb web -p '{"spec":{"selector":{"matchLabels":{"app":"api"}}}}' 2>&1)"
  expect_eq "pdb selector replaced" '{"app":"api"} 1' \
    "$(kubectl get pdb web -o jsonpath='{.spec.selector.matchLabels} {.spec.minAvailable}')"
}

suite_bad_inputs() {
  embedded_only "the embedded server's own limits and answers: --watch-history=10, /healthz without a token (the real backend runs with --anonymous-auth=false), the key order of its Status bodies" || exit 2
  start_server --watch-history=10
  local cm='/api/v1/namespaces/default/configmaps'
  expect_eq "no token" "401" "$(curl -sk -o /dev/null -w '%{http_code}' "$URL$cm")"
  expect_eq "healthz public" "200 ok" "$(curl -sk -w ' %{http_code}' -o /dev/null "$URL/healthz" | awk '{print $1}') ok"
  expect_contains "malformed json" '400 {"apiVersion":"v1","code":400' "$(api POST $cm -H 'Content-Type: application/json' -d '{"metadata":')"
  expect_contains "malformed yaml" '400 ' "$(api POST $cm -H 'Content-Type: application/yaml' --data-binary $'a: [\n')"
  expect_contains "yaml body ok" '201 ' "$(api POST $cm -H 'Content-Type: application/yaml' --data-binary $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: "1"\n')"
  expect_contains "wrong content type" '415 ' "$(api POST $cm -H 'Content-Type: text/plain' -d 'x')"
  expect_contains "invalid name" '"reason":"Invalid"' "$(api POST $cm -H 'Content-Type: application/json' -d '{"metadata":{"name":"Bad_Name"}}')"
  expect_contains "invalid name code" '422 ' "$(api POST $cm -H 'Content-Type: application/json' -d '{"metadata":{"name":"Bad_Name"}}')"
  expect_contains "missing name" 'metadata.name: Required value' "$(api POST $cm -H 'Content-Type: application/json' -d '{"metadata":{}}')"
  expect_contains "unknown kind" '404 ' "$(api GET /api/v1/namespaces/default/widgets)"
  expect_contains "unknown version" '404 ' "$(api GET /apis/apps.kruise.io/v9/namespaces/default/clonesets)"
  head -c 3200000 /dev/zero | tr '\0' 'a' | sed 's/^/{"metadata":{"name":"big"},"data":{"a":"/; s/$/"}}/' >"$WORK/big.json"
  expect_contains "oversize body" '413 ' "$(api POST $cm -H 'Content-Type: application/json' --data-binary @"$WORK/big.json")"
  expect_contains "already exists" '409 ' "$(api POST $cm -H 'Content-Type: application/yaml' --data-binary $'metadata:\n  name: from-yaml\n')"
  expect_contains "stale rv conflict" '"reason":"Conflict"' "$(api PUT $cm/from-yaml -H 'Content-Type: application/json' -d '{"metadata":{"name":"from-yaml","resourceVersion":"1"}}')"
  expect_contains "bad selector" '400 ' "$(api GET "$cm?labelSelector=a%20in%20(b")"
  expect_contains "bad field selector" '400 ' "$(api GET "$cm?fieldSelector=spec.foo%3Dx")"
  expect_contains "json patch not array" '400 ' "$(api PATCH $cm/from-yaml -H 'Content-Type: application/json-patch+json' -d '{}')"
  expect_contains "patch failed test" '422 ' "$(api PATCH $cm/from-yaml -H 'Content-Type: application/json-patch+json' -d '[{"op":"test","path":"/data/a","value":"2"}]')"
  for i in $(seq 1 12); do api POST $cm -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"n$i\"}}" >/dev/null; done
  expect_contains "too old watch" '"code":410' "$(curl -sk -m 3 -H "Authorization: Bearer $TOKEN" "$URL$cm?watch=true&resourceVersion=1&timeoutSeconds=1" -o - ; true)"
  expect_contains "still healthy" '200 ' "$(api GET /readyz)"
}

suite_durability() {
  embedded_only "it kills and restarts the embedded server on its write-ahead log; the real backend's durability is etcd's" || exit 2
  start_server --data-dir="$WORK/data"
  kubectl apply -f "$CRD" >/dev/null
  on_real_point_conversion
  kubectl apply -f "$SEEDS/cloneset.yaml" >/dev/null
  kubectl apply -f "$SEEDS/configmap.yaml" >/dev/null
  kubectl scale clone video-transcoder --replicas=9 >/dev/null
  local before; before=$(kubectl get clone video-transcoder -o jsonpath='{.metadata.uid} {.metadata.resourceVersion} {.spec.replicas}')
  local cm_before; cm_before=$(kubectl get cm transcoder-config -o jsonpath='{.metadata.uid} {.metadata.resourceVersion}')
  stop_server KILL  # no final snapshot: the write-ahead log must carry everything
  start_server --data-dir="$WORK/data"
  expect_eq "cloneset after crash" "$before" "$(kubectl get clone video-transcoder -o jsonpath='{.metadata.uid} {.metadata.resourceVersion} {.spec.replicas}')"
  expect_eq "configmap after crash" "$cm_before" "$(kubectl get cm transcoder-config -o jsonpath='{.metadata.uid} {.metadata.resourceVersion}')"
  kubectl label clone video-transcoder restarted=yes >/dev/null
  local rv; rv=$(kubectl get clone video-transcoder -o jsonpath='{.metadata.resourceVersion}')
  [ "$rv" -gt "${before#* }" ] 2>/dev/null; expect_eq "rv continues" "0" "$(( rv > $(echo "$before" | cut -d' ' -f2) ? 0 : 1 ))"
  stop_server TERM  # graceful: snapshot
  start_server --data-dir="$WORK/data"
  expect_eq "after clean restart" "$rv yes" "$(kubectl get clone video-transcoder -o jsonpath='{.metadata.resourceVersion} {.metadata.labels.restarted}')"
  expect_contains "table after restart" "video-transcoder   9" "$(kubectl get clone | tail -1)"
}

# Garbage collection of dependents whose owners do not exist (kube-controller-manager's GC): a pod applied with an
# ownerReference to a missing owner is deleted; one naming a kind the cluster does not serve stays.
suite_garbage_collection() {
  start_server
  kubectl apply -f "$CRD" >/dev/null
  on_real_point_conversion
  kubectl wait --for condition=established crd/clonesets.apps.kruise.io --timeout=10s >/dev/null
  kubectl apply -f "$SEEDS/cloneset.yaml" >/dev/null
  local cs_uid; cs_uid=$(kubectl get clone video-transcoder -o jsonpath='{.metadata.uid}')
  owned_pod() {  # name apiVersion kind owner-name owner-uid
    cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  ownerReferences:
  - {apiVersion: $2, kind: $3, name: $4, uid: $5, controller: true, blockOwnerDeletion: true}
spec:
  containers: [{name: main, image: busybox:1.36}]
YAML
  }
  gone_within() {  # pod: polls up to ~30 s; prints the final `kubectl get` output
    local out
    for _ in $(seq 1 300); do
      out=$(kubectl get pod "$1" 2>&1) && { sleep 0.1; continue; }
      break
    done
    echo "$out"
  }
  owned_pod orphan-of-nothing apps.kruise.io/v1alpha1 CloneSet web 0b5a2a4e-0000-4000-8000-00000000dead >"$WORK/p1.yaml"
  expect_eq "apply pod with missing owner" "pod/orphan-of-nothing created" "$(kubectl apply -f "$WORK/p1.yaml" 2>&1)"
  expect_eq "missing owner: collected" 'Error from server (NotFound): pods "orphan-of-nothing" not found' \
    "$(gone_within orphan-of-nothing)"
  owned_pod stale-owner apps.kruise.io/v1alpha1 CloneSet video-transcoder 0b5a2a4e-0000-4000-8000-00000000beef >"$WORK/p2.yaml"
  expect_eq "apply pod with a stale owner uid" "pod/stale-owner created" "$(kubectl apply -f "$WORK/p2.yaml" 2>&1)"
  expect_eq "owner name exists with another uid: collected" 'Error from server (NotFound): pods "stale-owner" not found' \
    "$(gone_within stale-owner)"
  owned_pod live-owner apps.kruise.io/v1alpha1 CloneSet video-transcoder "$cs_uid" >"$WORK/p3.yaml"
  expect_eq "apply pod with live owner" "pod/live-owner created" "$(kubectl apply -f "$WORK/p3.yaml" 2>&1)"
  expect_eq "live owner: kept" "live-owner $cs_uid" \
    "$(kubectl get pod live-owner -o jsonpath='{.metadata.name} {.metadata.ownerReferences[0].uid}' 2>&1)"
  # A kind no backend serves: upstream's GC cannot resolve the reference and leaves the object.
  owned_pod widget-child example.com/v1 Widget web-5d8f7c9b6 0b5a2a4e-0000-4000-8000-00000000cafe >"$WORK/p4.yaml"
  kubectl apply -f "$WORK/p4.yaml" >/dev/null 2>&1
  sleep 3
  expect_eq "unserved owner kind: kept" "widget-child Widget" \
    "$(kubectl get pod widget-child -o jsonpath='{.metadata.name} {.metadata.ownerReferences[0].kind}' 2>&1)"
  # Deleting the owner cascades to the pod that is left (background propagation).
  kubectl delete clone video-transcoder >/dev/null
  expect_eq "owner deleted: dependent collected" 'Error from server (NotFound): pods "live-owner" not found' \
    "$(gone_within live-owner)"
}

# What a real kube-apiserver does and kubectl shows: CRD schema admission (--validate=strict, 422 messages),
# explain from the CRD schema, auth can-i, events.k8s.io/v1, /version/, watch=True.
suite_fidelity() {
  start_server
  kubectl apply -f "$CRD" >/dev/null
  on_real_point_conversion
  kubectl wait --for condition=established crd/clonesets.apps.kruise.io --timeout=10s >/dev/null
  python3 - "$SEEDS/cloneset.yaml" "$WORK" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
open(sys.argv[2] + "/typo.yaml", "w").write(re.sub(r"(?m)^(  replicas: \d+)$", r"\1\n  replicaz: 3", text, count=1))
open(sys.argv[2] + "/negative.yaml", "w").write(re.sub(r"(?m)^  replicas: \d+$", "  replicas: -1", text, count=1))
open(sys.argv[2] + "/rolling.yaml", "w").write(re.sub(r"(?m)^(    type: )\S+$", r"\1Rolling", text, count=1))
PY
  expect_contains "strict unknown field" 'unknown field "spec.replicaz"' \
    "$(kubectl apply --validate=strict -f "$WORK/typo.yaml" 2>&1)"
  expect_eq "strict refused: nothing stored" "" "$(kubectl get clone -o name 2>&1)"
  expect_contains "invalid replicas" \
    'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0' \
    "$(kubectl apply -f "$WORK/negative.yaml" 2>&1)"
  expect_contains "invalid type" 'spec.updateStrategy.type: Unsupported value: "Rolling"' \
    "$(kubectl apply -f "$WORK/rolling.yaml" 2>&1)"
  expect_eq "invalid: nothing stored" "" "$(kubectl get clone -o name 2>&1)"
  expect_contains "ignore: pruned" "created" "$(kubectl apply --validate=false -f "$WORK/typo.yaml" 2>&1)"
  expect_eq "pruned field absent" "3 1" \
    "$(kubectl get clone -o jsonpath='{.items[0].spec.replicas}{.items[0].spec.replicaz} {.items[0].spec.updateStrategy.rollingUpdate.maxUnavailable}')"
  expect_contains "explain" "KIND:       CloneSet" "$(kubectl explain cloneset 2>&1)"
  expect_contains "explain field" "desired number of pods" "$(kubectl explain cloneset.spec.replicas 2>&1)"
  expect_eq "auth can-i" "yes" "$(kubectl auth can-i create pods 2>&1)"
  expect_eq "auth can-i cloneset" "yes" "$(kubectl auth can-i delete clonesets.apps.kruise.io 2>&1)"
  kubectl create configmap ev-target >/dev/null
  cat >"$WORK/event.yaml" <<EOF2
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: ev1}
eventTime: "2026-01-01T00:00:00.000000Z"
regarding: {kind: ConfigMap, name: ev-target, namespace: default}
reason: Tested
note: hello from events.k8s.io
type: Normal
action: Test
reportingController: kubectl-test
reportingInstance: kubectl-test-1
EOF2
  expect_eq "create events.k8s.io event" "event.events.k8s.io/ev1 created" "$(kubectl apply -f "$WORK/event.yaml" 2>&1)"
  expect_eq "read as core event" "hello from events.k8s.io" "$(kubectl get events.v1. ev1 -o jsonpath='{.message}' 2>&1)"
  expect_eq "read as events.k8s.io" "hello from events.k8s.io ev-target" \
    "$(kubectl get events.v1.events.k8s.io ev1 -o jsonpath='{.note} {.regarding.name}' 2>&1)"
  # The CRD examples the chart test holds a real API server to (tests/chart/testdata, '# server-expect:' lines):
  # each invalid one is refused naming its field and rule message, each valid one and each seed is accepted.
  local data="$ROOT/tests/chart/testdata" f want n=0
  for f in "$data"/crd-invalid/*.yaml "$data"/crd-invalid-cel/*.yaml; do
    if kubectl apply --dry-run=server -n default -f "$f" >"$WORK/o" 2>&1; then bad "not rejected: $f"; continue; fi
    while read -r want; do
      expect_contains "$(basename "$f") names" "$want" "$(cat "$WORK/o")"
    done < <(sed -n 's/^# server-expect: //p' "$f")
    n=$((n + 1))
  done
  [ "$n" -ge 20 ] && ok || bad "only $n invalid examples in $data"
  for f in "$data"/crd-valid/*.yaml "$ROOT"/tests/data/seeds/*.yaml; do
    if kubectl apply --dry-run=server -n default -f "$f" >"$WORK/o" 2>&1; then ok; else bad "$f rejected: $(cat "$WORK/o")"; fi
  done
  expect_contains "version/" '"major":"1"' "$(api GET /version/ | tr -d ' \n')"
  # watch=True (the Python client's spelling) streams instead of listing.
  local out; out=$(curl -sk -m 2 -A kubectl-test -H "Authorization: Bearer $TOKEN" "$URL/api/v1/namespaces/default/configmaps?watch=True" 2>&1)
  expect_contains "watch=True streams events" '"type":"ADDED"' "$out"
  expect_eq "watch=True is not a list" "" "$(echo "$out" | grep -o '"kind":"ConfigMapList"')"
}

"suite_$SUITE"
echo "$SUITE ($BACKEND): $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
