#!/usr/bin/env bash
# Fault soak: runs the executor fault suite (tests/executor_fault, the executor_fault_test binary) again and again
# with a fresh random seed per run, quiet and under CPU load, and prints every failing seed so it can be replayed.
# The suite's races show up under load (docs/reliability.md): one run proves little, many runs with many seeds do.
#
# Usage: bench/fault_soak.sh [-n RUNS] [--mode quiet|loaded|both] [--filter GTEST_FILTER] [--timeout SECONDS]
#                            [--stop-after SECONDS]
#   -n RUNS         runs per mode (default 30)
#   --mode          quiet: nothing else started; loaded: one busy loop per core (nproc) for the whole mode;
#                   both (default): the quiet runs, then the loaded ones
#   --filter        gtest filter (default: the whole suite, '*')
#   --timeout       per run, seconds (default 900); a run that hits it counts as a failure
#   --stop-after    no run starts once this many seconds have passed since the soak began (default: none); the
#                   summary then counts the runs that did start (a whole-suite run takes 80-280 s, load-dependent)
# BUILD_DIR=build-xx picks the binaries (default build/); the suite starts build/bin's devcluster, planner and
# executor itself. Logs of failing runs stay in the printed directory; passing runs' logs are removed.
# Each run's line and the summary give the 1-minute load average (/proc/loadavg) at the end of the run, so a
# "quiet" run on a shared machine says how quiet it was; the summary gives each mode's wall time and seeds.
# Replay one failure: CLONESET_FAULT_SEED=<seed> $BUILD_DIR/tests/executor_fault_test --gtest_filter=<test>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
RUNS=30
MODE=both
FILTER='*'
TIMEOUT=900
STOP_AFTER=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) RUNS="$2"; shift 2 ;;
    --mode) MODE="$2"; shift 2 ;;
    --filter) FILTER="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --stop-after) STOP_AFTER="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "fault_soak: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$MODE" in quiet) MODES=(quiet) ;; loaded) MODES=(loaded) ;; both) MODES=(quiet loaded) ;;
  *) echo "fault_soak: --mode must be quiet, loaded or both, not $MODE" >&2; exit 2 ;; esac
[[ "$RUNS" =~ ^[0-9]+$ ]] && [ "$RUNS" -ge 1 ] || { echo "fault_soak: -n must be a positive number, not $RUNS" >&2; exit 2; }
[[ "$STOP_AFTER" =~ ^[0-9]+$ ]] || { echo "fault_soak: --stop-after must be a number of seconds, not $STOP_AFTER" >&2; exit 2; }
BIN="$BUILD_DIR/tests/executor_fault_test"
[ -x "$BIN" ] || { echo "fault_soak: no $BIN (build it: BUILD_DIR=$BUILD_DIR ./run build)" >&2; exit 1; }
for b in cloneset-devcluster cloneset-planner cloneset-executor; do
  [ -x "$BUILD_DIR/bin/$b" ] || { echo "fault_soak: no $BUILD_DIR/bin/$b (build it first)" >&2; exit 1; }
done
command -v kubectl >/dev/null || { echo "fault_soak: kubectl is not on PATH (the suite drives the cluster with it)" >&2; exit 1; }

OUT="$(mktemp -d /tmp/fault-soak-XXXXXX)"
LOAD_PIDS=()
stop_load() {
  local pid
  for pid in "${LOAD_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${LOAD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  LOAD_PIDS=()
}
trap stop_load EXIT
start_load() {
  local i
  for ((i = 0; i < $(nproc); i++)); do
    # A busy loop per core: the suite's processes compete for every CPU, as under a parallel ctest run.
    bash -c 'while :; do :; done' &
    LOAD_PIDS+=("$!")
  done
}

seed() { od -An -N6 -tu8 /dev/urandom | tr -d ' '; }
load1() { cut -d' ' -f1 /proc/loadavg; }

declare -A TOTAL FAILED WALL LOADS SEEDS
FAILURES=()
echo "fault soak: $RUNS run(s) per mode (${MODES[*]}), filter '$FILTER', binary $BIN, logs in $OUT"
for mode in "${MODES[@]}"; do
  TOTAL[$mode]=0
  FAILED[$mode]=0
  LOADS[$mode]=""
  SEEDS[$mode]=""
  mode_t0=$SECONDS
  [ "$mode" = loaded ] && start_load
  for ((run = 1; run <= RUNS; run++)); do
    if [ "$STOP_AFTER" -gt 0 ] && [ "$SECONDS" -ge "$STOP_AFTER" ]; then
      echo "$mode: --stop-after $STOP_AFTER s reached, no further run started ($((run - 1)) of $RUNS ran)"
      break
    fi
    s=$(seed)
    log="$OUT/$mode-$run-$s.log"
    t0=$SECONDS
    rc=0
    CLONESET_FAULT_SEED="$s" timeout --kill-after=30 "$TIMEOUT" "$BIN" --gtest_filter="$FILTER" >"$log" 2>&1 || rc=$?
    TOTAL[$mode]=$((TOTAL[$mode] + 1))
    load=$(load1)
    LOADS[$mode]+=" $load"
    SEEDS[$mode]+=" $s"
    if [ "$rc" -eq 0 ]; then
      echo "$mode run $run/$RUNS seed $s: ok ($((SECONDS - t0)) s, load $load)"
      rm -f "$log"
    else
      FAILED[$mode]=$((FAILED[$mode] + 1))
      tests=$(grep -oE '^\[  FAILED  \] [A-Za-z0-9_]+\.[A-Za-z0-9_/]+' "$log" | awk '{print $NF}' | sort -u | paste -sd, -)
      [ -n "$tests" ] || tests="(no gtest verdict: exit $rc$([ "$rc" -eq 124 ] && echo ', timed out'))"
      echo "$mode run $run/$RUNS seed $s: FAILED $tests ($((SECONDS - t0)) s, load $load) log $log"
      FAILURES+=("$mode seed $s: $tests; replay: CLONESET_FAULT_SEED=$s $BIN --gtest_filter=${tests//,/:}")
    fi
  done
  [ "$mode" = loaded ] && stop_load
  WALL[$mode]=$((SECONDS - mode_t0))
done

echo
echo "fault soak summary ($(date -u +%FT%TZ), $(nproc) cores, filter '$FILTER')"
for mode in "${MODES[@]}"; do
  range=$(tr ' ' '\n' <<<"${LOADS[$mode]}" | sed '/^$/d' | sort -g | sed -n '1p;$p' | paste -sd- -)
  echo "  $mode: ${TOTAL[$mode]} runs, ${FAILED[$mode]} failed, ${WALL[$mode]} s, load ${range}"
  echo "    seeds:${SEEDS[$mode]}"
done
if [ ${#FAILURES[@]} -eq 0 ]; then
  echo "  no failing seed"
else
  echo "  failing seeds:"
  printf '    %s\n' "${FAILURES[@]}"
  exit 1
fi
rm -rf "$OUT"
