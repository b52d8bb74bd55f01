#!/usr/bin/env bash
# The CloneSet CRD's two versions through an API server, on either backend: kube-apiserver calling the planner's
# conversion webhook (`./run up --cluster real`: the webhook is a cloneset-planner of its own, component
# conversion-webhook) or the embedded cluster converting in process. From `./run up [--cluster real] --nodes 2
# --no-agents` (planner and executor running) in a private RUN_DIR:
#   1. the seeds' v1alpha1 manifests (tests/data/seed000, tests/data/seeds) apply unchanged, are stored as v1beta1 and
#      read back in v1alpha1 as written (no stash annotation); seed 000's CloneSet rolls out;
#   2. objects written in one version read back in the other: the v1beta1 examples (tests/data/v1beta1) in v1alpha1,
#      and a v1alpha1 read-and-replace of a v1beta1 object leaves it as it was;
#   3. a v1beta1 CloneSet applies and rolls out, then updates in place;
#   4. the webhook down (real only: the embedded cluster has none to stop): v1alpha1 reads of etcd and writes fail
#      naming it, nothing is changed or lost, the executor (which reads v1beta1, the storage version) keeps scaling; then the planner
#      down too: the executor says so and recovers once `./run up` restarts both, and v1alpha1 reads give back what
#      they gave before.
# Usage: conversion_test.sh embedded|real REPO_ROOT     (BUILD_DIR names the build tree)
set -uo pipefail
BACKEND="${1:?usage: conversion_test.sh embedded|real REPO_ROOT}"
ROOT="${2:?usage: conversion_test.sh embedded|real REPO_ROOT}"
case "$BACKEND" in embedded|real) ;; *) echo "FAIL: backend must be embedded or real, got '$BACKEND'" >&2; exit 1 ;; esac
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
for t in kubectl python3 curl; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
TMP="$(mktemp -d "${TMPDIR:-/tmp}/conversion.XXXXXX")"
export RUN_DIR="$TMP/run" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
PASS=0 FAIL=0 NS=conv
ALPHA=clonesets.v1alpha1.apps.kruise.io BETA=clonesets.v1beta1.apps.kruise.io

