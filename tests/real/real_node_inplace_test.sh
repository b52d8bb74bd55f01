#!/usr/bin/env bash
# In-place update on a real kubelet: `./run up --cluster real --nodes 1 --real-nodes 1` in a private RUN_DIR (a
# kubelet v1.34.4 on containerd + runc, images from the loopback registry; tools/run.d/real_node.sh), with our
# planner, executor and the node's agent. Its own run directory rather than the shared control plane: it needs an
# executor, a planner and an agent on the real node, which the shared control plane runs without, and the shared
# plane's tests need no node that starts containers (a real node adds ~5 s to `up` and its containers' CPU).
#
# 1. A CloneSet in the seed's shape (InPlaceIfPossible, maxUnavailable 1, a volumeClaimTemplate, an init container
#    preparing the volume, a readiness probe; 3 replicas) on web:v1, tolerating the real node's taint. Each pod
#    writes a marker into its claim. The image goes to v2; per pod, what a real kubelet does: same name, UID, pod
#    IP and claim (the marker is still there); a new container ID, the image ID of v2 (the registry's digest),
#    restartCount up by exactly one; Ready went False and back to True once, through the InPlaceUpdateReady
#    readiness gate, which went False and True exactly once (recorded by a watch), and never two pods unready at
#    once. `kubectl logs` (current and --previous) and `kubectl exec` work on a pod.
# 2. A new tag of the same image (same image ID): the update still completes, each container restarted once more.
# 3. Two containers ordered by KRUISE_CONTAINER_PRIORITY (10 and 1; a container without it would go with the
#    first batch, as upstream): the higher one is restarted, and Ready, before the other is touched (two batches
#    in the in-place state, the watch saw first=1/second=0 restarts).
# 4. A batch whose new image crashes: the first container crash-loops, the second batch is never started (its
#    container keeps its image and restart count) and the other pod is not updated (maxUnavailable 1), for 20 s.
# 5. Env-from-metadata: a template label that a container reads through an env fieldRef changes, then
#    `clonesetctl rollout restart` stamps restartedAt, which it also reads: each time the node's agent restarts that
#    container through CRI (a kubelet restarts nothing for metadata), once per pod, with the new value in its env;
#    the pod's other container, which reads no field, is untouched; an event RestartingContainer on the pod.
# 6. Image pre-download: a partition holds every pod while the planner's ImagePullJob has the agent pull the new
#    image (a layer of PD_MIB MiB of random data) into the node's containerd; no pod is patched before it is
#    there; the rollout is then faster than the same rollout to an image of the same size that was not pulled.
# Each step prints "timing: NAME SECONDS"; the in-place restarts print per pod how long the gate was False.
# Needs: BUILD_DIR, kubectl, curl, skopeo and the real node's packages (./run deps); Go (./run toolchain).
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${BUILD_DIR:?BUILD_DIR must name the build tree}"

for t in kubectl curl skopeo; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (./run deps installs it)" >&2; exit 1; }
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloneset-real-node.XXXXXX")"
export RUN_DIR="$TMP/run" BUILD_DIR KUBECACHEDIR="$TMP/kubecache"
WATCH_PID=""
cleanup() {
  local rc=$?
  [ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null || true
  if [ "$rc" != 0 ]; then
    echo "--- cluster state"
    kc get clonesets,pods,pvc -o wide 2>&1 | head -30 || true
    kc get events --sort-by=.lastTimestamp 2>&1 | tail -25 || true
    local f; for f in "$RUN_DIR"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -8 "$f"; }; done
  fi
  local t0=$SECONDS
  "$SRC/run" down --purge >"$TMP/down.log" 2>&1 || { cat "$TMP/down.log"; rc=1; echo "FAIL: ./run down --purge"; }
  echo "timing: down $((SECONDS - t0)) s"
  # Nothing of the node may outlive `down`: mounts, its bridge, its kubelet's log links.
  if [ -n "$(awk -v d="$TMP/" 'index($5, d) == 1' /proc/self/mountinfo)" ]; then
    echo "FAIL: still mounted under $TMP after ./run down"; awk -v d="$TMP/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo
    rc=1
  fi
  if [ -n "${SLOT:-}" ] && ip link show "cloneset-rn$SLOT" >/dev/null 2>&1; then
    echo "FAIL: bridge cloneset-rn$SLOT left after ./run down"; rc=1
  fi
  if [ "$rc" = 0 ]; then rm -rf "$TMP"; else echo "kept $TMP for inspection"; fi
  exit "$rc"
}
trap cleanup EXIT

