#!/usr/bin/env bash
# Chart/deploy checks, one ctest per case: chart_test.sh <case>. A missing binary or tool fails the case by name.
# Rendering, linting and values.schema.json validation are real Helm's (tools/go/helm, built by `./run tool`);
# tools/go/chartcheck checks what Helm does not (invariants, CRD, metrics contract) over Helm's output.
set -euo pipefail
SRC="${CLONESET_SOURCE_DIR:?}"
BUILD="${CLONESET_BUILD_DIR:?}"
CC="${CHARTCHECK:?}"
CHART="$SRC/charts/cloneset"
CRD="$CHART/files/crds/clonesets.apps.kruise.io.yaml"
DATA="$SRC/tests/chart/testdata"
SEEDS="$SRC/tests/data/seeds"
TMP="$(mktemp -d)"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
# Helm keeps its config, cache and plugins under these; keep them out of the user's home.
export HELM_CONFIG_HOME="$TMP/helm/config" HELM_CACHE_HOME="$TMP/helm/cache" HELM_DATA_HOME="$TMP/helm/data"
export PATH="$PATH:/usr/local/go/bin"

fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || fail "$1 not installed (./run deps installs it)"; }
# count KIND FILE: number of top-level objects of a kind in rendered manifests.
count() { grep -c "^kind: $1\$" "$2" || true; }
expect_count() { local got; got=$(count "$1" "$3"); [ "$got" = "$2" ] || fail "want $2 $1 in $3, got $got"; }
# The pinned Helm (tools/go/helm), built once into the tools cache by chart.build_tools.
helm_bin() { HELM=$("$SRC/run" tool helm helm.sh/helm/v3/cmd/helm helm) || fail "building Helm (./run tool helm)"; }
# Helm built without the release's linker flags assumes Kubernetes 1.20 (below the chart's kubeVersion) when it does
# not ask a cluster, so offline renders name the version of the real control plane the chart is tested on.
KUBE_VERSION=v1.34.0
# template [ARGS...]: helm template of the chart as release "cloneset" in cloneset-system (the documented install).
template() { "$HELM" template cloneset "$CHART" --namespace cloneset-system --kube-version "$KUBE_VERSION" "$@"; }

case_build_tools() {
  need go
  helm_bin
  "$HELM" version --short | grep -q '^v3\.19' || fail "$HELM is not the pinned Helm 3.19"
  mkdir -p "$(dirname "$CC")"
  (cd "$SRC/tools/go/chartcheck" && CGO_ENABLED=0 go build -trimpath -o "$CC" .)
  { "$CC" 2>&1 || true; } | grep -q usage || fail "chartcheck did not start"
}

case_checker_unit() {
  need go
  (cd "$SRC/tools/go/chartcheck" && go vet . && go test -count=1 .)
}

# helm lint, also --strict (template errors, missing values), with the default and the all-options values.
case_helm_lint() {
  helm_bin
  "$HELM" lint "$CHART" --kube-version "$KUBE_VERSION"
  "$HELM" lint --strict "$CHART" --kube-version "$KUBE_VERSION"
  "$HELM" lint --strict "$CHART" --kube-version "$KUBE_VERSION" -f "$CHART/ci/all-options-values.yaml"
  # and lint fails on a value the schema rejects.
  if "$HELM" lint --strict "$CHART" --kube-version "$KUBE_VERSION" --set planner.replicas=0 > "$TMP/o" 2>&1; then
    fail "lint accepted planner.replicas=0"; fi
  grep -q 'replicas' "$TMP/o" || { cat "$TMP/o"; fail "lint error does not name the field"; }
}

# notes [ARGS...]: NOTES.txt as Helm renders it. helm template does not print it and an install, even a dry run,
# needs a cluster, so a copy of the chart gets one extra template that includes NOTES.txt into a ConfigMap.
notes() {
  rm -rf "$TMP/notes-chart"; cp -r "$CHART" "$TMP/notes-chart"
  printf '%s\n' 'apiVersion: v1' 'kind: ConfigMap' 'metadata: {name: rendered-notes}' 'data:' '  NOTES.txt: |' \
    '    {{- include (print $.Template.BasePath "/NOTES.txt") . | nindent 4 }}' \
    > "$TMP/notes-chart/templates/zz-rendered-notes.yaml"
  "$HELM" template cloneset "$TMP/notes-chart" --namespace cloneset-system --kube-version "$KUBE_VERSION" \
    --show-only templates/zz-rendered-notes.yaml "$@"
}

