# ./run conversion: point the CloneSet CRD of this run directory's real control plane at its conversion webhook
# (the one `./run up --cluster real` starts). Needed after something re-creates the CRD from the file or installs
# the chart's, whose conversion points at a planner Service; the embedded cluster converts in process.
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/up.sh"
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/real_cluster.sh"

run_conversion() {
  case "${1:-}" in -h|--help) sed -n '1,3p' "$ROOT/tools/run.d/conversion.sh" | sed 's/^# //'; return 0 ;; esac
  local dir; dir="$(_run_dir)"
  [ -f "$dir/real/ports" ] || { echo "conversion: no real control plane in $dir (./run up --cluster real)" >&2; return 1; }
  if ! _alive conversion-webhook; then real_webhook_up "$dir" || return 1; fi
  real_point_crd_at_webhook "$dir"
}
