# ./run toolchain: builds (once, cached by go.mod + go.sum + build flags, see go_tools in ./run) every Go-built test
# tool the suites start, and prints one "name path" line each. `./run test` runs it beside the C++ build, before
# ctest, so a fresh machine builds them up front instead of inside a test's timeout. A second run is a no-op.
#
# One entry per Go module under tools/go/: MODULE PACKAGE=NAME... Only the binaries the tests start. The binaries
# of one module are built by one `go build` (go_tools): kube-apiserver, kube-controller-manager, kube-scheduler, the
# kubelet and kube-proxy share most of their packages, which are then compiled once and scheduled together.
TOOLCHAIN=(
  "etcd go.etcd.io/etcd/server/v3=etcd"
  "kube k8s.io/kubernetes/cmd/kube-apiserver=kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager=kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler=kube-scheduler k8s.io/kubernetes/cmd/kubelet=kubelet k8s.io/kubernetes/cmd/kube-proxy=kube-proxy ./cmd/cloneset-test-provisioner=cloneset-test-provisioner"
  "coredns ./cmd/coredns=coredns"
  "kwok sigs.k8s.io/kwok/cmd/kwok=kwok"
  "helm helm.sh/helm/v3/cmd/helm=helm"
  "docker github.com/docker/buildx/cmd/buildx=docker-buildx github.com/docker/compose/v2/cmd=docker-compose"
  # OpenKruise v1.8.0: its own revision code and the Go types of the pod template (tests/kruise_revision), and
  # kruise-manager itself (real.kruise_takeover, the benchmarks' comparison).
  "kruise ./cmd/kruise-revision=kruise-revision ./cmd/pod-template-schema=pod-template-schema github.com/openkruise/kruise=kruise-manager"
)

# toolchain_path NAME: builds (once) the tool NAME of TOOLCHAIN with the rest of its module's entry (so the first
# kube binary asked for builds all of them in one go) and prints NAME's path.
toolchain_path() {
  local want="$1" entry spec paths
  for entry in "${TOOLCHAIN[@]}"; do
    # shellcheck disable=SC2086
    set -- $entry
    for spec in "${@:2}"; do
      [ "${spec#*=}" = "$want" ] || continue
      paths=$(go_tools "$@") || return 1
      grep -m1 "/$want\$" <<<"$paths"
      return
    done
  done
  echo "toolchain: no tool named $want" >&2
  return 1
}

run_toolchain() {
  local entry path paths start
  for entry in "${TOOLCHAIN[@]}"; do
    # shellcheck disable=SC2086
    set -- $entry
    start=$SECONDS
    paths=$(go_tools "$@") || { echo "toolchain: building tools/go/$1 failed" >&2; return 1; }
    [ $((SECONDS - start)) -lt 2 ] || log "toolchain: tools/go/$1 built in $((SECONDS - start)) s"
    while read -r path; do echo "$(basename "$path") $path"; done <<<"$paths"
  done
}
