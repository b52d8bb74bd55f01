#include "fault_stack.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "devcluster/faults.h"
#include "gtest/gtest.h"

namespace cloneset::testing {
namespace {

bool Terminating(const json& obj) { return obj["metadata"].contains("deletionTimestamp"); }

std::string InstanceId(const json& pod) {
  return pod["metadata"].value("labels", json::object()).value("apps.kruise.io/cloneset-instance-id", "");
}

// A pod of the invariant watch's own in `default`, outside every workload: a sentinel or a marker.
std::string SentinelYaml(const std::string& name, const std::string& labels) {
  return absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata: {name: ", name, ", namespace: default", labels, "}\n",
                      "spec: {restartPolicy: Never, containers: [{name: c, image: \"busybox:1.36\"}]}\n");
}

constexpr char kDefaultClass[] = R"(apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: devcluster.local/simulated
)";

}  // namespace

FaultStack::~FaultStack() {
  proxy_.Stop(absl::Seconds(5));
  stack_.Stop(absl::Seconds(5));
  if (::testing::Test::HasFailure()) {
    // Keep the logs (devcluster, planner, every executor start, the pod watch) for the post-mortem.
    char tmpl[] = "/tmp/executor-fault-failed-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) {
      std::error_code ec;
      std::filesystem::copy(stack_.dir(), tmpl, std::filesystem::copy_options::recursive, ec);
      std::cerr << "logs kept in " << tmpl << std::endl;
    }
  }
}

std::string FaultStack::Start(const std::vector<std::string>& fault_flags) {
  Backend backend = Backend::kEmbedded;
  if (std::string err = BackendFromEnv(&backend); !err.empty()) return err;
  StackOptions options;
  if (backend == Backend::kEmbedded) {
    options.devcluster_flags = fault_flags;
    options.setup_yaml = absl::StrCat(kDefaultClass, "---\n");
  }  // the real control plane comes with its default class "standard" (tools/run.d/real_cluster.sh)
  if (std::string err = stack_.Start(options); !err.empty()) return err;
  if (!stack_.real()) return "";
  const char* bin = std::getenv("CLONESET_FAULT_PROXY_BIN");
  std::vector<std::string> argv = {bin != nullptr && *bin != '\0' ? bin : FAULT_PROXY_BIN,
                                   "--kubeconfig=" + stack_.executor_kubeconfig(),
                                   "--kubeconfig_out=" + stack_.dir() + "/kubeconfig-proxy", "--listen=127.0.0.1:0",
                                   "--log_requests"};
  argv.insert(argv.end(), fault_flags.begin(), fault_flags.end());
  if (!proxy_.Start(argv, stack_.dir() + "/fault-proxy.log")) return "cannot start cloneset-fault-proxy";
  if (proxy_.WaitForAddress("listening on", absl::Seconds(20)).empty()) return "fault proxy: " + proxy_.Log();
  proxy_kubeconfig_ = stack_.dir() + "/kubeconfig-proxy";
  return "";
}

std::string FaultStack::RequestLog() const { return stack_.real() ? proxy_.Log() : stack_.DevclusterLog(); }

double FaultStack::WritesBy(const std::string& user_agent) const {
  if (stack_.real()) {
    double n = 0;
    std::istringstream lines(proxy_.Log());
    std::string line;
    while (std::getline(lines, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || j.value("msg", "") != "request") continue;
      const std::string method = j.value("method", ""), path = j.value("path", "");
      if (method == "GET" || absl::StrContains(path, "/leases")) continue;
      if (devcluster::UserAgentLabel(j.value("user_agent", "")) == user_agent) ++n;
    }
    return n;
  }
  auto r = Kubectl({"get", "--raw", "/metrics"});
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(r.output, '\n')) {
    if (!absl::StartsWith(line, "apiserver_request_total{")) continue;
    if (!absl::StrContains(line, absl::StrCat("user_agent=\"", user_agent, "\""))) continue;
    if (absl::StrContains(line, "resource=\"leases")) continue;
    bool write = false;
    for (const char* v : {"create", "update", "patch", "delete", "deletecollection"}) {
      write = write || absl::StrContains(line, absl::StrCat("verb=\"", v, "\""));
    }
    if (!write) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) sum += v;
  }
  return sum;
}

