#!/usr/bin/env bash
# Our ControllerRevisions against OpenKruise v1.8.0's own code (tools/go/kruise; `./run toolchain` compiles it
# once, about 175 s cold on 2 cores; then each run builds the two commands in about 3 s).
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
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Built fresh from tools/go/kruise on every run, so that an edit of cmd/ is never hidden by a cached binary (./run
# caches its tools by go.mod and go.sum only). The flags are ./run's (go_tools): `./run toolchain` has compiled
# every package with them already, so this links in about 3 s.
export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || fail "no Go toolchain on PATH or in /usr/local/go/bin (Go 1.24 or later)"
(cd "$ROOT/tools/go/kruise" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$TMP/" ./cmd/kruise-revision \
   ./cmd/pod-template-schema) >"$TMP/build.log" 2>&1 ||
  { tail -20 "$TMP/build.log" >&2; fail "building tools/go/kruise/cmd/kruise-revision and cmd/pod-template-schema"; }

case "$MODE" in
  compare)
    CHECK="${3:?compare needs the kruise_revision_check binary}"
    [ -x "$CHECK" ] || fail "$CHECK is not built (cmake --build build --target kruise_revision_check)"
    "$TMP/kruise-revision" "$ROOT/tests/kruise_revision/cases" >"$TMP/upstream.jsonl" 2>"$TMP/upstream.err" ||
      { cat "$TMP/upstream.err" >&2; fail "kruise-revision failed"; }
    echo "upstream rejected (as the planner must):"; sed 's/^/  /' "$TMP/upstream.err"
    "$CHECK" "$ROOT/tests/kruise_revision/cases" "$TMP/upstream.jsonl"
    ;;
  schema)
    "$TMP/pod-template-schema" -out "$TMP/go_pod_template_schema.h" || fail "pod-template-schema failed"
    diff -u "$ROOT/planner/go_pod_template_schema.h" "$TMP/go_pod_template_schema.h" ||
      fail "planner/go_pod_template_schema.h is not what tools/go/kruise/cmd/pod-template-schema writes; run ./run pod-template-schema"
    echo "planner/go_pod_template_schema.h matches its generator"
    ;;
  *) fail "mode must be compare or schema, got '$MODE'" ;;
esac