POLL_INTERVAL=1
. "$SRC/tests/support/poll.sh"  # fail, poll
kc() { kubectl --kubeconfig "$RUN_DIR/kubeconfig" --request-timeout=20s "$@"; }
step() { echo "timing: $1 $((SECONDS - STEP_START)) s"; STEP_START=$SECONDS; }

# watch_pods LABEL FILE: records every change of LABEL's pods, one line each: arrival time (s.µs), event type,
# name, uid, R=<Ready> G=<InPlaceUpdateReady>, then |names|restartCounts|ready| of the container statuses (the
# kubelet lists them by name).
watch_pods() {
  local jp='{.type} {.object.metadata.name} {.object.metadata.uid} R={.object.status.conditions[?(@.type=="Ready")].status} G={.object.status.conditions[?(@.type=="InPlaceUpdateReady")].status} |{.object.status.containerStatuses[*].name}|{.object.status.containerStatuses[*].restartCount}|{.object.status.containerStatuses[*].ready}|{"\n"}'
  kc get pods -l "$1" -w --output-watch-events -o jsonpath="$jp" \
    > >(while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done >"$2") 2>"$2.err" &
  WATCH_PID=$!
  poll 20 "the watch of $1 to list the pods" grep -q ADDED "$2"
}
stop_watch() { kill "$WATCH_PID" 2>/dev/null || true; wait "$WATCH_PID" 2>/dev/null || true; WATCH_PID=""; sleep 0.2; }

# pod_row NAME: "uid podIP claim containerID imageID restartCount image" of NAME's first container.
pod_row() {
  kc get pod "$1" -o jsonpath='{.metadata.uid} {.status.podIP} {.spec.volumes[?(@.name=="workspace")].persistentVolumeClaim.claimName} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].imageID} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].image}'
}
pods_of() { kc get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }

# settled CS N [STATUS_IMAGES]: CS reports N ready and N updated-ready replicas of its newest revision, N pods exist, all Running,
# Ready and InPlaceUpdateReady, the template's images in their spec and in their container statuses (the kubelet
# runs them). The CloneSet's counts alone are not enough: right after an in-place update's patch the pod is at the
# new revision and still Ready until the kubelet has seen the gate go False (as upstream counts it).
# STATUS_IMAGES: what the container statuses must name instead (a retag: the kubelet reports the image by the
# name containerd keeps for that image ID, which need not be the new tag).
settled() {
  local cs="$1" n="$2" gen observed ready updated_ready images status_images
  read -r gen observed ready updated_ready < <(kc get cloneset "$cs" -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.readyReplicas} {.status.updatedReadyReplicas}{"\n"}')
  [ "$observed" = "$gen" ] && [ "$ready" = "$n" ] && [ "$updated_ready" = "$n" ] || return 1
  images=$(kc get cloneset "$cs" -o jsonpath='{.spec.template.spec.containers[*].image}')
  status_images=${3:-$images}
  local rows; rows=$(kc get pods -l "app=$cs" -o jsonpath='{range .items[*]}{.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="InPlaceUpdateReady")].status} {.spec.containers[*].image} {.status.containerStatuses[*].image}{"\n"}{end}')
  [ "$(grep -c . <<<"$rows")" = "$n" ] || return 1
  ! grep -qv "^Running True True $images $status_images\$" <<<"$rows"
}

# gate_story FILE POD: the pod's Ready/InPlaceUpdateReady pairs in FILE with consecutive repeats dropped.
gate_story() {
  awk -v p="$2" '$3 == p { s = substr($5, 3) "/" substr($6, 3); if (s != last) { printf "%s ", s; last = s } }' "$1"
}
# condition_story FILE POD FIELD: the values of one condition (field 5 Ready, 6 InPlaceUpdateReady) the pod went
# through, repeats dropped.
condition_story() {
  awk -v p="$2" -v f="$3" '$3 == p { v = substr($f, 3); if (v != last) { printf "%s ", v; last = v } }' "$1"
}

# unready_at_once FILE: the largest number of the pods in FILE that were not Ready at the same moment.
unready_at_once() {
  awk '{ ready[$3] = ($5 == "R=True") ; n = 0; for (p in ready) if (!ready[p]) n++; if (n > max) max = n } END { print max + 0 }' "$1"
}

