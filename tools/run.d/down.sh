# ./run down [--purge]: stops what `./run up` started (SIGTERM, then SIGKILL after 15 s), executors first.
# The embedded cluster's data ($RUN_DIR/devcluster: objects, certificates, token) and the components' addresses
# are kept for the next `./run up`; --purge discards them, and the logs, so the next start is a new cluster.

_down_usage() {
  cat <<'USAGE'
usage: ./run down [--purge]
  Stops what ./run up started. The embedded cluster keeps its objects for the next ./run up;
  --purge also discards them (and the logs, kubeconfig and kept addresses in $RUN_DIR).
USAGE
}

# _pid_alive PID: PID runs. A process killed with -9 whose parent has not reaped it yet (the components are
# reparented when ./run exits) is a zombie that kill -0 still finds: it counts as dead, but only once its other
# threads are gone too. A Go program's main thread turns zombie first while the others still exit, holding the
# process's files and sockets: a restart on the same port then met "bind: address already in use".
_pid_alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state; state="$(ps -o stat= -p "$1" 2>/dev/null || true)"
  [ -n "$state" ] || return 1
  [ "${state#Z}" = "$state" ] && return 0
  local threads; threads=$(find "/proc/$1/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  [ "$threads" -gt 1 ]
}

# _stop NAME: stops the component of $RUN_DIR/NAME.pid (TERM, KILL after 15 s) and removes the pid file.
_stop() {
  local dir="${RUN_DIR:-$ROOT/.run}" name="$1" pid
  [ -f "$dir/$name.pid" ] || return 0
  pid="$(cat "$dir/$name.pid")"
  if _pid_alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 15))
    while _pid_alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    _pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    log "down: stopped $name (pid $pid)"
  fi
  rm -f "$dir/$name.pid"
}

run_down() {
  local dir="${RUN_DIR:-$ROOT/.run}" pidf purge=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --purge) purge=1; shift ;;
      -h|--help) _down_usage; return 0 ;;
      *) echo "down: unknown option $1" >&2; _down_usage >&2; return 2 ;;
    esac
  done
  [ -d "$dir" ] || { log "down: nothing running"; return 0; }
  for pidf in "$dir"/executor-*.pid "$dir"/planner-*.pid "$dir"/agent-*.pid "$dir"/sim-cri.pid "$dir"/devcluster.pid; do
    [ -f "$pidf" ] || continue
    _stop "$(basename "$pidf" .pid)"
  done
  # The real-cluster backend (./run up --cluster real), after its clients.
  # shellcheck source=/dev/null
  source "$ROOT/tools/run.d/real_cluster.sh"
  real_cluster_down "$dir" "$purge"
  if [ "$purge" = 1 ]; then
    # Only what ./run up writes: RUN_DIR may be a directory of the user's with other files in it.
    rm -rf "$dir/devcluster" "$dir/kubecache" "$dir/sim-cri"
    rm -f "$dir"/*.listen "$dir"/*.cmd "$dir"/*.log "$dir/kubeconfig" "$dir/kubeconfig.path" "$dir/planner.address"
    log "down: discarded the embedded cluster's data in $dir"
  fi
}
