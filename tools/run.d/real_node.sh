# Real nodes of the real-cluster backend (`./run up --cluster real --real-nodes N`): beside the kwok nodes, N nodes
# whose pods run as real containers. Each is a kubelet (built from tools/go/kube with the control plane) on its
# own containerd (Debian's, with runc), with a CNI bridge of its own, all under $RUN_DIR/real/nodes/<node>/; plus
# one docker-registry on 127.0.0.1 that serves the workload images built here (no public registry is reachable).
# Sourced by real_cluster.sh (uses _start, _stop, _alive, _wait_for, _real_free_port, _real_wait and log).
#
# What one node is (node I, network slot K: the lowest 10.88.K.0/24 no other run directory's node holds):
#   bridge cloneset-rnK, 10.88.K.1/24: the node IP (the kubelet serves there; the API server reaches it as the
#     node's InternalIP) and the pods' gateway; pods get 10.88.K.2-254 (CNI bridge + host-local, no masquerade)
#     with routes to the Services (10.96.0.0/16) and every real node's pods (10.88.0.0/16) only: no default route,
#     so nothing is routed off the machine. CNI's firewall plugin accepts each pod's traffic in the FORWARD chain
#     (Docker sets its policy to DROP and bridged traffic passes iptables). The bridge's alias names the run
#     directory that owns it.
#   containerd-real-node-I: own config, root, state and socket; CRI with restrict_oom_score_adj (root here may
#     lack CAP_SYS_RESOURCE), cgroupfs (SystemdCgroup = false), the sandbox image from the local registry,
#     network namespaces under its state directory, plain-HTTP pulls from the local registry (certs.d).
#   kubelet-real-node-I: client certificate system:node:real-node-I (group system:nodes) signed by the cluster
#     CA; serving certificate for 10.88.K.1 signed by it too (kube-apiserver checks it); x509 + webhook
#     authentication and webhook authorization; cgroupfs under the cgroup cloneset-rnK (so that two kubelets on
#     one machine never share /kubepods); cgroup v1 allowed (failCgroupV1: false); cluster DNS: the kube-dns
#     Service of real_services.sh (10.96.0.10, cluster.local only; resolvConf a file with no nameserver, so no
#     lookup can leave the machine); label type=real; taint
#     cloneset.test/real-node=true:NoSchedule, so only pods that tolerate it land there.
# The kubelet also writes where every kubelet does: symlinks in /var/log/containers (removed again by
# real_node_down) and its device-plugin socket /var/lib/kubelet/device-plugins/kubelet.sock (fixed paths in the
# kubelet; nothing else of it leaves $RUN_DIR/real/nodes).
#
# Images ($RUN_DIR/real/registry.addr holds the registry's host:port, also REGISTRY= in $RUN_DIR/real/ports):
#   HOST:PORT/cloneset-test/web:v1, :v2   busybox httpd (static busybox from Debian's busybox-static) as user
#                                         65534 on port $PORT (default 8080) serving /www, logging each request
#                                         to stderr; exits on SIGTERM. index.html says "web v1" / "web v2",
#                                         /ready answers 200 for readiness probes. Two layers: busybox (shared),
#                                         and a small one with /www (the only layer a v1 -> v2 update pulls).
#   HOST:PORT/cloneset-test/web:crash     the same image, exits 1 at once (a failed in-place update)
#   HOST:PORT/cloneset-test/pause:1       the sandbox image: busybox sleep
#   real_image_sized MIB                  web:v2 plus a layer of MIB MiB of random data (a pull that takes time)

REAL_NODE_PREFIX=real-node-
REAL_NODE_TAINT_KEY=cloneset.test/real-node
REAL_NODE_NET=10.88
REAL_IMAGE_REPO=cloneset-test
# Tools a real node needs; ./run deps installs them (TEST_PACKAGES).
REAL_NODE_TOOLS=(containerd:containerd ctr:containerd runc:runc docker-registry:docker-registry skopeo:skopeo
  umoci:umoci ip:iproute2 openssl:openssl)

