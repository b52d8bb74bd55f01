// Size: one event loop (NodeSimulator::Impl) that owns every simulated pod's timers and the watch it reacts to;
// the models it drives are in files of their own (scheduler, kubelet, node_model, pvc_binder, images, events).
#include "devcluster/nodes/simulator.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cstdlib>
#include <mutex>
#include <queue>
#include <set>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/json_read.h"
#include "base/log.h"
#include "base/time_format.h"
#include "devcluster/nodes/cri_server.h"
#include "devcluster/nodes/events.h"
#include "devcluster/nodes/pvc_binder.h"
#include "devcluster/nodes/quantity.h"
#include "devcluster/nodes/scheduler.h"

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;

std::string KeyOf(const std::string& ns, const std::string& name) { return absl::StrCat(ns, "/", name); }
std::pair<std::string, std::string> SplitKey(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

using base::json_read::Str;

const json& Obj(const json& obj, const char* key) {
  static const json kEmpty = json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

struct NodeRuntime {
  NodeSlot slot;
  std::bitset<kPodsPerCidr> ips;
  bool ready = true;
  TimePoint last_heartbeat{};
  std::unique_ptr<ImageStore> images;
  std::unique_ptr<CriServer> cri;
};

struct PodEntry {
  int32_t node = -1;  // accounted on this node
  int16_t ip_slot = -1;
  PodRequest request;
  int64_t written_rv = 0;  // the RV our own last write produced: its echo needs no re-evaluation
  TimePoint wake{};
  bool killing_reported = false;  // the graceful deletion's Killing events were written
  std::unique_ptr<PodProgress> progress;
};

struct NodeSimulator::Impl {
  Store* store;
  base::Clock* clock;
  SimulatorConfig config;
  std::unique_ptr<CriMetrics> metrics;
  std::unique_ptr<EventRecorder> events;  // null with --pod-events=false
  std::vector<NodeRuntime> nodes;
  absl::flat_hash_map<std::string, int> node_index;

  absl::flat_hash_map<std::string, PodEntry> pods;
  std::set<std::string> unscheduled;  // sorted: deterministic scheduling order
  bool retry_unschedulable = false;
  absl::flat_hash_map<std::string, json> dirty;  // key -> latest object (null: fetch)
  using Timer = std::pair<TimePoint, std::string>;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;

  std::map<std::string, json> classes;
  std::set<std::string> pending_claims;
  bool claims_dirty = false;

  std::unique_ptr<Watcher> pod_watch, node_watch, pvc_watch, class_watch;
  std::thread thread;
  std::atomic<bool> stop{false};
  const bool debug = std::getenv("DEVCLUSTER_SIM_DEBUG") != nullptr;
  mutable std::mutex stats_mu;
  SimulatorStats stats;
  // AwaitIdle's signal: passes begun, and the last pass that found nothing to do.
  absl::Mutex idle_mu;
  uint64_t passes_begun ABSL_GUARDED_BY(idle_mu) = 0;
  uint64_t last_idle_pass ABSL_GUARDED_BY(idle_mu) = 0;
  bool stopped ABSL_GUARDED_BY(idle_mu) = false;

  void Count(uint64_t SimulatorStats::*field) {
    std::lock_guard<std::mutex> l(stats_mu);
    ++(stats.*field);
  }

  // ---- pods ---------------------------------------------------------------------------------------------
  void Unaccount(PodEntry& e) {
    if (e.node >= 0) {
      nodes[e.node].slot.Add(e.request, -1);
      if (e.ip_slot >= 0) nodes[e.node].ips.reset(e.ip_slot);
      retry_unschedulable = true;
    }
    e.node = -1;
    e.ip_slot = -1;
  }

  void OnPod(const WatchEvent& ev) {
    const StoredObject& so = *ev.object;
    std::string key = KeyOf(so.ns, so.name);
    if (ev.type == EventType::kDeleted) {
      auto it = pods.find(key);
      if (it != pods.end()) {
        Unaccount(it->second);
        pods.erase(it);
      }
      unscheduled.erase(key);
      dirty.erase(key);
      return;
    }
    PodEntry& e = pods[key];
    // Our own write echoing back, or an older version than one we already wrote: nothing new to decide.
    if (so.resource_version <= e.written_rv) return;
    json pod = so.Parse();
    const std::string node = Str(Obj(pod, "spec"), "nodeName");
    const std::string phase = Str(Obj(pod, "status"), "phase");
    if (node.empty()) {
      if (so.deleting) {
        // Like kube-apiserver: an unscheduled pod has no kubelet to wait for.
        if (store->DeleteNow(kPods, so.ns, so.name).ok()) Count(&SimulatorStats::pod_removals);
        return;
      }
      e.request = RequestOf(pod);
      unscheduled.insert(key);
      return;
    }
    unscheduled.erase(key);
    auto nit = node_index.find(node);
    int idx = nit == node_index.end() ? -1 : nit->second;
    if (so.deleting && !e.killing_reported && idx >= 0 && phase != "Succeeded" && phase != "Failed") {
      e.killing_reported = true;
      if (events)
        for (const auto& ev : KillingEvents(pod)) events->Record(pod, ev, {"kubelet", node});
    }
    bool terminal = phase == "Succeeded" || phase == "Failed";
    if (e.node != idx || terminal) {
      Unaccount(e);
      if (idx >= 0 && !terminal) {
        e.request = RequestOf(pod);
        nodes[idx].slot.Add(e.request, +1);
        e.node = idx;
      }
    }
    if (idx >= 0 && !terminal) dirty[key] = std::move(pod);
  }

  int AllocateIp(PodEntry& e, int idx, const json& pod) {
    if (e.ip_slot >= 0) return e.ip_slot;
    auto& ips = nodes[idx].ips;
    if (auto slot = PodIpSlot(idx, Str(Obj(pod, "status"), "podIP")); slot && !ips.test(*slot)) {
      e.ip_slot = static_cast<int16_t>(*slot);
    } else {
      for (int i = 0; i < kPodsPerCidr; ++i) {
        if (!ips.test(i)) {
          e.ip_slot = static_cast<int16_t>(i);
          break;
        }
      }
    }
    if (e.ip_slot >= 0) ips.set(e.ip_slot);
    return e.ip_slot;
  }

  void EvaluatePod(const std::string& key, json pod, TimePoint now) {
    auto it = pods.find(key);
    if (it == pods.end() || it->second.node < 0) return;
    PodEntry& e = it->second;
    auto [ns, name] = SplitKey(key);
    if (pod.is_null()) {
      auto got = store->Get(kPods, ns, name);
      if (!got.ok()) return;
      pod = std::move(*got);
    }
    NodeRuntime& n = nodes[e.node];
    int slot = AllocateIp(e, e.node, pod);
    // What an in-place resize of this pod must fit in: the node's allocatable beside its other pods' requests.
    NodeContext ctx{.name = n.slot.name,
                    .host_ip = HostIp(e.node),
                    .ready = n.ready,
                    .resize = {.cpu_milli_capacity = n.slot.alloc_cpu_milli,
                               .memory_capacity = n.slot.alloc_memory_bytes,
                               .cpu_milli_used = n.slot.req_cpu_milli - e.request.cpu_milli,
                               .memory_used = n.slot.req_memory_bytes - e.request.memory_bytes}};
    // Decide on a copy: the progress only advances when the resulting status is actually stored, so a
    // decision taken on a stale object (conflict) cannot make us forget a transition we reported.
    PodProgress next = e.progress ? *e.progress : PodProgress();
    ImageStore* images = n.images.get();
    KubeletDecision d = DecidePod(pod, next, ctx, slot >= 0 ? PodIp(e.node, slot) : "", config.timing, now,
                                  [&](const std::string& image) { return images->EnsurePull(image, now); });
    if (debug) {
      base::ProcessLogger().Info("node simulator: eval",
                                 {{"pod", key},
                                  {"now", base::FormatTime(absl::FromChrono(now))},
                                  {"resource_version", Str(Obj(pod, "metadata"), "resourceVersion")},
                                  {"status", d.status.has_value()},
                                  {"wake", d.wake_at ? base::FormatTime(absl::FromChrono(*d.wake_at)) : "-"},
                                  {"keep", d.keep_progress},
                                  {"entry_wake", base::FormatTime(absl::FromChrono(e.wake))}});
    }
    auto commit = [&] {
      if (d.keep_progress) {
        e.progress = std::make_unique<PodProgress>(std::move(next));
      } else {
        e.progress.reset();
      }
    };
    if (d.remove) {
      auto st = store->DeleteNow(kPods, ns, name);
      if (st.ok()) {
        Count(&SimulatorStats::pod_removals);
      } else if (!absl::IsNotFound(st)) {
        Count(&SimulatorStats::write_errors);
      }
      return;
    }
    if (d.status) {
      json old_status = pod.contains("status") ? pod["status"] : json::object();
      json update = std::move(pod);
      update["status"] = std::move(*d.status);
      auto written = store->UpdateStatus(kPods, std::move(update));
      if (written.ok()) {
        commit();
        if (d.resize_accepted) {  // the node now holds the pod's new requests
          n.slot.Add(e.request, -1);
          e.request = RequestOf(*written);
          n.slot.Add(e.request, +1);
        }
        if (events)
          for (const auto& ev : KubeletEvents(*written, old_status, (*written)["status"]))
            events->Record(*written, ev, {"kubelet", n.slot.name});
        Count(&SimulatorStats::pod_status_writes);
        e.written_rv = std::stoll(Str(Obj(*written, "metadata"), "resourceVersion"));
      } else if (absl::IsAborted(written.status())) {
        Count(&SimulatorStats::conflicts);
        dirty.emplace(key, json());  // re-read and decide again
        return;
      } else {
        if (!absl::IsNotFound(written.status())) Count(&SimulatorStats::write_errors);
        return;
      }
    } else {
      commit();
    }
    if (d.wake_at && (e.wake <= now || *d.wake_at < e.wake)) {
      e.wake = *d.wake_at;
      timers.emplace(*d.wake_at, key);
    }
  }

  void SchedulePending(TimePoint now) {
    if (unscheduled.empty()) return;
    std::vector<NodeSlot> slots;
    slots.reserve(nodes.size());
    for (const auto& n : nodes) slots.push_back(n.slot);
    const std::string now_s = base::FormatTime(absl::FromChrono(now));
    std::optional<std::vector<json>> class_list;  // read once per pass, when a pod mounts claims
    for (auto it = unscheduled.begin(); it != unscheduled.end();) {
      const std::string key = *it;
      auto pit = pods.find(key);
      if (pit == pods.end()) {
        it = unscheduled.erase(it);
        continue;
      }
      PodEntry& e = pit->second;
      auto [ns, name] = SplitKey(key);
      // Like kube-scheduler's VolumeBinding plugin: a pod whose claim is missing, being deleted or unbound stays
      // Pending on every node (and so never runs) until the claim is Bound; the retry is this loop.
      ClaimsVerdict claims_verdict;
      if (!e.request.claims.empty()) {
        claims_verdict = CheckClaims(
            e.request.claims, slots.size(),
            [&](const std::string& claim) {
              auto got = store->Get(kPersistentVolumeClaims, ns, claim);
              return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
            },
            class_list ? *class_list : *(class_list = ClassList()));
      }
      Placement p = claims_verdict.unschedulable
                        ? Placement{.node = std::nullopt, .message = *claims_verdict.unschedulable}
                        : PickNode(e.request, slots);
      if (p.node && !claims_verdict.awaiting_node.empty()) {
        // WaitForFirstConsumer: the node is chosen; its claims are provisioned for it (BindClaims) and the pod
        // is bound on a later pass once they are Bound. Waiting writes nothing on the pod, as kube-scheduler's
        // PreBind wait does not.
        for (const std::string& claim : claims_verdict.awaiting_node) {
          (void)store->Mutate(kPersistentVolumeClaims, ns, claim, false, [&](json& pvc) {
            json& ann = pvc["metadata"]["annotations"];
            if (ann.is_object() && ann.contains(kSelectedNodeAnnotation)) {
              return absl::FailedPreconditionError("node already selected");
            }
            ann[kSelectedNodeAnnotation] = slots[*p.node].name;
            return absl::OkStatus();
          });
        }
        claims_dirty = true;
        ++it;
        continue;
      }
      if (!p.node) {
        // Only the first failure is written; later retries keep the message unless it changes.
        auto r = store->Mutate(kPods, ns, name, true, [&](json& pod) {
          ApplyUnschedulable(pod, p.message, now_s);
          return absl::OkStatus();
        });
        if (r.ok()) {
          int64_t rv = std::stoll(Str(Obj(*r, "metadata"), "resourceVersion"));
          // Only a changed verdict is news (a retry that finds the same nodes full writes nothing).
          if (events && rv != e.written_rv)
            events->Record(*r, {"Warning", "FailedScheduling", p.message, ""}, {"default-scheduler", ""});
          e.written_rv = rv;
        }
        Count(&SimulatorStats::unschedulable);
        ++it;
        continue;
      }
      const std::string node = slots[*p.node].name;
      auto bound = store->Mutate(kPods, ns, name, false, [&](json& pod) {
        json& spec = pod["spec"];
        if (!Str(spec, "nodeName").empty()) return absl::FailedPreconditionError("already bound");
        spec["nodeName"] = node;
        return absl::OkStatus();
      });
      it = unscheduled.erase(it);
      if (!bound.ok()) {
        // Deleted or bound elsewhere: its event tells us. Anything else is a bug worth a log line.
        if (!absl::IsNotFound(bound.status()) && !absl::IsFailedPrecondition(bound.status())) {
          base::ProcessLogger().Warn("node simulator: binding failed",
                                     {{"pod", key}, {"node", node}, {"error", bound.status().ToString()}});
          Count(&SimulatorStats::write_errors);
        }
        continue;
      }
      auto cond = store->Mutate(kPods, ns, name, true, [&](json& pod) {
        ApplyBinding(pod, node, now_s);
        return absl::OkStatus();
      });
      Count(&SimulatorStats::bindings);
      slots[*p.node].Add(e.request, +1);
      int idx = node_index[node];
      nodes[idx].slot.Add(e.request, +1);
      e.node = idx;
      if (events)
        events->Record(cond.ok() ? *cond : *bound,
                       {"Normal", "Scheduled", absl::StrCat("Successfully assigned ", ns, "/", name, " to ", node), ""},
                       {"default-scheduler", ""});
      if (cond.ok()) {
        e.written_rv = std::stoll(Str(Obj(*cond, "metadata"), "resourceVersion"));
        dirty[key] = std::move(*cond);
      }
    }
  }

  // ---- nodes --------------------------------------------------------------------------------------------
  void WriteNodeStatus(int idx, bool heartbeat, TimePoint now) {
    NodeRuntime& n = nodes[idx];
    const std::string now_s = base::FormatTime(absl::FromChrono(now));
    bool ready = n.ready;
    // Taints live in spec, conditions in status: two writes, each a no-op when nothing changed.
    auto spec_write = store->Mutate(kNodes, "", n.slot.name, false, [&](json& node) {
      ApplyNodeStatus(node, ready, false, now_s);
      return absl::OkStatus();
    });
    auto status_write = store->Mutate(kNodes, "", n.slot.name, true, [&](json& node) {
      ApplyNodeStatus(node, ready, heartbeat, now_s);
      return absl::OkStatus();
    });
    if (!spec_write.ok() || !status_write.ok()) Count(&SimulatorStats::write_errors);
    if (heartbeat) n.last_heartbeat = now;
  }

  void OnNode(const WatchEvent& ev, TimePoint now) {
    auto it = node_index.find(ev.object->name);
    if (it == node_index.end() || ev.type == EventType::kDeleted) return;
    json node = ev.object->Parse();
    NodeRuntime& n = nodes[it->second];
    bool ready = NodeShouldBeReady(node, config.not_ready_nodes);
    n.slot.unschedulable = Obj(node, "spec").value("unschedulable", false) == true;
    std::string stored_ready;
    if (const auto& conds = Obj(node, "status").value("conditions", json::array()); conds.is_array()) {
      for (const auto& cond : conds) {
        if (Str(cond, "type") == "Ready") stored_ready = Str(cond, "status");
      }
    }
    if (ready == n.ready && stored_ready == (ready ? "True" : "Unknown")) return;
    bool flipped = ready != n.ready;
    n.ready = n.slot.ready = ready;
    retry_unschedulable = true;
    WriteNodeStatus(it->second, ready, now);
    if (!flipped) return;
    for (auto& [key, e] : pods) {
      if (e.node == it->second) dirty.emplace(key, json());
    }
  }

  void Heartbeats(TimePoint now) {
    if (config.heartbeat_interval <= Duration::zero()) return;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].ready && now - nodes[i].last_heartbeat >= config.heartbeat_interval) {
        WriteNodeStatus(static_cast<int>(i), true, now);
      }
    }
  }

  // ---- volumes ------------------------------------------------------------------------------------------
  void OnClaim(const WatchEvent& ev) {
    std::string key = KeyOf(ev.object->ns, ev.object->name);
    if (ev.type == EventType::kDeleted) {
      pending_claims.erase(key);
      return;
    }
    json pvc = ev.object->Parse();
    if (Str(Obj(pvc, "status"), "phase") == "Bound" && !Str(Obj(pvc, "spec"), "volumeName").empty()) {
      pending_claims.erase(key);
    } else {
      pending_claims.insert(key);
    }
  }

  std::vector<json> ClassList() const {
    std::vector<json> class_list;
    class_list.reserve(classes.size());
    for (const auto& [name, sc] : classes) class_list.push_back(sc);
    return class_list;
  }

  void BindClaims(TimePoint now) {
    if (pending_claims.empty()) return;
    const std::vector<json> class_list = ClassList();
    const std::string now_s = base::FormatTime(absl::FromChrono(now));
    for (auto it = pending_claims.begin(); it != pending_claims.end();) {
      auto [ns, name] = SplitKey(*it);
      auto pvc = store->Get(kPersistentVolumeClaims, ns, name);
      if (!pvc.ok()) {
        it = pending_claims.erase(it);
        continue;
      }
      std::optional<json> existing;
      std::string volume = Str(Obj(*pvc, "spec"), "volumeName");
      if (volume.empty()) volume = "pvc-" + Str(Obj(*pvc, "metadata"), "uid");
      if (auto pv = store->Get(kPersistentVolumes, "", volume); pv.ok()) existing = std::move(*pv);
      PvcDecision d = DecidePvc(*pvc, class_list, existing, now_s);
      if (d.volume) {
        auto created = store->Create(kPersistentVolumes, *d.volume);
        if (created.ok()) {
          Count(&SimulatorStats::volumes_provisioned);
          (void)store->Mutate(kPersistentVolumes, "", volume, true, [](json& pv) {
            pv["status"]["phase"] = "Bound";
            return absl::OkStatus();
          });
        } else if (!absl::IsAlreadyExists(created.status())) {
          Count(&SimulatorStats::write_errors);
          ++it;
          continue;
        }
      }
      if (!d.volume_name.empty() || d.class_to_record) {
        (void)store->Mutate(kPersistentVolumeClaims, ns, name, false, [&](json& obj) {
          if (!d.volume_name.empty()) obj["spec"]["volumeName"] = d.volume_name;
          if (d.class_to_record) obj["spec"]["storageClassName"] = *d.class_to_record;
          if (!d.volume_name.empty()) obj["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
          return absl::OkStatus();
        });
      }
      if (d.claim_status) {
        (void)store->Mutate(kPersistentVolumeClaims, ns, name, true, [&](json& obj) {
          obj["status"] = *d.claim_status;
          return absl::OkStatus();
        });
      }
      ++it;  // the resulting Bound event removes it from the set
    }
  }

  // ---- loop ---------------------------------------------------------------------------------------------
  absl::StatusOr<std::unique_ptr<Watcher>> OpenWatch(const char* resource) {
    return store->Watch(resource, WatchOptions{});
  }

  // Applies one event; reopens a watch that fell behind (410) so its ADDED replay resynchronises us.
  bool Drain(std::unique_ptr<Watcher>& w, const char* resource, std::chrono::milliseconds timeout, TimePoint now) {
    if (w == nullptr) return false;
    WatchEvent ev;
    if (!w->Next(&ev, timeout)) return false;
    switch (ev.type) {
      case EventType::kError: {
        base::ProcessLogger().Warn("node simulator: watch expired, resyncing",
                                   {{"resource", std::string(resource)}, {"error", ev.error.ToString()}});
        auto re = OpenWatch(resource);
        if (re.ok()) w = std::move(*re);
        return true;
      }
      case EventType::kBookmark:
        return true;
      default:
        break;
    }
    if (&w == &pod_watch) {
      OnPod(ev);
    } else if (&w == &node_watch) {
      OnNode(ev, now);
    } else if (&w == &pvc_watch) {
      OnClaim(ev);
      claims_dirty = true;
    } else if (&w == &class_watch) {
      if (ev.type == EventType::kDeleted) {
        classes.erase(ev.object->name);
      } else {
        classes[ev.object->name] = ev.object->Parse();
      }
      claims_dirty = true;  // a new (default) class may make pending claims bindable
    }
    return true;
  }

  void Run() {
    while (!stop) {
      uint64_t pass;
      {
        absl::MutexLock l(&idle_mu);
        pass = ++passes_begun;
      }
      // Idle: this pass applied no event, fired no timer, evaluated nothing and wrote nothing (a write of ours
      // echoes as an event in the next pass, or is an Event object, which moves the resource version too).
      const int64_t rv_at_start = store->CurrentResourceVersion();
      bool busy = false;
      TimePoint now = clock->ChronoNow();
      int drained = 0;
      constexpr int kBatch = 4096;  // bound the latency of timers while a flood of events arrives
      while (drained < kBatch && Drain(pod_watch, kPods, std::chrono::milliseconds(0), now)) ++drained;
      busy = drained > 0;
      while (Drain(node_watch, kNodes, std::chrono::milliseconds(0), now)) busy = true;
      while (Drain(class_watch, kStorageClasses, std::chrono::milliseconds(0), now)) busy = true;
      while (Drain(pvc_watch, kPersistentVolumeClaims, std::chrono::milliseconds(0), now)) busy = true;
      now = clock->ChronoNow();
      while (!timers.empty() && timers.top().first <= now) {
        auto [t, key] = timers.top();
        timers.pop();
        auto it = pods.find(key);
        if (it != pods.end() && it->second.wake == t) dirty.emplace(key, json());
      }
      busy = busy || !dirty.empty() || claims_dirty;
      for (auto& n : nodes) n.images->Settle(now);
      if (!unscheduled.empty()) SchedulePending(now);
      retry_unschedulable = false;
      auto work = std::move(dirty);
      dirty.clear();
      for (auto& [key, pod] : work) EvaluatePod(key, std::move(pod), now);
      if (claims_dirty) {
        claims_dirty = false;
        BindClaims(now);
      }
      Heartbeats(now);
      if (!dirty.empty() || drained == kBatch) continue;
      // Sleep until the next deadline, an event, or the poll bound (the clock may be fake).
      std::chrono::milliseconds wait = config.poll_interval;
      if (!timers.empty()) {
        auto until = std::chrono::duration_cast<std::chrono::milliseconds>(timers.top().first - clock->ChronoNow());
        wait = std::clamp(until, std::chrono::milliseconds(0), wait);
      }
      if (Drain(pod_watch, kPods, wait, clock->ChronoNow())) busy = true;
      if (!busy && store->CurrentResourceVersion() == rv_at_start) {
        absl::MutexLock l(&idle_mu);
        last_idle_pass = pass;
      }
    }
  }
};

