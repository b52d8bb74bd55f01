#!/usr/bin/env bash
# pyclient_test.py (Debian's python3-kubernetes) against the real Kubernetes 1.34 control plane (etcd,
# kube-apiserver, controller manager, scheduler, kwok, the test provisioner; none of our components: the script
# tests the API server), the same assertions as pyclient_devcluster with PYCLIENT_KUBECONFIG. The script works in a
# namespace of its own, which it deletes. The control plane:
#  - with CLONESET_E2E_REAL_RUN_DIR set (ctest: the fixture real_control_plane, tests/real/shared_control_plane.sh),
#    that shared one, reset to what `./run up` left before and after (as the Stack suites do);
#  - else its own in a private RUN_DIR (`./run up --cluster real --nodes 1 --executors 0 --planners 0 --no-agents`),
#    torn down at the end.
# A missing tool is a failure naming it.
# Needs: BUILD_DIR, kubectl, openssl, curl, Go for the control plane (built once by ./run toolchain), Helm (./run
# up installs the chart's RBAC), /usr/bin/python3 with the kubernetes and yaml modules.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"
SHARED="${CLONESET_E2E_REAL_RUN_DIR:-}"
for t in kubectl openssl curl /usr/bin/python3; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done
/usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null ||
  { echo "FAIL: /usr/bin/python3 lacks the kubernetes or yaml module (Debian's python3-kubernetes, ./run deps)" >&2; exit 1; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-pyclient-real.XXXXXX")"
export RUN_DIR="${SHARED:-$TMP/run}" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
reset_shared() { "$SRC/tests/real/shared_control_plane.sh" reset "$SHARED"; }
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ] && [ -z "$SHARED" ]; then
    local f; for f in "$RUN_DIR"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -8 "$f"; }; done
  fi
  if [ -n "$SHARED" ]; then
    reset_shared || { echo "FAIL: the shared control plane was not reset after the test" >&2; [ "$rc" != 0 ] || rc=1; }
  else
    "$SRC/run" down --purge >/dev/null 2>&1 || "$SRC/run" down >/dev/null 2>&1 || true
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

t0=$SECONDS
if [ -n "$SHARED" ]; then
  reset_shared || { echo "FAIL: the shared control plane in $SHARED could not be reset before the test" >&2; exit 1; }
  echo "timing: reset $((SECONDS - t0)) s (the shared control plane)"
else
  "$SRC/run" up --cluster real --nodes 1 --executors 0 --planners 0 --no-agents >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; echo "FAIL: ./run up --cluster real" >&2; exit 1; }
  echo "timing: up $((SECONDS - t0)) s"
fi
t0=$SECONDS
PYCLIENT_KUBECONFIG="$RUN_DIR/kubeconfig" /usr/bin/python3 "$SRC/tests/pyclient/pyclient_test.py" --repo "$SRC" -v
echo "timing: pyclient $((SECONDS - t0)) s"
