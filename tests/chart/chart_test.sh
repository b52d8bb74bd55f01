#!/usr/bin/env bash
# Chart/deploy checks, one ctest per case: chart_test.sh <case>. Exit 77 = skipped (ctest SKIP_RETURN_CODE).
set -euo pipefail
SRC="${CLONESET_SOURCE_DIR:?}"
BUILD="${CLONESET_BUILD_DIR:?}"
CR="${CHARTRENDER:?}"
CHART="$SRC/charts/cloneset"
CRD="$CHART/crds/clonesets.apps.kruise.io.yaml"
DATA="$SRC/tests/chart/testdata"
TMP="$(mktemp -d)"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || fail "$1 not installed (./run deps installs it)"; }
# count KIND FILE: number of top-level objects of a kind in rendered manifests.
count() { grep -c "^kind: $1\$" "$2" || true; }
expect_count() { local got; got=$(count "$1" "$3"); [ "$got" = "$2" ] || fail "want $2 $1 in $3, got $got"; }
go_env() {
  export GOPATH=/usr/share/gocode GO111MODULE=off GOPROXY=off GOFLAGS= GOCACHE="$BUILD/tools/chartrender/gocache"
}

case_build_renderer() {
  need go; go_env
  mkdir -p "$(dirname "$CR")"
  (cd "$SRC/tools/chartrender" && go build -o "$CR" .)
  { "$CR" 2>&1 || true; } | grep -q usage || fail "renderer did not start"
}

case_renderer_unit() {
  need go; go_env
  (cd "$SRC/tools/chartrender" && go test -count=1 .)
}

case_render_default() {
  "$CR" values -chart "$CHART"
  "$CR" render -chart "$CHART" > "$TMP/out.yaml"
  "$CR" check -manifests "$TMP/out.yaml"
  expect_count Deployment 2 "$TMP/out.yaml"
  expect_count DaemonSet 0 "$TMP/out.yaml"
  expect_count PodDisruptionBudget 2 "$TMP/out.yaml"
  expect_count Service 3 "$TMP/out.yaml"
  expect_count NetworkPolicy 2 "$TMP/out.yaml"
  expect_count ServiceAccount 2 "$TMP/out.yaml"
  expect_count HorizontalPodAutoscaler 0 "$TMP/out.yaml"
  expect_count ServiceMonitor 0 "$TMP/out.yaml"
  grep -q '^  clusterIP: None$' "$TMP/out.yaml" || fail "no headless planner Service"
  grep -q -- '- --planner_address=dns:///cloneset-planner-headless.cloneset-system.svc:7070$' "$TMP/out.yaml" \
    || fail "executor does not resolve the headless planner Service"
  grep -q -- '- --shards=1$' "$TMP/out.yaml" || fail "default shards"
  "$CR" render -chart "$CHART" -notes > "$TMP/notes.txt"
  grep -q 'rollout status deploy/cloneset-executor' "$TMP/notes.txt" || fail "NOTES.txt lacks the install check"
  # Another release name and namespace change every name consistently.
  "$CR" render -chart "$CHART" -name prod -namespace ops > "$TMP/prod.yaml"
  "$CR" check -manifests "$TMP/prod.yaml"
  grep -q 'dns:///prod-cloneset-planner-headless.ops.svc:7070' "$TMP/prod.yaml" || fail "release name not applied"
}

