# ./run up [--nodes N] [--executors N] [--planners N] [--kubeconfig PATH] [--no-agents]
# Starts the local stack in the background (embedded cluster unless --kubeconfig, CRD, planner(s), executor(s)),
# waits until everything is ready and prints the kubeconfig path. Idempotent: running components are kept.
# Logs and pid files live in $RUN_DIR (default .run/).

_run_dir() { echo "${RUN_DIR:-$ROOT/.run}"; }

# _alive NAME: the component's pid file names a live process.
_alive() {
  local pidf; pidf="$(_run_dir)/$1.pid"
  [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null
}

# _addr NAME PATTERN: the first "PATTERN <addr>" announced in NAME's log (stdout or stderr).
_addr() {
  grep -m1 -oE "(^| )$2 [^ \"]+" "$(_run_dir)/$1.log" 2>/dev/null | awk '{print $NF}' | sed 's#^[a-z]*://##'
}
_has_addr() { [ -n "$(_addr "$1" "$2")" ]; }
_ready() { curl -sf "http://$(_addr "$1" 'listening on')/readyz"; }

_wait_for() {  # _wait_for SECONDS DESCRIPTION COMMAND...
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then echo "up: timed out waiting for $what" >&2; return 1; fi
    sleep 0.2
  done
}

_start() {  # _start NAME COMMAND...: background process with log and pid file
  local name="$1"; shift
  local dir; dir="$(_run_dir)"
  if _alive "$name"; then log "up: $name already running (pid $(cat "$dir/$name.pid"))"; return 0; fi
  : >"$dir/$name.log"
  setsid "$@" >>"$dir/$name.log" 2>&1 < /dev/null &
  echo $! >"$dir/$name.pid"
  log "up: started $name (pid $!)"
}

run_up() {
  local nodes=3 executors=1 planners=1 kubeconfig="" agents=1
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) nodes="$2"; shift 2 ;; --nodes=*) nodes="${1#*=}"; shift ;;
      --executors) executors="$2"; shift 2 ;; --executors=*) executors="${1#*=}"; shift ;;
      --planners) planners="$2"; shift 2 ;; --planners=*) planners="${1#*=}"; shift ;;
      --kubeconfig) kubeconfig="$2"; shift 2 ;; --kubeconfig=*) kubeconfig="${1#*=}"; shift ;;
      --no-agents) agents=0; shift ;;
      *) echo "up: unknown option $1" >&2; return 2 ;;
    esac
  done
  local dir bin; dir="$(_run_dir)"; bin="$BUILD_DIR/bin"
  mkdir -p "$dir"
  local b
  for b in cloneset-devcluster cloneset-planner cloneset-executor; do
    if [ ! -x "$bin/$b" ]; then cmd_build --target cloneset-devcluster cloneset-planner cloneset-executor; break; fi
  done
  export KUBECACHEDIR="$dir/kubecache"

  local kubeconfig_given="$kubeconfig"  # agents need the embedded cluster's CRI sockets
  if [ -z "$kubeconfig" ]; then
    kubeconfig="$dir/kubeconfig"
    if ! _alive devcluster; then rm -f "$kubeconfig"; fi
    _start devcluster "$bin/cloneset-devcluster" --listen=127.0.0.1:0 --data-dir="$dir/devcluster" \
      --kubeconfig="$kubeconfig" --nodes="$nodes"
    _wait_for 30 "the embedded cluster" kubectl --kubeconfig "$kubeconfig" get --raw /healthz
  fi
  local kc=(kubectl --kubeconfig "$kubeconfig")
  local crd="$ROOT/charts/cloneset/crds/clonesets.apps.kruise.io.yaml"
  [ -f "$crd" ] || crd="$ROOT/tests/executor/data/crd.yaml"
  "${kc[@]}" apply -f "$crd" >/dev/null 2>&1 || "${kc[@]}" get crd clonesets.apps.kruise.io >/dev/null 2>&1 ||
    "${kc[@]}" create -f "$crd" >/dev/null
  _wait_for 30 "the CloneSet CRD" "${kc[@]}" get clonesets.apps.kruise.io -A
  # `apply` rather than `create namespace`: the embedded cluster takes JSON/YAML bodies only (no protobuf).
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloneset-system\n' | "${kc[@]}" apply -f - >/dev/null

  local i targets=()
  for ((i = 0; i < planners; i++)); do
    _start "planner-$i" "$bin/cloneset-planner" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0
    _wait_for 20 "planner-$i" _has_addr "planner-$i" 'listening on'
    targets+=("$(_addr "planner-$i" 'listening on')")
  done
  local planner_target; planner_target="ipv4:$(IFS=,; echo "${targets[*]}")"
  for ((i = 0; i < executors; i++)); do
    _start "executor-$i" "$bin/cloneset-executor" --kubeconfig="$kubeconfig" --planner_address="$planner_target" \
      --shards="$executors" --identity="executor-$i" --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0
  done
  for ((i = 0; i < executors; i++)); do
    _wait_for 30 "executor-$i health endpoint" _has_addr "executor-$i" 'listening on'
    _wait_for 60 "executor-$i /readyz" _ready "executor-$i"
  done
  # Image pre-download (a1): CRDs always; one cloneset-agent per simulated node on that node's CRI socket.
  local pcrd
  for pcrd in imagepulljobs nodeimages; do
    "${kc[@]}" apply -f "$ROOT/charts/cloneset/crds/$pcrd.apps.kruise.io.yaml" >/dev/null
  done
  if [ "$agents" = 1 ] && [ -z "${kubeconfig_given:-}" ]; then
    [ -x "$bin/cloneset-agent" ] || cmd_build --target cloneset-agent
    for ((i = 0; i < nodes; i++)); do
      local sock="$dir/devcluster/nodes/devcluster-node-$i/cri.sock"
      _wait_for 20 "the CRI socket of devcluster-node-$i" test -S "$sock"
      _start "agent-$i" "$bin/cloneset-agent" --node_name="devcluster-node-$i" --cri_socket="unix://$sock" \
        --kubeconfig="$kubeconfig" --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0
    done
    for ((i = 0; i < nodes; i++)); do
      _wait_for 20 "agent-$i health endpoint" _has_addr "agent-$i" 'listening on'
    done
  fi
  echo "$kubeconfig" >"$dir/kubeconfig.path"
  log "up: ready"
  echo "$kubeconfig"
}
