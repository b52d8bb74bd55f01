#!/usr/bin/env bash
# Real-control-plane soak: runs the soak test (tests/executor_fault/soak_test.cc, Soak.RandomOperations) for longer
# than its ctest does, one run after another, each with a fresh random seed that is printed: random scale, image,
# partition and pod-delete operations on four CloneSets while the executor, the planner, kube-apiserver and etcd are
# killed and restarted, every pod event checked against the invariants, then convergence (docs/reliability.md,
# "The random-operations soak").
#
# Usage: bench/real_soak.sh [--minutes M] [--seeds N] [--seed S] [--backend real|embedded]
#   --minutes M   soak time in all (default 60), shared equally by the runs
#   --seeds N     number of runs, each with its own seed (default 4: 15-minute runs for the default hour)
#   --seed S      every run uses seed S (replay one failure; with --seeds 1 and the failed run's minutes)
#   --backend     real (default): each run starts its own control plane (./run up --cluster real, about 20 s);
#                 embedded: the embedded cluster (no kube-apiserver or etcd restart there)
# One line per run (seed, operations done, result, minutes, 1-minute load at its end) and a summary with every
# failing seed and its replay command. Exit status 1 when any run failed. BUILD_DIR picks the binaries (default
# build/). Logs of failing runs stay in the printed directory; passing runs' logs are removed.
# Replay: CLONESET_FAULT_SEED=<seed> CLONESET_SOAK_SECONDS=<s> CLONESET_E2E_BACKEND=real \
#           $BUILD_DIR/tests/executor_soak_test
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
MINUTES=60
SEEDS=4
FIXED_SEED=""
BACKEND=real
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES="${2:-}"; shift 2 ;;
    --seeds) SEEDS="${2:-}"; shift 2 ;;
    --seed) FIXED_SEED="${2:-}"; shift 2 ;;
    --backend) BACKEND="${2:-}"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "real_soak: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$MINUTES" =~ ^[0-9]+$ ]] && [ "$MINUTES" -ge 1 ] ||
  { echo "real_soak: --minutes must be a positive number, not '$MINUTES'" >&2; exit 2; }
[[ "$SEEDS" =~ ^[0-9]+$ ]] && [ "$SEEDS" -ge 1 ] ||
  { echo "real_soak: --seeds must be a positive number, not '$SEEDS'" >&2; exit 2; }
[ -z "$FIXED_SEED" ] || [[ "$FIXED_SEED" =~ ^[0-9]+$ ]] ||
  { echo "real_soak: --seed must be a number, not '$FIXED_SEED'" >&2; exit 2; }
case "$BACKEND" in real|embedded) ;; *) echo "real_soak: --backend must be real or embedded, not '$BACKEND'" >&2; exit 2 ;; esac
BIN="$BUILD_DIR/tests/executor_soak_test"
[ -x "$BIN" ] || { echo "real_soak: no $BIN (build it: BUILD_DIR=$BUILD_DIR ./run build)" >&2; exit 1; }
for b in cloneset-devcluster cloneset-planner cloneset-executor cloneset-fault-proxy; do
  [ -x "$BUILD_DIR/bin/$b" ] || { echo "real_soak: no $BUILD_DIR/bin/$b (build it first)" >&2; exit 1; }
done
command -v kubectl >/dev/null || { echo "real_soak: kubectl is not on PATH (the soak drives the cluster with it)" >&2; exit 1; }

SECONDS_PER_RUN=$((MINUTES * 60 / SEEDS))
[ "$SECONDS_PER_RUN" -ge 10 ] || { echo "real_soak: $MINUTES minute(s) for $SEEDS runs leaves under 10 s a run" >&2; exit 2; }
OUT="$(mktemp -d /tmp/real-soak-XXXXXX)"
RUN_PID=""
# The EXIT trap: stops the run in progress (its control plane goes with it: the test's stack takes it down on
# SIGTERM, and a guard process of the test does so should the test die first). No step may end the trap early.
stop_run() {
  local rc=$?
  set +e
  if [ -n "$RUN_PID" ] && kill -0 "$RUN_PID" 2>/dev/null; then
    kill -TERM "$RUN_PID" 2>/dev/null
    wait "$RUN_PID" 2>/dev/null
  fi
  exit "$rc"
}
trap stop_run EXIT
trap 'exit 130' INT TERM

