# ./run status: one line per component started by `./run up`: name, pid, state, announced addresses.
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/down.sh"  # _pid_alive

run_status() {
  local dir="${RUN_DIR:-$ROOT/.run}" pidf name pid state addrs
  [ -d "$dir" ] || { echo "nothing started (no $dir)"; return 0; }
  for pidf in "$dir"/*.pid; do
    [ -f "$pidf" ] || continue
    name="$(basename "$pidf" .pid)"; pid="$(cat "$pidf")"
    if _pid_alive "$pid"; then state=running; else state=dead; fi
    addrs="$(grep -o -E '(listening on|metrics on|metrics listening on) [^ ]+' "$dir/$name.log" 2>/dev/null |
      awk '{print $NF}' | sort -u | tr '\n' ' ')" || true  # none announced (etcd, containerd): grep fails
    printf '%-14s pid %-8s %-8s %s\n' "$name" "$pid" "$state" "$addrs"
  done
  [ -f "$dir/kubeconfig.path" ] && echo "kubeconfig: $(cat "$dir/kubeconfig.path")"
  [ -f "$dir/planner.address" ] &&
    echo "planner: $(cat "$dir/planner.address") (clonesetctl plan: export CLONESET_PLANNER=$(cat "$dir/planner.address"))"
  return 0
}
