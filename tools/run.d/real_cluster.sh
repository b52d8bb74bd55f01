# The real-cluster backend of `./run up --cluster real`: a Kubernetes 1.34 control plane built from the pinned Go
# modules under tools/go/ (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), kwok playing the kubelet
# of N fake nodes, and our test volume provisioner. Everything listens on 127.0.0.1 on free ports and lives under
# $RUN_DIR/real/ (data, certificates); logs and pid files sit beside the other components' in $RUN_DIR.
# Sourced by up.sh/down.sh (uses their _start, _stop, _alive, _wait_for and ./run's go_tool and log).
#
# real_cluster_up NODES [REAL_NODES]  starts what is not running, waits for /readyz, Ready nodes and the default
#                         service account, and prints the admin kubeconfig path ($RUN_DIR/kubeconfig).
#                         REAL_NODES (default 0) real nodes (kubelet + containerd) join beside the kwok nodes
#                         (tools/run.d/real_node.sh).
#                         Then installs the chart's ServiceAccounts and RBAC (real_cluster_identities) and
#                         writes one kubeconfig per component that talks to the API server, with a token of
#                         that component's ServiceAccount: $RUN_DIR/kubeconfig-executor, $RUN_DIR/kubeconfig-agent.
# real_cluster_down DIR [1]  stops it, the node side first and etcd last; with 1 (--purge) also discards its
#                         data (etcd, certificates, ports), so the next start is a new cluster.

# shellcheck source=/dev/null
source "$ROOT/tools/run.d/real_node.sh"
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/real_services.sh"  # kube-proxy, CoreDNS, API relay of the real nodes

# Components in start order; real_cluster_down stops them in reverse (after the real nodes, real_node.sh).
REAL_CLUSTER_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok provisioner conversion-webhook)
# Service addresses: written into Services only, never routed.
REAL_SERVICE_CIDR=10.96.0.0/16
REAL_SERVICE_IP=10.96.0.1

