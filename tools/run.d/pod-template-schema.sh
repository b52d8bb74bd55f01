# ./run pod-template-schema: regenerates planner/go_pod_template_schema.h, the table of the Go types of a CloneSet's
# spec.template and spec.volumeClaimTemplates (k8s.io/api at the version OpenKruise v1.8.0 builds with) by which
# the planner reproduces kruise-manager's typed decode and encode of a template (its revision data and hashes).
# It runs tools/go/kruise/cmd/pod-template-schema (built once into the tools cache). Regenerate after changing the
# pinned versions in tools/go/kruise/go.mod; the ctest planner_pod_template_schema fails while the file differs.

run_pod-template-schema() {
  local bin
  bin=$(go_tool kruise ./cmd/pod-template-schema pod-template-schema) || return 1
  "$bin" -out "$ROOT/planner/go_pod_template_schema.h" || return 1
  log "wrote planner/go_pod_template_schema.h"
}
