# ./run pod-template-schema: regenerates planner/go_pod_template_schema.h, the table of the Go types of a CloneSet's
# spec.template and spec.volumeClaimTemplates (k8s.io/api at the version OpenKruise v1.8.0 builds with) by which
# the planner reproduces kruise-manager's typed decode and encode of a template (its revision data and hashes).
# It runs tools/go/kruise/cmd/pod-template-schema. Regenerate after changing the
# pinned versions in tools/go/kruise/go.mod; the ctest planner_pod_template_schema fails while the file differs.

run_pod-template-schema() {
  local tmp
  tmp=$(mktemp -d) || return 1
  # Built fresh (not from the tools cache, keyed by go.mod and go.sum only): the generator's own source may have
  # changed. ./run toolchain has compiled its packages with these flags, so this takes seconds.
  (cd "$ROOT/tools/go/kruise" && CGO_ENABLED=0 go build $GO_TOOL_GOFLAGS -ldflags="$GO_TOOL_LDFLAGS" -o "$tmp/" \
     ./cmd/pod-template-schema) || { rm -rf "$tmp"; return 1; }
  "$tmp/pod-template-schema" -out "$ROOT/planner/go_pod_template_schema.h" || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  log "wrote planner/go_pod_template_schema.h"
}
