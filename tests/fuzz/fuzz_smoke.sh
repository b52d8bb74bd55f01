#!/usr/bin/env bash
# fuzz_smoke.sh NAME: runs the libFuzzer target NAME_fuzz (built by ./run fuzz-build in $FUZZ_DIR) on every crash
# reproducer in $SRC/NAME/fuzz/crashes, then for FUZZ_RUNS inputs (default 20000) mutated from the checked-in
# corpus $SRC/NAME/fuzz_corpus. New inputs go to a scratch directory, never into the repository. libFuzzer's seed
# is FUZZ_SEED when set, else random; it is printed on every failure so that the run can be replayed with
# FUZZ_SEED=N.
set -euo pipefail
what="${1:?usage: fuzz_smoke.sh NAME}"
: "${FUZZ_DIR:?FUZZ_DIR is not set}" "${SRC:?SRC is not set}"
bin="$FUZZ_DIR/bin/${what}_fuzz"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "$bin is not built: ./run fuzz-build $what builds it (./run test does so before ctest)"
corpus="$SRC/$what/fuzz_corpus"
[ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ] || fail "no corpus at $corpus"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/new" "$work/artifacts"

reproducers=0
if [ -d "$SRC/$what/fuzz/crashes" ]; then
  for f in "$SRC/$what/fuzz/crashes"/*; do
    [ -f "$f" ] || continue
    "$bin" -rss_limit_mb=2048 "$f" >"$work/reproducer.log" 2>&1 ||
      { tail -n 40 "$work/reproducer.log"; fail "the reproducer $f crashes ${what}_fuzz again"; }
    reproducers=$((reproducers + 1))
  done
fi

seed="${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
runs="${FUZZ_RUNS:-20000}"
t0=$SECONDS
"$bin" -runs="$runs" -seed="$seed" -rss_limit_mb=2048 -timeout=25 -artifact_prefix="$work/artifacts/" \
  -print_final_stats=1 "$work/new" "$corpus" >"$work/fuzz.log" 2>&1 || {
  tail -n 60 "$work/fuzz.log"
  for a in "$work/artifacts"/*; do
    [ -f "$a" ] && { echo "input that failed ($a), base64:"; base64 -w0 "$a"; echo; }
  done
  fail "${what}_fuzz failed with seed $seed after at most $runs inputs (replay: FUZZ_SEED=$seed FUZZ_RUNS=$runs $0 $what)"
}
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n 1)
[ "${execs:-0}" -ge "$runs" ] || { tail -n 20 "$work/fuzz.log"; fail "${what}_fuzz ran ${execs:-0} inputs, want $runs"; }
echo "${what}_fuzz: $reproducers crash reproducers pass; $execs inputs from $(ls "$corpus" | wc -l) corpus files, seed $seed, no failure ($((SECONDS - t0)) s)"