std::string WorkloadYaml(const Workload& w, const std::string& image) {
  const std::string mounts = w.claims ? R"(
        volumeMounts:
        - name: data
          mountPath: /data
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi)" : "";
  return absl::StrCat(R"(apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: app
  namespace: )", w.ns, R"(
spec:
  minReadySeconds: )", w.min_ready_seconds, R"(
  replicas: )", w.replicas, R"(
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: )", image, mounts, R"(
  updateStrategy:
    type: )", w.update_type, R"(
    partition: )", w.partition, R"(
    maxUnavailable: )", w.max_unavailable, "\n", w.pvc_reuse ? "" : "  scaleStrategy:\n    disablePVCReuse: true\n");
}

PodBounds BoundsOf(const Workload& w) { return {w.replicas, w.replicas - w.max_unavailable, w.replicas, false}; }

InvariantWatch::InvariantWatch(const FaultStack& stack, std::vector<Workload> workloads) : stack_(&stack) {
  for (auto& w : workloads) {
    bounds_[w.ns] = BoundsOf(w);
    workloads_[w.ns] = std::move(w);
  }
  (void)StartSegment({"get", "pods", "-A", "-w", "--output-watch-events", "-o", "json"});
}

InvariantWatch::~InvariantWatch() { process_.Stop(absl::Seconds(2)); }

std::string InvariantWatch::StartSegment(const std::vector<std::string>& kubectl_args) {
  segment_values_ = 0;
  segments_.push_back(absl::StrCat(stack_->stack().dir(), "/watch-", reinterpret_cast<uintptr_t>(this), "-",
                                   segments_.size(), ".json"));
  if (kubectl_args.empty()) return "";
  return stack_->stack().StartKubectl(process_, kubectl_args, segments_.back()) ? ""
                                                                                : "cannot start the pod watch";
}

bool InvariantWatch::WaitStarted(size_t initial_events, absl::Duration timeout) {
  return Poll([&] {
    Advance();
    return events_ >= initial_events;
  }, timeout);
}

void InvariantWatch::Advance() {
  while (reading_ < segments_.size()) {
    std::ifstream in(segments_[reading_]);
    if (in) {
      in.seekg(offset_);
      try {
        while (in >> std::ws && in.peek() != EOF) {
          json j;
          in >> j;
          in.clear();  // a value that ends the file may leave eofbit set, and tellg() would then fail
          offset_ = in.tellg();
          ++segment_values_;
          Replay(j);
        }
      } catch (const json::exception&) {
        // A value not written completely yet: read again from offset_ next time.
      }
    }
    if (reading_ + 1 == segments_.size()) return;  // the live segment
    ++reading_;
    offset_ = 0;
  }
}

void InvariantWatch::Check(const std::string& ns, const std::string& where) {
  const PodBounds& b = bounds_[ns];
  int ready = 0, active = 0;
  std::map<std::string, int> ids;
  for (const auto& [_, p] : pods_[ns]) {
    if (Terminating(p)) continue;
    ++active;
    ready += IsReady(p) ? 1 : 0;
    ++ids[InstanceId(p)];
  }
  const std::string after = since_.count(ns) ? absl::StrCat(" [after ", since_[ns], "]") : "";
  if (ready >= b.arm_at) armed_.insert(ns);
  if (armed_.count(ns) && ready < b.min_ready) {
    violations_.push_back(absl::StrCat(where, ready, " Ready < ", b.min_ready, " (replicas - maxUnavailable)", after));
  }
  if (active > b.max_active) violations_.push_back(absl::StrCat(where, active, " active pods > ", b.max_active, after));
  for (const auto& [id, count] : ids) {
    if (count > 1) violations_.push_back(absl::StrCat(where, count, " active pods with instance id '", id, "'", after));
  }
}