case_render_default() {
  helm_bin
  template > "$TMP/out.yaml"
  "$CC" check -manifests "$TMP/out.yaml"
  expect_count Deployment 2 "$TMP/out.yaml"
  expect_count DaemonSet 0 "$TMP/out.yaml"
  expect_count PodDisruptionBudget 2 "$TMP/out.yaml"
  expect_count Service 3 "$TMP/out.yaml"
  expect_count NetworkPolicy 2 "$TMP/out.yaml"
  expect_count ServiceAccount 2 "$TMP/out.yaml"
  expect_count HorizontalPodAutoscaler 0 "$TMP/out.yaml"
  expect_count ServiceMonitor 0 "$TMP/out.yaml"
  # The CloneSet CRD is templated (its conversion webhook is this release's); crds/ holds the other two.
  expect_count CustomResourceDefinition 1 "$TMP/out.yaml"
  grep -q '^          path: /convert$' "$TMP/out.yaml" && grep -q '^          name: cloneset-planner$' "$TMP/out.yaml" ||
    fail "CRD conversion not wired to the planner"
  grep -q -- '- --conversion_listen=0.0.0.0:9443$' "$TMP/out.yaml" || fail "planner does not serve the conversion webhook"
  expect_count Secret 1 "$TMP/out.yaml"  # the webhook's certificate, made by the chart
  template --set crd.install=false > "$TMP/nocrd.yaml"
  expect_count CustomResourceDefinition 0 "$TMP/nocrd.yaml"
  grep -q -- '--conversion_listen' "$TMP/nocrd.yaml" && fail "planner serves a webhook no CRD calls"
  grep -q '^  clusterIP: None$' "$TMP/out.yaml" || fail "no headless planner Service"
  grep -q -- '- --planner_address=dns:///cloneset-planner-headless.cloneset-system.svc:7070$' "$TMP/out.yaml" \
    || fail "executor does not resolve the headless planner Service"
  grep -q -- '- --shards=1$' "$TMP/out.yaml" || fail "default shards"
  # Upstream's defaults: no gate and no exclude flag is passed.
  grep -q -- 'feature_gates\|cloneset_scaling_exclude_preparing_delete' "$TMP/out.yaml" && fail "default passes gates"
  notes > "$TMP/notes.txt"
  grep -q 'rollout status deploy/cloneset-executor' "$TMP/notes.txt" || { cat "$TMP/notes.txt"; fail "NOTES.txt lacks the install check"; }
  grep -q 'feature gates' "$TMP/notes.txt" && fail "NOTES.txt names feature gates that are not set"
  # --include-crds puts the other two CRDs first.
  template --include-crds > "$TMP/crds.yaml"
  expect_count CustomResourceDefinition 3 "$TMP/crds.yaml"
  # Another release name and namespace change every name consistently.
  "$HELM" template prod "$CHART" --namespace ops --kube-version "$KUBE_VERSION" > "$TMP/prod.yaml"
  "$CC" check -manifests "$TMP/prod.yaml"
  grep -q 'dns:///prod-cloneset-planner-headless.ops.svc:7070' "$TMP/prod.yaml" || fail "release name not applied"
}

