#!/usr/bin/env bash
# bench/real_soak.sh against a stand-in soak binary (BUILD_DIR of stubs), the way it is run:
#   - passing runs: one line each with the seed, the operation count and kinds; the summary; exit 0; logs removed
#   - a failing run: its line names the failed operation, the summary the seed and its replay command; exit 1
#   - --seed S: every run gets seed S (CLONESET_FAULT_SEED), each run CLONESET_SOAK_SECONDS = minutes * 60 / seeds
#   - SIGTERM to the script mid-run: the run in progress gets SIGTERM too, the script exits non-zero
#   - bad arguments: exit 2 naming the flag
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bench/real_soak.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/poll.sh"  # fail, poll
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

mkdir -p "$TMP/build/bin" "$TMP/build/tests" "$TMP/path"
for b in cloneset-devcluster cloneset-planner cloneset-executor cloneset-fault-proxy; do
  printf '#!/bin/sh\n' >"$TMP/build/bin/$b"; chmod +x "$TMP/build/bin/$b"
done
printf '#!/bin/sh\nexit 0\n' >"$TMP/path/kubectl"; chmod +x "$TMP/path/kubectl"
# The stand-in soak: records its environment; fails at operation 3 when $TMP/fail exists; with $TMP/hang it waits
# for a signal and records SIGTERM.
cat >"$TMP/build/tests/executor_soak_test" <<STUB
#!/usr/bin/env bash
echo "\$CLONESET_FAULT_SEED \$CLONESET_SOAK_SECONDS \$CLONESET_E2E_BACKEND" >>"$TMP/calls"
echo "soak seed: CLONESET_FAULT_SEED=\$CLONESET_FAULT_SEED"
if [ -e "$TMP/hang" ]; then
  trap 'echo term >>"$TMP/signals"; exit 1' TERM
  touch "$TMP/hanging"
  while :; do sleep 0.1; done
fi
if [ -e "$TMP/fail" ]; then
  echo "op 3 image soak-inplace registry.local/app:v2"
  echo "Google Test trace:"
  echo "soak_test.cc:181: soak seed \$CLONESET_FAULT_SEED, operation 3; replay with ..."
  echo "soak_test.cc:271: soak seed \$CLONESET_FAULT_SEED, operation 0; replay with ..."
  echo "2 violations, first: soak-inplace event 9: 4 active pods > 3"
  exit 1
fi
echo "soak: 5 operations in 1s: image=3 scale=2"
echo "soak: 10 pod events, 1 watch restarts, 0 relists"
STUB
chmod +x "$TMP/build/tests/executor_soak_test"
run_bench() { PATH="$TMP/path:$PATH" BUILD_DIR="$TMP/build" "$BENCH" "$@"; }

out=$(run_bench --minutes 1 --seeds 2) || fail "passing runs: exit $?: $out"
[ "$(grep -c ': ok, 5 operations \[image=3 scale=2\], 10 pod events, 1 watch restarts' <<<"$out")" = 2 ] ||
  fail "passing runs: want two ok lines: $out"
grep -q '2 runs of 30 s, 0 failed, 10 operations' <<<"$out" || fail "passing runs: summary: $out"
grep -q 'no failing seed' <<<"$out" || fail "passing runs: no 'no failing seed': $out"
dir=$(sed -n '1s/.*logs in //p' <<<"$out")
[ ! -e "$dir" ] || fail "passing runs: the log directory $dir was kept"
[ "$(awk '{print $2, $3}' "$TMP/calls" | sort -u)" = "30 real" ] || fail "passing runs: environment: $(cat "$TMP/calls")"

rm -f "$TMP/calls"; touch "$TMP/fail"
rc=0; out=$(run_bench --minutes 1 --seeds 1 --seed 42 --backend embedded) || rc=$?
[ "$rc" = 1 ] || fail "failing run: exit $rc, want 1: $out"
grep -q 'seed 42: FAILED at operation 3 of 1 .*violations, first: soak-inplace event 9' <<<"$out" ||
  fail "failing run: line: $out"
grep -q 'seed 42 (operation 3): replay: CLONESET_FAULT_SEED=42 CLONESET_SOAK_SECONDS=60 CLONESET_E2E_BACKEND=embedded' <<<"$out" ||
  fail "failing run: summary: $out"
[ "$(cat "$TMP/calls")" = "42 60 embedded" ] || fail "failing run: environment: $(cat "$TMP/calls")"
rm -rf "$(sed -n '1s/.*logs in //p' <<<"$out")"

rm -f "$TMP/fail"; touch "$TMP/hang"
PATH="$TMP/path:$PATH" BUILD_DIR="$TMP/build" "$BENCH" --minutes 1 --seeds 1 >"$TMP/hang.out" 2>&1 &
pid=$!
poll 20 "the stand-in soak to start" test -e "$TMP/hanging"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" != 0 ] || fail "SIGTERM: the script exited 0"
poll 10 "the run to get SIGTERM" grep -q term "$TMP/signals"
rm -rf "$(sed -n '1s/.*logs in //p' "$TMP/hang.out")"

rc=0; out=$(run_bench --minutes x 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q -- '--minutes must be a positive number' <<<"$out" || fail "bad --minutes: exit $rc: $out"
rc=0; out=$(run_bench --backend other 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q -- '--backend must be real or embedded' <<<"$out" || fail "bad --backend: exit $rc: $out"
echo "PASS"
