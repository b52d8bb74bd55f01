# ./run demo [--fast] [--keep|--no-keep] [--cluster embedded|real]
# Sets everything up (./run deps, build), starts the local stack (./run up --nodes 3, on the embedded cluster or
# with --cluster real on the real control plane of tools/run.d/real_cluster.sh), applies the seed 000
# manifests as written and plays the CloneSet story: ready; scale to 5; in-place canary of 2 (partition 3), then
# partition 0; delete one chosen pod with podsToDelete; scale to 2. The story is the dev binary cloneset-demo
# (tools/demo/, not the product CLI): every step is checked (pod names, UIDs, PVCs, restart counts, revisions) and
# the demo fails loudly when a check fails. The live view is `clonesetctl status`'s, redrawn in place on a terminal,
# plain lines otherwise.
# --fast: no pauses between steps (CI). --keep (default): leave the cluster running; --no-keep: ./run down at the end.
# It always starts from a clean cluster: whatever ./run up left running in $RUN_DIR is stopped and its data purged.

run_demo() {
  local fast=0 keep=1 cluster=embedded
  while [ $# -gt 0 ]; do
    case "$1" in
      --fast) fast=1 ;;
      --keep) keep=1 ;;
      --no-keep) keep=0 ;;
      --cluster) cluster="${2:-}"; shift ;;
      --cluster=*) cluster="${1#*=}" ;;
      -h|--help) echo "usage: ./run demo [--fast] [--keep|--no-keep] [--cluster embedded|real] (stops ./run up's stack and purges its data first)"
        return 0 ;;
      *) echo "demo: unknown option $1 (use --fast, --keep, --no-keep, --cluster embedded|real)" >&2; return 2 ;;
    esac
    shift
  done
  case "$cluster" in
    embedded|real) ;;
    *) echo "demo: --cluster must be embedded or real, got '$cluster'" >&2; return 2 ;;
  esac
  cmd_deps
  cmd_build --target cloneset-devcluster cloneset-planner cloneset-executor clonesetctl cloneset-demo
  # The node agent is optional for the story (the embedded cluster simulates the kubelets).
  if [ -f "$ROOT/agent/CMakeLists.txt" ]; then
    cmd_build --target cloneset-agent || log "demo: cloneset-agent did not build; continuing without agents"
  fi
  # shellcheck source=/dev/null
  source "$ROOT/tools/run.d/up.sh"
  # shellcheck source=/dev/null
  source "$ROOT/tools/run.d/down.sh"
  # The story starts from an empty cluster: what an earlier run left (its CloneSet, kept PVCs) would be reused.
  log "demo: starting from a clean cluster (./run down --purge)"
  run_down --purge
  local kubeconfig
  kubeconfig="$(run_up --nodes 3 --cluster "$cluster" | tail -n 1)" || { echo "demo: ./run up failed" >&2; return 1; }
  [ -f "$kubeconfig" ] || { echo "demo: ./run up did not print a kubeconfig" >&2; return 1; }

  local ctl="$BUILD_DIR/bin/clonesetctl"
  local args=(--kubeconfig="$kubeconfig" --manifests="$ROOT/tests/data/seed000")
  [ "$fast" = 1 ] && args+=(--fast)
  local rc=0
  "$BUILD_DIR/bin/cloneset-demo" "${args[@]}" || rc=$?
  if [ "$keep" = 1 ]; then
    # clonesetctl is told where the cluster and the planner are; it reads nothing of ./run's.
    cat <<EOF

The cluster is still running. Try:
  export KUBECONFIG=$kubeconfig CLONESET_PLANNER=$(cat "$(_run_dir)/planner.address")
  kubectl get clonesets,pods,pvc -o wide
  $ctl status video-transcoder -w
  $ctl plan video-transcoder
  $ctl simulate -f $ROOT/tests/data/seed000/cloneset.yaml --set image=my-registry/video-transcoder:v1.3.0
Stop everything with: ./run down
EOF
  else
    run_down
  fi
  return "$rc"
}
