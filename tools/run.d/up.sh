# ./run up [--nodes N] [--executors N] [--planners N] [--kubeconfig PATH] [--no-agents] [--cluster embedded|real]
#          [--real-nodes N]
# --cluster real: a real Kubernetes control plane with kwok nodes instead of the embedded cluster
# (tools/run.d/real_cluster.sh). The chart's ServiceAccounts and RBAC are installed there and the executors run
# with the executor's ServiceAccount token ($RUN_DIR/kubeconfig-executor), the agents with the agent's
# ($RUN_DIR/kubeconfig-agent), not as the admin; the admin kubeconfig is for the user and the tests. The kwok
# nodes have no container runtime: cloneset-sim-cri serves each one a simulated CRI socket for its agent.
# Starts the local stack in the background (embedded cluster unless --kubeconfig, CRD, planner(s), executor(s)),
# waits until everything is ready and prints the kubeconfig path. Idempotent: running components are kept, and a
# component that died (crash, kill -9) is started again.
# Restarts keep addresses: the embedded cluster and each planner listen on the address they got at their first
# start (kept in $RUN_DIR/<name>.listen), so the executors and agents that still call it find it again. Should that
# port have been taken by another process meanwhile, the component gets a new one, and every running component
# whose command line that changes (an executor's planner address, the API server an executor or agent calls) is
# restarted with it ($RUN_DIR/<name>.cmd keeps what each was started with).
# Logs and pid files live in $RUN_DIR (default .run/).

# shellcheck source=/dev/null
source "$ROOT/tools/run.d/down.sh"  # _stop

_run_dir() { echo "${RUN_DIR:-$ROOT/.run}"; }

_up_usage() {
  cat <<'USAGE'
usage: ./run up [--nodes N] [--executors N] [--planners N] [--kubeconfig PATH] [--no-agents] [--cluster real]
                [--real-nodes N] [--executor-flag FLAG]...
  Starts (or restarts what died of) the local stack in the background and prints the kubeconfig path:
  the embedded cluster (unless --kubeconfig), the CRDs, N planners, N executors (sharded) and one
  image pre-download agent per simulated node. State and logs: $RUN_DIR (default .run/).
  --nodes N        simulated nodes of the embedded cluster (default 3)
  --executors N    executor replicas, one shard each (default 1)
  --planners N     planner replicas (default 1)
  --kubeconfig P   use this cluster instead of the embedded one (no agents)
  --no-agents      do not start the agents
  --cluster real   a real Kubernetes control plane (etcd, kube-apiserver, controller manager, scheduler,
                   kwok nodes, a volume provisioner; tools/run.d/real_cluster.sh) instead. The chart's
                   RBAC is installed; executors and agents run as its ServiceAccounts
                   ($RUN_DIR/kubeconfig-executor, $RUN_DIR/kubeconfig-agent); one agent per kwok node
                   on a simulated CRI socket (cloneset-sim-cri)
  --real-nodes N   with --cluster real: N real nodes beside the kwok nodes (default 0): real-node-0..,
                   a kubelet on its own containerd each, pods as real containers, images from a local
                   registry ($RUN_DIR/real/registry.addr); tainted cloneset.test/real-node=true:NoSchedule;
                   one agent each on the node's containerd (tools/run.d/real_node.sh)
  --executor-flag F  one more flag for every executor, e.g.
                   --executor-flag=--feature_gates=InPlaceWorkloadVerticalScaling=true (repeatable)
  EXECUTOR_WRAPPER="CMD ARGS"  run every executor under CMD (a profiler, e.g. valgrind --tool=callgrind)
USAGE
}