STEP_START=$SECONDS
START=$SECONDS
"$SRC/run" up --cluster real --nodes 1 --real-nodes 1 >"$TMP/up.log" 2>&1 ||
  { cat "$TMP/up.log"; fail "./run up --cluster real --real-nodes 1"; }
NODE=real-node-0
SLOT=$(cat "$RUN_DIR/real/nodes/$NODE/slot")
REG=$(cat "$RUN_DIR/real/registry.addr")
read -r kubelet_version runtime taint node_type < <(kc get node "$NODE" -o jsonpath='{.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion} {.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect} {.metadata.labels.type}{"\n"}')
[ "$kubelet_version" = v1.34.4 ] || fail "want kubelet v1.34.4 (tools/go/kube), got '$kubelet_version'"
[[ "$runtime" == containerd://* ]] || fail "want the node on containerd, got '$runtime'"
[ "$taint" = cloneset.test/real-node=true:NoSchedule ] || fail "want the real node tainted, got '$taint'"
[ "$node_type" = real ] || fail "want label type=real on $NODE, got '$node_type'"
grep -q -- "--node_name=$NODE --cri_socket=unix://$RUN_DIR/real/nodes/$NODE/containerd.sock" "$RUN_DIR/agent-real-0.cmd" ||
  fail "no agent on $NODE's containerd: $(cat "$RUN_DIR/agent-real-0.cmd" 2>/dev/null)"
step "up"

# --- 1. v1 -> v2 in place ----------------------------------------------------------------------------------------
# The seed's shape on the registry's images. The init container runs as root to hand the claim's directory (a
# hostPath volume, root-owned) to the web server's user. Its '&&' is on purpose: kube-apiserver returns a
# revision's data with '&' escaped (\u0026), and a planner that compared the data byte for byte created a new
# ControllerRevision at every reconcile and never settled (docs/testing.md, "Found on the real nodes").
cloneset_web() {
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
  scaleStrategy: {pvcRetentionPolicy: Retain}
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeSelector: {type: real}
      tolerations: [{key: cloneset.test/real-node, operator: Exists, effect: NoSchedule}]
      dnsPolicy: Default
      terminationGracePeriodSeconds: 10
      initContainers:
      - name: init-workspace
        image: $REG/cloneset-test/web:v1
        command: [sh, -c, 'mkdir -p /workspace/input /workspace/output && chown -R 65534:65534 /workspace']
        securityContext: {runAsUser: 0}
        volumeMounts: [{name: workspace, mountPath: /workspace}]
      containers:
      - name: main
        image: $REG/cloneset-test/web:v1
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        resources:
          requests: {cpu: 10m, memory: 16Mi}
          limits: {cpu: 200m, memory: 64Mi}
        readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}
        volumeMounts: [{name: workspace, mountPath: /workspace}]
  volumeClaimTemplates:
  - metadata: {name: workspace}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
EOF
}
cloneset_web | kc apply -f - >/dev/null || fail "kubectl apply of the CloneSet web"
poll 180 "3 ready pods of web:v1 on $NODE" settled web 3
mapfile -t PODS < <(pods_of web)
declare -A BEFORE
for p in "${PODS[@]}"; do
  [ "$(kc get pod "$p" -o jsonpath='{.spec.nodeName}')" = "$NODE" ] || fail "$p is not on $NODE"
  [ "$(kc get pvc "workspace-$p" -o jsonpath='{.status.phase}')" = Bound ] || fail "claim workspace-$p is not Bound"
  kc exec "$p" -c main -- sh -c "echo $p > /workspace/marker" || fail "kubectl exec: writing the marker into $p's claim"
  BEFORE[$p]=$(pod_row "$p")
done
step "create-3"

digest_v2=$(skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://$REG/cloneset-test/web:v2") ||
  fail "skopeo inspect of web:v2"
watch_pods app=web "$TMP/watch-web"
patch_start=$EPOCHREALTIME
kc patch cloneset web --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\"$REG/cloneset-test/web:v2\"}]" \
  >/dev/null || fail "kubectl patch of the image"
poll 180 "3 pods updated in place to web:v2" settled web 3
stop_watch
echo "rollout of 3 pods (maxUnavailable 1): $(awk -v a="$patch_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
[ "$(pods_of web | tr '\n' ' ')" = "${PODS[*]} " ] || fail "the pods changed: before ${PODS[*]}, after $(pods_of web | tr '\n' ' ')"
for p in "${PODS[@]}"; do
  read -r uid0 ip0 pvc0 cid0 iid0 rc0 _ <<<"${BEFORE[$p]}"
  read -r uid1 ip1 pvc1 cid1 iid1 rc1 img1 <<<"$(pod_row "$p")"
  echo "$p: uid $uid1, ip $ip1, claim $pvc1, restarts $rc0 -> $rc1, container ${cid0:13:12} -> ${cid1:13:12}, image ${iid0##*@} -> ${iid1##*@}"
  [ "$uid1" = "$uid0" ] || fail "$p: UID changed ($uid0 -> $uid1): the pod was recreated, not updated in place"
  [ "$ip1" = "$ip0" ] || fail "$p: pod IP changed ($ip0 -> $ip1): the sandbox was recreated"
  [ "$pvc1" = "$pvc0" ] && [ "$pvc1" = "workspace-$p" ] || fail "$p: claim $pvc0 -> $pvc1"
  [ "$cid1" != "$cid0" ] || fail "$p: the container ID did not change: the kubelet did not restart it"
  [ "$iid1" != "$iid0" ] && [ "$iid1" = "$REG/cloneset-test/web@$digest_v2" ] ||
    fail "$p: imageID $iid0 -> $iid1, want $REG/cloneset-test/web@$digest_v2"
  [ "$img1" = "$REG/cloneset-test/web:v2" ] || fail "$p: status image $img1"
  [ "$rc1" = "$((rc0 + 1))" ] || fail "$p: restartCount $rc0 -> $rc1, want exactly one restart"
  [ "$(kc exec "$p" -c main -- cat /workspace/marker)" = "$p" ] || fail "$p: the marker in its claim is gone"
  # The gate went False once (the executor's update) and True once (the agent, after the restart); more flips are
  # a fight over the condition. Ready went False and ended True. The executor sets Ready False with the gate, as
  # upstream does, and the kubelet may set it True once more from its older view of the pod (seen: ~50 ms) before
  # it sees the gate; after the restart, Ready is never True while the gate is False.
  [ "$(condition_story "$TMP/watch-web" "$p" 6)" = "True False True " ] ||
    fail "$p: InPlaceUpdateReady went $(condition_story "$TMP/watch-web" "$p" 6)(want True False True); the watch: $(gate_story "$TMP/watch-web" "$p")"
  ready_story=$(condition_story "$TMP/watch-web" "$p" 5)
  [[ "$ready_story" == "True False "*"True " ]] ||
    fail "$p: Ready went $ready_story(want True, False, ..., True); the watch: $(gate_story "$TMP/watch-web" "$p")"
  awk -v p="$p" -v rc="|main|$((rc0 + 1))|" '$3 == p && index($0, rc) && $5 == "R=True" && $6 == "G=False" { bad = 1 } END { exit bad }' "$TMP/watch-web" ||
    fail "$p: Ready while InPlaceUpdateReady was False after the restart (watch: $TMP/watch-web)"
  # How long the gate was False: from the first False to the first True after it (watch arrival times).
  awk -v p="$p" '$3 == p && $6 == "G=False" && !f { f = $1 } $3 == p && f && $6 == "G=True" { printf "%s: in-place restart (gate False) %.2f s\n", p, $1 - f; exit }' "$TMP/watch-web"
done
# One revision per template: a revision whose data did not compare equal to its own template would be created anew.
revs=$(kc get controllerrevisions -l app=web --no-headers | wc -l)
collisions=$(kc get cloneset web -o jsonpath='{.status.collisionCount}')
[ "$revs" = 2 ] && [ "${collisions:-0}" = 0 ] ||
  fail "want 2 ControllerRevisions and no hash collision for 2 templates, got $revs and collisionCount '$collisions'"
most=$(unready_at_once "$TMP/watch-web")
[ "$most" = 1 ] || fail "maxUnavailable 1, but $most pods were unready at once (watch: $TMP/watch-web)"
# kubectl logs and exec through the API server to the kubelet (by InternalIP, client certificate).
p=${PODS[0]}
logs=$(kc logs "$p" -c main 2>&1) || true
grep -q 'response:200' <<<"$logs" || fail "kubectl logs $p: no request of the readiness probe logged; it printed: $(tail -n 5 <<<"$logs")"
logs=$(kc logs "$p" -c main --previous 2>&1) || true
grep -q 'response:200' <<<"$logs" || fail "kubectl logs --previous $p: the v1 container's log; it printed: $(tail -n 5 <<<"$logs")"
[ "$(kc exec "$p" -c main -- cat /www/index.html)" = "web v2" ] || fail "kubectl exec $p: index.html is not v2's"
[ "$(kc exec "$p" -c main -- id -u)" = 65534 ] || fail "kubectl exec $p: the container does not run as user 65534"
step "inplace-v1-v2"

# --- 2. the same image under a new tag ---------------------------------------------------------------------------
skopeo copy -q --src-tls-verify=false --dest-tls-verify=false "docker://$REG/cloneset-test/web:v2" \
  "docker://$REG/cloneset-test/web:v2-again" || fail "skopeo copy web:v2 -> web:v2-again"
# A second update of the same pods: each now carries the in-place state of the first, which must not pass for
# the new update's (the gate goes True only after this restart, one pod at a time).
watch_pods app=web "$TMP/watch-retag"
kc patch cloneset web --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\"$REG/cloneset-test/web:v2-again\"}]" \
  >/dev/null || fail "kubectl patch of the image to web:v2-again"
poll 180 "3 pods updated in place to web:v2-again (same image ID)" settled web 3 "$REG/cloneset-test/web:v2"
stop_watch
for p in "${PODS[@]}"; do
  read -r uid0 _ _ _ _ rc0 _ <<<"${BEFORE[$p]}"
  read -r uid1 _ _ _ iid1 rc1 img1 <<<"$(pod_row "$p")"
  echo "$p: after the retag the kubelet reports image $img1, imageID ${iid1##*@}"
  [ "$uid1" = "$uid0" ] || fail "$p: recreated by the retag update"
  [ "$iid1" = "$REG/cloneset-test/web@$digest_v2" ] || fail "$p: imageID $iid1, want v2's again"
  [ "$rc1" = "$((rc0 + 2))" ] || fail "$p: restartCount $rc1 after two updates, want $((rc0 + 2))"
  [ "$(condition_story "$TMP/watch-retag" "$p" 6)" = "True False True " ] ||
    fail "$p: InPlaceUpdateReady went $(condition_story "$TMP/watch-retag" "$p" 6)(want True False True)"
  # The gate went True only once the container restarted (restart count rc0 + 2 in the same event or before).
  awk -v p="$p" -v rc="|main|$((rc0 + 1))|" '$3 == p && index($0, rc) { if ($6 == "G=False") f = 1; else if (f && $6 == "G=True") bad = 1 } END { exit bad }' "$TMP/watch-retag" ||
    fail "$p: InPlaceUpdateReady went True before the container restarted: the first update's state passed for the second's (watch: $TMP/watch-retag)"
done
most=$(unready_at_once "$TMP/watch-retag")
[ "$most" -le 1 ] || fail "maxUnavailable 1, but $most pods were unready at once in the second update (watch: $TMP/watch-retag)"
step "inplace-same-image-new-tag"

# --- 3. containers restarted by priority, batch by batch -----------------------------------------------------------
cloneset_batches() {  # IMAGE_FIRST IMAGE_SECOND
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: batches
  labels: {app: batches}
spec:
  replicas: 2
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
  selector: {matchLabels: {app: batches}}
  template:
    metadata:
      labels: {app: batches}
    spec:
      nodeSelector: {type: real}
      tolerations: [{key: cloneset.test/real-node, operator: Exists, effect: NoSchedule}]
      dnsPolicy: Default
      terminationGracePeriodSeconds: 10
      containers:
      - name: first
        image: $1
        env: [{name: KRUISE_CONTAINER_PRIORITY, value: "10"}, {name: PORT, value: "8080"}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
        readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}
      - name: second
        image: $2
        env: [{name: KRUISE_CONTAINER_PRIORITY, value: "1"}, {name: PORT, value: "8081"}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
        readinessProbe: {httpGet: {path: /ready, port: 8081}, periodSeconds: 1}
EOF
}
cloneset_batches "$REG/cloneset-test/web:v1" "$REG/cloneset-test/web:v1" | kc apply -f - >/dev/null ||
  fail "kubectl apply of the CloneSet batches"
poll 120 "2 ready pods of batches" settled batches 2
mapfile -t BPODS < <(pods_of batches)
declare -A BUID
for p in "${BPODS[@]}"; do BUID[$p]=$(kc get pod "$p" -o jsonpath='{.metadata.uid}'); done
watch_pods app=batches "$TMP/watch-batches"
cloneset_batches "$REG/cloneset-test/web:v2" "$REG/cloneset-test/web:v2" | kc apply -f - >/dev/null ||
  fail "kubectl apply of batches on v2"
poll 180 "2 pods of batches updated in place to v2" settled batches 2
stop_watch
for p in "${BPODS[@]}"; do
  [ "$(kc get pod "$p" -o jsonpath='{.metadata.uid}')" = "${BUID[$p]}" ] || fail "$p was recreated"
  read -r r1 r2 s1 s2 < <(kc get pod "$p" -o jsonpath='{.status.containerStatuses[?(@.name=="first")].restartCount} {.status.containerStatuses[?(@.name=="second")].restartCount} {.status.containerStatuses[?(@.name=="first")].state.running.startedAt} {.status.containerStatuses[?(@.name=="second")].state.running.startedAt}{"\n"}')
  [ "$r1/$r2" = 1/1 ] || fail "$p: restarts first/second $r1/$r2, want 1/1"
  # startedAt has 1 s resolution: the watch below shows the order.
  [[ ! "$s2" < "$s1" ]] || fail "$p: 'second' (started $s2) started before 'first' ($s1)"
  # The watch saw 'first' restarted and ready while 'second' still ran its old container.
  grep " $p " "$TMP/watch-batches" | grep -q '|first second|1 0|true true|' ||
    fail "$p: never saw 'first' restarted and ready while 'second' had not restarted: $(grep " $p " "$TMP/watch-batches" | cut -d' ' -f7- | uniq | tr '\n' ' ')"
  batches=$(kc get pod "$p" -o jsonpath='{.metadata.annotations.apps\.kruise\.io/inplace-update-state}' |
    grep -o '"containers":\[[^]]*\]' | tr '\n' ' ')
  [ "$batches" = '"containers":["first"] "containers":["second"] ' ] ||
    fail "$p: want two batches, first then second, in the in-place state; got $batches"
done
step "inplace-priority-batches"

# --- 4. a crashing batch stops the rest -----------------------------------------------------------------------------
cloneset_batches "$REG/cloneset-test/web:crash" "$REG/cloneset-test/web:v1" | kc apply -f - >/dev/null ||
  fail "kubectl apply of batches with a crashing first container"
crashing=""
crash_started() {
  local p rc
  for p in "${BPODS[@]}"; do
    rc=$(kc get pod "$p" -o jsonpath='{.status.containerStatuses[?(@.name=="first")].restartCount}')
    [ "${rc:-0}" -ge 2 ] && [ "$(kc get pod "$p" -o jsonpath='{.spec.containers[0].image}')" = "$REG/cloneset-test/web:crash" ] &&
      { crashing=$p; return 0; }
  done
  return 1
}
poll 120 "a pod's 'first' container restarted on web:crash and crashing" crash_started
other=${BPODS[0]}; [ "$other" != "$crashing" ] || other=${BPODS[1]}
# A wait for something that must not happen: the second batch and the other pod stay as they are for 20 s.
sleep 20
read -r img2 r2 ready < <(kc get pod "$crashing" -o jsonpath='{.status.containerStatuses[?(@.name=="second")].image} {.status.containerStatuses[?(@.name=="second")].restartCount} {.status.conditions[?(@.type=="Ready")].status}{"\n"}')
[ "$img2" = "$REG/cloneset-test/web:v2" ] && [ "$r2" = 1 ] ||
  fail "$crashing: the second batch ran although the first crashes (second: image $img2, restarts $r2)"
[ "$ready" = False ] || fail "$crashing: Ready is $ready with a crash-looping container"
[ "$(kc get pod "$other" -o jsonpath='{.spec.containers[*].image}')" = "$REG/cloneset-test/web:v2 $REG/cloneset-test/web:v2" ] ||
  fail "$other was updated while $crashing is unavailable (maxUnavailable 1)"
[ "$(kc get cloneset batches -o jsonpath='{.status.updatedReadyReplicas}')" = 0 ] ||
  fail "the CloneSet counts an updated ready replica with the crashing image"
step "inplace-crashing-batch"
# --- 5. env-from-metadata and rollout restart: the agent restarts the container that reads the field ---------------
# A kubelet restarts nothing for a metadata change; the node's agent stops the container through CRI and the kubelet
# starts it again with the env of the pod's new metadata (agent/env_restart.h). 'side' reads no field: untouched.
cloneset_envs() {  # TIER
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: envs
  labels: {app: envs}
spec:
  replicas: 2
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
  selector: {matchLabels: {app: envs}}
  template:
    metadata:
      labels: {app: envs, tier: $1}
    spec:
      nodeSelector: {type: real}
      tolerations: [{key: cloneset.test/real-node, operator: Exists, effect: NoSchedule}]
      dnsPolicy: Default
      terminationGracePeriodSeconds: 5
      containers:
      - name: main
        image: $REG/cloneset-test/web:v1
        env:
        - {name: TIER, valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}}
        - {name: RESTARTED_AT, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['kubectl.kubernetes.io/restartedAt']"}}}
        resources: {requests: {cpu: 10m, memory: 16Mi}}
        readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}
      - name: side
        image: $REG/cloneset-test/web:v1
        env: [{name: PORT, value: "8081"}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
EOF
}
# env_row POD: "uid mainContainerID mainRestarts sideContainerID sideRestarts"
env_row() {
  kc get pod "$1" -o jsonpath='{.metadata.uid} {.status.containerStatuses[?(@.name=="main")].containerID} {.status.containerStatuses[?(@.name=="main")].restartCount} {.status.containerStatuses[?(@.name=="side")].containerID} {.status.containerStatuses[?(@.name=="side")].restartCount}'
}
main_env_is() { [ "$(kc exec "$1" -c main -- sh -c "echo \"\$$2\"" 2>/dev/null)" = "$3" ]; }
all_main_env_is() { local p; for p in "${EPODS[@]}"; do main_env_is "$p" "$1" "$2" || return 1; done; }
# check_env_restarts WHAT: per pod of envs, since EBEFORE: same UID, main restarted exactly once, side untouched.
check_env_restarts() {
  local p uid0 cid0 rc0 scid0 src0 uid1 cid1 rc1 scid1 src1
  for p in "${EPODS[@]}"; do
    read -r uid0 cid0 rc0 scid0 src0 <<<"${EBEFORE[$p]}"
    read -r uid1 cid1 rc1 scid1 src1 <<<"$(env_row "$p")"
    echo "$p ($1): main restarts $rc0 -> $rc1, container ${cid0:13:12} -> ${cid1:13:12}; side restarts $src0 -> $src1"
    [ "$uid1" = "$uid0" ] || fail "$p: recreated by $1 (uid $uid0 -> $uid1)"
    [ "$cid1" != "$cid0" ] && [ "$rc1" = "$((rc0 + 1))" ] || fail "$p: main restarts $rc0 -> $rc1 after $1, want exactly one"
    [ "$scid1" = "$scid0" ] && [ "$src1" = "$src0" ] || fail "$p: side was restarted by $1 although it reads no field"
    EBEFORE[$p]="$uid1 $cid1 $rc1 $scid1 $src1"
  done
}
cloneset_envs gold | kc apply -f - >/dev/null || fail "kubectl apply of the CloneSet envs"
poll 120 "2 ready pods of envs" settled envs 2
mapfile -t EPODS < <(pods_of envs)
declare -A EBEFORE
for p in "${EPODS[@]}"; do EBEFORE[$p]=$(env_row "$p"); done
all_main_env_is TIER gold || fail "main does not see TIER=gold before the update"
env_start=$EPOCHREALTIME
kc patch cloneset envs --type=json -p '[{"op":"replace","path":"/spec/template/metadata/labels/tier","value":"silver"}]' \
  >/dev/null || fail "kubectl patch of the tier label"
poll 120 "every pod's main container restarted with TIER=silver" all_main_env_is TIER silver
poll 60 "envs settled after the label change" settled envs 2
echo "env-from-metadata update of 2 pods: $(awk -v a="$env_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
check_env_restarts "the label change"
grep -q 'RestartingContainer' <(kc get events --field-selector "involvedObject.name=${EPODS[0]}" -o jsonpath='{.items[*].reason}') ||
  fail "no RestartingContainer event from the agent on ${EPODS[0]}"
# clonesetctl rollout restart stamps kubectl.kubernetes.io/restartedAt on the template; main reads it.
"$BUILD_DIR/bin/clonesetctl" --kubeconfig "$RUN_DIR/kubeconfig" rollout restart envs >/dev/null ||
  fail "clonesetctl rollout restart envs"
stamp=$(kc get cloneset envs -o jsonpath='{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}')
[ -n "$stamp" ] || fail "rollout restart left no restartedAt annotation on the template"
poll 120 "every pod's main container restarted with RESTARTED_AT=$stamp" all_main_env_is RESTARTED_AT "$stamp"
poll 60 "envs settled after rollout restart" settled envs 2
check_env_restarts "rollout restart"
step "inplace-env-from-metadata"

# --- 6. image pre-download through the agent and the real containerd ------------------------------------------------
# Two images of the same size (a layer of random data each): 'pd' pre-downloads its new image while a partition holds
# every pod (the job's parallelism annotation set), then rolls; 'nopd' rolls at once and pulls during the update.
# 4 replicas each: upstream (and we) create no pull job for 3 or fewer.
# The pre-downloaded image must be in the node's containerd before any pod is patched, and the rollout faster.
PD_MIB=${PD_MIB:-600}
# real_image_sized of the real node's scripts, on this run directory's registry.
real_image_sized_cmd() { (source "$SRC/tools/run.d/real_node.sh" && real_image_sized "$RUN_DIR/real" "$1"); }
img_pd=$(real_image_sized_cmd "$PD_MIB") || fail "making the pre-download image"
img_nopd=$(real_image_sized_cmd "$((PD_MIB + 1))") || fail "making the second sized image"
node_has_image() { ctr --address "$RUN_DIR/real/nodes/$NODE/containerd.sock" -n k8s.io images ls -q | grep -qx "$1"; }
node_has_image "$img_pd" && fail "$img_pd is on the node before the test"
cloneset_pd() {  # NAME PARTITION IMAGE [ANNOTATION]
  cat <<EOF
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: $1
  labels: {app: $1}
  annotations: {${4:-}}
spec:
  replicas: 4
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1, partition: $2}
  selector: {matchLabels: {app: $1}}
  template:
    metadata:
      labels: {app: $1}
    spec:
      nodeSelector: {type: real}
      tolerations: [{key: cloneset.test/real-node, operator: Exists, effect: NoSchedule}]
      dnsPolicy: Default
      terminationGracePeriodSeconds: 5
      containers:
      - name: main
        image: $3
        resources: {requests: {cpu: 10m, memory: 16Mi}}
        readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 1}
EOF
}
PD_ANN='apps.kruise.io/image-predownload-parallelism: "1"'
cloneset_pd pd 4 "$REG/cloneset-test/web:v1" "$PD_ANN" | kc apply -f - >/dev/null || fail "apply pd"
cloneset_pd nopd 0 "$REG/cloneset-test/web:v1" | kc apply -f - >/dev/null || fail "apply nopd"
poll 120 "4 ready pods of pd" settled pd 4
poll 120 "4 ready pods of nopd" settled nopd 4
# Pre-download: the partition keeps both pods on v1; the planner creates the ImagePullJob, the agent pulls.
pull_start=$EPOCHREALTIME
cloneset_pd pd 4 "$img_pd" "$PD_ANN" | kc apply -f - >/dev/null || fail "apply pd with the new image"
poll 180 "$img_pd pre-downloaded into the node's containerd" node_has_image "$img_pd"
echo "pre-download of $PD_MIB MiB by the agent: $(awk -v a="$pull_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
[ "$(kc get pods -l app=pd -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u)" = "$REG/cloneset-test/web:v1" ] ||
  fail "a pd pod was patched before the pre-download finished (partition 4)"
kc get imagepulljobs -o name | grep -q . || fail "no ImagePullJob for pd"
t0=$EPOCHREALTIME
cloneset_pd pd 0 "$img_pd" "$PD_ANN" | kc apply -f - >/dev/null || fail "apply pd partition 0"
poll 180 "pd rolled out in place" settled pd 4
t_pd=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
t0=$EPOCHREALTIME
cloneset_pd nopd 0 "$img_nopd" | kc apply -f - >/dev/null || fail "apply nopd with the new image"
poll 180 "nopd rolled out in place" settled nopd 4
t_nopd=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
echo "in-place rollout of 4 pods to a $PD_MIB MiB image: with pre-download $t_pd s, without $t_nopd s"
awk -v a="$t_pd" -v b="$t_nopd" 'BEGIN { exit !(a < b) }' ||
  fail "the rollout with the image pre-downloaded ($t_pd s) was not faster than without ($t_nopd s)"
step "predownload"
echo "timing: total (without down) $((SECONDS - START)) s"
echo "PASS"
