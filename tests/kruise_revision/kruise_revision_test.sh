#!/usr/bin/env bash
# Our ControllerRevisions against OpenKruise v1.8.0's own code (tools/go/kruise, built once into the tools cache by
# `./run toolchain`; cold about 175 s on 2 cores, cached under 1 s).
# Usage: kruise_revision_test.sh REPO_ROOT compare CHECK_BINARY
#          runs cmd/kruise-revision on tests/kruise_revision/cases and compares its answers with the planner's
#          (kruise_revision_check, through the planner's public API): names, hash labels, data bytes, collision
#          counts, volumeClaimTemplates hashes and pod labels with CloneSetShortHash off and on.
#        kruise_revision_test.sh REPO_ROOT schema
#          regenerates planner/go_pod_template_schema.h into a temporary directory and fails when the checked-in
#          table differs (regenerate it with `./run pod-template-schema`).
set -uo pipefail
ROOT="${1:?usage: kruise_revision_test.sh REPO_ROOT compare CHECK_BINARY | schema}"
MODE="${2:?usage: kruise_revision_test.sh REPO_ROOT compare CHECK_BINARY | schema}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || fail "no Go toolchain (Go 1.24 or later; ./run deps does not install it)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The tool is built by ./run (the same cache key and flags as ./run toolchain).
tool() {
  "$ROOT/run" tool kruise "./cmd/$1" "$1" 2>"$TMP/build-$1.log" ||
    { tail -20 "$TMP/build-$1.log" >&2; fail "building tools/go/kruise/cmd/$1 (./run tool kruise ./cmd/$1 $1)"; }
}

case "$MODE" in
  compare)
    CHECK="${3:?compare needs the kruise_revision_check binary}"
    [ -x "$CHECK" ] || fail "$CHECK is not built (cmake --build build --target kruise_revision_check)"
    bin=$(tool kruise-revision) || exit 1
    "$bin" "$ROOT/tests/kruise_revision/cases" >"$TMP/upstream.jsonl" 2>"$TMP/upstream.err" ||
      { cat "$TMP/upstream.err" >&2; fail "kruise-revision failed"; }
    echo "upstream rejected (as the planner must):"; sed 's/^/  /' "$TMP/upstream.err"
    "$CHECK" "$ROOT/tests/kruise_revision/cases" "$TMP/upstream.jsonl"
    ;;
  schema)
    bin=$(tool pod-template-schema) || exit 1
    "$bin" -out "$TMP/go_pod_template_schema.h" || fail "pod-template-schema failed"
    diff -u "$ROOT/planner/go_pod_template_schema.h" "$TMP/go_pod_template_schema.h" ||
      fail "planner/go_pod_template_schema.h is not what tools/go/kruise/cmd/pod-template-schema writes; run ./run pod-template-schema"
    echo "planner/go_pod_template_schema.h matches its generator"
    ;;
  *) fail "mode must be compare or schema, got '$MODE'" ;;
esac