NodeSimulator::NodeSimulator(Store* store, base::Clock* clock, SimulatorConfig config)
    : impl_(std::make_unique<Impl>()) {
  impl_->store = store;
  impl_->clock = clock;
  impl_->config = std::move(config);
}

NodeSimulator::~NodeSimulator() { Stop(); }

absl::Status NodeSimulator::Start() {
  Impl& s = *impl_;
  if (s.config.nodes < 0) return absl::InvalidArgumentError("--nodes must not be negative");
  s.metrics = std::make_unique<CriMetrics>(s.config.registry);
  if (s.config.pod_events) s.events = std::make_unique<EventRecorder>(s.store, s.clock, s.config.max_events);
  const std::string now_s = base::FormatTime(absl::FromChrono(s.clock->ChronoNow()));
  s.nodes.resize(s.config.nodes);
  for (int i = 0; i < s.config.nodes; ++i) {
    auto node = MakeNode(i, s.config.shape, now_s);
    if (!node.ok()) return node.status();
    NodeRuntime& n = s.nodes[i];
    n.slot.name = NodeName(i);
    for (const auto& [k, v] : (*node)["metadata"]["labels"].items()) n.slot.labels.emplace_back(k, v.get<std::string>());
    std::sort(n.slot.labels.begin(), n.slot.labels.end());
    const json& alloc = (*node)["status"]["allocatable"];
    // MakeNode validated these quantities.
    n.slot.alloc_cpu_milli = ParseMilliQuantity(alloc["cpu"], "cpu").value_or(0);
    n.slot.alloc_memory_bytes = ParseQuantity(alloc["memory"], "memory").value_or(0);
    n.slot.alloc_pods = ParseQuantity(alloc["pods"], "pods").value_or(0);
    n.images = std::make_unique<ImageStore>(n.slot.name, &s.config.images, s.metrics.get());
    for (const auto& image : s.config.preloaded_images) n.images->Preload(image);
    s.node_index[n.slot.name] = i;
    auto existing = s.store->Get(kNodes, "", n.slot.name);
    if (absl::IsNotFound(existing.status())) {
      auto created = s.store->Create(kNodes, *node);
      if (!created.ok()) return created.status();
      (void)s.store->Mutate(kNodes, "", n.slot.name, true, [&](json& obj) {
        obj["status"] = (*node)["status"];
        return absl::OkStatus();
      });
    } else if (!existing.ok()) {
      return existing.status();
    }
    n.ready = n.slot.ready = true;
    n.last_heartbeat = s.clock->ChronoNow();
    if (!s.config.run_dir.empty() && i < s.config.cri_socket_nodes) {
      auto cri = CriServer::Start(CriSocket(n.slot.name), n.images.get(), s.clock);
      if (!cri.ok()) return cri.status();
      n.cri = std::move(*cri);
    }
  }
  if (!s.config.default_storage_class.empty()) {
    // The cluster's default StorageClass, as a real cluster's installer creates one (the real backend's is
    // "standard" too, tools/run.d/real_cluster.sh). Created at start when missing: a class the user changed
    // stays changed, a deleted one is back after a restart.
    auto existing = s.store->Get(kStorageClasses, "", s.config.default_storage_class);
    if (absl::IsNotFound(existing.status())) {
      auto created = s.store->Create(kStorageClasses, DefaultStorageClassObject(s.config.default_storage_class));
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
    } else if (!existing.ok()) {
      return existing.status();
    }
  }
  for (auto [w, r] : {std::pair{&s.node_watch, kNodes}, std::pair{&s.class_watch, kStorageClasses},
                      std::pair{&s.pvc_watch, kPersistentVolumeClaims}, std::pair{&s.pod_watch, kPods}}) {
    auto opened = s.OpenWatch(r);
    if (!opened.ok()) return opened.status();
    *w = std::move(*opened);
  }
  // Nodes start Ready; those the flag or annotation marks otherwise flip on their first (synthetic) event.
  s.thread = std::thread([&s] { s.Run(); });
  return absl::OkStatus();
}

