#!/usr/bin/env bash
# bench/lib_real.sh's stop_benchmark_stack, the EXIT trap of the benchmarks that start their stack with `./run up`,
# run the way a benchmark runs it (errexit, nounset, pipefail) against a stand-in `run` that records its arguments:
#   - kruise-manager already stopped by the benchmark (its measured end): `run down --purge` still runs, the run
#     directory goes, the exit status stays 0
#   - kruise-manager still running (the benchmark failed midway): it is stopped, then the stack, status kept (3)
#   - `run down --purge` fails: the status says so (1) and the message names the run directory, which is kept
#   - KEEP_RUN_DIR: the run directory stays
set -euo pipefail
LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bench/lib_real.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/poll.sh"  # fail
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# A stand-in ./run: records "down --purge" in $TMP/calls; fails when $TMP/down-fails exists.
mkdir -p "$TMP/root"
cat >"$TMP/root/run" <<STUB
#!/usr/bin/env bash
echo "\$*" >>"$TMP/calls"
[ ! -e "$TMP/down-fails" ]
STUB
chmod +x "$TMP/root/run"

# bench MODE: a benchmark's shape: source the library, set the trap, then end as MODE says. Prints nothing on stdout.
bench() {
  ROOT="$TMP/root" RUN_DIR="$TMP/run" LIB="$LIB" MODE="$1" bash -c '
    set -euo pipefail
    export RUN_DIR
    mkdir -p "$RUN_DIR"
    source "$LIB"
    KRUISE_PID=""
    trap stop_benchmark_stack EXIT
    sleep 300 & KRUISE_PID=$!
    # A signal sent before the forked shell has become `sleep` can be lost (bash hands it to its own handler in the
    # child, which then execs): wait until it is the manager.
    for _ in $(seq 1 500); do [ "$(cat "/proc/$KRUISE_PID/comm" 2>/dev/null)" = sleep ] && break; sleep 0.01; done
    echo "$KRUISE_PID" >"$RUN_DIR/../kruise.pid"
    case "$MODE" in
      measured) kill "$KRUISE_PID"; wait "$KRUISE_PID" || true ;;  # as executor_rollout.sh stops the controller
      failed) exit 3 ;;
    esac'
}

# case NAME MODE WANT_RC: runs bench MODE, checks the exit status, the recorded call and the manager's end.
case_() {
  local name="$1" mode="$2" want="$3" rc=0
  rm -f "$TMP/calls"
  bench "$mode" 2>"$TMP/stderr" || rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit status $rc, want $want; stderr: $(cat "$TMP/stderr")"
  grep -qx "down --purge" "$TMP/calls" 2>/dev/null || fail "$name: ./run down --purge was not called"
  local pid; pid=$(cat "$TMP/kruise.pid")
  if kill -0 "$pid" 2>/dev/null; then kill "$pid"; fail "$name: kruise-manager (pid $pid) still runs"; fi
  echo "ok: $name"
}

case_ "stopped manager, measured" measured 0
[ ! -e "$TMP/run" ] || fail "the run directory was kept after a clean stop"
case_ "running manager, failed benchmark" failed 3
[ ! -e "$TMP/run" ] || fail "the run directory was kept after a clean stop"
touch "$TMP/down-fails"
case_ "run down fails" measured 1
grep -q "RUN_DIR=$TMP/run ./run down --purge" "$TMP/stderr" || fail "no hint to stop by hand: $(cat "$TMP/stderr")"
[ -d "$TMP/run" ] || fail "the run directory went although the stack may still run from it"
rm -f "$TMP/down-fails"; rm -rf "$TMP/run"
KEEP_RUN_DIR=1 case_ "KEEP_RUN_DIR" measured 0
[ -d "$TMP/run" ] || fail "KEEP_RUN_DIR: the run directory went"
echo PASS