# _alive NAME: the component's pid file names a live process.
_alive() {
  local pidf; pidf="$(_run_dir)/$1.pid"
  [ -f "$pidf" ] && _pid_alive "$(cat "$pidf")"
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

# _start NAME COMMAND...: background process with log and pid file. A running NAME is kept when it was started
# with the same signature ($START_SIG, default the command line), else it is stopped and started again.
_start() {
  local name="$1"; shift
  local dir sig; dir="$(_run_dir)"; sig="${START_SIG:-$*}"
  if _alive "$name"; then
    # A component started before signatures were kept has none: keep it and record the signature.
    if [ ! -f "$dir/$name.cmd" ] || [ "$(cat "$dir/$name.cmd")" = "$sig" ]; then
      printf '%s\n' "$sig" >"$dir/$name.cmd"
      log "up: $name already running (pid $(cat "$dir/$name.pid"))"
      return 0
    fi
    log "up: restarting $name: what it calls changed"
    _stop "$name"
  fi
  : >"$dir/$name.log"
  setsid "$@" >>"$dir/$name.log" 2>&1 < /dev/null &
  echo $! >"$dir/$name.pid"
  printf '%s\n' "$sig" >"$dir/$name.cmd"
  log "up: started $name (pid $!)"
}

_sim_cri_serving_or_dead() { grep -q '^serving [0-9]* CRI sockets$' "$(_run_dir)/sim-cri.log" || ! _alive sim-cri; }
_listening_or_dead() { _has_addr "$1" 'listening on' || ! _alive "$1"; }

# _start_server NAME SECONDS COMMAND...: _start with --listen=<the address NAME got at its first start> (port 0 the
# first time), waits until it announces "listening on ADDR" and keeps ADDR for the next start. A kept port that
# another process took meanwhile is given up for a new one.
_start_server() {
  local name="$1" secs="$2"; shift 2
  local dir saved; dir="$(_run_dir)"
  saved="$(cat "$dir/$name.listen" 2>/dev/null || true)"
  START_SIG="$*" _start "$name" "$@" --listen="${saved:-127.0.0.1:0}"
  _wait_for "$secs" "$name to listen" _listening_or_dead "$name" || return 1
  if ! _has_addr "$name" 'listening on' && [ -n "$saved" ]; then
    log "up: $name could not listen on $saved again ($(tail -n 1 "$dir/$name.log")); taking a new port"
    rm -f "$dir/$name.listen"
    START_SIG="$*" _start "$name" "$@" --listen=127.0.0.1:0
    _wait_for "$secs" "$name to listen" _listening_or_dead "$name" || return 1
  fi
  if ! _has_addr "$name" 'listening on'; then
    echo "up: $name exited before listening; its log ($dir/$name.log) ends with:" >&2
    tail -n 5 "$dir/$name.log" >&2
    return 1
  fi
  _addr "$name" 'listening on' >"$dir/$name.listen"
}

run_up() {
  local nodes=3 executors=1 planners=1 kubeconfig="" agents=1 cluster=embedded real_nodes=0
  local executor_flags=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --executor-flag) executor_flags+=("$2"); shift 2 ;; --executor-flag=*) executor_flags+=("${1#*=}"); shift ;;
      --nodes) nodes="$2"; shift 2 ;; --nodes=*) nodes="${1#*=}"; shift ;;
      --executors) executors="$2"; shift 2 ;; --executors=*) executors="${1#*=}"; shift ;;
      --planners) planners="$2"; shift 2 ;; --planners=*) planners="${1#*=}"; shift ;;
      --kubeconfig) kubeconfig="$2"; shift 2 ;; --kubeconfig=*) kubeconfig="${1#*=}"; shift ;;
      --no-agents) agents=0; shift ;;
      --cluster) cluster="$2"; shift 2 ;; --cluster=*) cluster="${1#*=}"; shift ;;
      --real-nodes) real_nodes="$2"; shift 2 ;; --real-nodes=*) real_nodes="${1#*=}"; shift ;;
      -h|--help) _up_usage; return 0 ;;
      *) echo "up: unknown option $1" >&2; _up_usage >&2; return 2 ;;
    esac
  done
  local n
  for n in "$executors" "$planners"; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "up: --executors and --planners take a number (0 or more), got '$n'" >&2; return 2; }
  done
  local dir bin; dir="$(_run_dir)"; bin="$BUILD_DIR/bin"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"  # absolute: the data dir and CRI socket paths are handed to processes (unix:// URIs)
  # Only what this start runs: the end-to-end suites' real backend (--cluster real --executors 0 --planners 0)
  # starts no binary of ours but the conversion webhook, and must not build the rest of the tree.
  local b need=()
  [ "$cluster" = embedded ] && [ -z "$kubeconfig" ] && need+=(cloneset-devcluster)
  # The real control plane's conversion webhook is a planner too.
  { [ "$planners" -gt 0 ] || [ "$cluster" = real ]; } && need+=(cloneset-planner)
  [ "$executors" -gt 0 ] && need+=(cloneset-executor)
  for b in "${need[@]}"; do
    if [ ! -x "$bin/$b" ]; then cmd_build --target "${need[@]}"; break; fi
  done
  export KUBECACHEDIR="$dir/kubecache"

  case "$cluster" in
    embedded) [ "$real_nodes" = 0 ] || { echo "up: --real-nodes needs --cluster real" >&2; return 2; } ;;
    real) [ -z "$kubeconfig" ] || { echo "up: --cluster real and --kubeconfig exclude each other" >&2; return 2; }
      source "$ROOT/tools/run.d/real_cluster.sh"
      kubeconfig=$(real_cluster_up "$nodes" "$real_nodes") || return 1 ;;
    *) echo "up: --cluster must be embedded or real, got '$cluster'" >&2; return 2 ;;
  esac
  local kubeconfig_given="$kubeconfig"  # agents need the embedded cluster's CRI sockets
  if [ -z "$kubeconfig" ]; then
    kubeconfig="$dir/kubeconfig"
    if ! _alive devcluster; then rm -f "$kubeconfig"; fi
    _start_server devcluster 30 "$bin/cloneset-devcluster" --data-dir="$dir/devcluster" \
      --kubeconfig="$kubeconfig" --nodes="$nodes"
    _wait_for 30 "the embedded cluster" kubectl --kubeconfig "$kubeconfig" get --raw /healthz
  fi
  # The executors' credentials (once the embedded cluster's kubeconfig is known): on the real control plane the
  # chart's executor identity (RBAC enforced).
  local executor_kubeconfig="$kubeconfig"
  [ "$cluster" = real ] && executor_kubeconfig="$dir/kubeconfig-executor"
  # Part of the executors' and agents' signatures: a cluster that moved to another port restarts them.
  local server="server=$kubeconfig"
  [ -z "$kubeconfig_given" ] && server="server=$(_addr devcluster 'listening on')"
  local kc=(kubectl --kubeconfig "$kubeconfig")
  local crd="$ROOT/charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml"
  [ -f "$crd" ] || crd="$ROOT/tests/executor/data/crd.yaml"
  "${kc[@]}" apply -f "$crd" >/dev/null 2>&1 || "${kc[@]}" get crd clonesets.apps.kruise.io >/dev/null 2>&1 ||
    "${kc[@]}" create -f "$crd" >/dev/null
  _wait_for 30 "the CloneSet CRD" "${kc[@]}" get clonesets.apps.kruise.io -A
  # kube-apiserver converts between the CRD's versions through the webhook; the embedded cluster in process.
  if [ "$cluster" = real ]; then
    real_webhook_up "$dir" && real_point_crd_at_webhook "$dir" || return 1
  fi
  # `apply` rather than `create namespace`: the embedded cluster takes JSON/YAML bodies only (no protobuf).
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloneset-system\n' | "${kc[@]}" apply -f - >/dev/null

  local i targets=()
  for ((i = 0; i < planners; i++)); do
    _start_server "planner-$i" 20 "$bin/cloneset-planner" --metrics_listen=127.0.0.1:0
    targets+=("$(_addr "planner-$i" 'listening on')")
  done
  local planner_target; planner_target="ipv4:$(IFS=,; echo "${targets[*]}")"
  # Where `clonesetctl plan` finds these planners: it reads no file of ./run, it is told (--planner or
  # CLONESET_PLANNER); ./run demo and ./run status hand this on.
  if [ "$planners" -gt 0 ]; then echo "$planner_target" >"$dir/planner.address"; else rm -f "$dir/planner.address"; fi
  for ((i = 0; i < executors; i++)); do
    local wrapper=()
    # shellcheck disable=SC2206  # word splitting intended: a command and its arguments
    [ -z "${EXECUTOR_WRAPPER:-}" ] || wrapper=($EXECUTOR_WRAPPER)
    local exe=(${wrapper[@]+"${wrapper[@]}"} "$bin/cloneset-executor" --kubeconfig="$executor_kubeconfig" --planner_address="$planner_target"
      --shards="$executors" --identity="executor-$i" --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0
      ${executor_flags[@]+"${executor_flags[@]}"})
    START_SIG="$server ${exe[*]}" _start "executor-$i" "${exe[@]}"
  done
  for ((i = 0; i < executors; i++)); do
    _wait_for 30 "executor-$i health endpoint" _has_addr "executor-$i" 'listening on'
    _wait_for 60 "executor-$i /readyz" _ready "executor-$i"
  done
  # Image pre-download: CRDs always; one cloneset-agent per simulated node on that node's CRI socket.
  local pcrd
  for pcrd in imagepulljobs nodeimages; do
    "${kc[@]}" apply -f "$ROOT/charts/cloneset/crds/$pcrd.apps.kruise.io.yaml" >/dev/null
  done
  # On the real control plane the kwok nodes have no runtime: cloneset-sim-cri serves the embedded cluster's
  # simulated CRI for each of them ($RUN_DIR/sim-cri/<node>/cri.sock), and the agents run as the chart's agent
  # ServiceAccount ($RUN_DIR/kubeconfig-agent).
  local node_prefix=devcluster-node- cri_dir="$dir/devcluster/nodes" agent_kubeconfig="$kubeconfig"
  if [ "$agents" = 1 ] && [ "$cluster" = real ]; then
    node_prefix=kwok-node- cri_dir="$dir/sim-cri" agent_kubeconfig="$dir/kubeconfig-agent"
    [ -x "$bin/cloneset-sim-cri" ] || cmd_build --target cloneset-sim-cri
    local node_names=()
    for ((i = 0; i < nodes; i++)); do node_names+=("$node_prefix$i"); done
    _start sim-cri "$bin/cloneset-sim-cri" --socket_dir="$cri_dir" --nodes="$(IFS=,; echo "${node_names[*]}")"
    _wait_for 20 "cloneset-sim-cri" _sim_cri_serving_or_dead
    if ! _alive sim-cri; then
      echo "up: cloneset-sim-cri exited; its log ($dir/sim-cri.log) ends with:" >&2
      tail -n 5 "$dir/sim-cri.log" >&2
      return 1
    fi
  fi
  if [ "$agents" = 1 ] && { [ -z "${kubeconfig_given:-}" ] || [ "$cluster" = real ]; }; then
    [ -x "$bin/cloneset-agent" ] || cmd_build --target cloneset-agent
    for ((i = 0; i < nodes; i++)); do
      local sock="$cri_dir/$node_prefix$i/cri.sock"
      _wait_for 20 "the CRI socket of $node_prefix$i" test -S "$sock"
      local agent=("$bin/cloneset-agent" --node_name="$node_prefix$i" --cri_socket="unix://$sock"
        --kubeconfig="$agent_kubeconfig" --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0)
      START_SIG="$server ${agent[*]}" _start "agent-$i" "${agent[@]}"
    done
    for ((i = 0; i < nodes; i++)); do
      _wait_for 20 "agent-$i health endpoint" _has_addr "agent-$i" 'listening on'
    done
  fi
  # The real nodes' agents: one per node on that node's containerd (CRI), as the chart's agent ServiceAccount.
  if [ "$agents" = 1 ] && [ "$cluster" = real ]; then
    local rn pidf
    for pidf in "$dir"/agent-real-*.pid; do  # nodes of a former start beyond --real-nodes
      [ -f "$pidf" ] || continue
      rn=$(basename "$pidf" .pid); [ "${rn#agent-real-}" -lt "$real_nodes" ] || _stop "$rn"
    done
    for ((i = 0; i < real_nodes; i++)); do
      [ -x "$bin/cloneset-agent" ] || cmd_build --target cloneset-agent
      local agent=("$bin/cloneset-agent" --node_name="$REAL_NODE_PREFIX$i"
        --cri_socket="unix://$dir/real/nodes/$REAL_NODE_PREFIX$i/containerd.sock"
        --kubeconfig="$dir/kubeconfig-agent" --metrics_listen=127.0.0.1:0 --health_listen=127.0.0.1:0)
      START_SIG="$server ${agent[*]}" _start "agent-real-$i" "${agent[@]}"
    done
    for ((i = 0; i < real_nodes; i++)); do
      _wait_for 20 "agent-real-$i health endpoint" _has_addr "agent-real-$i" 'listening on'
    done
  fi
  echo "$kubeconfig" >"$dir/kubeconfig.path"
  log "up: ready"
  if [ -f "$dir/planner.address" ]; then
    log "up: for kubectl and clonesetctl: export KUBECONFIG=$kubeconfig CLONESET_PLANNER=$(cat "$dir/planner.address")"
  fi
  echo "$kubeconfig"
}
