# Shared by the benchmarks' real-cluster backend (`--cluster real`): who wrote what on a real kube-apiserver.
# Sourced, not run. Needs KUBECONFIG (the admin kubeconfig of `./run up --cluster real`) and AUDIT_LOG (the audit
# log that REAL_AUDIT_LOG=1 makes kube-apiserver write, tools/run.d/real_cluster.sh).
#
# kube-apiserver's apiserver_request_total counts by verb, resource, subresource and code but has no client label
# (unlike the embedded cluster's user_agent), and on the real backend the controller manager, the scheduler, kwok
# and the provisioner write pods and claims too (bindings, pod status, claim binding). The audit log names the
# client of every write (its User-Agent; the executor's is "cloneset-executor/<version> (<identity>)"), so the
# executor's share comes from there and apiserver_request_total gives the total of all clients, as a cross-check.

# stop_benchmark_stack: the EXIT trap of a benchmark whose stack `./run up` started (either backend): stops
# kruise-manager (when KRUISE_PID names one) and everything `./run up` started in $RUN_DIR (exported), removes
# $RUN_DIR unless KEEP_RUN_DIR is set, and keeps the benchmark's exit status. No step may end the trap early: under errexit a failing command in a trap ends
# it there, and a `kill` of a manager the benchmark had already stopped once left the whole control plane running
# and turned a measured run into exit status 1.
stop_benchmark_stack() {
  local rc=$?
  set +e
  if [ -n "${KRUISE_PID:-}" ] && kill -0 "$KRUISE_PID" 2>/dev/null; then
    kill "$KRUISE_PID" 2>/dev/null
    wait "$KRUISE_PID" 2>/dev/null
  fi
  if ! "$ROOT/run" down --purge >/dev/null 2>&1; then
    echo "$(basename "$0"): ./run down --purge failed; stop it by hand: RUN_DIR=$RUN_DIR ./run down --purge" >&2
    [ "$rc" -ne 0 ] || rc=1
  elif [ -z "${KEEP_RUN_DIR:-}" ]; then
    rm -rf "$RUN_DIR"
  fi
  exit "$rc"
}

