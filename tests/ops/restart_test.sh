#!/usr/bin/env bash
# Restarts with `./run up` after kill -9, and the executor's /readyz.
# A missing binary or tool is a failure with a message (never a skip).
set -euo pipefail
SRC="${CLONESET_SOURCE_DIR:?set CLONESET_SOURCE_DIR to the source tree}"
BUILD="${CLONESET_BUILD_DIR:?set CLONESET_BUILD_DIR to the build tree}"

. "$(dirname "${BASH_SOURCE[0]}")/../support/poll.sh"  # fail, poll
for b in cloneset-devcluster cloneset-planner cloneset-executor cloneset-agent; do
  [ -x "$BUILD/bin/$b" ] || fail "$b is not built in $BUILD/bin (cmake --build $BUILD --target $b)"
done
for t in kubectl curl python3; do
  command -v "$t" >/dev/null || fail "$t is not installed (./run deps installs it)"
done

TMP="$(mktemp -d)"
# A relative RUN_DIR: ./run up hands absolute paths (data dir, CRI sockets) to what it starts.
cd "$TMP"
export RUN_DIR=run BUILD_DIR="$BUILD"
DC_PID=""
cleanup() {
  local rc=$?
  if [ -n "${SQUAT:-}" ]; then kill "$SQUAT" 2>/dev/null || true; fi
  if [ -n "$DC_PID" ]; then kill -KILL "$DC_PID" 2>/dev/null || true; wait "$DC_PID" 2>/dev/null || true; fi
  if [ "$rc" != 0 ]; then
    local f; for f in "$TMP/$RUN_DIR"/*.log "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -15 "$f"; }; done
  fi
  "$SRC/run" down --purge >/dev/null 2>&1 || true
  cd / && rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

pid_of() { cat "$RUN_DIR/$1.pid"; }
listen_of() { cat "$RUN_DIR/$1.listen"; }
up() {
  local out="$TMP/up-$1.log"
  "$SRC/run" up --nodes 2 >"$out" 2>&1 || { cat "$out"; fail "./run up ($1)"; }
  grep -q "up: ready" "$out" || { cat "$out"; fail "./run up ($1) did not say ready"; }
}

# 1. The embedded cluster with a relative --data-dir serves its nodes' CRI sockets (was: "cannot listen on
#    unix://.run/devcluster/.../cri.sock").
mkdir rel
"$BUILD/bin/cloneset-devcluster" --listen=127.0.0.1:0 --data-dir=rel/dc --nodes=1 --kubeconfig=rel/kc \
  >"$TMP/relative.log" 2>&1 &
DC_PID=$!
poll 30 "the devcluster with a relative --data-dir to listen" grep -q "^listening on" "$TMP/relative.log"
poll 20 "its CRI socket" test -S rel/dc/nodes/devcluster-node-0/cri.sock
kill -TERM "$DC_PID"; wait "$DC_PID" || fail "the devcluster with a relative --data-dir exited with $?"
DC_PID=""
echo "ok: relative --data-dir"

up first
KC="$(cat "$RUN_DIR/kubeconfig.path")"
kc() { kubectl --kubeconfig "$KC" "$@"; }
cat >"$TMP/cloneset.yaml" <<'YAML'
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: ops-restart
spec:
  replicas: 1
  selector:
    matchLabels: {app: ops-restart}
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
  template:
    metadata:
      labels: {app: ops-restart}
    spec:
      containers:
      - name: main
        image: registry.example/ops-restart:v1
YAML
kc apply -f "$TMP/cloneset.yaml" >/dev/null

# scaled N: the CloneSet's status shows N ready replicas of its current generation.
scaled() {
  local want="$1" got
  got="$(kc get cloneset ops-restart -o jsonpath='{.metadata.generation}/{.status.observedGeneration}/{.status.replicas}/{.status.readyReplicas}')"
  local gen="${got%%/*}"
  [ "$got" = "$gen/$gen/$want/$want" ]
}
scale() {
  kc patch cloneset ops-restart --type=merge -p "{\"spec\":{\"replicas\":$1}}" >/dev/null
  poll 120 "the CloneSet to have $1 ready replicas ($2)" scaled "$1"
  echo "ok: scaled to $1 ($2)"
}
poll 120 "the first replica" scaled 1

# The executor's health address, as it announced it (a restarted executor announces a new one).
health_addr() {
  grep -m1 -oE "listening on [^ \"]+" "$RUN_DIR/executor-0.log" | awk '{print $NF}' | sed 's#^[a-z]*://##'
}
readyz() { curl -sf --max-time 2 "http://$(health_addr)/readyz"; }  # fails unless 200
readyz_body() { curl -s --max-time 2 -w ' (HTTP %{http_code})' "http://$(health_addr)/readyz" || true; }
readyz_fails_with() {  # readyz_fails_with TEXT: /readyz answers non-200 with TEXT in its body
  local body; body="$(readyz_body)"
  [[ "$body" != *"(HTTP 200)" ]] && [[ "$body" == *"$1"* ]]
}
readyz >/dev/null || fail "executor not ready after ./run up"

# 2. kill -9 of the embedded cluster: /readyz reports it, ./run up brings it back on the same address, and the
#    executor and agents that were never restarted carry on (a scale completes).
dc_addr="$(listen_of devcluster)"; executor_pid="$(pid_of executor-0)"; agent_pid="$(pid_of agent-0)"
kill -KILL "$(pid_of devcluster)"
poll 40 "/readyz to report the lost API server" readyz_fails_with "lost the API server"
echo "ok: /readyz while the embedded cluster is down: $(readyz_body)"
up after-devcluster-kill
[ "$(listen_of devcluster)" = "$dc_addr" ] || fail "the devcluster moved from $dc_addr to $(listen_of devcluster)"
[ "$(pid_of executor-0)" = "$executor_pid" ] || fail "the executor was restarted although nothing it calls moved"
[ "$(pid_of agent-0)" = "$agent_pid" ] || fail "agent-0 was restarted although nothing it calls moved"
poll 30 "the executor to be ready again" readyz
scale 3 "after kill -9 of the embedded cluster"

# 3. kill -9 of the planner: /readyz reports it, ./run up brings it back on the same address.
planner_addr="$(listen_of planner-0)"
kill -KILL "$(pid_of planner-0)"
poll 40 "/readyz to report the lost planner" readyz_fails_with "planner"
echo "ok: /readyz while the planner is down: $(readyz_body)"
kc patch cloneset ops-restart --type=merge -p '{"spec":{"replicas":2}}' >/dev/null
sleep 2
# No planner, no write: the 3 pods stay (the status, written by the executor, too).
pods="$(kc get pods -l app=ops-restart --no-headers 2>/dev/null | wc -l)"
[ "$pods" = 3 ] || fail "$pods pods instead of 3 while no planner ran"
[ "$(kc get cloneset ops-restart -o jsonpath='{.status.replicas}')" = 3 ] || fail "the status changed while no planner ran"
up after-planner-kill
[ "$(listen_of planner-0)" = "$planner_addr" ] || fail "the planner moved from $planner_addr to $(listen_of planner-0)"
[ "$(pid_of executor-0)" = "$executor_pid" ] || fail "the executor was restarted although the planner kept its address"
poll 120 "the CloneSet to have 2 ready replicas (after kill -9 of the planner)" scaled 2
echo "ok: scaled to 2 (after kill -9 of the planner)"

# 4. A kept port another process took meanwhile: the planner gets a new one and the executor, whose planner address
#    that changes, is restarted with it.
kill -KILL "$(pid_of planner-0)"
# SO_REUSEADDR: the killed planner's connections may linger in TIME_WAIT; a listening socket still blocks the port.
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); open(sys.argv[2], "w").close(); time.sleep(120)' \
  "${planner_addr##*:}" "$TMP/squatting" &
SQUAT=$!
poll 10 "another process to listen on the planner's port" test -f "$TMP/squatting"
up port-taken
kill "$SQUAT" 2>/dev/null || true
[ "$(listen_of planner-0)" != "$planner_addr" ] || fail "the planner still claims the taken port $planner_addr"
[ "$(pid_of executor-0)" != "$executor_pid" ] || fail "the executor kept calling the planner's old address"
scale 1 "after the planner moved to a new port"
echo "PASS"
