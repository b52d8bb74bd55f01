#!/usr/bin/env bash
# The container images of `./run images` (default path: the build tree's binaries copied into deploy/Dockerfile's
# runtime stages), run the hardened way: read-only root, no capabilities, no-new-privileges, uid 65532.
#   - each image: configured user 65532:65532, `--help` exits 0, no /bin/sh, and its files are only the binary,
#     shared libraries, the loader, CA certificates, passwd/group/nsswitch.conf (and /tmp, the devcluster's /data)
#   - the four together, each with its default command (plus the flags it needs to reach the others): the
#     devcluster (with one simulated node) owns the network namespace and publishes every port on 127.0.0.1 only;
#     the planner, the executor (kubeconfig to the devcluster, its default planner address 127.0.0.1:7070) and the
#     agent (the simulated node's CRI socket from the devcluster's /data) join it. The devcluster's /readyz and
#     /metrics, the planner's /metrics, the executor's /healthz, /readyz and /metrics, the agent's /healthz and
#     /metrics answer
#   - `docker stop` ends each with exit code 0: the binaries handle SIGTERM as PID 1 (the images have no init)
# Cost: ~25 s with the base image and the runtime libraries cached by the daemon; the first run on a machine adds
# the base (debootstrap, ~1.5 min) and the runtime libraries (apt in the build, ~15 s).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$ROOT/build}"

. "$(dirname "${BASH_SOURCE[0]}")/../support/poll.sh"  # fail, poll
for t in curl kubectl; do
  command -v "$t" >/dev/null || fail "$t not installed (./run deps installs it)"
done

