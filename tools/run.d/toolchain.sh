# ./run toolchain: builds (once, cached by go.mod + go.sum, see go_tool in ./run) every Go-built test tool the
# suites start, and prints one "name path" line each. `./run test` calls it before ctest, so a fresh machine
# builds them up front instead of inside a test's timeout. A second run is a no-op.
#
# Each entry: MODULE PACKAGE [NAME] for go_tool (module under tools/go/).
TOOLCHAIN=(
  "etcd go.etcd.io/etcd/server/v3 etcd"
  "kube k8s.io/kubernetes/cmd/kube-apiserver"
  "kube k8s.io/kubernetes/cmd/kube-controller-manager"
  "kube k8s.io/kubernetes/cmd/kube-scheduler"
  "kube ./cmd/cloneset-test-provisioner"
  "kwok sigs.k8s.io/kwok/cmd/kwok"
  "helm helm.sh/helm/v3/cmd/helm helm"
)

# toolchain_path NAME: builds (once) the tool NAME of TOOLCHAIN (the binary's name) and prints its path.
toolchain_path() {
  local want="$1" entry
  for entry in "${TOOLCHAIN[@]}"; do
    # shellcheck disable=SC2086
    set -- $entry
    if [ "${3:-$(basename "$2")}" = "$want" ]; then go_tool "$@"; return; fi
  done
  echo "toolchain: no tool named $want" >&2
  return 1
}

run_toolchain() {
  local entry path start
  for entry in "${TOOLCHAIN[@]}"; do
    # shellcheck disable=SC2086
    set -- $entry
    start=$SECONDS
    path=$(go_tool "$@") || { echo "toolchain: building $2 from tools/go/$1 failed" >&2; return 1; }
    [ $((SECONDS - start)) -lt 2 ] || log "toolchain: $(basename "$path") built in $((SECONDS - start)) s"
    echo "$(basename "$path") $path"
  done
}