case_render_all_options() {
  local values="$CHART/ci/all-options-values.yaml" out="$TMP/all.yaml"
  "$CR" values -chart "$CHART" -f "$values"
  "$CR" render -chart "$CHART" -f "$values" > "$out"
  "$CR" check -manifests "$out"
  expect_count Deployment 2 "$out"
  expect_count DaemonSet 1 "$out"
  expect_count HorizontalPodAutoscaler 1 "$out"
  expect_count ServiceMonitor 3 "$out"
  expect_count PodMonitor 1 "$out"
  expect_count PrometheusRule 1 "$out"
  expect_count Certificate 2 "$out"
  expect_count NetworkPolicy 3 "$out"
  expect_count ConfigMap 1 "$out"
  [ "$(grep -c '^        - alert: ' "$out")" = "$(grep -c '^      - alert: ' "$SRC/deploy/prometheus/alerts.yaml")" ] \
    || fail "PrometheusRule does not carry every alert"
  grep -q '^  cloneset-controller-health.json: |-$' "$out" || fail "health dashboard missing from ConfigMap"
  grep -q '^  cloneset-rollout-progress.json: |-$' "$out" || fail "rollout dashboard missing from ConfigMap"
  grep -q '^    grafana_dashboard: "1"$' "$out" || fail "dashboard sidecar label missing"
  for arg in --shards=8 --workers=16 --qps=50 --burst=100 --lease_namespace=cloneset-leases \
             --expectation_timeout=3m --planner_pod_table=false --planner_in_place_batches=false --planner_tls_ca=/etc/cloneset/tls/ca.crt --tls_client_ca=/etc/cloneset/tls/ca.crt \
             --max_concurrent_pulls=4; do
    grep -q -- "- $arg\$" "$out" || fail "missing argument $arg"
  done
  grep -q 'path: /run/k3s/containerd/containerd.sock' "$out" || fail "CRI socket path not from values"
  grep -q 'image: ghcr.io/cloneset-cpp/cloneset-executor@sha256:0123' "$out" && fail "global.imageRegistry ignored"
  grep -q 'image: registry.example.com/mirror/cloneset-executor@sha256:0123456789abcdef' "$out" || fail "digest image"
  grep -q 'image: registry.example.com/mirror/cloneset-planner:0.1.0-rc1' "$out" || fail "tagged image"
  # The HPA owns the planner's replica count.
  awk '/^# Source: cloneset\/templates\/planner.yaml/{p=1} /^# Source:/ && !/planner.yaml/{p=0} p' "$out" \
    | grep -q '^  replicas:' && fail "planner Deployment sets replicas while the HPA is on"
  "$CR" render -chart "$CHART" -f "$values" -notes | grep -q 'Secret cloneset-planner-tls' || fail "NOTES TLS"
}

# Each line: expected error substring <TAB> --set expressions.
case_values_schema_rejects() {
  local n=0 want sets
  while IFS=$'\t' read -r want sets; do
    [ -z "$want" ] && continue
    local args=()
    for s in $sets; do args+=(-set "$s"); done
    if "$CR" values -chart "$CHART" "${args[@]}" > "$TMP/o" 2>&1; then fail "accepted: $sets"; fi
    grep -qF -- "$want" "$TMP/o" || { cat "$TMP/o"; fail "rejection of '$sets' lacks '$want'"; }
    n=$((n + 1))
  done < "$DATA/bad-values.tsv"
  echo "$n bad values rejected"
  [ "$n" -ge 10 ] || fail "too few cases"
  # And a template-level requirement (required) fails the render.
  if "$CR" render -chart "$CHART" -set tls.enabled=true -set tls.certManager.enabled=true > "$TMP/o" 2>&1; then
    fail "cert-manager without an issuer rendered"; fi
  grep -q 'tls.certManager.issuerRef.name is required' "$TMP/o" || fail "required message"
}

