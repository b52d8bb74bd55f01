# Cluster services of the real nodes (`./run up --cluster real --real-nodes N`): what a pod on a real node needs
# from the cluster besides its kubelet, as every cluster provides it. Host processes of the run directory, like the
# control plane; started after the real nodes (their bridge holds the node IP), stopped before them.
# Sourced by real_cluster.sh (uses _start, _stop, _alive, _real_wait, _real_free_port, toolchain_path and log).
#
#   kube-proxy (tools/go/kube, iptables mode): Services' cluster IPs for pods. Pods reach the API server as
#     kubernetes.default (10.96.0.1:443, KUBERNETES_SERVICE_HOST), and DNS as kube-dns (10.96.0.10:53).
#     Identity system:kube-proxy (client certificate; the built-in ClusterRole system:node-proxier). It changes no
#     sysctl (conntrack limits and timeouts left as they are, no localhost NodePorts) and opens NodePorts on the
#     nodes' addresses (10.88.0.0/16) only. One per machine: its KUBE-* iptables chains are the machine's, so a
#     second run directory's kube-proxy would overwrite them; the second start fails naming the first.
#   apiserver-relay (socat, TCP only): kube-apiserver listens on 127.0.0.1 alone, an address Endpoints may not
#     hold and pods cannot reach; the relay listens on the first real node's IP, the kubernetes Service's endpoint
#     (written here: the API server runs with --endpoint-reconciler-type=none). TLS passes through: pods present
#     their own tokens and check the API server's certificate (10.96.0.1 is among its names).
#   coredns (tools/go/coredns): cluster DNS on the first real node's IP, port 53, the endpoint of the kube-dns
#     Service (kube-system, 10.96.0.10) that the kubelets name as clusterDNS. It answers cluster.local and the
#     reverse zones from the API server (kubernetes plugin; identity system:coredns, list/watch of Services,
#     EndpointSlices, Namespaces) and forwards nothing: every other name gets REFUSED, no lookup leaves the machine.
#
# real_services_up REAL N APISERVER_PORT   starts them (N >= 1) or stops them (N = 0); waits until CoreDNS is
#                                          ready and kube-proxy has programmed both Services.
# real_services_down REAL                  stops them; kube-proxy --cleanup removes its iptables rules.

REAL_SERVICES_COMPONENTS=(apiserver-relay coredns kube-proxy)
REAL_DNS_SERVICE_IP=10.96.0.10
REAL_CLUSTER_DOMAIN=cluster.local
# The machine-wide owner of kube-proxy's iptables chains: "RUN_DIR PID" of the kube-proxy that holds them.
REAL_KUBE_PROXY_OWNER=/run/cloneset-kube-proxy.owner

# _rs_client_cert PKI DIR NAME CN [ORG]: DIR/NAME.{crt,key}, a client certificate for CN signed by the cluster CA,
# and DIR/NAME.kubeconfig for the API server on 127.0.0.1:PORT ($APISERVER). Kept across restarts.
_rs_client_cert() {
  local pki="$1" dir="$2" name="$3" cn="$4" org="${5:-}" subj
  subj="/CN=$cn"; [ -z "$org" ] || subj="/O=$org$subj"
  if [ ! -f "$dir/$name.crt" ]; then
    (
      set -e
      cd "$dir"
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$name.key" -out "$name.csr" \
        -subj "$subj" 2>/dev/null
      printf '%s\n' "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth" >"$name.ext"
      openssl x509 -req -in "$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -out "$name.crt" \
        -days 3650 -extfile "$name.ext" 2>/dev/null
      chmod 600 "$name.key"
    ) || { echo "up: creating the client certificate of $cn failed" >&2; return 1; }
  fi
  _real_cert_kubeconfig "$pki/ca.crt" "$APISERVER" "$name" "$cn" "$dir/$name.crt" "$dir/$name.key" \
    "$dir/$name.kubeconfig"
}

# _rs_write FILE: standard input into FILE unless FILE holds it already. kube-proxy exits when its configuration
# file changes (it expects to be restarted), and rewriting it with the same bytes counts as a change.
_rs_write() {
  local new; new=$(cat)
  [ "$(cat "$1" 2>/dev/null)" = "$new" ] || printf '%s\n' "$new" >"$1"
}