void InvariantWatch::Replay(const json& e) {
  const std::string type = e.value("type", "");
  const json& obj = e.contains("object") && e["object"].is_object() ? e["object"] : json::object();
  if (type == "ERROR") {
    gone_ = obj.value("code", 0) == 410;
    return;
  }
  if (type == "SYNC") {  // a relist (Supervise): the pods as they are now
    for (auto& [ns, pods] : pods_) pods.clear();
    for (const json& pod : obj.value("items", json::array())) {
      const json meta = pod.value("metadata", json::object());
      const std::string ns = meta.value("namespace", "");
      if (workloads_.count(ns)) pods_[ns][meta.value("uid", "")] = pod;
      if (ns == "default") seen_default_.insert(meta.value("name", ""));
    }
    last_rv_ = obj.value("metadata", json::object()).value("resourceVersion", "");
    for (const auto& [ns, _] : workloads_) Check(ns, absl::StrCat(ns, " relist at rv ", last_rv_, ": "));
    return;
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") return;
  const json meta = obj.value("metadata", json::object());
  const std::string ns = meta.value("namespace", ""), uid = meta.value("uid", ""), name = meta.value("name", "");
  if (const std::string rv = meta.value("resourceVersion", ""); !rv.empty()) last_rv_ = rv;
  gone_ = false;
  if (ns == "default" && seen_default_.insert(name).second) {
    auto m = markers_.find(name);
    if (m != markers_.end()) {
      for (const auto& [mns, b] : m->second.second) {
        bounds_[mns] = b;
        since_[mns] = m->second.first;
        if (b.disarm) armed_.erase(mns);
      }
      markers_.erase(m);
    }
    return;
  }
  if (uid.empty() || !workloads_.count(ns)) return;
  ++events_;
  if (type == "DELETED") {
    pods_[ns].erase(uid);
  } else {
    pods_[ns][uid] = obj;
  }
  Check(ns, absl::StrCat(ns, " event ", events_, " (", type, " ", name, " rv ", meta.value("resourceVersion", ""),
                         "): "));
}

std::string InvariantWatch::Mark(const std::string& label, const std::map<std::string, PodBounds>& bounds) {
  const std::string name = absl::StrCat("invariant-watch-", reinterpret_cast<uintptr_t>(this), "-mark-", ++marks_);
  markers_[name] = {label, bounds};
  const CommandResult created =
      stack_->Kubectl({"apply", "-f", "-"}, SentinelYaml(name, ", labels: {invariant-watch-marker: \"true\"}"));
  if (created.exit_code != 0) return "creating the marker pod of " + label + ": " + created.output;
  return "";
}

std::string InvariantWatch::Supervise() {
  if (process_.Running()) return "";
  Advance();  // all the ended watch printed
  ++restarts_;
  // A watch that printed nothing may have been refused outright (an HTTP 410 rather than an ERROR event): relist.
  if (!gone_ && !last_rv_.empty() && segment_values_ > 0) {
    return StartSegment({"get", "--raw", absl::StrCat("/api/v1/pods?watch=true&resourceVersion=", last_rv_)});
  }
  ++relists_;
  const CommandResult list = stack_->Kubectl({"get", "--raw", "/api/v1/pods"});
  const json parsed = json::parse(list.output, nullptr, false);
  if (list.exit_code != 0 || parsed.is_discarded() || !parsed.contains("items")) {
    --restarts_;  // not restarted: the next call tries again
    --relists_;
    return "listing the pods to watch again: " + list.output;
  }
  StartSegment({});
  std::ofstream(segments_.back()) << json{{"type", "SYNC"}, {"object", parsed}}.dump() << "\n";
  const std::string rv = parsed["metadata"].value("resourceVersion", "");
  return StartSegment({"get", "--raw", absl::StrCat("/api/v1/pods?watch=true&resourceVersion=", rv)});
}

std::vector<std::string> InvariantWatch::Violations() {
  Advance();
  return violations_;
}

std::string InvariantWatch::Summary() const {
  return absl::StrCat(events_, " pod events, ", restarts_, " watch restarts, ", relists_, " relists");
}

std::string InvariantWatch::AwaitSentinel(const std::string& suffix, absl::Duration timeout) {
  const std::string name = absl::StrCat("invariant-watch-", reinterpret_cast<uintptr_t>(this), "-", suffix);
  // apply, not run: the embedded cluster takes JSON/YAML bodies, and apply sends those for every kind.
  const CommandResult created = stack_->Kubectl({"apply", "-f", "-"}, SentinelYaml(name, ""));
  if (created.exit_code != 0) return "creating the watch's sentinel pod: " + created.output;
  const bool seen = Poll([&] {
    (void)Supervise();
    Advance();
    return seen_default_.count(name) > 0;
  }, timeout);
  return seen ? "" : absl::StrCat("the pod watch did not show its sentinel pod ", name, " within ", absl::FormatDuration(timeout));
}

std::vector<std::string> InvariantWatch::Finish(size_t* events) {
  // The last events in flight: once the watch printed a pod created now, it printed every event before it.
  const std::string caught_up = AwaitSentinel("end", absl::Seconds(60));
  process_.Stop(absl::Seconds(2));
  Advance();
  std::vector<std::string> violations;
  if (!caught_up.empty()) violations.push_back(caught_up);
  violations.insert(violations.end(), violations_.begin(), violations_.end());
  if (events != nullptr) *events = events_;
  return violations;
}

std::string Unsettled(const FaultStack& stack, const Workload& w, const std::string& image) {
  const json pods = stack.GetJson({"pods", "-n", w.ns});
  const json pvcs = stack.GetJson({"pvc", "-n", w.ns});
  const json cs = stack.GetJson({"clonesets.apps.kruise.io", "app", "-n", w.ns});
  if (!pods.contains("items") || !pvcs.contains("items") || !cs.contains("status")) return w.ns + ": cannot read";
  std::set<std::string> claims, ids, names;
  int active = 0, updated = 0;
  for (const auto& p : pods["items"]) {
    const std::string name = p["metadata"].value("name", "");
    if (Terminating(p)) return absl::StrCat(w.ns, ": pod ", name, " terminating");
    ++active;
    if (!IsReady(p)) return absl::StrCat(w.ns, ": pod ", name, " not Ready");
    const std::string img = p["spec"]["containers"][0].value("image", "");
    if (img == image) {
      ++updated;
    } else if (w.partition == 0) {
      return absl::StrCat(w.ns, ": pod ", name, " runs ", img);
    }
    if (!ids.insert(InstanceId(p)).second) return absl::StrCat(w.ns, ": duplicate instance id ", InstanceId(p));
    for (const auto& v : p["spec"].value("volumes", json::array())) {
      if (v.contains("persistentVolumeClaim")) claims.insert(v["persistentVolumeClaim"].value("claimName", ""));
    }
  }
  if (active != w.replicas) return absl::StrCat(w.ns, ": ", active, " pods, want ", w.replicas);
  // A partition keeps that many pods back (no rollback when it rises: CloneSetPartitionRollback is off).
  const int want_updated = std::max(0, w.replicas - w.partition);
  if (updated < want_updated) {
    return absl::StrCat(w.ns, ": ", updated, " pods on ", image, ", want at least ", want_updated, " (partition ",
                        w.partition, ")");
  }
  std::set<std::string> pvc_names;
  const std::string cs_uid = cs["metadata"].value("uid", "");
  for (const auto& c : pvcs["items"]) {
    const std::string name = c["metadata"].value("name", "");
    if (Terminating(c)) return absl::StrCat(w.ns, ": PVC ", name, " terminating");
    bool owned = false;
    for (const auto& o : c["metadata"].value("ownerReferences", json::array())) {
      owned = owned || (o.value("uid", "") == cs_uid && o.value("controller", false));
    }
    if (!owned) return absl::StrCat(w.ns, ": PVC ", name, " orphaned (not controlled by the CloneSet)");
    if (w.pvc_reuse && !claims.count(name)) {
      if (ids.count(InstanceId(c))) return absl::StrCat(w.ns, ": PVC ", name, " unused but its instance id has a pod");
      continue;  // kept for reuse
    }
    pvc_names.insert(name);
  }
  if (pvc_names != claims) {
    std::string msg = absl::StrCat(w.ns, ": PVCs {");
    for (const auto& c : pvc_names) absl::StrAppend(&msg, c, " ");
    absl::StrAppend(&msg, "} != claims of the pods {");
    for (const auto& c : claims) absl::StrAppend(&msg, c, " ");
    return msg + "}";
  }
  const json& st = cs["status"];
  const int64_t generation = cs["metadata"].value("generation", int64_t{0});
  if (st.value("observedGeneration", int64_t{0}) != generation || st.value("updatedReadyReplicas", 0) != updated ||
      st.value("updatedReplicas", 0) != updated ||
      st.value("readyReplicas", 0) != w.replicas || st.value("replicas", 0) != w.replicas) {
    return absl::StrCat(w.ns, ": status not caught up: ", st.dump());
  }
  return "";
}

std::string WaitSettled(const FaultStack& stack, const std::vector<Workload>& ws, const std::string& image,
                        absl::Duration timeout) {
  std::string last;
  Poll([&] {
    for (const auto& w : ws) {
      last = Unsettled(stack, w, image);
      if (!last.empty()) return false;
    }
    return true;
  }, timeout, absl::Milliseconds(300));
  return last;
}

}  // namespace cloneset::testing
