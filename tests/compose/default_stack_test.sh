#!/usr/bin/env bash
# compose.default_stack: `docker compose up` of docker-compose.yml's default stack (devcluster, planner, executor,
# Prometheus), then the seed 000 CloneSet through it: ready, an image change rolled out in place, every component's
# Prometheus target up with a metric that shows its part. Static checks first: every default service is one of our
# images, never pulled, hardened, and publishes on 127.0.0.1 only.
# A compose project of its own (unique name, any free host ports), removed with its volumes on exit.
# Cost: 16 s under ctest with the images cached (the stack is ready ~2 s after `up`); the first `./run images` on a
# machine also makes the Debian base (~2 min).
set -euo pipefail
SRC="${CLONESET_SOURCE_DIR:?}"
export BUILD_DIR="${CLONESET_BUILD_DIR:?}"
TMP=$(mktemp -d)
PROJECT="cloneset-compose-$$-$RANDOM"
export KUBECACHEDIR="$TMP/kubecache"

fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || fail "$1 not installed (${2:-./run deps installs it})"; }
need kubectl "install kubectl"
need curl
need python3

compose() { docker compose -p "$PROJECT" -f "$SRC/docker-compose.yml" "$@"; }
cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ -n "${STARTED:-}" ]; then
    echo "--- the containers, and the end of each one's log:" >&2
    compose ps -a >&2 || true
    compose logs --no-color --tail 20 >&2 || true
  fi
  [ -z "${STARTED:-}" ] || compose down -v --timeout 5 >/dev/null 2>&1 || echo "compose down -v of $PROJECT failed" >&2
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds; on timeout says what it waited for and what COMMAND said.
wait_for() {
  local secs="$1" what="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >"$TMP/wait.out" 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$TMP/wait.out" >&2; fail "timed out after ${secs}s waiting for $what"; }
    sleep 0.5
  done
}

"$SRC/run" docker ensure || fail "./run docker ensure (a Docker daemon and the compose v2 plugin)"
"$SRC/run" images >"$TMP/images.log" 2>&1 || { tail -n 30 "$TMP/images.log" >&2; fail "./run images"; }

# Static: the default stack needs no public image and every container of it is hardened.
compose config --format json >"$TMP/config.json"
python3 - "$TMP/config.json" <<'EOF' || fail "docker-compose.yml's default stack (above)"
import json, sys
services = json.load(open(sys.argv[1]))["services"]
problems = []
if sorted(services) != ["devcluster", "executor", "planner", "prometheus"]:
    problems.append(f"default services are {sorted(services)}")
for name, s in services.items():
    want = {"pull_policy": "never", "read_only": True, "user": "65532:65532", "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true"]}
    for key, value in want.items():
        if s.get(key) != value:
            problems.append(f"{name}: {key} is {s.get(key)!r}, want {value!r}")
    if not s.get("image", "").startswith("ghcr.io/cloneset-cpp/cloneset-"):
        problems.append(f"{name}: image {s.get('image')!r} is not one of ./run images")
    if s.get("privileged"):
        problems.append(f"{name}: privileged")
    for p in s.get("ports", []):
        if p.get("host_ip") != "127.0.0.1":
            problems.append(f"{name}: port {p.get('target')} published on {p.get('host_ip') or 'every address'}")
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

# Any free host port for each published one (the *_PORT variables empty: "127.0.0.1::PORT").
export DEVCLUSTER_PORT= PLANNER_PORT= EXECUTOR_HEALTH_PORT= PROMETHEUS_PORT=
STARTED=1
start=$SECONDS
timeout 120 docker compose -p "$PROJECT" -f "$SRC/docker-compose.yml" up -d --wait --pull never ||
  fail "docker compose up -d --wait"
api=$(compose port devcluster 6443) || fail "no published port of devcluster:6443"
prom=$(compose port prometheus 9090) || fail "no published port of prometheus:9090"
health=$(compose port executor 8081) || fail "no published port of executor:8081"

