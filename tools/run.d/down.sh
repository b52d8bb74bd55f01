# ./run down: stops what `./run up` started (SIGTERM, then SIGKILL after 15 s), executors first.
run_down() {
  local dir="${RUN_DIR:-$ROOT/.run}" pidf name pid
  [ -d "$dir" ] || { log "down: nothing running"; return 0; }
  for pidf in "$dir"/executor-*.pid "$dir"/planner-*.pid "$dir"/agent-*.pid "$dir"/devcluster.pid; do
    [ -f "$pidf" ] || continue
    name="$(basename "$pidf" .pid)"; pid="$(cat "$pidf")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      local deadline=$((SECONDS + 15))
      while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
      log "down: stopped $name (pid $pid)"
    fi
    rm -f "$pidf"
  done
}
