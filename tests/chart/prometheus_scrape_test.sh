#!/usr/bin/env bash
# A real Prometheus on loopback scrapes the planner, executor and agent of `./run up` and answers a query
# for a reconcile metric. The stack runs in a private RUN_DIR so it never meets another test's `./run up`.
# A missing binary or tool (prometheus, kubectl, curl, python3) fails the test by name.
set -euo pipefail
SRC="${CLONESET_SOURCE_DIR:?}"
BUILD="${CLONESET_BUILD_DIR:?}"
SEED="$SRC/tests/data/seed000"

for b in cloneset-devcluster cloneset-planner cloneset-executor cloneset-agent; do
  [ -x "$BUILD/bin/$b" ] || { echo "FAIL: $b not built in $BUILD/bin (build the tree first)"; exit 1; }
done
for t in prometheus kubectl curl python3; do
  command -v "$t" >/dev/null || { echo "FAIL: $t not installed (./run deps installs it)"; exit 1; }
done

TMP="$(mktemp -d)"
export RUN_DIR="$TMP/run" BUILD_DIR="$BUILD"
PROM_PID=""
cleanup() {
  local rc=$?
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null || true; fi
  "$SRC/run" down >/dev/null 2>&1 || true
  if [ "$rc" != 0 ]; then
    echo "--- prometheus log (tail)"; tail -20 "$TMP/prometheus.log" 2>/dev/null || true
    local f; for f in "$RUN_DIR"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -5 "$f"; }; done
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# metrics_addr NAME: the host:port NAME announced for /metrics ("metrics on http://..." from the executor and
# agent, "metrics listening on ..." from the planner).
metrics_addr() {
  grep -m1 -oE "metrics (listening )?on [^ \"]+" "$RUN_DIR/$1.log" | awk '{print $NF}' | sed 's#^[a-z]*://##'
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# query PROMQL: the JSON answer of the instant-query API.
query() { curl -sf --max-time 5 "http://$PROM/api/v1/query" --data-urlencode "query=$1"; }
# result_count JSON: number of series in a successful vector answer.
result_count() {
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"]=="success"; print(len(d["data"]["result"]))' 2>/dev/null
}
# values JSON: "job=value" per series, sorted.
values() {
  python3 -c 'import json,sys; d=json.load(sys.stdin)
for s in sorted(d["data"]["result"], key=lambda s: s["metric"].get("job","")): print(s["metric"].get("job","")+"="+s["value"][1])'
}
# poll SECONDS DESCRIPTION COMMAND...: retry once a second until COMMAND succeeds.
poll() {
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out after ${secs}s waiting for $what"
    sleep 1
  done
}

"$SRC/run" up --nodes 1 >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "./run up"; }
KUBECONFIG_PATH="$(cat "$RUN_DIR/kubeconfig.path")"
PLANNER="$(metrics_addr planner-0)"; EXECUTOR="$(metrics_addr executor-0)"; AGENT="$(metrics_addr agent-0)"
[ -n "$PLANNER" ] && [ -n "$EXECUTOR" ] && [ -n "$AGENT" ] ||
  fail "metrics addresses: planner='$PLANNER' executor='$EXECUTOR' agent='$AGENT'"
echo "targets: planner=$PLANNER executor=$EXECUTOR agent=$AGENT"

cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: planner
    static_configs: [{targets: ['$PLANNER']}]
  - job_name: executor
    static_configs: [{targets: ['$EXECUTOR']}]
  - job_name: agent
    static_configs: [{targets: ['$AGENT']}]
EOF
if command -v promtool >/dev/null; then promtool check config "$TMP/prometheus.yml" >/dev/null; fi

# Prometheus cannot report a port-0 bind, so pick a free port; retry if another process takes it first.
for attempt in 1 2 3; do
  PROM="127.0.0.1:$(free_port)"
  prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" --web.listen-address="$PROM" \
    >"$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  started=0
  for _ in $(seq 1 100); do
    kill -0 "$PROM_PID" 2>/dev/null || break
    if curl -sf --max-time 2 "http://$PROM/-/ready" >/dev/null; then started=1; break; fi
    sleep 0.2
  done
  [ "$started" = 1 ] && break
  kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null || true; PROM_PID=""
done
[ -n "$PROM_PID" ] || fail "prometheus did not become ready"
echo "prometheus on $PROM"

# A CloneSet from the user's seed manifests, so the executor reconciles.
KUBECACHEDIR="$TMP/kubecache" kubectl --kubeconfig "$KUBECONFIG_PATH" apply -f "$SEED/" >"$TMP/apply.log" 2>&1 ||
  { cat "$TMP/apply.log"; fail "kubectl apply $SEED"; }

# The first scrape lands 5-7 s after start (Prometheus waits before its first scrape): poll for well over that.
all_up() { [ "$(query 'up{job=~"planner|executor|agent"} == 1' | result_count)" = 3 ]; }
poll 60 "up == 1 for planner, executor and agent" all_up
got="$(query 'up' | values | tr '\n' ' ')"
[ "$got" = "agent=1 executor=1 planner=1 " ] || fail "up per job: want 'agent=1 executor=1 planner=1', got '$got'"

RECONCILE='controller_runtime_reconcile_total{controller="cloneset",job="executor"}'
# total RESULT_JSON: the value of a one-series answer ("" when empty).
total() { python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if len(r)==1 else "")' 2>/dev/null; }
reconciled() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1] or 0) > 0 else 1)' \
  "$(query "sum($RECONCILE)" | total)"; }
poll 90 "a cloneset reconcile in prometheus" reconciled
echo "reconciles seen by prometheus: $(query "sum($RECONCILE)" | total) over $(query "$RECONCILE" | result_count) series"
echo "PASS"
