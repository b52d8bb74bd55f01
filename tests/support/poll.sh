# Shell helpers the test scripts share; source it after `set -euo pipefail`.

# fail MESSAGE...: "FAIL: MESSAGE" on stderr and exit 1 (the script's EXIT trap cleans up and prints state).
fail() { echo "FAIL: $*" >&2; exit 1; }

# poll SECONDS DESCRIPTION COMMAND...: runs COMMAND (output discarded) every POLL_INTERVAL seconds (default 0.5)
# until it succeeds; after SECONDS, fails naming DESCRIPTION.
poll() {
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for $what"
    sleep "${POLL_INTERVAL:-0.5}"
  done
}
