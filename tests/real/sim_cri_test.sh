#!/usr/bin/env bash
# cloneset-sim-cri (devcluster/nodes/sim_cri_main.cc), the simulated CRI that ./run up --cluster real serves the
# kwok nodes' agents: bad flags are refused with exit 2 and the flag named; one socket per named node appears and
# is removed on SIGTERM. Pulls through it are checked end to end by real.rbac (an ImagePullJob on a kwok node).
set -euo pipefail
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
BIN="$BUILD_DIR/bin/cloneset-sim-cri"
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built" >&2; exit 1; }
TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-sim-cri.XXXXXX")"
pid=""
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# refused "WANT IN STDERR" ARGS...: exit 2, the message names the field.
refused() {
  local want="$1"; shift
  local rc=0; "$BIN" "$@" >"$TMP/out" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "$want" "$TMP/out" || fail "cloneset-sim-cri $*: want exit 2 naming '$want', got $rc: $(cat "$TMP/out")"
  echo "refused $*: $(cat "$TMP/out")"
}
refused --socket_dir
refused --nodes --socket_dir="$TMP/s"
refused '--nodes: "a/b"' --socket_dir="$TMP/s" --nodes=a/b
refused '--nodes: ".."' --socket_dir="$TMP/s" --nodes=n0,..
refused --default_image_pull_time --socket_dir="$TMP/s" --nodes=n0 --default_image_pull_time=-1s
refused image_pull_time --socket_dir="$TMP/s" --nodes=n0 --image_pull_time=app=notaduration
refused '--socket_dir: the socket path' --socket_dir="$TMP/$(printf 'd%.0s' {1..100})" --nodes=n0

"$BIN" --socket_dir="$TMP/s" --nodes=kwok-node-0,kwok-node-1 --default_image_pull_time=1s >"$TMP/log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^serving 2 CRI sockets$' "$TMP/log" && break; sleep 0.1; done
grep -q '^serving 2 CRI sockets$' "$TMP/log" || fail "no 'serving 2 CRI sockets' within 10 s: $(cat "$TMP/log")"
for n in kwok-node-0 kwok-node-1; do
  [ -S "$TMP/s/$n/cri.sock" ] || fail "no socket $TMP/s/$n/cri.sock"
  grep -qF "node $n CRI on unix://$TMP/s/$n/cri.sock" "$TMP/log" || fail "the log does not name $n's socket"
done
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?; pid=""
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM: $(cat "$TMP/log")"
for n in kwok-node-0 kwok-node-1; do [ ! -e "$TMP/s/$n/cri.sock" ] || fail "$n's socket left after SIGTERM"; done
echo "PASS"