seed() { od -An -N6 -tu8 /dev/urandom | tr -d ' '; }
load1() { cut -d' ' -f1 /proc/loadavg; }

FAILURES=()
TOTAL=0 FAILED=0 OPS_ALL=0
echo "real soak: $SEEDS run(s) of $SECONDS_PER_RUN s on the $BACKEND backend, binary $BIN, logs in $OUT"
t_all=$SECONDS
for ((run = 1; run <= SEEDS; run++)); do
  s="${FIXED_SEED:-$(seed)}"
  log="$OUT/run-$run-$s.log"
  t0=$SECONDS
  rc=0
  # The run's own bound: the soak, start-up and convergence (up to 3 min each on the real backend), and teardown.
  CLONESET_FAULT_SEED="$s" CLONESET_SOAK_SECONDS="$SECONDS_PER_RUN" CLONESET_E2E_BACKEND="$BACKEND" \
    timeout --kill-after=30 $((SECONDS_PER_RUN + 900)) "$BIN" >"$log" 2>&1 &
  RUN_PID=$!
  wait "$RUN_PID" || rc=$?
  RUN_PID=""
  TOTAL=$((TOTAL + 1))
  # No step here may fail the script (errexit, pipefail): a log without these lines is a run that died early.
  ops=$(grep -oE '^soak: [0-9]+ operations' "$log" | awk '{print $2}' | tail -n1 || true)
  [ -n "$ops" ] || ops=$(grep -cE '^op [0-9]+ ' "$log" || true)
  OPS_ALL=$((OPS_ALL + ops))
  load=$(load1)
  # "kind=count ..." of the operations done, and what the pod watch saw ("N pod events, W watch restarts, R relists").
  kinds=$(grep -m1 -E '^soak: [0-9]+ operations' "$log" | sed 's/.*: //' || true)
  watch=$(grep -m1 -E '^soak: [0-9]+ pod events' "$log" | sed 's/^soak: //' || true)
  if [ "$rc" -eq 0 ]; then
    echo "run $run/$SEEDS seed $s: ok, $ops operations [$kinds], $watch ($((SECONDS - t0)) s, load $load)"
    rm -f "$log"
  else
    FAILED=$((FAILED + 1))
    # The innermost trace comes first: the operation that failed (0: before the first one).
    at=$(grep -oE 'soak seed [0-9]+, operation [0-9]+' "$log" | head -n1 | awk '{print $NF}' || true)
    why=$(grep -m1 -E 'violations|not observed|did not converge|Which is|stopped by a signal' "$log" | cut -c1-200 || true)
    [ -n "$why" ] || why=$(grep -m1 -A1 'Failure$' "$log" | tail -n1 | cut -c1-200 || true)
    [ -n "$why" ] || why="exit $rc$([ "$rc" -eq 124 ] && echo ', timed out')"
    echo "run $run/$SEEDS seed $s: FAILED at operation ${at:-?} of $ops ($((SECONDS - t0)) s, load $load): $why; log $log"
    FAILURES+=("seed $s (operation ${at:-?}): replay: CLONESET_FAULT_SEED=$s CLONESET_SOAK_SECONDS=$SECONDS_PER_RUN CLONESET_E2E_BACKEND=$BACKEND $BIN")
  fi
done

echo
echo "real soak summary ($(date -u +%FT%TZ), $(nproc) cores, $BACKEND backend): $TOTAL runs of $SECONDS_PER_RUN s," \
  "$FAILED failed, $OPS_ALL operations, $((SECONDS - t_all)) s in all, load $(load1) at the end"
if [ ${#FAILURES[@]} -eq 0 ]; then
  echo "  no failing seed"
  rm -rf "$OUT"
else
  echo "  failing seeds:"
  printf '    %s\n' "${FAILURES[@]}"
  exit 1
fi