case_render_all_options() {
  helm_bin
  local values="$CHART/ci/all-options-values.yaml" out="$TMP/all.yaml"
  template -f "$values" > "$out"
  "$CC" check -manifests "$out"
  expect_count Deployment 2 "$out"
  expect_count DaemonSet 1 "$out"
  expect_count HorizontalPodAutoscaler 1 "$out"
  expect_count ServiceMonitor 3 "$out"
  expect_count PodMonitor 1 "$out"
  expect_count PrometheusRule 1 "$out"
  expect_count Certificate 3 "$out"  # the planner's and the executor's mTLS, the conversion webhook's
  grep -q 'cert-manager.io/inject-ca-from: cloneset-system/cloneset-planner-webhook$' "$out" ||
    fail "the CRD does not ask cert-manager's CA injector for the webhook's CA"
  grep -q -- '- --conversion_listen=0.0.0.0:8443$' "$out" || fail "conversionWebhook.port not applied"
  expect_count NetworkPolicy 3 "$out"
  expect_count ConfigMap 1 "$out"
  [ "$(grep -c '^        - alert: ' "$out")" = "$(grep -c '^      - alert: ' "$SRC/deploy/prometheus/alerts.yaml")" ] \
    || fail "PrometheusRule does not carry every alert"
  grep -q '^  cloneset-controller-health.json: |-$' "$out" || fail "health dashboard missing from ConfigMap"
  grep -q '^  cloneset-rollout-progress.json: |-$' "$out" || fail "rollout dashboard missing from ConfigMap"
  grep -q '^    grafana_dashboard: "1"$' "$out" || fail "dashboard sidecar label missing"
  for arg in --shards=8 --workers=16 --qps=50 --burst=100 --api_write_qps=30 --api_write_burst=50 \
             --retry_backoff_base=10ms --retry_backoff_max=30s --lease_namespace=cloneset-leases \
             --expectation_timeout=3m --planner_pod_table=false --planner_in_place_batches=false --planner_tls_ca=/etc/cloneset/tls/ca.crt --tls_client_ca=/etc/cloneset/tls/ca.crt \
             --max_concurrent_pulls=4; do
    grep -q -- "- $arg\$" "$out" || fail "missing argument $arg"
  done
  grep -q -- '- "--feature_gates=CloneSetShortHash=true,PreparingUpdateAsUpdate=true,PodWebhook=false"$' "$out" \
    || fail "executor.featureGates not rendered into the executor's args"
  grep -q -- '- --cloneset_scaling_exclude_preparing_delete=true$' "$out" \
    || fail "executor.scalingExcludePreparingDelete not rendered"
  # Kruise's documented form on the helm command line: escaped commas make one string.
  template --set 'executor.featureGates=CloneSetShortHash=true\,InPlaceUpdateEnvFromMetadata=false' > "$TMP/gates.yaml"
  grep -q -- '- "--feature_gates=CloneSetShortHash=true,InPlaceUpdateEnvFromMetadata=false"$' "$TMP/gates.yaml" \
    || fail "--set executor.featureGates with escaped commas"
  grep -q 'path: /run/k3s/containerd/containerd.sock' "$out" || fail "CRI socket path not from values"
  grep -q 'image: ghcr.io/cloneset-cpp/cloneset-executor@sha256:0123' "$out" && fail "global.imageRegistry ignored"
  grep -q 'image: registry.example.com/mirror/cloneset-executor@sha256:0123456789abcdef' "$out" || fail "digest image"
  grep -q 'image: registry.example.com/mirror/cloneset-planner:0.1.0-rc1' "$out" || fail "tagged image"
  # The HPA owns the planner's replica count.
  awk '/^# Source: cloneset\/templates\/planner.yaml/{p=1} /^# Source:/ && !/planner.yaml/{p=0} p' "$out" \
    | grep -q '^  replicas:' && fail "planner Deployment sets replicas while the HPA is on"
  grep -q 'Secret cloneset-planner-tls' <<< "$(notes -f "$values")" || fail "NOTES TLS"
  grep -q 'Upstream feature gates: CloneSetShortHash=true,PreparingUpdateAsUpdate=true,PodWebhook=false, --cloneset-scaling-exclude-preparing-delete.' \
    <<< "$(notes -f "$values")" || fail "NOTES feature gates"
}

# Each line: expected error substring <TAB> --set expressions. Helm validates the merged values against
# values.schema.json before rendering; each message must name the field.
case_values_schema_rejects() {
  helm_bin
  local n=0 want sets
  while IFS=$'\t' read -r want sets; do
    [ -z "$want" ] && continue
    local args=()
    for s in $sets; do args+=(--set "$s"); done
    if template "${args[@]}" > "$TMP/o" 2>&1; then fail "accepted: $sets"; fi
    grep -qF -- "$want" "$TMP/o" || { cat "$TMP/o"; fail "rejection of '$sets' lacks '$want'"; }
    grep -q "values don't meet the specifications of the schema" "$TMP/o" || { cat "$TMP/o"; fail "'$sets' not rejected by the schema"; }
    n=$((n + 1))
  done < "$DATA/bad-values.tsv"
  echo "$n bad values rejected"
  [ "$n" -ge 10 ] || fail "too few cases"
  # And a template-level requirement (required) fails the render.
  if template --set tls.enabled=true --set tls.certManager.enabled=true > "$TMP/o" 2>&1; then
    fail "cert-manager without an issuer rendered"; fi
  grep -q 'tls.certManager.issuerRef.name is required' "$TMP/o" || fail "required message"
}

