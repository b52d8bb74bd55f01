# ./run docker ensure|stop: a working Docker daemon with BuildKit (buildx) and compose v2 for the image builds and
# the container tests.
#   ensure  when `docker info` fails: installs Debian's docker.io if there is no dockerd, starts dockerd in the
#           background (pid file /var/run/cloneset-dockerd.pid, log ~/.cache/cloneset/dockerd.log) and waits for
#           it (60 s); then makes sure `docker buildx` and `docker compose` work, linking the plugins built from
#           tools/go/docker (./run toolchain) into ${DOCKER_CONFIG:-~/.docker}/cli-plugins unless a working one
#           is already installed. A daemon that already answers is used as it is (Docker CE, rootless, remote).
#   stop    stops the dockerd that `ensure` started (by its pid file); a daemon started otherwise is left alone.
#
# For other run.d scripts (sourced; ./run's functions are defined): docker_ensure, returns non-zero with the reason
# on stderr when the daemon or a plugin cannot be made to work, prints nothing on stdout. Tests call
# `"$ROOT/run" docker ensure`. The variables DOCKERD_PIDFILE and DOCKERD_LOG name the files above.
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/toolchain.sh"

DOCKERD_PIDFILE=/var/run/cloneset-dockerd.pid
DOCKERD_LOG="$HOME/.cache/cloneset/dockerd.log"
# How long a started daemon may take to answer (it prepares its storage and networks; ~2 s here).
DOCKERD_START_SECONDS=60

# _docker_pid_alive: the dockerd of our pid file runs.
_docker_pid_alive() {
  local pid; pid=$(cat "$DOCKERD_PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && as_root kill -0 "$pid" 2>/dev/null
}

# _docker_install: Debian's docker.io (dockerd 20.10 and a docker CLI), for a machine with no Docker at all.
_docker_install() {
  log "docker: no Docker installed; installing Debian's docker.io"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io >&2 ||
    { echo "docker: installing docker.io with apt failed (install Docker and start its daemon)" >&2; return 1; }
}

_docker_start_daemon() {
  command -v dockerd >/dev/null || _docker_install || return 1
  mkdir -p "$(dirname "$DOCKERD_LOG")"
  if ! _docker_pid_alive; then
    log "docker: starting dockerd in the background (log $DOCKERD_LOG)"
    # Its own session: it outlives this ./run and is not stopped with a test's process group.
    # Not holding docker_ensure's lock (an inherited descriptor would keep it locked for the daemon's life).
    as_root setsid -f dockerd --pidfile="$DOCKERD_PIDFILE" </dev/null >>"$DOCKERD_LOG" 2>&1 {_DOCKER_LOCK_FD}>&-
  fi
  local started=$SECONDS deadline=$((SECONDS + DOCKERD_START_SECONDS))
  until docker info >/dev/null 2>&1; do
    # dockerd writes its pid file soon after it starts and removes it when it exits.
    if [ "$SECONDS" -ge "$deadline" ] || { [ $((SECONDS - started)) -ge 5 ] && ! _docker_pid_alive; }; then
      echo "docker: dockerd did not answer \`docker info\` within ${DOCKERD_START_SECONDS} s" \
        "$(_docker_pid_alive && echo "(it runs, pid $(cat "$DOCKERD_PIDFILE"))" || echo "(it exited)")." \
        "docker info says: $(docker info 2>&1 >/dev/null | tail -n 1)" >&2
      echo "docker: the end of $DOCKERD_LOG:" >&2
      tail -n 15 "$DOCKERD_LOG" >&2
      return 1
    fi
    sleep 0.5
  done
}

# _docker_plugin NAME: `docker NAME version` works, with the user's plugin or with ours linked in.
_docker_plugin() {
  local name="$1" dir="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
  local link="$dir/docker-$name"
  # Ours (a link into the tools cache) is refreshed when tools/go/docker changes; anything else is the user's.
  if [ -L "$link" ] && [[ "$(readlink "$link")" == "$TOOLS_CACHE"/* ]] || ! docker "$name" version >/dev/null 2>&1; then
    local path; path=$(toolchain_path "docker-$name") ||
      { echo "docker: building the $name CLI plugin (tools/go/docker) failed" >&2; return 1; }
    if [ -e "$link" ] && [ ! -L "$link" ]; then
      echo "docker: $link is not a working docker $name plugin; move it away so ./run can link its own" >&2
      return 1
    fi
    if [ "$(readlink "$link" 2>/dev/null)" != "$path" ]; then
      mkdir -p "$dir"
      ln -sfn "$path" "$link"
      log "docker: linked $link -> $path"
    fi
  fi
  docker "$name" version >/dev/null 2>&1 ||
    { echo "docker: \`docker $name version\` fails: $(docker "$name" version 2>&1 | tail -n 1)" >&2; return 1; }
}

docker_ensure() {
  # One ensure at a time: parallel tests must not install, start two daemons or link plugins over each other. The
  # wait is bounded by a cold build of the plugins (minutes on 2 cores).
  local lock="$HOME/.cache/cloneset/docker-ensure.lock"
  mkdir -p "$(dirname "$lock")"
  exec {_DOCKER_LOCK_FD}>"$lock"
  flock -w 1800 "$_DOCKER_LOCK_FD" ||
    { echo "docker: waited 30 min for another ./run holding $lock" >&2; exec {_DOCKER_LOCK_FD}>&-; return 1; }
  local rc=0
  _docker_ensure_locked || rc=$?
  exec {_DOCKER_LOCK_FD}>&-
  return "$rc"
}

_docker_ensure_locked() {
  command -v docker >/dev/null || command -v dockerd >/dev/null || _docker_install || return 1
  command -v docker >/dev/null ||
    { echo "docker: dockerd is installed but no docker CLI is on PATH (docker.io or docker-ce-cli has it)" >&2; return 1; }
  docker info >/dev/null 2>&1 || _docker_start_daemon || return 1
  _docker_plugin buildx && _docker_plugin compose
}

docker_stop() {
  if ! _docker_pid_alive; then echo "docker: no dockerd started by ./run runs ($DOCKERD_PIDFILE)"; return 0; fi
  local pid; pid=$(cat "$DOCKERD_PIDFILE")
  as_root kill "$pid"
  local deadline=$((SECONDS + 30))
  while as_root kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] ||
      { echo "docker: dockerd (pid $pid) still runs 30 s after SIGTERM; see $DOCKERD_LOG" >&2; return 1; }
    sleep 0.5
  done
  log "docker: stopped dockerd (pid $pid)"
}

run_docker() {
  case "${1:-}" in
    ensure) docker_ensure ;;
    stop) docker_stop ;;
    -h|--help) sed -n '/^#/!q; /^# shellcheck/d; s/^# \{0,1\}//p' "$ROOT/tools/run.d/docker.sh" | sed '/^$/q' ;;
    *) echo "usage: ./run docker ensure|stop" >&2; return 2 ;;
  esac
}