# _rn_check_tools: every tool of REAL_NODE_TOOLS, the CNI plugins and a static busybox, else a failure naming the
# Debian package to install.
_rn_check_tools() {
  local t missing=()
  for t in "${REAL_NODE_TOOLS[@]}"; do command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}"); done
  for t in bridge host-local loopback firewall; do [ -x "/usr/lib/cni/$t" ] || missing+=(containernetworking-plugins); done
  file_is_static /bin/busybox || missing+=(busybox-static)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "up: real nodes need the Debian packages $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')(./run deps installs them)" >&2
  return 1
}

# file_is_static PATH: PATH is an executable with no ELF interpreter (runs in an image with no libc).
file_is_static() {
  [ -x "$1" ] || return 1
  ! LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'program interpreter' && LC_ALL=C readelf -h "$1" >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------------------------------------
# Registry and images

_rn_registry_addr() { cat "$1/registry.addr" 2>/dev/null; }

# real_registry_up REAL: docker-registry on 127.0.0.1 (port kept in REAL/ports as REGISTRY=, storage REAL/registry),
# then the workload images built (once per run directory) and pushed when the registry lacks them.
real_registry_up() {
  local real="$1" port
  port=$(sed -n 's/^REGISTRY=//p' "$real/ports")
  if [ -z "$port" ] || { ! _alive registry && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }; then
    # shellcheck source=/dev/null
    source "$real/ports"
    port=$(_real_free_port "$ETCD_CLIENT" "$ETCD_PEER" "$APISERVER") || return 1
    sed -i '/^REGISTRY=/d' "$real/ports"
    echo "REGISTRY=$port" >>"$real/ports"
  fi
  mkdir -p "$real/registry/data"
  cat >"$real/registry/config.yml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $real/registry/data}
  delete: {enabled: true}
http: {addr: 127.0.0.1:$port}
EOF
  _start registry docker-registry serve "$real/registry/config.yml"
  _real_wait 30 registry "docker-registry on 127.0.0.1:$port" curl -sf "http://127.0.0.1:$port/v2/" || return 1
  echo "127.0.0.1:$port" >"$real/registry.addr"
  _rn_images "$real" || return 1
}

# _rn_umoci_layer OCI FROM TO DIR: image TO is FROM plus one layer holding the files of DIR (copied to /).
_rn_umoci_layer() {
  local oci="$1" from="$2" to="$3" src="$4" b
  b=$(mktemp -d "$oci.bundle-XXXXXX")
  umoci unpack --rootless --image "$oci:$from" "$b/b" >/dev/null &&
    cp -a "$src/." "$b/b/rootfs/" &&
    umoci repack --image "$oci:$to" "$b/b" >/dev/null
  local rc=$?
  rm -rf "$b"
  return $rc
}

# _rn_images REAL: builds the images of the header into REAL/images/oci (an OCI layout; once: a marker file) with
# umoci, from /bin/busybox, and pushes them with skopeo.
_rn_images() {
  local real="$1" oci="$1/images/oci" reg files tag
  reg=$(_rn_registry_addr "$real")
  if [ ! -f "$real/images/done" ]; then
    rm -rf "$real/images"; mkdir -p "$real/images"
    files=$(mktemp -d "$real/images/files-XXXXXX")
    (
      set -e
      umoci init --layout "$oci"
      umoci new --image "$oci:empty"
      # Layer 1: busybox with the applets the tests call, a passwd naming user 65534, a writable /tmp.
      mkdir -p "$files/base/bin" "$files/base/etc" "$files/base/tmp"
      cp /bin/busybox "$files/base/bin/busybox"
      for t in sh httpd sleep cat echo ls mkdir chown id env touch date wget hostname rm test; do
        ln -s busybox "$files/base/bin/$t"
      done
      chmod 1777 "$files/base/tmp"
      printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n' >"$files/base/etc/passwd"
      printf 'root:x:0:\nnogroup:x:65534:\n' >"$files/base/etc/group"
      _rn_umoci_layer "$oci" empty base "$files/base"
      # httpd as a child of a shell that exits on SIGTERM: as PID 1, httpd itself would ignore SIGTERM and
      # every stop would wait for the pod's grace period (30 s) and end in SIGKILL. PORT (default 8080) lets
      # two containers of one pod serve side by side.
      umoci config --image "$oci:base" --os linux --architecture amd64 --config.user 65534:65534 \
        --config.workingdir / --config.entrypoint /bin/sh --config.entrypoint -c --config.entrypoint \
        'trap "exit 0" TERM; httpd -f -v -p "${PORT:-8080}" -h /www & wait'
      # Layer 2: what the web server serves; v1 and v2 differ only here.
      for tag in v1 v2; do
        mkdir -p "$files/$tag/www"
        echo "web $tag" >"$files/$tag/www/index.html"
        echo ready >"$files/$tag/www/ready"
        _rn_umoci_layer "$oci" base "$tag" "$files/$tag"
      done
      umoci config --image "$oci:v2" --tag crash --clear config.entrypoint --config.entrypoint /bin/sh \
        --config.entrypoint -c --config.entrypoint 'echo "web:crash exits at once"; exit 1'
      umoci config --image "$oci:base" --tag pause --clear config.entrypoint --config.entrypoint /bin/sleep \
        --config.entrypoint 2147483647
    ) >"$real/images/build.log" 2>&1 ||
      { echo "up: building the real nodes' images failed; $real/images/build.log ends with:" >&2
        tail -n 5 "$real/images/build.log" >&2; rm -rf "$files"; return 1; }
    rm -rf "$files"
    touch "$real/images/done"
  fi
  # Every start: a registry kept from a former build must serve this one (blobs it has are not sent again).
  local push=(web:v1 web:v2 web:crash pause:1) ref src
  for ref in "${push[@]}"; do
    src=${ref#*:}; [ "$ref" = pause:1 ] && src=pause
    skopeo copy -q --dest-tls-verify=false "oci:$oci:$src" "docker://$reg/$REAL_IMAGE_REPO/$ref" \
      >>"$real/images/push.log" 2>&1 ||
      { echo "up: pushing $ref to $reg failed; $real/images/push.log ends with:" >&2
        tail -n 5 "$real/images/push.log" >&2; return 1; }
  done
}

# real_image_sized REAL MIB: pushes (once) HOST:PORT/cloneset-test/web:big-MIB, web:v2 with one more layer of MIB
# MiB of random data (incompressible: the pull moves and unpacks all of it), and prints its reference.
real_image_sized() {
  local real="$1" mib="$2" oci="$1/images/oci" reg files
  [[ "$mib" =~ ^[0-9]+$ ]] && [ "$mib" -ge 1 ] || { echo "real_image_sized: MIB must be a number >= 1" >&2; return 2; }
  reg=$(_rn_registry_addr "$real") || { echo "real_image_sized: no registry in $real (./run up --real-nodes 1)" >&2; return 1; }
  if ! umoci stat --image "$oci:big-$mib" >/dev/null 2>&1; then
    files=$(mktemp -d "$real/images/files-XXXXXX")
    mkdir -p "$files/data"
    head -c "$((mib * 1024 * 1024))" /dev/urandom >"$files/data/random" &&
      _rn_umoci_layer "$oci" v2 "big-$mib" "$files" >>"$real/images/build.log" 2>&1 ||
      { rm -rf "$files"; echo "real_image_sized: building web:big-$mib failed (see $real/images/build.log)" >&2; return 1; }
    rm -rf "$files"
  fi
  skopeo copy -q --dest-tls-verify=false "oci:$oci:big-$mib" "docker://$reg/$REAL_IMAGE_REPO/web:big-$mib" \
    >>"$real/images/push.log" 2>&1 || { echo "real_image_sized: pushing web:big-$mib failed" >&2; return 1; }
  echo "$reg/$REAL_IMAGE_REPO/web:big-$mib"
}

# ---------------------------------------------------------------------------------------------------------------
# One node

# _rn_cgroup_dirs NAME: the directories of cgroup NAME: one per mounted hierarchy on cgroup v1, the single one on v2.
_rn_cgroup_dirs() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo "/sys/fs/cgroup/$1"; return; fi
  local d
  for d in /sys/fs/cgroup/*/; do
    [ -f "$d/cgroup.procs" ] && [ ! -L "${d%/}" ] && echo "${d%/}/$1"
  done
}

# _rn_slot NODEDIR: this node's network slot K (bridge cloneset-rnK, 10.88.K.0/24), chosen once: the lowest K
# whose bridge does not exist and that no address of the machine is in.
_rn_slot() {
  local nd="$1" k
  if [ -f "$nd/slot" ]; then cat "$nd/slot"; return; fi
  for ((k = 0; k < 255; k++)); do
    ip link show "cloneset-rn$k" >/dev/null 2>&1 && continue
    ip -4 -o addr show | grep -q " $REAL_NODE_NET\.$k\." && continue
    echo "$k" >"$nd/slot"; echo "$k"; return
  done
  echo "up: no free network slot $REAL_NODE_NET.K.0/24 for a real node" >&2
  return 1
}

# _rn_bridge NODEDIR K: the bridge cloneset-rnK with 10.88.K.1/24, up, its alias this node's directory; fails when
# another run directory's node holds it.
_rn_bridge() {
  local nd="$1" k="$2" br="cloneset-rn$2" alias
  if ip link show "$br" >/dev/null 2>&1; then
    alias=$(cat "/sys/class/net/$br/ifalias" 2>/dev/null) || alias=""
    [ "$alias" = "$nd" ] || { echo "up: bridge $br belongs to '$alias', not to $nd (another run directory's real node)" >&2; return 1; }
  else
    ip link add "$br" type bridge && ip link set "$br" alias "$nd" || { echo "up: creating bridge $br failed" >&2; return 1; }
  fi
  ip -4 -o addr show dev "$br" | grep -q " $REAL_NODE_NET\.$k\.1/24 " ||
    ip addr add "$REAL_NODE_NET.$k.1/24" dev "$br" || return 1
  ip link set "$br" up
}

# _rn_certs PKI NODEDIR NAME IP: the node's client certificate (kubelet -> API server) and serving certificate
# (API server -> kubelet, for IP), signed by the cluster CA; kept across restarts.
_rn_certs() {
  local pki="$1" nd="$2" name="$3" ip="$4"
  [ -f "$nd/pki/done-$ip" ] && return 0
  mkdir -p "$nd/pki"
  (
    set -e
    cd "$nd/pki"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr \
      -subj "/O=system:nodes/CN=system:node:$name" 2>/dev/null
    printf '%s\n' "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth" >client.ext
    openssl x509 -req -in client.csr -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -out client.crt \
      -days 3650 -extfile client.ext 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout serving.key -out serving.csr \
      -subj "/CN=system:node:$name" 2>/dev/null
    printf '%s\n' "subjectAltName=IP:$ip,DNS:$name" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" >serving.ext
    openssl x509 -req -in serving.csr -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -out serving.crt \
      -days 3650 -extfile serving.ext 2>/dev/null
    chmod 600 ./*.key
    rm -f done-*; touch "done-$ip"
  ) || { echo "up: creating the certificates of $name failed" >&2; return 1; }
}

# real_apiserver_kubelet_client PKI: kube-apiserver's client certificate for kubelets (logs, exec, port-forward),
# group system:masters so the kubelet's webhook authorization allows it.
real_apiserver_kubelet_client() {
  local pki="$1"
  [ -f "$pki/apiserver-kubelet-client.crt" ] && return 0
  (
    set -e
    cd "$pki"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout apiserver-kubelet-client.key \
      -out apiserver-kubelet-client.csr -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null
    printf '%s\n' "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=clientAuth" \
      >apiserver-kubelet-client.ext
    openssl x509 -req -in apiserver-kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out apiserver-kubelet-client.crt -days 3650 -extfile apiserver-kubelet-client.ext 2>/dev/null
    chmod 600 apiserver-kubelet-client.key
  ) || { echo "up: creating kube-apiserver's kubelet client certificate failed" >&2; return 1; }
}

# _rn_containerd_config NODEDIR K REGISTRY: containerd's config.toml, the registry's hosts.toml and the CNI list.
_rn_containerd_config() {
  local nd="$1" k="$2" reg="$3" c="$1/containerd"
  mkdir -p "$c/root" "$c/state" "$c/opt" "$nd/certs.d/$reg" "$nd/cni/net.d" "$nd/cni/ipam"
  cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
[grpc]
  address = "$nd/containerd.sock"
[ttrpc]
  address = "$nd/containerd.sock.ttrpc"
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$c/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$reg/$REAL_IMAGE_REPO/pause:1"
    # Root on this kind of machine may lack CAP_SYS_RESOURCE: without it runc cannot lower a container's
    # oom_score_adj below its own and every sandbox fails ("can't get final child's PID from pipe: EOF").
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$nd/cni/net.d"
      max_conf_num = 1
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$nd/certs.d"
EOF
  cat >"$nd/certs.d/$reg/hosts.toml" <<EOF
server = "http://$reg"
[host."http://$reg"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
EOF
  cat >"$nd/cni/net.d/10-cloneset-rn$k.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "cloneset-rn$k",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cloneset-rn$k",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$REAL_NODE_NET.$k.0/24", "gateway": "$REAL_NODE_NET.$k.1"}]],
        "routes": [{"dst": "$REAL_SERVICE_CIDR"}, {"dst": "$REAL_NODE_NET.0.0/16"}],
        "dataDir": "$nd/cni/ipam"
      }
    },
    {"type": "firewall"}
  ]
}
EOF
}

# _rn_kubelet_config PKI NODEDIR NAME IP PORT: the KubeletConfiguration, its kubeconfig and the pods' resolv.conf.
_rn_kubelet_config() {
  local pki="$1" nd="$2" name="$3" ip="$4" port="$5" k="$6" apiserver="$7"
  mkdir -p "$nd/kubelet" "$nd/pod-logs" "$nd/volume-plugins"
  # The kubelet's host resolv.conf: no nameserver and no search domain, so pods (dnsPolicy ClusterFirst) ask the
  # cluster DNS only and no lookup leaves the machine; a pod with dnsPolicy Default has no DNS at all.
  printf '# real node %s: no host DNS\noptions ndots:1\n' "$name" >"$nd/resolv.conf"
  _real_cert_kubeconfig "$pki/ca.crt" "$apiserver" node "system:node:$name" "$nd/pki/client.crt" \
    "$nd/pki/client.key" "$nd/kubeconfig"
  cat >"$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: $port
readOnlyPort: 0
healthzPort: 0
tlsCertFile: $nd/pki/serving.crt
tlsPrivateKeyFile: $nd/pki/serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$nd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /cloneset-rn$k
failCgroupV1: false
failSwapOn: false
clusterDNS: [$REAL_DNS_SERVICE_IP]
clusterDomain: $REAL_CLUSTER_DOMAIN
resolvConf: $nd/resolv.conf
podLogsDir: $nd/pod-logs
volumePluginDir: $nd/volume-plugins
registerWithTaints:
- {key: $REAL_NODE_TAINT_KEY, value: "true", effect: NoSchedule}
# A developer's disk may be fuller than a node's usually is: evict only when it is really full.
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
EOF
}

# real_node_up REAL I APISERVER_PORT: node real-node-I (containerd, then the kubelet), started unless running.
real_node_up() {
  local real="$1" i="$2" apiserver="$3" name="$REAL_NODE_PREFIX$2" nd k ip port reg kubelet d
  nd="$real/nodes/$name"; mkdir -p "$nd"
  kubelet=$(toolchain_path kubelet) || return 1
  reg=$(_rn_registry_addr "$real")
  k=$(_rn_slot "$nd") || return 1
  ip="$REAL_NODE_NET.$k.1"
  _rn_bridge "$nd" "$k" || return 1
  _rn_certs "$real/pki" "$nd" "$name" "$ip" || return 1
  port=$(cat "$nd/kubelet.port" 2>/dev/null) || true
  if [ -z "$port" ] || { ! _alive "kubelet-$name" && (exec 3<>"/dev/tcp/$ip/$port") 2>/dev/null; }; then
    # shellcheck source=/dev/null
    source "$real/ports"
    port=$(_real_free_port "$ETCD_CLIENT" "$ETCD_PEER" "$APISERVER" "$REGISTRY") || return 1
    echo "$port" >"$nd/kubelet.port"
  fi
  # The kubelet's cgroup root must exist; a new cpuset cgroup starts with no CPUs and memory nodes: the parent's.
  for d in $(_rn_cgroup_dirs "cloneset-rn$k"); do
    mkdir -p "$d" || { echo "up: cannot create the cgroup $d for $name" >&2; return 1; }
    if [ -f "$d/cpuset.cpus" ] && [ -z "$(cat "$d/cpuset.cpus")" ]; then
      cat "$(dirname "$d")/cpuset.cpus" >"$d/cpuset.cpus" && cat "$(dirname "$d")/cpuset.mems" >"$d/cpuset.mems"
    fi
  done
  _rn_containerd_config "$nd" "$k" "$reg"
  _start "containerd-$name" containerd --config "$nd/containerd/config.toml" --log-level warn
  _real_wait 30 "containerd-$name" "containerd of $name" ctr --address "$nd/containerd.sock" version || return 1
  _rn_kubelet_config "$real/pki" "$nd" "$name" "$ip" "$port" "$k" "$apiserver"
  _start "kubelet-$name" "$kubelet" --config="$nd/kubelet.yaml" --kubeconfig="$nd/kubeconfig" \
    --root-dir="$nd/kubelet" --hostname-override="$name" --node-ip="$ip" --node-labels=type=real --v=1
}

# _rn_mounts_under DIR: mount points under DIR, deepest first.
_rn_mounts_under() {
  awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# _rn_kill_cgroup_procs DIRS...: SIGKILL every process in the cgroups DIRS and below (the node's containers and
# shims left when containerd could not stop them), then removes the cgroups, deepest first.
_rn_kill_cgroup_procs() {
  local d pid try
  for try in 1 2 3 4 5; do
    local any=0
    for d in "$@"; do
      [ -d "$d" ] || continue
      while read -r pid; do
        [ -n "$pid" ] || continue
        any=1; kill -KILL "$pid" 2>/dev/null || true
      done < <(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)
    done
    [ "$any" = 0 ] && break
    sleep 0.2
  done
  for d in "$@"; do
    [ ! -d "$d" ] || find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  return 0
}

# real_node_down REAL NAME: stops node NAME: the kubelet, every container (task) through its containerd, containerd,
# any shim of its socket still running, processes left in its cgroup; unmounts what is mounted under its directory
# (pod volumes, container root filesystems, network namespaces), removes its bridge and the kubelet's symlinks in
# /var/log/containers. Its data stays (real_cluster_down --purge removes it).
real_node_down() {
  local real="$1" name="$2" nd sock k id pid m
  nd="$real/nodes/$name"; sock="$nd/containerd.sock"
  [ -d "$nd" ] || return 0
  _stop "kubelet-$name"
  if [ -f "${RUN_DIR:-$ROOT/.run}/containerd-$name.pid" ] && _pid_alive "$(cat "${RUN_DIR:-$ROOT/.run}/containerd-$name.pid")"; then
    local ctr=(timeout 20 ctr --address "$sock" -n k8s.io)
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
      "${ctr[@]}" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    # The CRI plugin deletes the task of a container that exited itself; what is still listed is deleted here.
    local deadline=$((SECONDS + 10)) left
    while left=$("${ctr[@]}" tasks ls -q 2>/dev/null) && [ -n "$left" ] && [ $SECONDS -lt $deadline ]; do
      for id in $left; do "${ctr[@]}" tasks delete "$id" >/dev/null 2>&1 || true; done
      sleep 0.2
    done
  fi
  _stop "containerd-$name"
  # Shims of this containerd (their command line names its socket) that outlived it.
  for pid in $(grep -lsF -- "$sock" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    if { tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'containerd-shim'; } 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  k=$(cat "$nd/slot" 2>/dev/null) || k=""
  # shellcheck disable=SC2046
  [ -z "$k" ] || _rn_kill_cgroup_procs $(_rn_cgroup_dirs "cloneset-rn$k")
  for m in $(_rn_mounts_under "$nd"); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  if [ -n "$(_rn_mounts_under "$nd")" ]; then
    echo "down: still mounted under $nd:" >&2; _rn_mounts_under "$nd" >&2
  fi
  if [ -n "$k" ] && [ "$(cat "/sys/class/net/cloneset-rn$k/ifalias" 2>/dev/null)" = "$nd" ]; then
    for m in $(ip -o link show master "cloneset-rn$k" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
      ip link del "$m" 2>/dev/null || true
    done
    ip link del "cloneset-rn$k" 2>/dev/null || true
  fi
  local l
  for l in /var/log/containers/*.log; do
    if [ -L "$l" ] && [[ "$(readlink "$l")" == "$nd/"* ]]; then rm -f "$l"; fi
  done
  return 0
}

# real_nodes_up REAL N APISERVER_PORT: the registry and nodes 0..N-1 (nodes of a former start beyond N are
# stopped), then waits until they are Ready.
real_nodes_up() {
  local real="$1" n="$2" apiserver="$3" i nd kc=(kubectl --kubeconfig "$(_run_dir)/kubeconfig")
  for nd in "$real"/nodes/"$REAL_NODE_PREFIX"*; do
    [ -d "$nd" ] || continue
    i=${nd##*"$REAL_NODE_PREFIX"}
    if [ "$i" -ge "$n" ]; then
      real_node_down "$real" "$REAL_NODE_PREFIX$i"
      "${kc[@]}" delete node "$REAL_NODE_PREFIX$i" --ignore-not-found >/dev/null 2>&1 || true
    fi
  done
  [ "$n" -gt 0 ] || { _stop registry; return 0; }
  _rn_check_tools || return 1
  real_registry_up "$real" || return 1
  for ((i = 0; i < n; i++)); do real_node_up "$real" "$i" "$apiserver" || return 1; done
  for ((i = 0; i < n; i++)); do
    _real_wait 120 "kubelet-$REAL_NODE_PREFIX$i" "node $REAL_NODE_PREFIX$i Ready" \
      "${kc[@]}" wait --for=condition=Ready "node/$REAL_NODE_PREFIX$i" --timeout=2s || return 1
  done
}

# real_nodes_down REAL: every node of REAL/nodes (real_node_down), then the registry.
real_nodes_down() {
  local real="$1" nd
  for nd in "$real"/nodes/*; do
    [ -d "$nd" ] && real_node_down "$real" "$(basename "$nd")"
  done
  _stop registry
}