# The running containers as docker sees them: what compose asked for is what runs.
for service in devcluster planner executor prometheus; do
  id=$(compose ps -q "$service")
  [ -n "$id" ] || fail "no container of $service"
  got=$(docker inspect -f '{{.HostConfig.ReadonlyRootfs}} {{.Config.User}} {{.HostConfig.CapDrop}} {{.HostConfig.Privileged}} {{.HostConfig.SecurityOpt}}' "$id")
  [ "$got" = "true 65532:65532 [ALL] false [no-new-privileges:true]" ] ||
    fail "$service runs with read-only/user/cap-drop/privileged/security-opt = $got"
done

# The cluster's kubeconfig names https://kubernetes:6443 (for the containers); from here the published port.
wait_for 30 "the cluster's kubeconfig (devcluster:/data/kubeconfig)" compose cp devcluster:/data/kubeconfig "$TMP/kubeconfig"
kubectl --kubeconfig "$TMP/kubeconfig" config set-cluster devcluster --server "https://$api" >/dev/null
kc=(kubectl --kubeconfig "$TMP/kubeconfig")
wait_for 30 "the executor's /readyz" curl -sf "http://$health/readyz"
echo "stack ready $((SECONDS - start)) s after docker compose up"
"${kc[@]}" get crd clonesets.apps.kruise.io >/dev/null || fail "the CloneSet CRD is not served"

"${kc[@]}" apply -f "$SRC/tests/data/seed000" >/dev/null || fail "kubectl apply -f tests/data/seed000"
cs=(clonesets.apps.kruise.io video-transcoder)
# rolled_out N: the controller has seen the last spec and all N replicas are updated and ready.
rolled_out() {
  local got
  got=$("${kc[@]}" get "${cs[@]}" -o \
    jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.replicas} {.status.readyReplicas} {.status.updatedReadyReplicas}')
  echo "generation, observedGeneration, replicas, readyReplicas, updatedReadyReplicas: $got"
  read -r gen observed replicas ready updated_ready <<<"$got"
  [ "$gen" = "$observed" ] && [ "$replicas" = "$1" ] && [ "$ready" = "$1" ] && [ "$updated_ready" = "$1" ]
}
wait_for 60 "the seed CloneSet's 3 replicas ready" rolled_out 3
pods() { "${kc[@]}" get pods -l app=video-transcoder -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}'; }
before=$(pods)

# An image change is an in-place update: the same pods (names and UIDs) end up running the new image.
"${kc[@]}" patch "${cs[@]}" --type json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"my-registry/video-transcoder:v1.3.0"}]' \
  >/dev/null || fail "patching the CloneSet's image"
wait_for 90 "the in-place rollout (updatedReadyReplicas == replicas == 3)" rolled_out 3
after=$(pods)
[ "$(tr ' ' '\n' <<<"$before" | sort)" = "$(tr ' ' '\n' <<<"$after" | sort)" ] ||
  fail "the pods were replaced, not updated in place: before [$before] after [$after]"
images=$("${kc[@]}" get pods -l app=video-transcoder -o jsonpath='{range .items[*]}{.spec.containers[0].image} {end}')
[ "$(tr ' ' '\n' <<<"$images" | grep -c 'v1.3.0$')" = 3 ] || fail "pod images after the rollout: $images"
echo "in-place rollout done $((SECONDS - start)) s after docker compose up"

# Prometheus: every job's target up, and a metric of each that shows its part in what just happened.
targets_up() {
  curl -sf "http://$prom/api/v1/targets" | python3 -c '
import json, sys
targets = json.load(sys.stdin)["data"]["activeTargets"]
health = {t["labels"]["job"]: (t["health"], t["lastError"]) for t in targets}
print(health)
want = {"devcluster", "planner", "executor", "prometheus"}
sys.exit(0 if set(health) == want and all(h == "up" for h, _ in health.values()) else 1)'
}
wait_for 30 "every Prometheus target up (devcluster, planner, executor, prometheus)" targets_up
# query_true PROMQL: the query returns at least one series.
query_true() {
  curl -sf "http://$prom/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r)
sys.exit(0 if r else 1)'
}
for q in 'sum(cloneset_planner_plans_total{job="planner"}) > 0' \
         'cloneset_status_updated_ready_replicas{job="executor",namespace="default",name="video-transcoder"} == 3' \
         'apiserver_storage_objects{job="devcluster",resource="pods"} >= 3'; do
  wait_for 30 "Prometheus: $q" query_true "$q"
done
echo "PASS: compose default stack ($((SECONDS - start)) s from docker compose up)"