# _real_free_port [TAKEN...]: a TCP port on 127.0.0.1 that nothing answers on and that is none of TAKEN, below the
# kernel's ephemeral range (32768+) so an outgoing connection cannot take it between this check and the bind.
_real_free_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + RANDOM % 12000))
    [[ " $* " == *" $p "* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "real cluster: no free port found on 127.0.0.1" >&2
  return 1
}

# _real_pki DIR: CA, API server serving certificate (127.0.0.1, localhost, the kubernetes Service names and IP),
# service-account signing key pair, admin token. Kept across restarts so that issued tokens stay valid.
_real_pki() {
  local pki="$1/pki"
  [ -f "$pki/done" ] && return 0
  mkdir -p "$pki"
  command -v openssl >/dev/null || { echo "real cluster: openssl is required (./run deps installs it)" >&2; return 1; }
  (
    set -e
    cd "$pki"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt \
      -days 3650 -subj "/CN=cloneset-real-cluster-ca" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    printf '%s\n' "subjectAltName=IP:127.0.0.1,IP:$REAL_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 \
      -extfile apiserver.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # token,user,uid,"groups": the admin of this private cluster (system:masters bypasses RBAC).
    printf '%s,cloneset-admin,cloneset-admin,"system:masters"\n' "$(openssl rand -hex 24)" >tokens.csv
    chmod 600 ./*.key tokens.csv
    touch done
  ) || { echo "real cluster: creating certificates in $pki failed" >&2; return 1; }
}

# _real_write_kubeconfig CA PORT CONTEXT USER TOKEN OUT: a kubeconfig (mode 600, replaced atomically) for the API
# server on 127.0.0.1:PORT with the CA embedded and USER's bearer token: the admin's and each component's.
_real_write_kubeconfig() {
  local ca="$1" port="$2" context="$3" user="$4" token="$5" out="$6"
  cat >"$out.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 "$ca")
users:
- name: "$user"
  user:
    token: $token
contexts:
- name: $context
  context: {cluster: real, user: "$user"}
current-context: $context
EOF
  chmod 600 "$out.tmp"
  mv "$out.tmp" "$out"
}

# _real_cert_kubeconfig CA PORT CONTEXT USER CERT KEY OUT: a kubeconfig (mode 600) for the API server on
# 127.0.0.1:PORT that authenticates with a client certificate: the real nodes' kubelets and the node services.
_real_cert_kubeconfig() {
  local ca="$1" port="$2" context="$3" user="$4" cert="$5" key="$6" out="$7"
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: $ca
users:
- name: "$user"
  user:
    client-certificate: $cert
    client-key: $key
contexts:
- name: $context
  context: {cluster: real, user: "$user"}
current-context: $context
EOF
  chmod 600 "$out"
}

# _real_kubeconfig DIR PORT OUT: admin kubeconfig with the CA embedded and the admin bearer token.
_real_kubeconfig() {
  local pki="$1/pki" port="$2" out="$3" token
  token=$(cut -d, -f1 "$pki/tokens.csv")
  _real_write_kubeconfig "$pki/ca.crt" "$port" real cloneset-admin "$token" "$out"
}

# _real_nodes N: the fake nodes, Node objects kwok manages (annotation kwok.x-k8s.io/node=fake). Capacity is
# large enough for the seeds' pods (1 CPU, 2Gi each) at the replica counts the tests use.
_real_nodes() {
  local n="$1" i
  for ((i = 0; i < n; i++)); do
    cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 1Ti}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 1Ti}
---
EOF
  done
}

# The default StorageClass for claims that name none; WaitForFirstConsumer as on most real clusters, so the
# scheduler's volume binding is exercised too. The seeds' classes (kubernetes.io/aws-ebs) are served as well.
_REAL_DEFAULT_CLASS='apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: cloneset.test/hostpath-provisioner
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer'

# kube-scheduler's configuration. An unschedulable pod waits in the scheduler's unschedulable pool until a cluster
# event its rejecting plugin registered for (for VolumeBinding: a claim or volume change) moves it back, or until
# --pod-max-in-unschedulable-pods-duration (default 5 min) has passed, checked every 30 s. The event can be missed:
# real.e2e once saw a pod stay Pending for more than 240 s after its claim was Bound, its last attempt having read
# the claim as still unbound. With 5 s (a flag only; KubeSchedulerConfiguration has no field for it) such a pod is
# retried within about 35 s whatever happens; the back-off between retries is 1-2 s instead of 1-10 s. Test clusters
# only: a large cluster with many unschedulable pods would pay for the retries.
_REAL_SCHEDULER_CONFIG='apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "@KUBECONFIG@"}
leaderElection: {leaderElect: false}
enableProfiling: false
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 2'

# REAL_AUDIT_LOG=1 (environment of `./run up --cluster real`): kube-apiserver also writes an audit log of every
# write request (one JSON line per answered create/update/patch/delete, with user, userAgent, resource,
# subresource and code; leases left out) to $RUN_DIR/kube-apiserver-audit.log. apiserver_request_total has no
# client label, so bench/writes_per_pod.sh and bench/executor_rollout.sh use it to tell the executor's writes
# from the controller manager's, the scheduler's and kwok's.
_REAL_AUDIT_POLICY='apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None'

# REAL_PROFILING=1 (environment of `./run up --cluster real`): kube-apiserver serves Go's /debug/pprof (with
# --profiling=true; an authenticated admin reads it) and etcd serves it on its client URL (--enable-pprof), so a
# benchmark can take CPU profiles of both (bench/executor_rollout.sh PROFILE_DIR). Off by default, as in production
# hardening guides (kube-bench): a profile endpoint is a denial-of-service surface.
_real_profiling() { [ "${REAL_PROFILING:-0}" = 1 ] && echo true || echo false; }

# _real_nodes_ready KUBECONFIG N: the cluster's kwok nodes are N or more, all Ready.
_real_nodes_ready() {
  kubectl --kubeconfig "$1" get nodes -l type=kwok \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
    awk -v n="$2" '$1 == "True" { ready++ } $1 != "True" { other++ } END { exit !(ready >= n && other == 0) }'
}

# _real_ok_or_dead NAME COMMAND...: COMMAND succeeds, or NAME's process is gone (no point waiting longer).
_real_ok_or_dead() { local name="$1"; shift; "$@" || ! _alive "$name"; }

# _real_wait SECONDS NAME DESCRIPTION COMMAND...: waits until COMMAND succeeds; fails at once with the end of
# NAME's log when NAME exits meanwhile (e.g. its port was taken between the choice and the bind).
_real_wait() {
  local secs="$1" name="$2" what="$3"; shift 3
  _wait_for "$secs" "$what" _real_ok_or_dead "$name" "$@" || return 1
  if ! _alive "$name"; then
    echo "up: $name exited; its log ($(_run_dir)/$name.log) ends with:" >&2
    tail -n 5 "$(_run_dir)/$name.log" >&2
    return 1
  fi
}

# The chart's identities on the real control plane (docs/testing.md, "Identities"). Release REAL_RELEASE of
# charts/cloneset, installed by real Helm with workloads.enabled=false (ServiceAccounts and RBAC only: the
# components run here as processes, not as kwok pods) and the agent's RBAC on. Its own release name, so that a
# test's `helm install cloneset` of the whole chart (chart.helm_install_real) does not meet objects of another
# release: every name is derived from the release's.
REAL_RELEASE=cloneset-local
REAL_NAMESPACE=cloneset-system
# Components whose processes call the API server. The planner is not one: it never talks to the API server (the
# chart mounts no token into its pods, and binds it no role).
REAL_API_COMPONENTS=(executor agent)
# TokenRequest duration: longer than any test run. kube-apiserver grants what is asked unless
# --service-account-max-token-expiration caps it (not set here); _real_sa_kubeconfig checks what was granted.
REAL_TOKEN_DURATION=12h
# A token with less left than this is replaced at the next `./run up` (running components keep the old one,
# which stays valid until it expires).
REAL_TOKEN_MIN_LEFT=$((6 * 3600))

# _real_jwt_exp TOKEN: the exp claim (Unix seconds) of a JWT.
_real_jwt_exp() {
  local payload; payload=$(cut -d. -f2 <<<"$1" | tr '_-' '/+')
  while [ $((${#payload} % 4)) != 0 ]; do payload="$payload="; done
  base64 -d <<<"$payload" 2>/dev/null | grep -o '"exp":[0-9]*' | cut -d: -f2
}

# _real_sa_kubeconfig DIR PORT COMPONENT OUT: kubeconfig of COMPONENT's ServiceAccount (token from the TokenRequest
# API, kubectl create token). A kept token with at least REAL_TOKEN_MIN_LEFT seconds left is reused.
_real_sa_kubeconfig() {
  local real="$1" port="$2" component="$3" out="$4"
  local sa="$REAL_RELEASE-$component" tokf="$real/tokens/$component" token="" exp now
  now=$(date +%s)
  if [ -s "$tokf" ]; then
    token=$(cat "$tokf"); exp=$(_real_jwt_exp "$token")
    [ -n "$exp" ] && [ $((exp - now)) -ge "$REAL_TOKEN_MIN_LEFT" ] || token=""
    # A token dies with its ServiceAccount (a reinstalled release has new ones): ask the API server.
    [ -z "$token" ] || kubectl --kubeconfig "$(_run_dir)/kubeconfig" --token="$token" auth whoami \
      >/dev/null 2>&1 || token=""
  fi
  if [ -z "$token" ]; then
    token=$(kubectl --kubeconfig "$(_run_dir)/kubeconfig" -n "$REAL_NAMESPACE" create token "$sa" \
      --duration="$REAL_TOKEN_DURATION") ||
      { echo "up: TokenRequest for ServiceAccount $REAL_NAMESPACE/$sa failed" >&2; return 1; }
    exp=$(_real_jwt_exp "$token")
    [ -n "$exp" ] && [ $((exp - now)) -ge "$REAL_TOKEN_MIN_LEFT" ] || {
      echo "up: the API server granted the $sa token only $(( ${exp:-$now} - now )) s (asked $REAL_TOKEN_DURATION)" >&2
      return 1
    }
    mkdir -p "$real/tokens"; chmod 700 "$real/tokens"
    (umask 077; printf '%s\n' "$token" >"$tokf")
  fi
  _real_write_kubeconfig "$real/pki/ca.crt" "$port" "real-$component" \
    "system:serviceaccount:$REAL_NAMESPACE:$sa" "$token" "$out"
}

# real_cluster_identities DIR PORT: `helm upgrade --install` of the chart's ServiceAccounts and RBAC (values in
# tools/run.d/real-chart-values.yaml; CRDs skipped: ./run up applies them), then one kubeconfig per component of
# REAL_API_COMPONENTS ($RUN_DIR/kubeconfig-<component>).
real_cluster_identities() {
  local real="$1/real" port="$2" helm c sum
  helm=$(toolchain_path helm) || return 1
  # A restart with the same chart and values keeps the release as it is (an upgrade costs about 5 s and a revision).
  sum=$(cd "$ROOT" && find charts/cloneset tools/run.d/real-chart-values.yaml -type f -print0 | sort -z |
    xargs -0 sha256sum | sha256sum | cut -c1-16)
  if [ "$(cat "$real/identities.sum" 2>/dev/null)" != "$sum" ] ||
    ! "$helm" status "$REAL_RELEASE" --kubeconfig "$1/kubeconfig" --namespace "$REAL_NAMESPACE" >/dev/null 2>&1; then
    rm -f "$real/identities.sum"
    # The namespace as ./run up applies it (kubectl apply), not helm's --create-namespace: one owner, no warning.
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$REAL_NAMESPACE" |
      kubectl --kubeconfig "$1/kubeconfig" apply -f - >/dev/null || return 1
    "$helm" upgrade --install "$REAL_RELEASE" "$ROOT/charts/cloneset" --kubeconfig "$1/kubeconfig" \
      --namespace "$REAL_NAMESPACE" --skip-crds \
      -f "$ROOT/tools/run.d/real-chart-values.yaml" --wait --timeout 2m >"$real/helm.log" 2>&1 ||
      { echo "up: helm install of the chart's RBAC failed:" >&2; tail -n 20 "$real/helm.log" >&2; return 1; }
    echo "$sum" >"$real/identities.sum"
  fi
  for c in "${REAL_API_COMPONENTS[@]}"; do
    _real_sa_kubeconfig "$real" "$port" "$c" "$1/kubeconfig-$c" || return 1
  done
}

# real_component_start DIR NAME: starts control-plane component NAME (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok, provisioner) of DIR's cluster with the ports of DIR/real/ports and the data under DIR/real,
# unless it runs already (_start); waits until etcd is healthy and kube-apiserver ready. The one place that builds
# each component's command line: real_cluster_up starts them all with it, real_cluster_restart one in place.
real_component_start() {
  local dir="$1" name="$2" real="$1/real" pki="$1/real/pki" kubeconfig="$1/kubeconfig" bin
  # shellcheck source=/dev/null
  source "$ROOT/tools/run.d/toolchain.sh"
  # shellcheck source=/dev/null
  source "$real/ports"
  case "$name" in
    provisioner) bin=$(toolchain_path cloneset-test-provisioner) || return 1 ;;
    etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok) bin=$(toolchain_path "$name") || return 1 ;;
    *) echo "real cluster: no component '$name' (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, provisioner)" >&2
      return 2 ;;
  esac
  case "$name" in
    etcd)
      # --unsafe-no-fsync: test data only; fsync on a busy 2-core machine makes etcd's 100 ms heartbeats miss.
      _start etcd "$bin" --name=real --data-dir="$real/etcd" \
        --listen-client-urls="http://127.0.0.1:$ETCD_CLIENT" --advertise-client-urls="http://127.0.0.1:$ETCD_CLIENT" \
        --listen-peer-urls="http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER" \
        --initial-cluster="real=http://127.0.0.1:$ETCD_PEER" --unsafe-no-fsync --log-level=warn \
        --enable-pprof="$(_real_profiling)"
      _real_wait 60 etcd "etcd" curl -sf "http://127.0.0.1:$ETCD_CLIENT/health" ;;
    kube-apiserver)
      local audit=()
      if [ "${REAL_AUDIT_LOG:-0}" = 1 ]; then
        printf '%s\n' "$_REAL_AUDIT_POLICY" >"$real/audit-policy.yaml"
        audit=(--audit-policy-file="$real/audit-policy.yaml" --audit-log-path="$dir/kube-apiserver-audit.log"
          --audit-log-format=json --audit-log-mode=blocking)
      fi
      # --etcd-compaction-interval=30s (the first compaction lands two intervals after start): watches of clients
      # that fall behind meet compacted revisions ("410 Gone") within a test's lifetime, as on a long-running cluster.
      # --endpoint-reconciler-type=none: the only address is loopback, which Endpoints may not hold.
      # --kubelet-*: logs, exec and port-forward on the real nodes: the API server calls a kubelet at its InternalIP
      # (by default its Hostname first, a DNS lookup that would leave the machine), checks its serving certificate
      # against the cluster CA and presents a client certificate the kubelet's webhook authorization allows.
      _start kube-apiserver "$bin" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
        --secure-port="$APISERVER" --cert-dir="$real/apiserver-certs" \
        --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" --client-ca-file="$pki/ca.crt" \
        --token-auth-file="$pki/tokens.csv" --authorization-mode=Node,RBAC --anonymous-auth=false \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
        --service-cluster-ip-range="$REAL_SERVICE_CIDR" --etcd-servers="http://127.0.0.1:$ETCD_CLIENT" \
        --etcd-compaction-interval=30s --endpoint-reconciler-type=none --allow-privileged=true \
        --profiling="$(_real_profiling)" \
        --kubelet-preferred-address-types=InternalIP --kubelet-certificate-authority="$pki/ca.crt" \
        --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key="$pki/apiserver-kubelet-client.key" "${audit[@]}"
      _real_wait 180 kube-apiserver "kube-apiserver /readyz" kubectl --kubeconfig "$kubeconfig" get --raw /readyz ;;
    kube-controller-manager)
      _start kube-controller-manager "$bin" --kubeconfig="$kubeconfig" --secure-port=0 --leader-elect=false \
        --use-service-account-credentials=true --root-ca-file="$pki/ca.crt" \
        --service-account-private-key-file="$pki/sa.key" --cluster-signing-cert-file="$pki/ca.crt" \
        --cluster-signing-key-file="$pki/ca.key" --controllers='*' --profiling=false ;;
    kube-scheduler)
      # The scheduler's retries (see _REAL_SCHEDULER_CONFIG); -v=2 logs each attempt ("Unable to schedule pod; no
      # fit; waiting", "Successfully bound pod to node"), which real.claims_wait counts.
      printf '%s\n' "$_REAL_SCHEDULER_CONFIG" | sed "s#@KUBECONFIG@#$kubeconfig#" >"$real/kube-scheduler.yaml"
      _start kube-scheduler "$bin" --config="$real/kube-scheduler.yaml" --secure-port=0 \
        --pod-max-in-unschedulable-pods-duration=5s -v=2 ;;
    kwok)
      _start kwok "$bin" --kubeconfig="$kubeconfig" --config="$ROOT/tools/go/kwok/pod-stages.yaml" \
        --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
        --node-lease-duration-seconds=40 --cidr=10.244.0.1/16 --node-ip=10.255.0.1 ;;
    provisioner)
      _start provisioner "$bin" --kubeconfig="$kubeconfig" --root="$real/volumes" ;;
  esac
}

# real_cluster_restart DIR NAME [SIGNAL]: restarts control-plane component NAME of DIR's running cluster in place:
# stops it (SIGTERM and up to 15 s, or at once with SIGNAL KILL), then starts it again by real_component_start on
# the same ports, data directory and flags (the audit log and profiling stay on when they were on), and waits as ./run up does.
# The other components keep running: what a component crash or an upgrade of one of them does to its clients.
real_cluster_restart() {
  local dir="$1" name="$2" signal="${3:-TERM}" c known=0
  for c in "${REAL_CLUSTER_COMPONENTS[@]}"; do [ "$c" != "$name" ] || known=1; done
  [ "$known" = 1 ] && [ "$name" != conversion-webhook ] ||
    { echo "restart: no component '$name' (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, provisioner)" >&2; return 2; }
  [ -f "$dir/real/ports" ] && _alive "$name" ||
    { echo "restart: $name is not running in $dir (./run up --cluster real starts it)" >&2; return 1; }
  local REAL_AUDIT_LOG="${REAL_AUDIT_LOG:-0}" REAL_PROFILING="${REAL_PROFILING:-0}"
  if [ "$name" = kube-apiserver ] && grep -q -- '--audit-policy-file' "$dir/kube-apiserver.cmd" 2>/dev/null; then
    REAL_AUDIT_LOG=1
  fi
  if grep -q -- '--profiling=true\|--enable-pprof=true' "$dir/$name.cmd" 2>/dev/null; then REAL_PROFILING=1; fi
  case "$signal" in
    TERM) _stop "$name" ;;
    KILL) local pid; pid=$(cat "$dir/$name.pid")
      kill -KILL "$pid" 2>/dev/null || true
      local deadline=$((SECONDS + 30))
      while _pid_alive "$pid"; do
        [ $SECONDS -lt $deadline ] || { echo "restart: $name (pid $pid) still runs 30 s after SIGKILL" >&2; return 1; }
        sleep 0.1
      done
      rm -f "$dir/$name.pid"; log "restart: killed $name (pid $pid)" ;;
    *) echo "restart: the signal must be TERM or KILL, got '$signal'" >&2; return 2 ;;
  esac
  real_component_start "$dir" "$name"
}

real_cluster_up() {
  local nodes="${1:-3}" real_nodes="${2:-0}" dir real
  dir="$(_run_dir)"; real="$dir/real"
  [[ "$nodes" =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le 100 ] ||
    { echo "up: --nodes must be a number from 1 to 100 for the real cluster, got '$nodes'" >&2; return 2; }
  [[ "$real_nodes" =~ ^[0-9]+$ ]] && [ "$real_nodes" -le 20 ] ||
    { echo "up: --real-nodes must be a number from 0 to 20, got '$real_nodes'" >&2; return 2; }
  mkdir -p "$real"
  # shellcheck source=/dev/null
  source "$ROOT/tools/run.d/toolchain.sh"
  _real_pki "$real" || return 1
  real_apiserver_kubelet_client "$real/pki" || return 1
  local kubeconfig="$dir/kubeconfig"

  # Ports are chosen once per run directory and reused on restart, so clients keep a working kubeconfig.
  if [ ! -f "$real/ports" ] || ! { _alive etcd || _alive kube-apiserver; }; then
    local etcd_client etcd_peer apiserver_port
    etcd_client=$(_real_free_port) && etcd_peer=$(_real_free_port "$etcd_client") &&
      apiserver_port=$(_real_free_port "$etcd_client" "$etcd_peer") || return 1
    printf 'ETCD_CLIENT=%s\nETCD_PEER=%s\nAPISERVER=%s\n' "$etcd_client" "$etcd_peer" "$apiserver_port" \
      >"$real/ports"
  fi
  # shellcheck source=/dev/null
  source "$real/ports"
  _real_kubeconfig "$real" "$APISERVER" "$kubeconfig"

  local c
  for c in etcd kube-apiserver kube-controller-manager kube-scheduler kwok provisioner; do
    real_component_start "$dir" "$c" || return 1
  done
  local kc=(kubectl --kubeconfig "$kubeconfig")

  _real_nodes "$nodes" | "${kc[@]}" apply -f - >/dev/null || { echo "up: creating the kwok nodes failed" >&2; return 1; }
  printf '%s\n' "$_REAL_DEFAULT_CLASS" | "${kc[@]}" apply -f - >/dev/null ||
    { echo "up: creating the default StorageClass failed" >&2; return 1; }
  # Counted from one list: `kubectl wait` checks the nodes one after the other within its one timeout, which
  # 100 nodes do not fit in. kwok makes its nodes Ready a few a second (its client's rate limit), so the wait
  # grows with the count.
  _real_wait $((120 + 3 * nodes)) kwok "$nodes kwok nodes Ready" _real_nodes_ready "$kubeconfig" "$nodes" ||
    return 1
  # The service-account controller (kube-controller-manager) creates `default` in every namespace; pods are
  # refused until it exists, so this is also the controller manager's liveness check.
  _real_wait 120 kube-controller-manager "kube-controller-manager (the default service account)" \
    "${kc[@]}" get serviceaccount default || return 1
  real_cluster_identities "$dir" "$APISERVER" || return 1
  real_nodes_up "$real" "$real_nodes" "$APISERVER" || return 1
  real_services_up "$real" "$real_nodes" "$APISERVER" || return 1
  echo "$kubeconfig"
}

# real_webhook_up DIR: the CloneSet CRD's conversion webhook for kube-apiserver, a cloneset-planner of its own
# (component conversion-webhook, no planning traffic) on https://127.0.0.1:<WEBHOOK in real/ports>/convert with a
# serving certificate of the cluster CA. The port is chosen once per run directory, so the CRD keeps pointing at it
# across restarts.
real_webhook_up() {
  local dir="$1" real="$1/real" pki="$1/real/pki"
  if [ ! -f "$pki/webhook.crt" ]; then
    (
      set -e
      cd "$pki"
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout webhook.key -out webhook.csr \
        -subj "/CN=cloneset-conversion-webhook" 2>/dev/null
      printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:cloneset-planner.cloneset-system.svc" \
        "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >webhook.ext
      openssl x509 -req -in webhook.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out webhook.crt -days 3650 \
        -extfile webhook.ext 2>/dev/null
      chmod 600 webhook.key
    ) || { echo "up: creating the conversion webhook's certificate in $pki failed" >&2; return 1; }
  fi
  # shellcheck source=/dev/null
  source "$real/ports"
  if [ -z "${WEBHOOK:-}" ]; then
    WEBHOOK=$(_real_free_port "$ETCD_CLIENT" "$ETCD_PEER" "$APISERVER") || return 1
    printf 'WEBHOOK=%s\n' "$WEBHOOK" >>"$real/ports"
  fi
  [ -x "$BUILD_DIR/bin/cloneset-planner" ] || cmd_build --target cloneset-planner
  _start conversion-webhook "$BUILD_DIR/bin/cloneset-planner" --listen=127.0.0.1:0 --metrics_listen= \
    --conversion_listen="127.0.0.1:$WEBHOOK" --conversion_tls_cert="$pki/webhook.crt" \
    --conversion_tls_key="$pki/webhook.key"
  local review='{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"up","desiredAPIVersion":"apps.kruise.io/v1beta1","objects":[]}}'
  _real_wait 30 conversion-webhook "the conversion webhook" \
    curl -sf --cacert "$pki/ca.crt" "https://127.0.0.1:$WEBHOOK/convert" -d "$review" || return 1
}

# real_point_crd_at_webhook DIR: the CloneSet CRD's conversion pointed at DIR's webhook (kube-apiserver calls it by
# URL: its Service would need a route to 127.0.0.1). Run after every (re)creation of the CRD.
real_point_crd_at_webhook() {
  local dir="$1" real="$1/real"
  # shellcheck source=/dev/null
  source "$real/ports"
  [ -n "${WEBHOOK:-}" ] || { echo "up: no conversion webhook in $dir (./run up --cluster real starts it)" >&2; return 1; }
  local ca patch
  ca=$(base64 -w0 "$real/pki/ca.crt")
  patch=$(printf '{"spec":{"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"service":null,"url":"https://127.0.0.1:%s/convert","caBundle":"%s"}}}}}' "$WEBHOOK" "$ca")
  kubectl --kubeconfig "$dir/kubeconfig" patch crd clonesets.apps.kruise.io --type=merge -p "$patch" >/dev/null ||
    { echo "up: pointing the CloneSet CRD at the conversion webhook failed" >&2; return 1; }
}

real_cluster_down() {
  local dir="$1" purge="${2:-0}" i
  [ ! -d "$dir/real" ] || real_services_down "$dir/real"
  [ ! -d "$dir/real" ] || real_nodes_down "$dir/real"
  for ((i = ${#REAL_CLUSTER_COMPONENTS[@]} - 1; i >= 0; i--)); do
    _stop "${REAL_CLUSTER_COMPONENTS[$i]}"
  done
  if [ "$purge" = 1 ] && [ -d "$dir/real" ]; then
    # Never through a mount: what a real node left mounted (real_node_down said what) is kept.
    if [ -n "$(_rn_mounts_under "$dir/real")" ]; then
      echo "down: not discarding $dir/real: still mounted there: $(_rn_mounts_under "$dir/real" | tr '\n' ' ')" >&2
      return 1
    fi
    rm -rf "$dir/real"
    rm -f "$dir"/kubeconfig-executor "$dir"/kubeconfig-agent  # tokens of the discarded cluster
    log "down: discarded the real cluster's data in $dir/real"
  fi
}