# _rs_port REAL KEY COMPONENT: a free 127.0.0.1 port kept in REAL/ports as KEY= for COMPONENT (chosen again when
# something else took it while COMPONENT was not running).
_rs_port() {
  local real="$1" key="$2" component="$3" port
  port=$(sed -n "s/^$key=//p" "$real/ports")
  if [ -z "$port" ] || { ! _alive "$component" && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }; then
    # shellcheck disable=SC2046
    port=$(_real_free_port $(cut -d= -f2 "$real/ports")) || return 1
    sed -i "/^$key=/d" "$real/ports"
    echo "$key=$port" >>"$real/ports"
  fi
  echo "$port"
}

# _rs_objects IP APISERVER_PORT DNS_PORT: the Services' endpoints (the kubernetes Service exists already; kube-dns
# is created) and CoreDNS's RBAC. Endpoints are written for the clients that still read them; the EndpointSlices
# are what kube-proxy and CoreDNS read (skip-mirror: kube-controller-manager must not mirror a second slice).
_rs_objects() {
  local ip="$1" apiport="$2" dnsport="$3"
  cat <<EOF
apiVersion: v1
kind: Endpoints
metadata:
  name: kubernetes
  namespace: default
  labels: {endpointslice.kubernetes.io/skip-mirror: "true"}
subsets:
- addresses: [{ip: $ip}]
  ports: [{name: https, port: $apiport, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: cloneset.test-real-services}
addressType: IPv4
endpoints: [{addresses: [$ip], conditions: {ready: true}}]
ports: [{name: https, port: $apiport, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  clusterIP: $REAL_DNS_SERVICE_IP
  ports:
  - {name: dns, port: 53, targetPort: $dnsport, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: $dnsport, protocol: TCP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: cloneset.test-real-services}
addressType: IPv4
endpoints: [{addresses: [$ip], conditions: {ready: true}}]
ports:
- {name: dns, port: $dnsport, protocol: UDP}
- {name: dns-tcp, port: $dnsport, protocol: TCP}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: [services, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:coredns}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: system:coredns}
EOF
}

# _rs_run_dir: the run directory, absolute (it names the owner of kube-proxy's chains machine-wide).
_rs_run_dir() { (cd "${RUN_DIR:-$ROOT/.run}" && pwd); }

# _rs_kube_proxy_owner: the run directory whose live kube-proxy holds the iptables chains, if any.
_rs_kube_proxy_owner() {
  local dir pid
  read -r dir pid 2>/dev/null <"$REAL_KUBE_PROXY_OWNER" || return 0
  [ -n "$pid" ] && _pid_alive "$pid" && echo "$dir"
  return 0
}

# _rs_iptables_has IP PORT: kube-proxy's nat rules send IP:PORT somewhere (the Service is programmed).
_rs_iptables_has() {
  iptables -t nat -S KUBE-SERVICES 2>/dev/null | grep -q -- "-d $1/32 .*--dport $2 .*-j KUBE-SVC-"
}

real_services_up() {
  local real="$1" n="$2" apiserver="$3" dir svc ip slot owner
  dir=$(_rs_run_dir); svc="$real/services"
  [ "$n" -gt 0 ] || { real_services_down "$real"; return 0; }
  local t missing=()
  for t in socat:socat iptables:iptables openssl:openssl; do command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}"); done
  [ ${#missing[@]} -eq 0 ] ||
    { echo "up: the real nodes' cluster services need the Debian packages ${missing[*]} (./run deps installs them)" >&2; return 1; }
  local proxy coredns
  proxy=$(toolchain_path kube-proxy) || return 1
  coredns=$(toolchain_path coredns) || return 1
  slot=$(cat "$real/nodes/${REAL_NODE_PREFIX}0/slot" 2>/dev/null) ||
    { echo "up: the cluster services need real node ${REAL_NODE_PREFIX}0 (its network slot is not in $real/nodes)" >&2; return 1; }
  ip="$REAL_NODE_NET.$slot.1"
  owner=$(_rs_kube_proxy_owner)
  if [ -n "$owner" ] && [ "$owner" != "$dir" ]; then
    echo "up: kube-proxy of $owner holds this machine's KUBE-* iptables chains; one cluster with real nodes at a time (stop it: RUN_DIR=$owner ./run down)" >&2
    return 1
  fi
  mkdir -p "$svc"
  APISERVER="$apiserver" _rs_client_cert "$real/pki" "$svc" kube-proxy system:kube-proxy || return 1
  APISERVER="$apiserver" _rs_client_cert "$real/pki" "$svc" coredns system:coredns || return 1
  local health ready proxy_health proxy_metrics kc=(kubectl --kubeconfig "$dir/kubeconfig")
  health=$(_rs_port "$real" COREDNS_HEALTH coredns) && ready=$(_rs_port "$real" COREDNS_READY coredns) &&
    proxy_health=$(_rs_port "$real" KUBE_PROXY_HEALTH kube-proxy) &&
    proxy_metrics=$(_rs_port "$real" KUBE_PROXY_METRICS kube-proxy) || return 1

  _rs_objects "$ip" "$apiserver" 53 | "${kc[@]}" apply -f - >"$svc/objects.log" 2>&1 ||
    { echo "up: writing the cluster services' objects failed:" >&2; tail -n 5 "$svc/objects.log" >&2; return 1; }
  _start apiserver-relay socat "TCP-LISTEN:$apiserver,bind=$ip,reuseaddr,fork,backlog=128" "TCP:127.0.0.1:$apiserver"

  _rs_write "$svc/Corefile" <<EOF
$REAL_CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $ip
    errors
    health 127.0.0.1:$health
    ready 127.0.0.1:$ready
    kubernetes $REAL_CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $svc/coredns.kubeconfig
        ttl 5
    }
    cache 5
    loadbalance
}
EOF
  # A changed configuration restarts the process (its signature names the file's content).
  START_SIG="$coredns -conf $svc/Corefile $(sha256sum <"$svc/Corefile")" _start coredns "$coredns" -conf "$svc/Corefile"

  _rs_write "$svc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $svc/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: ${REAL_NODE_PREFIX}0
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$proxy_health
metricsBindAddress: 127.0.0.1:$proxy_metrics
clusterCIDR: $REAL_NODE_NET.0.0/16
nodePortAddresses: [$REAL_NODE_NET.0.0/16]
iptables: {localhostNodePorts: false, masqueradeAll: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  echo "$proxy" >"$svc/kube-proxy.bin"  # for real_services_down's cleanup, which must not build anything
  START_SIG="$proxy --config=$svc/kube-proxy.yaml --v=1 $(sha256sum <"$svc/kube-proxy.yaml")" \
    _start kube-proxy "$proxy" --config="$svc/kube-proxy.yaml" --v=1
  _alive kube-proxy && printf '%s %s\n' "$dir" "$(cat "$dir/kube-proxy.pid")" >"$REAL_KUBE_PROXY_OWNER"

  # Checked as a pod's client checks it: TLS to the name 10.96.0.1, through the relay.
  _real_wait 60 apiserver-relay "the API server relay on $ip:$apiserver" \
    curl -s -o /dev/null --cacert "$real/pki/ca.crt" --connect-to "$REAL_SERVICE_IP:443:$ip:$apiserver" \
    "https://$REAL_SERVICE_IP/readyz" || return 1
  _real_wait 90 coredns "CoreDNS ready (127.0.0.1:$ready/ready)" curl -sf "http://127.0.0.1:$ready/ready" || return 1
  _real_wait 90 kube-proxy "kube-proxy's rules for kubernetes ($REAL_SERVICE_IP:443) and kube-dns ($REAL_DNS_SERVICE_IP:53)" \
    eval "_rs_iptables_has $REAL_SERVICE_IP 443 && _rs_iptables_has $REAL_DNS_SERVICE_IP 53" || return 1
}

real_services_down() {
  local real="$1" dir i owner
  dir=$(_rs_run_dir)
  owner=$(_rs_kube_proxy_owner)
  for ((i = ${#REAL_SERVICES_COMPONENTS[@]} - 1; i >= 0; i--)); do
    _stop "${REAL_SERVICES_COMPONENTS[$i]}"
  done
  # The rules stay after kube-proxy exits (a restart keeps Services working meanwhile); down removes them, unless
  # another run directory's kube-proxy holds them now.
  if [ -f "$real/services/kube-proxy.yaml" ] && { [ -z "$owner" ] || [ "$owner" = "$dir" ]; }; then
    local proxy; proxy=$(cat "$real/services/kube-proxy.bin" 2>/dev/null) && [ -x "$proxy" ] &&
      "$proxy" --cleanup --config="$real/services/kube-proxy.yaml" >"$real/services/cleanup.log" 2>&1 ||
      echo "down: kube-proxy --cleanup failed; $real/services/cleanup.log ends with: $(tail -n 2 "$real/services/cleanup.log" 2>/dev/null)" >&2
    local cur; read -r cur _ 2>/dev/null <"$REAL_KUBE_PROXY_OWNER" || cur=""
    [ "$cur" != "$dir" ] || rm -f "$REAL_KUBE_PROXY_OWNER"
  fi
  return 0
}