case_invariants_reject_bad() {
  local n=0 f
  for f in "$DATA"/bad-manifests/*.yaml; do
    if "$CC" check -manifests "$f" > "$TMP/o" 2>&1; then fail "$f passed the invariants"; fi
    while read -r want; do
      grep -qF -- "$want" "$TMP/o" || { cat "$TMP/o"; fail "$f: output lacks '$want'"; }
    done < <(sed -n 's/^# expect-violation: //p' "$f")
    grep -q '^# expect-violation: ' "$f" || fail "$f has no expectation"
    n=$((n + 1))
  done
  echo "$n bad manifests rejected"
  [ "$n" -ge 5 ] || fail "too few cases"
}

# The CRD offline: structure, valid/invalid examples, and every seed CloneSet (tests/data/seeds, tests/data/seed000).
# All inputs are in the repository; the real API server's verdict is chart.helm_install_real's.
case_crd_schema() {
  [ -f "$CRD" ] || fail "$CRD missing"
  "$CC" crd -crd "$CRD" -expect accept "$DATA"/crd-valid/*.yaml
  "$CC" crd -crd "$CRD" -expect reject "$DATA"/crd-invalid/*.yaml
  # The CEL-only examples pass the OpenAPI part, so chart.helm_install_real's rejections of them come from CEL.
  "$CC" crd -crd "$CRD" -expect accept "$DATA"/crd-invalid-cel/*.yaml
  "$CC" seeds -crd "$CRD" -min-complete 5 "$SEEDS" "$SRC/tests/data/seed000"
  # The hand-written v1beta1 CloneSets (tests/data/v1beta1) against the v1beta1 schema.
  "$CC" crd -crd "$CRD" -expect accept "$SRC"/tests/data/v1beta1/*.yaml
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
  "$CC" metrics -contract "$c" "$SRC/deploy/prometheus/alerts.yaml" "$SRC"/deploy/grafana/dashboards/*.json
  # The check must notice a metric that no binary exposes.
  printf 'groups:\n- name: x\n  rules:\n  - alert: X\n    expr: sum by (le) (rate(cloneset_made_up_total{a="b"}[5m])) > 0\n' > "$TMP/bad.yaml"
  if "$CC" metrics -contract "$c" "$TMP/bad.yaml" > "$TMP/o" 2>&1; then fail "unknown metric accepted"; fi
  grep -q 'cloneset_made_up_total' "$TMP/o" || fail "unknown metric not named"
}

case_alerts_promtool() {
  need promtool
  (cd "$SRC/deploy/prometheus" && promtool check rules alerts.yaml && promtool test rules alerts_test.yaml)
}

# Compose v2 (the pinned plugin of tools/go/docker, which also runs standalone; no daemon needed for `config`): the
# default stack and the opt-in profiles' services. tests/compose runs the default stack.
case_compose_config() {
  need promtool
  local compose; compose=$("$SRC/run" tool docker github.com/docker/compose/v2/cmd docker-compose) ||
    fail "building compose v2 (./run tool docker github.com/docker/compose/v2/cmd docker-compose)"
  (cd "$SRC" && "$compose" -f docker-compose.yml config -q)
  (cd "$SRC" && "$compose" -f docker-compose.yml config --services) | sort > "$TMP/services"
  printf '%s\n' devcluster executor planner prometheus | diff - "$TMP/services" || fail "compose default services"
  (cd "$SRC" && "$compose" -f docker-compose.yml --profile k3s --profile grafana config --services) | sort > "$TMP/all"
  printf '%s\n' agent-k3s devcluster executor executor-k3s grafana k3s planner prometheus prometheus-k3s |
    diff - "$TMP/all" || fail "compose services with the k3s and grafana profiles"
  promtool check config "$SRC/deploy/prometheus/prometheus.yml"
  promtool check config "$SRC/deploy/prometheus/prometheus-k3s.yml"
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
  "$CC" metrics -contract "$SRC/deploy/metrics-contract.txt" -component "$1" -exposition "$TMP/$1.prom"
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
  if [ "${#checked[@]}" = 0 ]; then echo "FAIL: no component binary built in $bin (build the tree first)"; exit 1; fi
  echo "compared with the contract: ${checked[*]}"
}

# Apply the chart's CRDs, the extracted seed manifests and the rendered chart (default values, then all options as
# an upgrade) to the embedded cluster with kubectl. The monitoring.coreos.com and cert-manager.io CRDs that their
# operators would install come from testdata/third-party-crds. Every rendered object must be applied and stored;
# a kind the embedded cluster does not serve fails the test.
case_kubectl_apply() {
  local bin="$BUILD/bin"
  [ -x "$bin/cloneset-devcluster" ] || { echo "FAIL: cloneset-devcluster not built in $bin (build the tree first)"; exit 1; }
  need kubectl
  mkdir -p "$TMP/dc"
  start_and_wait devcluster server "$bin/cloneset-devcluster" --listen=127.0.0.1:0 \
    --data_dir="$TMP/dc" --kubeconfig="$TMP/dc/kubeconfig"
  export KUBECONFIG="$TMP/dc/kubeconfig"
  kubectl apply -f "$CHART/crds/" -f "$CHART/files/crds/" -f "$DATA/third-party-crds/"
  local i
  for i in $(seq 1 50); do kubectl get clone,servicemonitors,certificates -A > /dev/null 2>&1 && break; sleep 0.2; done
  kubectl get clone,servicemonitors,podmonitors,prometheusrules,certificates -A > /dev/null \
    || fail "custom resources not served after applying the CRDs"
  local n=0 f
  for f in "$SRC"/tests/data/*/*.yaml; do kubectl apply -f "$f"; n=$((n + 1)); done
  [ "$n" -gt 0 ] || fail "no seed manifests in tests/data"
  # Captured, not piped into grep -q: grep exits at the first line and, under pipefail, kubectl's SIGPIPE on the
  # rest would fail the check once more than a few CloneSets are stored.
  [ -n "$(kubectl get clone -A -o name)" ] || fail "no CloneSet stored"
  echo "applied $n seed manifests"

  local ns
  for ns in cloneset-system cloneset-leases monitoring video; do # namespaces the all-options values use
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns" | kubectl apply -f -
  done
  helm_bin
  template > "$TMP/default.yaml"
  template -f "$CHART/ci/all-options-values.yaml" > "$TMP/chart.yaml"
  # Every apiVersion/kind the chart renders must be served.
  kubectl api-resources --no-headers | awk '{print $(NF-2) "/" $NF}' | sort -u > "$TMP/served"
  awk '/^apiVersion: /{api=$2} /^kind: /{print api "/" $2}' "$TMP/default.yaml" "$TMP/chart.yaml" | sort -u \
    > "$TMP/rendered"
  comm -23 "$TMP/rendered" "$TMP/served" > "$TMP/missing"
  [ ! -s "$TMP/missing" ] || fail "the embedded cluster does not serve: $(tr '\n' ' ' < "$TMP/missing")"

  # Install with the default values, then upgrade to all options (three-way strategic merge patches).
  kubectl apply -f "$TMP/default.yaml" > "$TMP/apply1.out"
  local want got
  # The CloneSet CRD was applied from its file before the seeds: configured, not created.
  want=$(($(grep -c '^kind: ' "$TMP/default.yaml") - 1))
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
  # The agent in the namespace of its own that the all-options values create (agent.createNamespace).
  kubectl get -n cloneset-agent ds,sa,netpol >> "$TMP/get.out"
  kubectl get namespace cloneset-agent -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}' |
    grep -qx privileged || fail "the agent's namespace is not labelled pod-security.kubernetes.io/enforce=privileged"
  local total=$want row
  for row in 'deployment.apps/cloneset-planner +0/1 +0 +0 ' 'daemonset.apps/cloneset-agent +0 +0 +0 +0 +0 ' \
              'horizontalpodautoscaler.autoscaling/cloneset-planner +Deployment/cloneset-planner ' \
              'poddisruptionbudget.policy/cloneset-planner ' 'networkpolicy.networking.k8s.io/cloneset-planner ' \
              'serviceaccount/cloneset-agent ' 'networkpolicy.networking.k8s.io/cloneset-agent '; do
    grep -Eq "^$row" "$TMP/get.out" || { cat "$TMP/get.out"; fail "kubectl get lacks a row like '$row'"; }
  done
  kubectl get clusterrole,clusterrolebinding -o name | grep -c cloneset | grep -qx 6 \
    || fail "cluster-scoped RBAC objects missing"
  echo "applied $total chart objects: $(sort -u "$TMP/rendered" | tr '\n' ' ')"
}