case_invariants_reject_bad() {
  local n=0 f
  for f in "$DATA"/bad-manifests/*.yaml; do
    if "$CR" check -manifests "$f" > "$TMP/o" 2>&1; then fail "$f passed the invariants"; fi
    while read -r want; do
      grep -qF -- "$want" "$TMP/o" || { cat "$TMP/o"; fail "$f: output lacks '$want'"; }
    done < <(sed -n 's/^# expect-violation: //p' "$f")
    grep -q '^# expect-violation: ' "$f" || fail "$f has no expectation"
    n=$((n + 1))
  done
  echo "$n bad manifests rejected"
  [ "$n" -ge 5 ] || fail "too few cases"
}

case_crd_schema() {
  if [ ! -f "$CRD" ]; then echo "SKIP: $CRD not committed yet"; exit 77; fi
  "$CR" crd -crd "$CRD" -expect accept "$DATA"/crd-valid/*.yaml
  "$CR" crd -crd "$CRD" -expect reject "$DATA"/crd-invalid/*.yaml
  local dirs=("$SRC/tests/data")
  [ -d "${CLONESET_SEEDS_DIR:-}" ] && dirs+=("$CLONESET_SEEDS_DIR")
  "$CR" seeds -crd "$CRD" -min-complete 3 "${dirs[@]}"
}

case_files_in_sync() {
  cmp "$SRC/deploy/prometheus/alerts.yaml" "$CHART/files/alerts.yaml" \
    || fail "charts/cloneset/files/alerts.yaml differs from deploy/prometheus/alerts.yaml (copy it)"
  local f n=0
  for f in "$SRC"/deploy/grafana/dashboards/*.json; do
    cmp "$f" "$CHART/files/dashboards/$(basename "$f")" || fail "chart copy of $(basename "$f") differs"
    n=$((n + 1))
  done
  [ "$(ls "$CHART"/files/dashboards/*.json | wc -l)" = "$n" ] || fail "chart has dashboards deploy/ lacks"
  [ "$n" = 2 ] || fail "want 2 dashboards, got $n"
}

case_metrics_contract() {
  local c="$SRC/deploy/metrics-contract.txt"
  "$CR" metrics -contract "$c" "$SRC/deploy/prometheus/alerts.yaml" "$SRC"/deploy/grafana/dashboards/*.json
  # The check must notice a metric that no binary exposes.
  printf 'groups:\n- name: x\n  rules:\n  - alert: X\n    expr: sum by (le) (rate(cloneset_made_up_total{a="b"}[5m])) > 0\n' > "$TMP/bad.yaml"
  if "$CR" metrics -contract "$c" "$TMP/bad.yaml" > "$TMP/o" 2>&1; then fail "unknown metric accepted"; fi
  grep -q 'cloneset_made_up_total' "$TMP/o" || fail "unknown metric not named"
}

case_alerts_promtool() {
  need promtool
  (cd "$SRC/deploy/prometheus" && promtool check rules alerts.yaml && promtool test rules alerts_test.yaml)
}

case_compose_config() {
  need docker-compose; need promtool
  (cd "$SRC" && docker-compose -f docker-compose.yml config -q)
  (cd "$SRC" && docker-compose -f docker-compose.yml config --services) | sort > "$TMP/services"
  printf '%s\n' agent executor grafana k3s planner prometheus | diff - "$TMP/services" || fail "compose services"
  promtool check config "$SRC/deploy/prometheus/prometheus.yml"
}

# start_and_wait NAME KIND ARGS...: start a binary in the background and print the address its stderr
# announces: KIND "metrics" matches "metrics on http://h:p" (the contract) and "metrics listening on h:p";
# KIND "server" matches "listening on [scheme://]h:p" on a line that is not about metrics.
# The result always carries a scheme (http:// when the line has none).
start_and_wait() { # sets URL (no command substitution: the PID must stay in this shell's PIDS for cleanup)
  local name=$1 kind=$2; shift 2
  "$@" > "$TMP/$name.out" 2> "$TMP/$name.err" &
  local pid=$! i
  PIDS+=("$pid")
  URL=""
  for i in $(seq 1 150); do
    # The contract says stderr; stdout is read too so a binary printing there is still found.
    URL=$(cat "$TMP/$name.err" "$TMP/$name.out" | announced "$kind")
    [ -n "$URL" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$TMP/$name.err" >&2; fail "$name exited"; }
    sleep 0.1
  done
  cat "$TMP/$name.err" "$TMP/$name.out" >&2; fail "$name announced no $kind address"
}

announced() { # KIND < log
  local re='\(\([a-z+]*\):\/\/\)\{0,1\}\([0-9.]*:[0-9]*\)'
  if [ "$1" = metrics ]; then
    sed -n "s/.*metrics[a-z ]* on $re.*/\2 \3/p"
  else
    { grep -v metrics || true; } | sed -n "s/.*listening on $re.*/\2 \3/p"
  fi | head -1 | awk '{ if (NF == 1) print "http://" $1; else print $1 "://" $2 }'
}

scrape_and_compare() { # COMPONENT URL [BEARER_TOKEN]
  local auth=()
  [ -n "${3:-}" ] && auth=(-H "Authorization: Bearer $3")
  curl -fsSk "${auth[@]}" "$2/metrics" > "$TMP/$1.prom" || fail "scraping $1 at $2/metrics"
  "$CR" metrics -contract "$SRC/deploy/metrics-contract.txt" -component "$1" -exposition "$TMP/$1.prom"
  if command -v promtool >/dev/null; then promtool check metrics < "$TMP/$1.prom" || fail "$1 exposition lint"; fi
}