TMP="$(mktemp -d)"
CONTAINERS=()
cleanup() {
  local rc=$? c
  if [ "$rc" != 0 ]; then
    for c in "${CONTAINERS[@]}"; do echo "--- docker logs $c (tail)"; docker logs --tail 15 "$c" 2>&1 || true; done
  fi
  [ ${#CONTAINERS[@]} -eq 0 ] || docker rm -f -v "${CONTAINERS[@]}" >/dev/null 2>&1 || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT


start=$SECONDS
"$ROOT/run" images >"$TMP/images.out" || fail "./run images failed"
cat "$TMP/images.out"
echo "./run images: $((SECONDS - start)) s"

declare -A IMAGE
for c in planner executor agent devcluster; do
  IMAGE[$c]=$(awk -v c="cloneset-$c:" 'index($1, c) && $3 == "MB" { print $1 }' "$TMP/images.out")
  [ -n "${IMAGE[$c]}" ] || fail "./run images printed no line 'NAME SIZE MB' for cloneset-$c"
done

HARDENED=(--read-only --cap-drop ALL --security-opt no-new-privileges)
for c in planner executor agent devcluster; do
  img="${IMAGE[$c]}"
  user=$(docker image inspect -f '{{.Config.User}}' "$img")
  [ "$user" = "65532:65532" ] || fail "$img: configured user is '$user', not 65532:65532"
  docker run --rm "${HARDENED[@]}" --user 65532:65532 "$img" --help >"$TMP/help" 2>&1 ||
    fail "$img --help exited $? (hardened run): $(tail -n 3 "$TMP/help")"
  [ -s "$TMP/help" ] || fail "$img --help printed nothing"
  if docker run --rm --entrypoint /bin/sh "$img" -c true >"$TMP/sh" 2>&1; then fail "$img has a working /bin/sh"; fi
  grep -q 'no such file or directory' "$TMP/sh" || fail "$img: /bin/sh did not fail as missing: $(tail -n 2 "$TMP/sh")"
  # Every path in the image; what docker itself adds to a container (.dockerenv, dev, proc, sys, the files it
  # mounts under etc) is allowed too.
  id=$(docker create "$img"); CONTAINERS+=("$id")
  docker export "$id" | tar -t >"$TMP/files"
  allowed="^(\.dockerenv|dev/.*|proc/|sys/|etc/|etc/(hostname|hosts|resolv\.conf|mtab|passwd|group|nsswitch\.conf)"
  allowed+="|etc/ssl/|etc/ssl/certs/|etc/ssl/certs/ca-certificates\.crt|usr/|usr/lib/|usr/lib/ssl/"
  allowed+="|usr/lib/ssl/(cert\.pem|certs)|usr/local/|usr/local/bin/|usr/local/bin/cloneset-$c"
  allowed+="|lib/|lib/x86_64-linux-gnu/|lib/x86_64-linux-gnu/lib[^/]+\.so(\.[0-9]+)*|lib64/|lib64/ld-linux-x86-64\.so\.2"
  allowed+="|tmp/"
  [ "$c" != devcluster ] || allowed+="|data/"
  allowed+=")$"
  extra=$(grep -vE "$allowed" "$TMP/files" || true)
  [ -z "$extra" ] || fail "$img holds more than its binary, libraries and certificates: $(echo "$extra" | head -n 10)"
  grep -qx "usr/local/bin/cloneset-$c" "$TMP/files" || fail "$img has no /usr/local/bin/cloneset-$c"
  echo "$img: user 65532, --help ok, no shell, $(grep -c '\.so' "$TMP/files") shared objects"
done

# default_cmd IMAGE: the image's CMD, one argument a line.
default_cmd() { docker image inspect -f '{{range .Config.Cmd}}{{println .}}{{end}}' "$1"; }

# The devcluster owns the shared network namespace; every port of the four is published on loopback only.
mapfile -t cmd < <(default_cmd "${IMAGE[devcluster]}")
dc=$(docker run -d "${HARDENED[@]}" --user 65532:65532 \
  -p 127.0.0.1::6443 -p 127.0.0.1::9464 -p 127.0.0.1::8080 -p 127.0.0.1::8081 -p 127.0.0.1::9465 -p 127.0.0.1::9466 \
  "${IMAGE[devcluster]}" "${cmd[@]}" --nodes=1 --kubeconfig=/data/kubeconfig)
CONTAINERS+=("$dc")
port() { docker port "$dc" "$1/tcp" | grep -m1 '^127\.0\.0\.1:' | cut -d: -f2; }
for p in 6443 9464 8080 8081 9465 9466; do
  [ -n "$(port "$p")" ] || fail "port $p is not published on 127.0.0.1: $(docker port "$dc")"
done
[ -z "$(docker port "$dc" | grep -v ' -> 127\.0\.0\.1:')" ] || fail "a port is published beyond loopback: $(docker port "$dc")"
api="https://127.0.0.1:$(port 6443)"
# running ID...: each container still runs; one that exited fails the test at once with its exit code, the daemon's
# error and its log (rather than a poll timing out 30 s later with the cause only in the cleanup's output).
exec {STDERR}>&2  # poll discards its command's output: running reports through this
running() {
  local id state
  for id in "$@"; do
    state=$(docker inspect -f '{{.State.Status}} exit={{.State.ExitCode}} oom={{.State.OOMKilled}} {{.State.Error}}' "$id")
    [[ "$state" == running* ]] ||
      fail "$(docker inspect -f '{{.Config.Image}}' "$id") is $state; its log: $(docker logs --tail 20 "$id" 2>&1)" 2>&"$STDERR"
  done
}
devcluster_ready() { running "$dc"; curl -skf "$api/readyz" | grep -qx ok; }
poll 60 "the devcluster's /readyz ($api)" devcluster_ready
# apiserver_request_total has a sample once a request was counted: the first ones come from the node simulator
# (--nodes=1), which may not have sent any yet when /readyz first answers, so this waits for one too.
devcluster_counts() {
  running "$dc"
  local metrics
  metrics=$(curl -skf "$api/metrics") && grep -q '^apiserver_request_total{' <<<"$metrics"
}
poll 60 "a counted request (apiserver_request_total) on the devcluster's /metrics" devcluster_counts

# Its kubeconfig names the listen address (0.0.0.0); the certificate is for 127.0.0.1: inside the namespace the
# API server is 127.0.0.1:6443, from here the published port.
poll 60 "the devcluster's kubeconfig" docker cp "$dc:/data/kubeconfig" "$TMP/kubeconfig.orig"
sed 's#server: https://0\.0\.0\.0:6443#server: https://127.0.0.1:6443#' "$TMP/kubeconfig.orig" >"$TMP/kubeconfig"
grep -q 'server: https://127.0.0.1:6443$' "$TMP/kubeconfig" || fail "unexpected server in the devcluster's kubeconfig"
chmod 0644 "$TMP/kubeconfig"
sed "s#127.0.0.1:6443#127.0.0.1:$(port 6443)#" "$TMP/kubeconfig" >"$TMP/kubeconfig.host"
kc=(kubectl --kubeconfig "$TMP/kubeconfig.host")
"${kc[@]}" apply -f "$ROOT/charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloneset-system\n' | "${kc[@]}" apply -f - >/dev/null
poll 60 "the simulated node devcluster-node-0" "${kc[@]}" get node devcluster-node-0

joined=("${HARDENED[@]}" --user 65532:65532 --network "container:$dc")
pl=$(docker run -d "${joined[@]}" "${IMAGE[planner]}"); CONTAINERS+=("$pl")
mapfile -t cmd < <(default_cmd "${IMAGE[executor]}")
ex=$(docker run -d "${joined[@]}" -v "$TMP/kubeconfig:/etc/cloneset/kubeconfig:ro" \
  "${IMAGE[executor]}" "${cmd[@]}" --kubeconfig=/etc/cloneset/kubeconfig); CONTAINERS+=("$ex")
mapfile -t cmd < <(default_cmd "${IMAGE[agent]}")
ag=$(docker run -d "${joined[@]}" --volumes-from "$dc:ro" -v "$TMP/kubeconfig:/etc/cloneset/kubeconfig:ro" \
  "${IMAGE[agent]}" "${cmd[@]}" --kubeconfig=/etc/cloneset/kubeconfig --node_name=devcluster-node-0 \
  --cri_socket=unix:///data/nodes/devcluster-node-0/cri.sock); CONTAINERS+=("$ag")

# has PORT PATH PATTERN: GET http://127.0.0.1:<published PORT>PATH answers 200 with a line matching PATTERN.
has() {
  running "$dc" "$pl" "$ex" "$ag"
  local body
  body=$(curl -sf --max-time 5 "http://127.0.0.1:$(port "$1")$2") && grep -qE "$3" <<<"$body"
}
poll 60 "the planner's /metrics" has 9464 /metrics '^# TYPE cloneset_planner_plans_total counter'
poll 60 "the executor's /healthz" has 8081 /healthz .
poll 60 "the executor's /readyz (API server and planner reached, caches synced)" has 8081 /readyz .
poll 60 "the executor's /metrics" has 8080 /metrics '^cloneset_executor_shards_configured 1'
poll 60 "the agent's /healthz" has 9466 /healthz .
poll 60 "the agent's /metrics" has 9465 /metrics '^# TYPE cloneset_agent_'
echo "all four serve their endpoints; published: $(docker port "$dc" | tr '\n' ' ')"

for id in "$ag" "$ex" "$pl" "$dc"; do
  name=$(docker inspect -f '{{.Config.Image}}' "$id")
  stop_start=$SECONDS
  docker stop -t 25 "$id" >/dev/null
  code=$(docker inspect -f '{{.State.ExitCode}}' "$id")
  [ "$code" = 0 ] || fail "$name exited $code on docker stop (137: SIGTERM was not handled, killed after 25 s)"
  echo "$name: stopped by SIGTERM in $((SECONDS - stop_start)) s, exit code 0"
done
echo "PASS ($((SECONDS - start)) s)"