void NodeSimulator::Stop() {
  if (!impl_) return;
  impl_->stop = true;
  {
    absl::MutexLock l(&impl_->idle_mu);
    impl_->stopped = true;
  }
  if (impl_->pod_watch) impl_->pod_watch->Stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  for (auto& n : impl_->nodes) {
    if (n.cri) n.cri->Stop();
  }
}

ImageStore* NodeSimulator::Images(const std::string& node) {
  auto it = impl_->node_index.find(node);
  return it == impl_->node_index.end() ? nullptr : impl_->nodes[it->second].images.get();
}

std::string NodeSimulator::CriSocket(const std::string& node) const {
  auto it = impl_->node_index.find(node);
  if (impl_->config.run_dir.empty() || it == impl_->node_index.end() || it->second >= impl_->config.cri_socket_nodes) {
    return "";
  }
  return absl::StrCat(impl_->config.run_dir, "/nodes/", node, "/cri.sock");
}

bool NodeSimulator::AwaitIdle(absl::Duration timeout) {
  Impl& s = *impl_;
  absl::MutexLock l(&s.idle_mu);
  const uint64_t begun = s.passes_begun;
  auto idle = [&s, begun]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return s.stopped || s.last_idle_pass > begun; };
  return s.idle_mu.AwaitWithTimeout(absl::Condition(&idle), timeout) && !s.stopped;
}

SimulatorStats NodeSimulator::Stats() const {
  std::lock_guard<std::mutex> l(impl_->stats_mu);
  return impl_->stats;
}

absl::StatusOr<std::unique_ptr<NodeSimulator>> StartNodeSimulator(Store& store, base::Clock& clock,
                                                                  const SimulatorConfig& config) {
  auto sim = std::make_unique<NodeSimulator>(&store, &clock, config);
  if (auto st = sim->Start(); !st.ok()) return st;
  return sim;
}

}  // namespace cloneset::devcluster::nodes