# Scrape every component binary that is built and compare with deploy/metrics-contract.txt.
case_metrics_binaries() {
  local bin="$BUILD/bin" checked=() url planner_grpc="" api=""
  if [ -x "$bin/cloneset-planner" ]; then
    start_and_wait planner metrics "$bin/cloneset-planner" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0
    url=$URL
    planner_grpc=$(cat "$TMP/planner.err" "$TMP/planner.out" | announced server | sed 's|^[a-z+]*://||')
    scrape_and_compare planner "$url"; checked+=(planner)
  fi
  if [ -x "$bin/cloneset-devcluster" ]; then
    mkdir -p "$TMP/dc"
    start_and_wait devcluster server "$bin/cloneset-devcluster" --listen=127.0.0.1:0 \
      --data_dir="$TMP/dc" --kubeconfig="$TMP/dc/kubeconfig"
    api=$URL
    # One real request first, so the per-request families exist.
    KUBECONFIG="$TMP/dc/kubeconfig" kubectl get namespaces > /dev/null || fail "kubectl against the devcluster"
    scrape_and_compare devcluster "$api" "$(sed -n 's/^ *token: *//p' "$TMP/dc/kubeconfig")"; checked+=(devcluster)
  fi
  if [ -x "$bin/cloneset-executor" ] && [ -n "$api" ] && [ -n "$planner_grpc" ]; then
    start_and_wait executor metrics "$bin/cloneset-executor" --kubeconfig="$TMP/dc/kubeconfig" \
      --planner_address="dns:///$planner_grpc" --lease_namespace=default --metrics_listen=127.0.0.1:0 \
      --health_listen=127.0.0.1:0
    url=$URL
    scrape_and_compare executor "$url"; checked+=(executor)
  fi
  if [ "${#checked[@]}" = 0 ]; then echo "SKIP: no component binary built in $bin yet"; exit 77; fi
  echo "compared with the contract: ${checked[*]}"
}

