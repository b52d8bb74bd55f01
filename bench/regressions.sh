#!/usr/bin/env bash
# The executor's standing targets, measured and checked: exits 1 naming every measure over its limit, 0 when all
# hold. A benchmark, not a timed test: run it on a quiet machine (the figures are CPU time and memory, but a loaded
# machine still slows caches and the allocator), e.g. before a release or after a change on the reconcile path.
#   idle reconcile, 100 000 pods (CPU)          reconcile_bench BM_ReconcileIdle/100000          < 30 ms
#   idle reconcile, 10 000 pods (CPU)           reconcile_bench BM_ReconcileIdle/10000           < 3 ms
#   executor peak RSS, 1 000 x 100 pods         bench/executor_scale.sh 1000 100                 < 150 MiB
#   executor ready at 100 000 pods              same                                             < 3 s
#   API writes per pod: scale-up with 1 PVC /   bench/writes_per_pod.sh 10 (embedded cluster)    <= 3 / 3 / 5
#   in-place / ReCreate with 1 PVC
# Usage: bench/regressions.sh          (./run bench regressions builds first; BUILD_DIR picks the binaries)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
export BUILD_DIR
case "${1:-}" in -h|--help) sed -n '2,11p' "$0"; exit 0 ;; "") ;; *) echo "regressions: no arguments" >&2; exit 2 ;; esac
for t in jq bc; do
  command -v "$t" >/dev/null || { echo "regressions: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
[ -x "$BUILD_DIR/bin/reconcile_bench" ] || { echo "regressions: no $BUILD_DIR/bin/reconcile_bench (./run build)" >&2; exit 1; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
ROWS=()
FAILED=0
# check MEASURE VALUE OP LIMIT UNIT: one row of the result table; OP is < or <=.
check() {
  local measure="$1" value="$2" op="$3" limit="$4" unit="$5" ok
  ok=$(echo "$value $op $limit" | bc)
  ROWS+=("| $measure | $value${unit:+ $unit} | $op $limit${unit:+ $unit} | $([ "$ok" = 1 ] && echo held || echo "REGRESSED") |")
  [ "$ok" = 1 ] || FAILED=$((FAILED + 1))
}

echo "regressions: reconcile_bench BM_ReconcileIdle" >&2
"$BUILD_DIR/bin/reconcile_bench" --benchmark_filter='^BM_ReconcileIdle/' --benchmark_format=json \
  >"$TMP/reconcile.json" 2>"$TMP/reconcile.err" ||
  { tail -n 20 "$TMP/reconcile.err" >&2; echo "regressions: reconcile_bench failed" >&2; exit 1; }
# cpu_time in the benchmark's unit (ms) of the size's first run (names go on with the options: "/min_time:2.000").
idle() {
  jq -r --arg n "BM_ReconcileIdle/$1/" \
    '[.benchmarks[] | select((.name + "/") | startswith($n))][0] | select(.time_unit == "ms") | .cpu_time' \
    "$TMP/reconcile.json"
}
for n in 100000 10000; do
  v=$(idle "$n"); [ -n "$v" ] || { echo "regressions: no BM_ReconcileIdle/$n in reconcile_bench's output" >&2; exit 1; }
  check "idle reconcile, $n pods (CPU)" "$(printf '%.2f' "$v")" "<" "$([ "$n" = 100000 ] && echo 30 || echo 3)" ms
done

echo "regressions: bench/executor_scale.sh 1000 100" >&2
"$ROOT/bench/executor_scale.sh" 1000 100 >"$TMP/scale.out" 2>"$TMP/scale.err" ||
  { tail -n 20 "$TMP/scale.err" >&2; echo "regressions: executor_scale.sh failed" >&2; exit 1; }
# Its row: | CloneSets | pods | LIST | start -> ready | RSS at ready | reconciles done | RSS then | peak RSS |
row=$(grep -E '^\| [0-9]+ \| [0-9]+ \|' "$TMP/scale.out" | tail -n 1)
[ -n "$row" ] || { cat "$TMP/scale.out" >&2; echo "regressions: executor_scale.sh printed no result row" >&2; exit 1; }
ready=$(echo "$row" | awk -F'|' '{ gsub(/[ s]/, "", $5); print $5 }')
peak=$(echo "$row" | awk -F'|' '{ gsub(/[ A-Za-z]/, "", $9); print $9 }')
check "executor ready at 100 000 pods" "$ready" "<" 3 s
check "executor peak RSS, 1 000 CloneSets x 100 pods" "$peak" "<" 150 MiB

echo "regressions: bench/writes_per_pod.sh 10" >&2
"$ROOT/bench/writes_per_pod.sh" 10 >"$TMP/writes.out" 2>"$TMP/writes.err" ||
  { tail -n 20 "$TMP/writes.err" >&2; echo "regressions: writes_per_pod.sh failed" >&2; exit 1; }
# per_pod SCENARIO: the writes/pod column of the scenario's row.
per_pod() { awk -F'|' -v s="$1" '$2 ~ s { gsub(/ /, "", $5); print $5; exit }' "$TMP/writes.out"; }
for s in "scale-up, 1 PVC template:3" "in-place image update:3" "ReCreate update, 1 PVC:5"; do
  v=$(per_pod "${s%:*}")
  [ -n "$v" ] || { cat "$TMP/writes.out" >&2; echo "regressions: no row '${s%:*}' from writes_per_pod.sh" >&2; exit 1; }
  check "API writes per pod: ${s%:*}" "$v" "<=" "${s##*:}" ""
done

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); build $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "| measure | now | limit | status |"
echo "|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
if [ "$FAILED" -gt 0 ]; then
  echo "regressions: $FAILED measure(s) over their limit (above); see docs/performance.md for how each was reached" >&2
  exit 1
fi