cleanup() {
  local rc=$?
  "$ROOT/run" down --purge >/dev/null 2>&1 || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # ctest's timeout: still take the cluster down

ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); local m="$*"; echo "FAIL [$BACKEND]: ${m:0:900}" >&2; }
expect_eq() { if [ "$2" == "$3" ]; then ok; else bad "$1: want [$2] got [$3]"; fi; }
# expect_same_json WHAT WANT GOT: two JSON documents equal; else the paths where they differ.
expect_same_json() {
  if [ "$2" == "$3" ]; then ok; return; fi
  bad "$1: $(python3 - "$2" "$3" <<'PY'
import json, sys
def walk(a, b, at, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            walk(a.get(k, "<absent>"), b.get(k, "<absent>"), at + "/" + k, out)
    elif a != b:
        out.append("%s: want %s got %s" % (at, json.dumps(a)[:200], json.dumps(b)[:200]))
out = []
walk(json.loads(sys.argv[1]), json.loads(sys.argv[2]), "", out)
print("; ".join(out))
PY
)"
}
expect_contains() { if [[ "$3" == *"$2"* ]]; then ok; else bad "$1: [$2] not in [$3]"; fi; }
kc() { kubectl --request-timeout=20s "$@"; }
poll() {  # poll SECONDS DESCRIPTION COMMAND...
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then bad "timed out after ${secs}s waiting for $what"; return 1; fi
    sleep 0.5
  done
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
step() { echo "[$BACKEND] $(date -u +%T) $*"; }
up() {
  local args=(--nodes 2 --no-agents)
  [ "$BACKEND" = real ] && args+=(--cluster real)
  "$ROOT/run" up "${args[@]}" >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log" >&2; echo "FAIL: ./run up ${args[*]}" >&2; exit 1; }
}
# ready NAME N: N ready pods, all updated, the generation observed (read in v1beta1, the executor's version).
ready() {
  local s; s=$(kc -n $NS get $BETA "$1" -o json) || return 1
  [ "$(echo "$s" | json '"%s %s %s" % (d.get("status",{}).get("readyReplicas",0), d.get("status",{}).get("updatedReadyReplicas",0), d.get("status",{}).get("observedGeneration")==d["metadata"]["generation"])')" = "$2 $2 True" ]
}
pod_uids() { kc -n $NS get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
# what a reader of VERSION sees of NAME that is the object's own (spec, labels, annotations but kubectl's record of
# its last apply, which kubectl replace rewrites), in a stable form.
seen() {
  kc -n $NS get "$1" "$2" -o json | json 'json.dumps({"spec": d["spec"], "labels": d["metadata"].get("labels"), "annotations": {k: v for k, v in d["metadata"].get("annotations", {}).items() if k != "kubectl.kubernetes.io/last-applied-configuration"}}, sort_keys=True)'
}
stash_free() { ! kc -n $NS get "$1" "$2" -o jsonpath='{.metadata.annotations}' | grep -q 'conversion.cloneset.apps.kruise.io'; }

up
export KUBECONFIG="$RUN_DIR/kubeconfig"
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' $NS | kc apply -f - >/dev/null
[ "$BACKEND" = embedded ] || poll 60 "namespace $NS ready for pods" kc -n $NS get serviceaccount default

step "1. the seeds' v1alpha1 manifests, unchanged"
kc apply -f "$ROOT/tests/data/seed000/storageclass.yaml" >/dev/null || bad "seed 000 StorageClass"
for f in "$ROOT"/tests/data/seed000/{configmap,service,cloneset}.yaml "$ROOT"/tests/data/seeds/*.yaml; do
  out=$(kc apply -n $NS -f "$f" 2>&1) && ok || bad "kubectl apply -f $f: $out"
done
names=$(kc -n $NS get $BETA -o jsonpath='{.items[*].metadata.name}')
expect_eq "seed CloneSets stored" "cs-demo nginx-2 sample sample-data video-transcoder" "$(tr ' ' '\n' <<<"$names" | sort | tr '\n' ' ' | sed 's/ $//')"
for n in $names; do
  stash_free $ALPHA "$n" && ok || bad "$n read in v1alpha1 carries a stash annotation: $(kc -n $NS get $ALPHA "$n" -o jsonpath='{.metadata.annotations}')"
done
expect_eq "seed 000 in v1beta1" "RollingUpdate InPlaceIfPossible 1 true Retain" \
  "$(kc -n $NS get $BETA video-transcoder -o jsonpath='{.spec.updateStrategy.type} {.spec.updateStrategy.rollingUpdate.podUpdatePolicy} {.spec.updateStrategy.rollingUpdate.maxUnavailable} {.spec.scaleStrategy.enablePVCReuse} {.spec.scaleStrategy.pvcRetentionPolicy}')"
expect_eq "seed 000 back in v1alpha1, as written" "InPlaceIfPossible 1 0 Retain " \
  "$(kc -n $NS get $ALPHA video-transcoder -o jsonpath='{.spec.updateStrategy.type} {.spec.updateStrategy.maxUnavailable} {.spec.updateStrategy.partition} {.spec.scaleStrategy.pvcRetentionPolicy} {.spec.scaleStrategy.disablePVCReuse}')"
# Applying a seed again changes nothing (kubectl's three-way patch in v1alpha1 finds nothing to do).
expect_contains "re-apply unchanged" "unchanged" "$(kc apply -n $NS -f "$ROOT/tests/data/seed000/cloneset.yaml" 2>&1)"
# Only seed 000 rolls out here (the other seeds' 16 pods would only load the machine); its pods run.
for n in cs-demo nginx-2 sample sample-data; do kc -n $NS delete $BETA "$n" --wait=false >/dev/null; done
poll 180 "seed 000: 3 pods ready" ready video-transcoder 3

step "2. written in one version, read in the other"
for f in "$ROOT"/tests/data/v1beta1/*.yaml; do
  sed '/^  namespace: default$/d' "$f" | kc apply -n $NS -f - >/dev/null 2>"$TMP/err" && ok || bad "apply $f: $(cat "$TMP/err")"
done
expect_eq "v1beta1 web read in v1alpha1" 'InPlaceIfPossible 25% 3 600 true ' \
  "$(kc -n $NS get $ALPHA web -o jsonpath='{.spec.updateStrategy.type} {.spec.updateStrategy.partition} {.metadata.annotations.apps\.kruise\.io/image-predownload-parallelism} {.metadata.annotations.apps\.kruise\.io/image-predownload-timeout-seconds} {.metadata.labels.apps\.kruise\.io/cloneset-scaling-exclude-preparing-delete} {.spec.scaleStrategy.disablePVCReuse}')"
expect_eq "v1beta1 manual (OnDelete, no PVC reuse) read in v1alpha1" "OnDelete true" \
  "$(kc -n $NS get $ALPHA manual -o jsonpath='{.spec.updateStrategy.type} {.spec.scaleStrategy.disablePVCReuse}')"
for n in web manual tiny; do stash_free $ALPHA "$n" && ok || bad "$n read in v1alpha1 carries a stash annotation"; done
# Kruise 1.9's copies of the moved metadata: kept in the stash annotation, back in v1beta1 exactly.
kc -n $NS get $ALPHA legacy -o jsonpath='{.metadata.annotations}' | grep -q 'conversion.cloneset.apps.kruise.io/v1beta1' && ok ||
  bad "legacy read in v1alpha1 does not keep Kruise 1.9's copies"
# replace_alpha NAME: a v1alpha1 read and write back; retried while the executor's status writes move the object on.
replace_alpha() {
  local i
  for i in 1 2 3 4 5; do
    kc -n $NS get $ALPHA "$1" -o json >"$TMP/alpha.json" && kc replace -f "$TMP/alpha.json" >/dev/null 2>"$TMP/err" &&
      return 0
    grep -q 'the object has been modified' "$TMP/err" || break
  done
  return 1
}
for n in web legacy; do
  before=$(seen $BETA "$n")
  replace_alpha "$n" && ok || bad "v1alpha1 replace of $n: $(cat "$TMP/err")"
  expect_same_json "$n after a v1alpha1 read-and-replace" "$before" "$(seen $BETA "$n")"
done
# A write in v1alpha1 also gets v1alpha1's schema defaults: OnDelete gains the rolling defaults, which it ignores.
replace_alpha manual && ok || bad "v1alpha1 replace of manual: $(cat "$TMP/err")"
expect_eq "manual after a v1alpha1 read-and-replace" 'OnDelete {"maxSurge":0,"maxUnavailable":"20%","partition":0}' \
  "$(kc -n $NS get $BETA manual -o jsonpath='{.spec.updateStrategy.type} {.spec.updateStrategy.rollingUpdate}')"
for n in web legacy manual tiny; do kc -n $NS delete $BETA "$n" --wait=false >/dev/null; done

step "3. a v1beta1 CloneSet applies and rolls out"
cat >"$TMP/beta.yaml" <<YAML
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: beta-web, labels: {app: beta-web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: beta-web}}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {podUpdatePolicy: InPlaceIfPossible, maxUnavailable: 1}
  template:
    metadata: {labels: {app: beta-web}}
    spec:
      containers:
      - {name: main, image: "nginx:1.27"}
YAML
kc apply -n $NS -f "$TMP/beta.yaml" >/dev/null && ok || bad "apply of a v1beta1 CloneSet"
poll 120 "beta-web: 2 pods ready" ready beta-web 2
uids=$(pod_uids beta-web)
kc -n $NS patch $BETA beta-web --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.28"}]' >/dev/null && ok || bad "image patch"
poll 120 "beta-web: 2 pods updated in place" ready beta-web 2
poll 60 "beta-web pods on nginx:1.28" sh -c "[ \"\$(kubectl -n $NS get pods -l app=beta-web -o jsonpath='{.items[*].spec.containers[0].image}')\" = 'nginx:1.28 nginx:1.28' ]"
expect_eq "beta-web updated in place (same pods)" "$uids" "$(pod_uids beta-web)"

step "4. the webhook down"
before_alpha=$(seen $ALPHA video-transcoder)
count_before=$(kc -n $NS get $BETA -o name | wc -l)
if [ "$BACKEND" = real ]; then
  kill "$(cat "$RUN_DIR/conversion-webhook.pid")"
  poll 20 "the conversion webhook to stop" sh -c "! kill -0 $(cat "$RUN_DIR/conversion-webhook.pid") 2>/dev/null"
  # A GET reads etcd and converts: it fails, naming the webhook. (A v1alpha1 list may still be answered: kube-apiserver
  # keeps a watch cache per served version, whose objects were converted when they entered it.)
  out=$(kc -n $NS get $ALPHA video-transcoder 2>&1) && bad "v1alpha1 get answered with the webhook down: $out" ||
    expect_contains "v1alpha1 get fails naming the webhook" "conversion webhook for apps.kruise.io/v1beta1, Kind=CloneSet failed" "$out"
  sed 's/replicas: 3/replicas: 4/' "$ROOT/tests/data/seed000/cloneset.yaml" >"$TMP/cs4.yaml"
  out=$(kc apply -n $NS -f "$TMP/cs4.yaml" 2>&1) && bad "v1alpha1 write accepted with the webhook down: $out" ||
    expect_contains "v1alpha1 write fails naming the webhook" "conversion webhook" "$out"
  expect_eq "the refused write changed nothing" 3 "$(kc -n $NS get $BETA video-transcoder -o jsonpath='{.spec.replicas}')"
else
  echo "left out on embedded: it converts in process and has no webhook to stop (docs/compatibility.md)"
fi
expect_eq "every CloneSet still listed (v1beta1)" "$count_before" "$(kc -n $NS get $BETA -o name | wc -l)"
# The executor reads and writes v1beta1: it scales with the webhook down.
kc -n $NS scale $BETA beta-web --replicas=3 >/dev/null && ok || bad "kubectl scale (v1beta1) with the webhook down"
poll 120 "beta-web scaled to 3 with the webhook down" ready beta-web 3
if [ "$BACKEND" = real ]; then
  # The planner down too: the executor cannot plan, says so, and recovers when ./run up restarts both.
  kill "$(cat "$RUN_DIR/planner-0.pid")"
  poll 20 "planner-0 to stop" sh -c "! kill -0 $(cat "$RUN_DIR/planner-0.pid") 2>/dev/null"
  kc -n $NS scale $BETA beta-web --replicas=4 >/dev/null && ok || bad "kubectl scale with planner and webhook down"
  health=$(grep -m1 -oE 'listening on http://[0-9.:]+' "$RUN_DIR/executor-0.log" | sed 's#.* ##')
  # /readyz says why it is not ready: the planner is not reached.
  poll 90 "the executor's /readyz to report the planner" sh -c "curl -s $health/readyz | grep -qi planner"
  expect_eq "no pod without a planner" 3 "$(kc -n $NS get pods -l app=beta-web -o name | wc -l)"
  up
  poll 120 "beta-web scaled to 4 after the planner came back" ready beta-web 4
  poll 60 "the executor ready again" curl -sf "$health/readyz"
fi
expect_same_json "v1alpha1 reads give back what they gave before" "$before_alpha" "$(seen $ALPHA video-transcoder)"
if grep -q 'conversion webhook' "$RUN_DIR"/executor-*.log; then
  bad "the executor met the conversion webhook: $(grep -m1 'conversion webhook' "$RUN_DIR"/executor-*.log)"
else
  ok
fi

echo "conversion [$BACKEND]: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