# audit_writes: "client verb resource[/subresource] code count" for every answered write in the audit log so far
# (client = the User-Agent up to its first '/'). Leases are not logged (the audit policy leaves them out).
audit_writes() {
  jq -r 'select(.stage == "ResponseComplete")
    | [ ((.userAgent // "-") | split("/")[0] | gsub(" "; "_")), .verb,
        ((.objectRef.resource // "-") + (if .objectRef.subresource then "/" + .objectRef.subresource else "" end)),
        ((.responseStatus.code // 0) | tostring) ] | join(" ")' "$AUDIT_LOG" |
    sort | uniq -c | awk '{ print $2, $3, $4, $5, $1 }'
}

# metric_writes: "all verb resource[/subresource] code count" from kube-apiserver's apiserver_request_total (every
# client), write verbs only, leases left out.
metric_writes() {
  kubectl get --raw /metrics | awk '
    /^apiserver_request_total\{/ && /verb="(POST|PUT|PATCH|DELETE|DELETECOLLECTION|APPLY)"/ && !/resource="leases"/ {
      v = r = s = c = ""
      if (match($0, /verb="[^"]*"/)) v = tolower(substr($0, RSTART + 6, RLENGTH - 7))
      if (match($0, /resource="[^"]*"/)) r = substr($0, RSTART + 10, RLENGTH - 11)
      if (match($0, /subresource="[^"]*"/)) s = substr($0, RSTART + 13, RLENGTH - 14)
      if (match($0, /code="[^"]*"/)) c = substr($0, RSTART + 6, RLENGTH - 7)
      if (s != "") r = r "/" s
      n[v " " r " " c] += $NF }
    END { for (k in n) print "all", k, n[k] }'
}

# diff_counts BEFORE AFTER: lines "k1 k2 k3 k4 count" of AFTER whose count grew, with the difference.
diff_counts() {
  awk 'NR == FNR { before[$1 " " $2 " " $3 " " $4] = $5; next }
    { k = $1 " " $2 " " $3 " " $4; d = $5 - before[k]; if (d > 0) print k, d }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# sum_counts CLIENT RESOURCE_REGEX: sum of the counts on stdin ("client verb resource code count") of CLIENT on a
# resource matching RESOURCE_REGEX (subresources included), answered or not.
sum_counts() {
  awk -v cl="$1" -v re="$2" '$1 == cl && $3 ~ re { s += $5 } END { print s + 0 }'
}

# start_kruise_manager: upstream OpenKruise's kruise-manager (tools/go/kruise, built once by ./run tool) against the
# real control plane of $RUN_DIR, in place of our planner and executor, with its webhooks off: the webhook
# configurations it insists on finding exist but hold no webhook, its certificates go to a directory (no Secret),
# and the features that need the pod webhook or kruise-daemon are off (PodWebhook=false, KruiseDaemon=false; with
# them on, the PodUnavailableBudget controller waits for a CRD that is not installed and the manager exits after
# its 2-minute cache-sync timeout). Those gates are $KRUISE_FEATURE_GATES, for an executor that stands in for it.
# Sets KRUISE_PID and KRUISE_METRICS (host:port of its /metrics); its log is $RUN_DIR/kruise-manager.log; it writes
# with User-Agent "kruise-manager".
# The CloneSet CRD is first made the one Kruise 1.8 installs (kruise_crd_v1alpha1_only below).
KRUISE_FEATURE_GATES="PodWebhook=false,KruiseDaemon=false"
start_kruise_manager() {
  local bin port metrics health
  bin="$("$ROOT/run" tool kruise github.com/openkruise/kruise kruise-manager)" ||
    { echo "kruise-manager could not be built from tools/go/kruise" >&2; return 1; }
  kruise_crd_v1alpha1_only || return 1
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: kruise-mutating-webhook-configuration}
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: kruise-validating-webhook-configuration}
webhooks: []
YAML
  # KRUISE_LEADER_ELECTION=1: as installed by Kruise's chart, holding the Lease kruise-system/kruise-manager.
  local election=(--enable-leader-election=false)
  if [ "${KRUISE_LEADER_ELECTION:-0}" = 1 ]; then
    kubectl get namespace kruise-system >/dev/null 2>&1 || kubectl create namespace kruise-system >/dev/null
    election=(--enable-leader-election=true --leader-election-namespace=kruise-system)
  fi
  port=$((20000 + RANDOM % 10000)); metrics=$((port + 1)); health=$((port + 2))
  WEBHOOK_HOST=127.0.0.1 WEBHOOK_PORT="$port" WEBHOOK_CERT_WRITER=fs WEBHOOK_CERT_DIR="$RUN_DIR/kruise-certs" \
    KUBECONFIG="$KUBECONFIG" "$bin" "${election[@]}" --enable-pprof=false \
    --feature-gates="$KRUISE_FEATURE_GATES" \
    --metrics-addr="127.0.0.1:$metrics" --health-probe-addr="127.0.0.1:$health" \
    >"$RUN_DIR/kruise-manager.log" 2>&1 &
  KRUISE_PID=$!
  KRUISE_METRICS="127.0.0.1:$metrics"
  local i
  for i in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$health/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$KRUISE_PID" 2>/dev/null || break
    sleep 1
  done
  echo "kruise-manager did not become ready; its log ends with:" >&2
  tail -20 "$RUN_DIR/kruise-manager.log" >&2
  return 1
}

# kruise_crd_v1alpha1_only: the CloneSet CRD as Kruise 1.8 installs it, from ours. Ours (what `./run up` applies)
# serves v1alpha1 and v1beta1, stores v1beta1 and converts through our webhook; kruise-manager 1.8 points every
# apps.kruise.io CRD that has a conversion webhook at itself, and it has no v1beta1 CloneSet to convert to (every
# create then fails: 'no kind "CloneSet" is registered for version "apps.kruise.io/v1beta1"'), so it runs on a CRD
# that serves and stores v1alpha1 only, with no conversion. What an operator does to go back to Kruise 1.8
# (docs/migrating-from-kruise.md): store every CloneSet as v1alpha1 (our webhook converts), record that as the only
# stored version, then drop v1beta1. A CRD that is already so is left as it is.
KRUISE_CLONESET_CRD=clonesets.apps.kruise.io
kruise_crd_v1alpha1_only() {
  local versions
  versions=$(kubectl get crd "$KRUISE_CLONESET_CRD" -o jsonpath='{.spec.versions[*].name}') ||
    { echo "kruise_crd_v1alpha1_only: no $KRUISE_CLONESET_CRD CRD" >&2; return 1; }
  [ "$versions" != v1alpha1 ] || return 0
  _kruise_crd_replace '.spec.versions |= map(.storage = (.name == "v1alpha1"))' ||
    { echo "kruise_crd_v1alpha1_only: making v1alpha1 the storage version failed" >&2; return 1; }
  local i err
  err=$(mktemp)
  for i in 1 2 3 4 5; do  # a controller's status write may move an object on between the read and the write
    if kubectl get clonesets.v1alpha1.apps.kruise.io -A -o json | kubectl replace -f - >/dev/null 2>"$err"; then
      break
    fi
    grep -q 'the object has been modified' "$err" && [ "$i" -lt 5 ] ||
      { cat "$err" >&2; rm -f "$err"; echo "kruise_crd_v1alpha1_only: rewriting the CloneSets as v1alpha1 failed" >&2; return 1; }
  done
  rm -f "$err"
  kubectl patch crd "$KRUISE_CLONESET_CRD" --subresource=status --type=merge \
    -p '{"status":{"storedVersions":["v1alpha1"]}}' >/dev/null ||
    { echo "kruise_crd_v1alpha1_only: recording v1alpha1 as the only stored version failed" >&2; return 1; }
  _kruise_crd_replace '.spec.versions |= map(select(.name == "v1alpha1")) | .spec.conversion = {strategy: "None"}' ||
    { echo "kruise_crd_v1alpha1_only: dropping v1beta1 from the CRD failed" >&2; return 1; }
}
# _kruise_crd_replace JQ: the live CloneSet CRD edited by JQ, replaced (optimistically, by its resourceVersion).
_kruise_crd_replace() {
  kubectl get crd "$KRUISE_CLONESET_CRD" -o json | jq "del(.status, .metadata.managedFields) | $1" |
    kubectl replace -f - >/dev/null
}
