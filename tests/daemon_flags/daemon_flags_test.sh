#!/usr/bin/env bash
# The daemons' shared command line (base/daemon_main.h), on the real binaries:
#   help BINARY GRACE   --help and --helpfull print the usage and the program's own flags on stdout, exit 0, with
#                       --log_level=info and --shutdown_grace=GRACE (the program's default) and none of absl's;
#                       a bad --log_level or a negative --shutdown_grace is one JSON line naming the flag, exit 1
#   dashed BINARY       every flag also takes its dashed spelling (--log-level), as the embedded cluster documents
#   grace_alias BINARY  the planner's deprecated --shutdown_grace_seconds: alone it starts the planner with a
#                       warning naming the grace it set; disagreeing with --shutdown_grace it is refused, exit 1
set -euo pipefail
mode="$1" bin="$2"
tmp="$(mktemp -d)"
pid=""
cleanup() { [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "daemon_flags_test $mode $(basename "$bin"): $*" >&2; exit 1; }
[ -x "$bin" ] || fail "no binary at $bin"

# refused WANT ARGS...: exit 1, one JSON line "startup failed" on stderr whose error holds WANT, nothing on stdout.
refused() {
  local want="$1"; shift
  local rc=0
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || fail "$*: want exit 1, got $rc: $(cat "$tmp/err")"
  grep -q '"level":"error","msg":"startup failed"' "$tmp/err" || fail "$*: no startup failed line: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "$*: the error does not say '$want': $(cat "$tmp/err")"
  [ "$(grep -c . "$tmp/err")" = 1 ] || fail "$*: want one log line, got: $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || fail "$*: wrote on stdout: $(cat "$tmp/out")"
}

case "$mode" in
  help)
    grace="$3"
    for flag in --help --helpfull -h; do
      "$bin" "$flag" >"$tmp/help" 2>"$tmp/err" || fail "$flag exited $?"
      [ ! -s "$tmp/err" ] || fail "$flag wrote on stderr: $(cat "$tmp/err")"
      grep -q '^Flags:$' "$tmp/help" || fail "$flag: no Flags: section: $(cat "$tmp/help")"
      grep -qx '  --log_level=info' "$tmp/help" || fail "$flag: no --log_level=info: $(cat "$tmp/help")"
      grep -qx "  --shutdown_grace=$grace" "$tmp/help" || fail "$flag: no --shutdown_grace=$grace: $(cat "$tmp/help")"
      for absl in --flagfile --fromenv --tryfromenv --undefok --helpmatch; do
        grep -q -- "^  $absl=" "$tmp/help" && fail "$flag lists absl's $absl"
      done
      # Sorted by name, the program's own among them.
      grep '^  --' "$tmp/help" | sed 's/=.*//' > "$tmp/names"
      sort -c "$tmp/names" || fail "$flag: flags not sorted"
      [ "$(wc -l < "$tmp/names")" -ge 5 ] || fail "$flag: too few flags: $(cat "$tmp/names")"
    done
    refused '--log_level: \"loud\" is not debug, info, warn or error' --log_level=loud
    refused '--shutdown_grace: must not be negative' --shutdown_grace=-1s
    ;;
  dashed)
    refused '--log_level: \"loud\"' --log-level=loud
    refused '--shutdown_grace: must not be negative' --shutdown-grace=-1s
    ;;
  grace_alias)
    refused 'disagree; give --shutdown_grace only' --shutdown_grace_seconds=3 --shutdown_grace=4s
    refused '--shutdown_grace_seconds: must not be negative' --shutdown_grace_seconds=-1
    "$bin" --shutdown_grace_seconds=2 --listen=127.0.0.1:0 --metrics_listen= --release_memory_idle_seconds=0 \
      >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    for _ in $(seq 100); do grep -q '^listening on ' "$tmp/out" && break; sleep 0.1; done
    grep -q '^listening on ' "$tmp/out" || fail "the planner did not start: $(cat "$tmp/err")"
    grep -q '"msg":"--shutdown_grace_seconds is deprecated: use --shutdown_grace".*"shutdown_grace":"2s"' "$tmp/err" \
      || fail "no deprecation warning naming 2s: $(cat "$tmp/err")"
    kill -TERM "$pid"
    rc=0; wait "$pid" || rc=$?; pid=""
    [ "$rc" = 0 ] || fail "stopped with $rc: $(cat "$tmp/err")"
    grep -q '"msg":"shutting down"' "$tmp/err" || fail "no shutting down line: $(cat "$tmp/err")"
    ;;
  *) fail "unknown mode (help, dashed, grace_alias)" ;;
esac
echo "daemon_flags_test $mode $(basename "$bin"): ok"