# Apply the chart's CRDs, the extracted seed manifests and the rendered chart (default values, then all options as
# an upgrade) to the embedded cluster with kubectl. The monitoring.coreos.com and cert-manager.io CRDs that their
# operators would install come from testdata/third-party-crds. Every rendered object must be applied and stored;
# a kind the embedded cluster does not serve fails the test.
case_kubectl_apply() {
  local bin="$BUILD/bin"
  [ -x "$bin/cloneset-devcluster" ] || { echo "SKIP: cloneset-devcluster not built in $bin"; exit 77; }
  need kubectl
  mkdir -p "$TMP/dc"
  start_and_wait devcluster server "$bin/cloneset-devcluster" --listen=127.0.0.1:0 \
    --data_dir="$TMP/dc" --kubeconfig="$TMP/dc/kubeconfig"
  export KUBECONFIG="$TMP/dc/kubeconfig"
  kubectl apply -f "$CHART/crds/" -f "$DATA/third-party-crds/"
  local i
  for i in $(seq 1 50); do kubectl get clone,servicemonitors,certificates -A > /dev/null 2>&1 && break; sleep 0.2; done
  kubectl get clone,servicemonitors,podmonitors,prometheusrules,certificates -A > /dev/null \
    || fail "custom resources not served after applying the CRDs"
  local n=0 f
  for f in "$SRC"/tests/data/*/*.yaml; do kubectl apply -f "$f"; n=$((n + 1)); done
  [ "$n" -gt 0 ] || fail "no seed manifests in tests/data"
  kubectl get clone -A -o name | grep -q . || fail "no CloneSet stored"
  echo "applied $n seed manifests"

  local ns
  for ns in cloneset-system cloneset-leases monitoring video; do # namespaces the all-options values use
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns" | kubectl apply -f -
  done
  "$CR" render -chart "$CHART" > "$TMP/default.yaml"
  "$CR" render -chart "$CHART" -f "$CHART/ci/all-options-values.yaml" > "$TMP/chart.yaml"
  # Every apiVersion/kind the chart renders must be served.
  kubectl api-resources --no-headers | awk '{print $(NF-2) "/" $NF}' | sort -u > "$TMP/served"
  awk '/^apiVersion: /{api=$2} /^kind: /{print api "/" $2}' "$TMP/default.yaml" "$TMP/chart.yaml" | sort -u \
    > "$TMP/rendered"
  comm -23 "$TMP/rendered" "$TMP/served" > "$TMP/missing"
  [ ! -s "$TMP/missing" ] || fail "the embedded cluster does not serve: $(tr '\n' ' ' < "$TMP/missing")"

  # Install with the default values, then upgrade to all options (three-way strategic merge patches).
  kubectl apply -f "$TMP/default.yaml" > "$TMP/apply1.out"
  local want got
  want=$(grep -c '^kind: ' "$TMP/default.yaml")
  got=$(grep -c ' created$' "$TMP/apply1.out" || true)
  [ "$got" = "$want" ] || { cat "$TMP/apply1.out"; fail "default install created $got of $want objects"; }
  kubectl apply -f "$TMP/chart.yaml" > "$TMP/apply2.out"
  grep -q '^deployment.apps/cloneset-planner configured$' "$TMP/apply2.out" \
    || { cat "$TMP/apply2.out"; fail "upgrade did not configure the planner Deployment"; }
  grep -q '^daemonset.apps/cloneset-agent created$' "$TMP/apply2.out" \
    || { cat "$TMP/apply2.out"; fail "upgrade did not create the agent DaemonSet"; }
  # Everything rendered is stored, and applying the same manifests again changes nothing.
  want=$(grep -c '^kind: ' "$TMP/chart.yaml")
  got=$(kubectl get -f "$TMP/chart.yaml" -o name | wc -l)
  [ "$got" = "$want" ] || fail "stored $got of the $want rendered objects"
  local rvs='{range .items[*]}{.kind}/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}'
  kubectl get -f "$TMP/chart.yaml" -o jsonpath="$rvs" > "$TMP/rv.before"
  kubectl apply -f "$TMP/chart.yaml" > "$TMP/apply3.out"
  # kubectl always sends a PodDisruptionBudget's selector (patchStrategy replace), so it reports "configured"
  # against kube-apiserver too; the server sees a no-op. Every other object is reported unchanged.
  got=$(grep -c ' unchanged$' "$TMP/apply3.out" || true)
  local pdbs
  pdbs=$(grep -c '^kind: PodDisruptionBudget$' "$TMP/chart.yaml")
  [ "$got" = "$((want - pdbs))" ] || { cat "$TMP/apply3.out"; fail "re-apply left $got of $want objects unchanged"; }
  kubectl get -f "$TMP/chart.yaml" -o jsonpath="$rvs" > "$TMP/rv.after"
  diff "$TMP/rv.before" "$TMP/rv.after" || fail "re-applying the same manifests changed resourceVersions"
  # The upgrade's HPA owns the planner's replicas: the Deployment no longer carries the chart's replica count,
  # and the API server defaults it to 1 like kube-apiserver (no controller acts on Deployments here).
  kubectl get -n cloneset-system deploy/cloneset-planner -o jsonpath='{.spec.replicas}' | grep -qx 1 \
    || fail "planner replicas not released to the HPA"
  kubectl get -n cloneset-system deploy/cloneset-executor -o jsonpath='{.spec.template.spec.containers[0].args}' \
    | grep -q -- '--shards=8' || fail "executor args not upgraded"
  # Server-side printing for the new kinds.
  kubectl get -n cloneset-system deploy,ds,sa,role,rolebinding,pdb,netpol,hpa > "$TMP/get.out"
  local total=$want row
  for row in 'deployment.apps/cloneset-planner +0/1 +0 +0 ' 'daemonset.apps/cloneset-agent +0 +0 +0 +0 +0 ' \
              'horizontalpodautoscaler.autoscaling/cloneset-planner +Deployment/cloneset-planner ' \
              'poddisruptionbudget.policy/cloneset-planner ' 'networkpolicy.networking.k8s.io/cloneset-planner '; do
    grep -Eq "^$row" "$TMP/get.out" || { cat "$TMP/get.out"; fail "kubectl get lacks a row like '$row'"; }
  done
  kubectl get clusterrole,clusterrolebinding -o name | grep -c cloneset | grep -qx 6 \
    || fail "cluster-scoped RBAC objects missing"
  echo "applied $total chart objects: $(sort -u "$TMP/rendered" | tr '\n' ' ')"
}

case="${1:?case}"; shift
"case_$case" "$@"
echo "PASS: $case"
