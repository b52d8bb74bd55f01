# ./run restart --cluster real [--kill] COMPONENT: restarts one component of the real control plane that
# `./run up --cluster real` started in $RUN_DIR, in place: same ports, data and flags, the others left running.
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/up.sh"  # _start, _stop, _alive, _wait_for, _run_dir

_restart_usage() {
  cat <<'USAGE'
usage: ./run restart --cluster real [--kill] COMPONENT
  Restarts one component of the real control plane in $RUN_DIR (default .run/) in place: it is stopped
  (SIGTERM, SIGKILL after 15 s; with --kill SIGKILL at once) and started again with the command line
  ./run up gave it, on the same ports and data; waits until etcd is healthy or kube-apiserver ready.
  COMPONENT: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, provisioner
USAGE
}

run_restart() {
  local cluster="" signal=TERM name=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --cluster) cluster="$2"; shift 2 ;; --cluster=*) cluster="${1#*=}"; shift ;;
      --kill) signal=KILL; shift ;;
      -h|--help) _restart_usage; return 0 ;;
      -*) echo "restart: unknown option $1" >&2; _restart_usage >&2; return 2 ;;
      *) [ -z "$name" ] || { echo "restart: one component at a time, got '$name' and '$1'" >&2; return 2; }
        name="$1"; shift ;;
    esac
  done
  [ "$cluster" = real ] ||
    { echo "restart: only --cluster real has components to restart in place (got '${cluster:-none}')" >&2; return 2; }
  [ -n "$name" ] || { echo "restart: name the component to restart" >&2; _restart_usage >&2; return 2; }
  local dir; dir="$(_run_dir)"
  [ -d "$dir" ] || { echo "restart: no run directory $dir (./run up --cluster real first)" >&2; return 1; }
  dir="$(cd "$dir" && pwd)"
  # shellcheck source=/dev/null
  source "$ROOT/tools/run.d/real_cluster.sh"
  RUN_DIR="$dir" real_cluster_restart "$dir" "$name" "$signal"
}