# server_expectations FILE: the "# server-expect: " substrings a real API server's rejection of FILE must contain.
server_expectations() { sed -n 's/^# server-expect: //p' "$1"; }

# helm install on a real Kubernetes 1.34 control plane (`./run up --cluster real`, private RUN_DIR, no planner or
# executor: only the API server's verdicts are checked). Helm installs the CRDs itself (those `up` applies are
# deleted first), so the API server compiles every CEL rule at CRD creation; then every invalid example is
# rejected naming its field (testdata/crd-invalid: OpenAPI schema, testdata/crd-invalid-cel: CEL rules), every
# valid example and seed CloneSet is accepted, the transition rule (selector immutable) fires on an update, and
# helm uninstall keeps the CRD and the CloneSets.
case_helm_install_real() {
  need kubectl; need curl; need openssl
  helm_bin
  export RUN_DIR="$TMP/run" BUILD_DIR="$BUILD" KUBECACHEDIR="$TMP/kubecache" JOBS="${JOBS:-2}"
  real_down() { "$SRC/run" down --purge > /dev/null 2>&1 || "$SRC/run" down > /dev/null 2>&1 || true; }
  trap 'real_down; cleanup' EXIT
  local t0=$SECONDS
  "$SRC/run" up --cluster real --nodes 1 --planners 0 --executors 0 > "$TMP/up.out" 2>&1 \
    || { tail -30 "$TMP/up.out"; fail "./run up --cluster real"; }
  echo "timing: control plane up $((SECONDS - t0)) s"
  export KUBECONFIG="$RUN_DIR/kubeconfig"
  local crds=(clonesets.apps.kruise.io imagepulljobs.apps.kruise.io nodeimages.apps.kruise.io)
  # 420 s: kube-apiserver's CRD cleanup finalizer is slow under load; on the 2-core machine running the whole suite
  # one deletion took over 60 s and another over 180 s (30 s when the machine is quiet). A timeout prints the CRDs'
  # conditions, which say what the deletion waits for.
  kubectl delete crd "${crds[@]}" --ignore-not-found --wait=true --timeout=420s || {
    kubectl get crd "${crds[@]}" -o jsonpath='{range .items[*]}{.metadata.name}: {.status.conditions}{"\n"}{end}' || true
    fail "deleting the CRDs ./run up applied"
  }

  t0=$SECONDS
  "$HELM" install cloneset "$CHART" --namespace cloneset-system --create-namespace --wait --timeout 5m \
    > "$TMP/install.out" 2>&1 || { cat "$TMP/install.out"; kubectl get pods -A -o wide || true; fail "helm install"; }
  echo "timing: helm install --wait $((SECONDS - t0)) s"
  grep -q '^STATUS: deployed$' <<< "$("$HELM" status cloneset -n cloneset-system)" || fail "release not deployed"
  local c
  for c in "${crds[@]}"; do
    kubectl wait --for condition=Established "crd/$c" --timeout=60s > /dev/null || fail "CRD $c not established"
    # Created by helm from crds/, not left over from kubectl apply (which records its last-applied annotation).
    grep -q last-applied-configuration <<< "$(kubectl get crd "$c" -o jsonpath='{.metadata.annotations}')" \
      && fail "CRD $c was not created by helm install"
  done
  kubectl -n cloneset-system rollout status deploy/cloneset-executor --timeout=60s > /dev/null
  kubectl -n cloneset-system rollout status deploy/cloneset-planner --timeout=60s > /dev/null
  # The chart's conversion wiring, as the API server stored it: the planner Service's webhook port, the CA of the
  # certificate in the Secret the planners mount.
  local conv
  conv=$(kubectl get crd clonesets.apps.kruise.io -o jsonpath='{.spec.conversion.strategy} {.spec.conversion.webhook.clientConfig.service.namespace}/{.spec.conversion.webhook.clientConfig.service.name}:{.spec.conversion.webhook.clientConfig.service.port}{.spec.conversion.webhook.clientConfig.service.path}')
  [ "$conv" = "Webhook cloneset-system/cloneset-planner:443/convert" ] || fail "CRD conversion is '$conv'"
  [ "$(kubectl get crd clonesets.apps.kruise.io -o jsonpath='{.spec.conversion.webhook.clientConfig.caBundle}')" = \
    "$(kubectl -n cloneset-system get secret cloneset-planner-webhook-tls -o jsonpath='{.data.ca\.crt}')" ] ||
    fail "the CRD's caBundle is not the CA of the planner's webhook certificate"
  [ "$(kubectl get crd clonesets.apps.kruise.io -o jsonpath='{.spec.versions[?(@.storage==true)].name}')" = v1beta1 ] ||
    fail "the CRD does not store v1beta1"
  # kwok's planner pods serve nothing: the API server converts through this run's webhook from here on.
  "$SRC/run" conversion || fail "./run conversion"

  # Every invalid example is rejected by the server, naming the field (and, for CEL, the rule's message).
  local f n=0 bad=0 want
  for f in "$DATA"/crd-invalid/*.yaml "$DATA"/crd-invalid-cel/*.yaml; do
    server_expectations "$f" | grep -q . || fail "$f has no '# server-expect:' line"
    if kubectl apply --dry-run=server -n default -f "$f" > "$TMP/o" 2>&1; then
      echo "NOT REJECTED: $f"; bad=$((bad + 1)); continue
    fi
    while read -r want; do
      grep -qF -- "$want" "$TMP/o" || { echo "WRONG MESSAGE: $f lacks '$want':"; cat "$TMP/o"; bad=$((bad + 1)); }
    done < <(server_expectations "$f")
    echo "rejected $(basename "$(dirname "$f")")/$(basename "$f"): $(tail -c 300 "$TMP/o")"
    n=$((n + 1))
  done
  [ "$bad" = 0 ] || fail "$bad invalid examples were accepted or rejected without naming the field"
  echo "$n invalid CloneSets rejected by the API server"
  # Every valid example and every complete seed CloneSet is accepted (server-side dry run: schema, CEL, defaults).
  n=0
  for f in "$DATA"/crd-valid/*.yaml "$SEEDS"/*.yaml "$SRC/tests/data/seed000/cloneset.yaml" \
           "$SRC"/tests/data/v1beta1/*.yaml; do
    kubectl apply --dry-run=server -n default -f "$f" > "$TMP/o" 2>&1 || { cat "$TMP/o"; fail "$f rejected"; }
    n=$((n + $(grep -c '^kind: CloneSet$' "$f")))
  done
  echo "$n valid CloneSets accepted by the API server"
  [ "$n" -ge 10 ] || fail "too few valid CloneSets"
  # The transition rule: a stored CloneSet's selector cannot change.
  kubectl apply -n default -f "$SEEDS/003.yaml" > /dev/null
  if kubectl patch -n default clonesets.apps.kruise.io cs-demo --type=merge \
       -p '{"spec":{"selector":{"matchLabels":{"app":"cs2"}},"template":{"metadata":{"labels":{"app":"cs2"}}}}}' \
       > "$TMP/o" 2>&1; then fail "selector change accepted"; fi
  grep -q 'spec.selector' "$TMP/o" && grep -q 'selector is immutable' "$TMP/o" || { cat "$TMP/o"; fail "selector immutability"; }
  # The CRD policy of docs/deployment.md: uninstall keeps the CRD and the users' CloneSets.
  "$HELM" uninstall cloneset -n cloneset-system --wait --timeout 2m > /dev/null
  kubectl get crd clonesets.apps.kruise.io > /dev/null || fail "helm uninstall deleted the CRD"
  kubectl get -n default clonesets.apps.kruise.io cs-demo > /dev/null || fail "helm uninstall deleted a CloneSet"
}

case="${1:?case}"; shift
"case_$case" "$@"
echo "PASS: $case"
