#include "tools/clonesetctl/sim_cluster.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "base/json_read.h"
#include "base/time_format.h"
#include "devcluster/api_server.h"
#include "devcluster/nodes/kubelet.h"
#include "devcluster/nodes/node_model.h"
#include "devcluster/nodes/scheduler.h"
#include "devcluster/patch.h"
#include "devcluster/store.h"
#include "kruise/keys.h"
#include "kube/api_status.h"
#include "planapi/applier.h"
#include "planner/predicates.h"
#include "snapshot/patch.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;
namespace json_read = ::cloneset::base::json_read;
namespace nodes = ::cloneset::devcluster::nodes;

// The store's clock: the simulation's `now`, set before every call. Nothing in the store or its REST layer waits.
class SimClock final : public base::Clock {
 public:
  absl::Time Now() const override { return now_; }
  void SleepUntil(absl::Time) const override {}
  bool AwaitWithDeadline(absl::Mutex*, const absl::Condition& condition, absl::Time) const override {
    return condition.Eval();
  }
  void Set(absl::Time now) { now_ = std::max(now_, now); }

 private:
  absl::Time now_ = absl::UnixEpoch();
};

// The annotation that makes the embedded cluster's kubelet crash a pod's containers in a loop (never ready).
constexpr char kCrashLoop[] = "crash-loop";

std::string Label(const Json& object, const std::string& key) {
  return json_read::Str(json_read::Member(json_read::Member(object, "metadata"), "labels"), key);
}

devcluster::ListOptions InNamespace(const std::string& ns) {
  devcluster::ListOptions options;
  options.ns = ns;
  return options;
}

bool HasOwner(const pb::ObjectMeta& meta, const std::string& uid) {
  return std::any_of(meta.owner_references().begin(), meta.owner_references().end(),
                     [&](const pb::OwnerReference& o) { return o.uid() == uid; });
}

}  // namespace

struct SimCluster::State {
  SimClock clock;
  devcluster::Store store{&clock};
  devcluster::ApiServer api{&store, devcluster::ApiServerOptions{}};
  std::vector<nodes::NodeSlot> slots;  // the simulated nodes, with what their pods request
  struct PodRuntime {
    int node = -1;  // index into slots once bound
    int ip_slot = 0;
    nodes::PodProgress progress;
    bool has_progress = false;
    nodes::PodRequest request;
    std::optional<absl::Time> wake_at;  // the kubelet's next own change
  };
  std::map<std::string, PodRuntime> runtime;  // by pod name
  int next_ip_slot = 0;
  std::set<std::string> failing;  // pods made to crash in a loop
};

SimCluster::SimCluster(SimOptions options, absl::Time now)
    : options_(options), rng_(options.seed), state_(std::make_unique<State>()) {
  if (options_.nodes < 1) options_.nodes = 1;
  state_->clock.Set(now);
  const std::string now_s = base::FormatTime(now);
  for (int i = 0; i < options_.nodes; ++i) {
    // Node shapes are the embedded cluster's defaults; MakeNode validated them, so the store takes them.
    auto node = nodes::MakeNode(i, nodes::NodeShape{}, now_s);
    if (!node.ok()) continue;
    (void)state_->store.Create(devcluster::kNodes, *node);
    (void)state_->store.Mutate(devcluster::kNodes, "", nodes::NodeName(i), true, [&](Json& obj) {
      obj["status"] = (*node)["status"];
      return absl::OkStatus();
    });
    state_->slots.push_back(nodes::SlotOf(*node));
  }
}

SimCluster::~SimCluster() = default;
SimCluster::SimCluster(SimCluster&&) noexcept = default;
SimCluster& SimCluster::operator=(SimCluster&&) noexcept = default;

std::string SimCluster::Namespace() const {
  return clone_set_.metadata().namespace_().empty() ? "default" : clone_set_.metadata().namespace_();
}

absl::StatusOr<Json> SimCluster::Send(const std::string& method, const std::string& path,
                                      const std::string& content_type, const std::string& body, absl::Time now) {
  state_->clock.Set(now);
  devcluster::ApiRequest req;
  req.method = method;
  req.path = path;
  if (!content_type.empty()) req.headers["content-type"] = content_type;
  req.headers["user-agent"] = "clonesetctl-simulate";
  req.body = body;
  const devcluster::ApiResponse resp = state_->api.Handle(req);
  if (resp.status >= 300) return kube::StatusFromHttp(resp.status, resp.body);
  Json parsed;
  if (!json_read::ParseJsonObject(resp.body, &parsed)) parsed = Json::object();
  return parsed;
}

absl::Status SimCluster::ApplyCloneSet(const std::string& json, absl::Time now) {
  Json doc;
  if (!json_read::ParseJsonObject(json, &doc)) return absl::InvalidArgumentError("CloneSet: expected a JSON object");
  const bool first = clone_set_json_.empty();
  int64_t generation = 1;
  if (!first) {
    const Json old = Json::parse(clone_set_json_);
    generation = old["metadata"].value("generation", int64_t{1});
    if (old.value("spec", Json()) != doc.value("spec", Json())) ++generation;
    doc["metadata"]["uid"] = old["metadata"]["uid"];
    doc["metadata"]["creationTimestamp"] = old["metadata"]["creationTimestamp"];
  } else {
    doc["metadata"]["uid"] = "sim-cloneset-uid";
    doc["metadata"]["creationTimestamp"] = base::FormatTime(now);
  }
  if (!doc["metadata"].contains("namespace")) doc["metadata"]["namespace"] = "default";
  doc["metadata"]["generation"] = generation;
  doc["metadata"]["resourceVersion"] = std::to_string(state_->store.CurrentResourceVersion());
  doc.erase("status");
  auto decoded = snapshot::CloneSetFromJson(doc.dump());
  if (!decoded.ok()) return decoded.status();
  if (first) {
    // The CloneSet's namespace, for its pods and claims.
    const Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"},
                     {"metadata", {{"name", doc["metadata"]["namespace"]}}}};
    auto created = Send("POST", "/api/v1/namespaces", "application/json", ns.dump(), now);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  const pb::CloneSetStatus kept = clone_set_.status();
  clone_set_ = *std::move(decoded);
  *clone_set_.mutable_status() = kept;
  clone_set_json_ = doc.dump();
  return absl::OkStatus();
}

std::map<std::string, pb::Pod> SimCluster::pods() const {
  std::map<std::string, pb::Pod> out;
  auto listed = state_->store.ListObjects(devcluster::kPods, InNamespace(Namespace()));
  if (!listed.ok()) return out;
  for (const Json& pod : *listed) {
    auto decoded = snapshot::PodFromJson(pod.dump());
    if (decoded.ok()) out[decoded->metadata().name()] = *std::move(decoded);
  }
  return out;
}

std::map<std::string, pb::PersistentVolumeClaim> SimCluster::pvcs() const {
  std::map<std::string, pb::PersistentVolumeClaim> out;
  auto listed = state_->store.ListObjects(devcluster::kPersistentVolumeClaims, InNamespace(Namespace()));
  if (!listed.ok()) return out;
  for (const Json& pvc : *listed) {
    auto decoded = snapshot::PvcFromJson(pvc.dump());
    if (decoded.ok()) out[decoded->metadata().name()] = *std::move(decoded);
  }
  return out;
}

planapi::PlanSnapshot SimCluster::Snapshot(absl::Time now) const {
  planapi::OwnedObjects objects;
  for (auto& [_, pod] : pods()) objects.pods.push_back(std::move(pod));
  for (auto& [_, pvc] : pvcs()) objects.pvcs.push_back(std::move(pvc));
  if (auto revs = state_->store.ListObjects(devcluster::kControllerRevisions, InNamespace(Namespace())); revs.ok()) {
    for (const Json& rev : *revs) {
      auto decoded = snapshot::RevisionFromJson(rev.dump());
      if (decoded.ok()) objects.revisions.push_back(*std::move(decoded));
    }
  }
  const devcluster::Store* store = &state_->store;
  const planapi::NodeLookup lookup = [store](const std::vector<std::string>& names) {
    std::vector<pb::Node> out;
    for (const std::string& name : names) {
      auto node = store->Get(devcluster::kNodes, "", name);
      if (!node.ok()) continue;
      auto decoded = snapshot::NodeFromJson(node->dump());
      if (decoded.ok()) out.push_back(*std::move(decoded));
    }
    return out;
  };
  return planapi::AssembleRequest(clone_set_, std::move(objects), lookup, now,
                                  planapi::RequestOptions{.feature_gates = options_.feature_gates});
}

// The writer of one plan: every action is sent at `now`; what happened goes to `out`.
class SimCluster::Writer final : public planapi::PlanWriter {
 public:
  Writer(SimCluster& cluster, absl::Time now, AppliedPlan& out) : cluster_(cluster), now_(now), out_(out) {}
  bool MayWrite() override { return true; }
  absl::StatusOr<bool> CloneSetExists() override { return true; }
  absl::Status Write(const pb::Action& action) override { return cluster_.ApplyAction(action, now_, out_); }
  absl::Status WriteStatus(const pb::CloneSetStatus& status) override {
    *cluster_.clone_set_.mutable_status() = status;
    ++out_.writes;
    return absl::OkStatus();
  }
  void Event(std::string_view, std::string_view, std::string_view) override {}

 private:
  SimCluster& cluster_;
  const absl::Time now_;
  AppliedPlan& out_;
};

AppliedPlan SimCluster::Apply(const pb::PlanResponse& plan, absl::Time now) {
  AppliedPlan out;
  own_status_versions_.clear();
  Writer writer(*this, now, out);
  const pb::CloneSet snapshot = clone_set_;  // the CloneSet the plan was made from (the executor's cached one)
  const planapi::ApplyResult applied = planapi::PlanApplier().Apply(snapshot, plan, writer, now);
  if (!applied.stopped.ok()) out.stopped = std::string(applied.stopped.message());
  return out;
}

absl::Status SimCluster::ApplyAction(const pb::Action& original, absl::Time now, AppliedPlan& out) {
  const std::string ns = Namespace();
  pb::Action action = original;
  switch (action.kind_case()) {
    case pb::Action::kCreateRevision: {
      auto created = Send("POST", snapshot::RevisionsPath(ns), "application/json",
                          action.create_revision().revision_json(), now);
      // AlreadyExists: seen by the next snapshot (the executor counts it as done).
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
      ++out.writes;
      return absl::OkStatus();
    }
    case pb::Action::kDeleteRevision:
      return Delete(absl::StrCat(snapshot::RevisionsPath(ns), "/", action.delete_revision().name()), "", now, out);
    case pb::Action::kCreatePod:
      return CreatePod(action.create_pod(), now, out);
    case pb::Action::kDeletePod: {
      const pb::DeletePod& del = action.delete_pod();
      if (absl::Status s = Delete(absl::StrCat(snapshot::PodsPath(ns), "/", del.name()), del.uid(), now, out);
          !s.ok()) {
        return s;
      }
      out.deleted.push_back(del.name());
      for (const std::string& pvc : del.pvc_names()) {
        if (absl::Status s = Delete(absl::StrCat(snapshot::PvcsPath(ns), "/", pvc), "", now, out); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case pb::Action::kDeletePvc:
      return Delete(absl::StrCat(snapshot::PvcsPath(ns), "/", action.delete_pvc().name()), action.delete_pvc().uid(),
                    now, out);
    case pb::Action::kCreatePvc:
      return CreatePvc(action.create_pvc().pvc_json(), now, out);
    case pb::Action::kUpdatePvcOwner: {
      const pb::UpdatePvcOwner& update = action.update_pvc_owner();
      const auto claims = pvcs();
      auto pvc = claims.find(update.name());
      if (pvc == claims.end()) return absl::NotFoundError(absl::StrCat("pvc ", update.name(), " is not in the snapshot"));
      const snapshot::ApiRequest req = snapshot::PvcOwnerPatchRequest(ns, pvc->second, update);
      auto written = Send(req.method, req.path, req.content_type, req.body, now);
      if (!written.ok()) return written.status();
      ++out.writes;
      return absl::OkStatus();
    }
    case pb::Action::kCreateImagePullJob:
    case pb::Action::kDeleteImagePullJob:
      ++out.writes;  // no node images in the simulation: every image is usable at once
      return absl::OkStatus();
    case pb::Action::kStartInPlaceUpdates:  // never sent: the simulation does not set accept_in_place_batches
      return absl::InvalidArgumentError("StartInPlaceUpdates: expand in-place batches before applying a plan");
    case pb::Action::kPatchPod:
    case pb::Action::kResizePod: {
      // After our own status write in this plan, the precondition is the version that write returned.
      const std::string& name = action.has_patch_pod() ? action.patch_pod().name() : action.resize_pod().name();
      if (auto it = own_status_versions_.find(name); it != own_status_versions_.end()) {
        if (action.has_patch_pod()) {
          action.mutable_patch_pod()->set_resource_version(it->second);
        } else {
          action.mutable_resize_pod()->set_resource_version(it->second);
        }
      }
      break;
    }
    case pb::Action::kPatchCloneSet: {
      auto req = snapshot::CloneSetPatchRequest(ns, clone_set_.metadata().name(), "", action.patch_clone_set());
      if (!req.ok()) return req.status();
      Json patch;
      if (!json_read::ParseJsonObject(req->body, &patch)) return absl::InvalidArgumentError("patch_clone_set: not JSON");
      // The store serves no CloneSet here: the embedded cluster's merge patch, on the CloneSet kept beside it.
      patch["metadata"].erase("resourceVersion");
      if (patch["metadata"].empty()) patch.erase("metadata");
      ++out.writes;
      return ApplyCloneSet(devcluster::ApplyMergePatch(Json::parse(clone_set_json_), patch).dump(), now);
    }
    case pb::Action::kPatchPodStatus:
    case pb::Action::kUpdateRevision:
    case pb::Action::kExpandPvc:
      break;
    case pb::Action::KIND_NOT_SET:
      return absl::InvalidArgumentError("action without a kind");
  }
  // The patches: the executor's request for the action, sent as it sends it.
  auto req = snapshot::ActionToPatch(action, ns, clone_set_.metadata().name(), "");
  if (!req.ok()) return req.status();
  std::optional<Json> before;
  if (action.has_patch_pod()) {
    if (auto got = state_->store.Get(devcluster::kPods, ns, action.patch_pod().name()); got.ok()) before = *got;
  }
  auto written = Send(req->method, req->path, req->content_type, req->body, now);
  if (!written.ok()) return written.status();
  ++out.writes;
  const std::string version = json_read::Str(json_read::Member(*written, "metadata"), "resourceVersion");
  if (action.has_patch_pod_status() || action.has_resize_pod()) {
    own_status_versions_[action.has_resize_pod() ? action.resize_pod().name() : action.patch_pod_status().name()] =
        version;
  }
  if (before && !action.patch_pod().container_images().empty()) {
    // The containers restart in place with the new image: each start may fail.
    const std::string name = action.patch_pod().name();
    if (DrawStartFailure(name)) MarkFailing(name, now);
  }
  if (before) {
    const std::string name = action.patch_pod().name();
    const std::string old_revision = Label(*before, kruise::kRevisionLabel);
    if (!old_revision.empty() && Label(*written, kruise::kRevisionLabel) != old_revision) {
      out.updated_in_place.push_back(name);
    }
    const std::string old_state = Label(*before, kruise::kLifecycleStateLabel);
    const std::string new_state = Label(*written, kruise::kLifecycleStateLabel);
    if (new_state != old_state) {
      out.lifecycle.push_back(absl::StrCat(name, ": ", old_state.empty() ? "-" : old_state, " -> ",
                                           new_state.empty() ? "-" : new_state));
    }
  }
  return absl::OkStatus();
}

absl::Status SimCluster::CreatePvc(const std::string& pvc_json, absl::Time now, AppliedPlan& out) {
  auto created = Send("POST", snapshot::PvcsPath(Namespace()), "application/json", pvc_json, now);
  if (!created.ok()) return absl::IsAlreadyExists(created.status()) ? absl::OkStatus() : created.status();
  ++out.writes;
  const std::string name = json_read::Str(json_read::Member(*created, "metadata"), "name");
  (void)state_->store.Mutate(devcluster::kPersistentVolumeClaims, Namespace(), name, true, [](Json& pvc) {
    pvc["status"]["phase"] = "Bound";  // the simulated provisioner binds at once
    return absl::OkStatus();
  });
  return absl::OkStatus();
}

absl::Status SimCluster::CreatePod(const pb::CreatePod& create, absl::Time now, AppliedPlan& out) {
  for (const std::string& pvc_json : create.pvc_jsons()) {
    // No pod without its claim: a claim that could not be created stops the action before the pod.
    if (absl::Status s = CreatePvc(pvc_json, now, out); !s.ok()) return s;
  }
  auto created = Send("POST", snapshot::PodsPath(Namespace()), "application/json", create.pod_json(), now);
  // Left over from an earlier attempt: reused, as the executor does.
  if (!created.ok()) return absl::IsAlreadyExists(created.status()) ? absl::OkStatus() : created.status();
  const std::string name = json_read::Str(json_read::Member(*created, "metadata"), "name");
  out.created.push_back(name);
  ++out.writes;
  DrawStartFailure(name);
  Schedule(name, now);
  return absl::OkStatus();
}

absl::Status SimCluster::Delete(const std::string& path, const std::string& uid, absl::Time now, AppliedPlan& out) {
  auto deleted = Send("DELETE", path, "application/json", snapshot::DeleteBody(uid), now);
  // Gone already: the executor counts a 404 on a delete as done.
  if (!deleted.ok() && !absl::IsNotFound(deleted.status())) return deleted.status();
  ++out.writes;
  return absl::OkStatus();
}

bool SimCluster::DrawStartFailure(const std::string& name) {
  if (options_.fail_rate <= 0 || state_->failing.contains(name)) return false;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= options_.fail_rate) return false;
  state_->failing.insert(name);
  return true;
}

void SimCluster::MarkFailing(const std::string& name, absl::Time now) {
  state_->clock.Set(now);
  // The embedded cluster's kubelet reads its faults from the pod's annotation.
  (void)state_->store.Mutate(devcluster::kPods, Namespace(), name, false, [](Json& p) {
    p["metadata"]["annotations"][nodes::kFaultAnnotation] = kCrashLoop;
    return absl::OkStatus();
  });
}

void SimCluster::Schedule(const std::string& name, absl::Time now) {
  const std::string ns = Namespace();
  auto pod = state_->store.Get(devcluster::kPods, ns, name);
  if (!pod.ok()) return;
  State::PodRuntime& rt = state_->runtime[name];
  rt.request = nodes::RequestOf(*pod);
  const nodes::Placement placement = nodes::PickNode(rt.request, state_->slots);
  if (!placement.node) return;  // stays Pending: the kubelet never sees it
  const std::string node = state_->slots[*placement.node].name;
  const Json binding = {{"apiVersion", "v1"}, {"kind", "Binding"}, {"metadata", {{"name", name}}},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!Send("POST", absl::StrCat(snapshot::PodsPath(ns), "/", name, "/binding"), "application/json", binding.dump(),
            now)
           .ok()) {
    return;
  }
  const std::string now_s = base::FormatTime(now);
  (void)state_->store.Mutate(devcluster::kPods, ns, name, true, [&](Json& p) {
    nodes::ApplyBinding(p, node, now_s);
    return absl::OkStatus();
  });
  if (state_->failing.contains(name)) MarkFailing(name, now);
  state_->slots[*placement.node].Add(rt.request, +1);
  rt.node = static_cast<int>(*placement.node);
  rt.ip_slot = state_->next_ip_slot++ % nodes::kPodsPerCidr;
  rt.wake_at = now;
}

bool SimCluster::StepPod(const Json& pod, absl::Time now) {
  const std::string name = json_read::Str(json_read::Member(pod, "metadata"), "name");
  auto it = state_->runtime.find(name);
  if (it == state_->runtime.end() || it->second.node < 0) return false;
  State::PodRuntime& rt = it->second;
  const nodes::NodeSlot& slot = state_->slots[rt.node];
  nodes::KubeletTiming timing;
  timing.start_delay = absl::ToChronoNanoseconds(options_.start_delay);
  timing.ready_delay = absl::ToChronoNanoseconds(options_.ready_after);
  timing.max_grace = absl::ToChronoNanoseconds(options_.terminate_after);
  const nodes::NodeContext node{.name = slot.name,
                                .host_ip = nodes::HostIp(rt.node),
                                .ready = true,
                                .resize = {.cpu_milli_capacity = slot.alloc_cpu_milli,
                                           .memory_capacity = slot.alloc_memory_bytes,
                                           .cpu_milli_used = slot.req_cpu_milli - rt.request.cpu_milli,
                                           .memory_used = slot.req_memory_bytes - rt.request.memory_bytes}};
  const nodes::TimePoint chrono_now = absl::ToChronoTime(now);
  nodes::PodProgress next = rt.has_progress ? rt.progress : nodes::PodProgress();
  // Every image is on every node already: usable at once.
  const nodes::KubeletDecision d =
      nodes::DecidePod(pod, next, node, nodes::PodIp(rt.node, rt.ip_slot), timing, chrono_now,
                       [&](const std::string&) {
                         nodes::ImageView image;
                         image.present = true;
                         image.ready_at = chrono_now;
                         return image;
                       });
  rt.wake_at.reset();
  if (d.wake_at) rt.wake_at = absl::FromChrono(*d.wake_at);
  const std::string ns = Namespace();
  if (d.remove) {
    state_->clock.Set(now);
    (void)state_->store.DeleteNow(devcluster::kPods, ns, name);
    state_->slots[rt.node].Add(rt.request, -1);
    state_->runtime.erase(it);
    return true;
  }
  rt.progress = std::move(next);
  rt.has_progress = d.keep_progress;
  if (!d.status) return false;
  state_->clock.Set(now);
  Json update = pod;
  update["status"] = *d.status;
  auto written = state_->store.UpdateStatus(devcluster::kPods, std::move(update));
  if (written.ok() && d.resize_accepted) {  // the node now holds the pod's new requests
    state_->slots[rt.node].Add(rt.request, -1);
    rt.request = nodes::RequestOf(*written);
    state_->slots[rt.node].Add(rt.request, +1);
  }
  return written.ok();
}

bool SimCluster::Advance(absl::Time now) {
  bool changed = false;
  // The kubelet looks at every pod (a decision that changes nothing writes nothing): a spec change (an image or a
  // resize patch, a delete) is seen as the embedded cluster's kubelet sees it on its watch. A decision can make
  // another due at the same instant (a container restarted in place starts at once): look again until nothing
  // changes, bounded.
  for (int round = 0; round < 10; ++round) {
    auto listed = state_->store.ListObjects(devcluster::kPods, InNamespace(Namespace()));
    if (!listed.ok()) break;
    bool any = false;
    for (const Json& pod : *listed) any |= StepPod(pod, now);
    changed |= any;
    if (!any) break;
  }
  return changed;
}

std::optional<absl::Time> SimCluster::NextTransition(absl::Time now) const {
  std::optional<absl::Time> next;
  auto consider = [&](absl::Time t) {
    if (t > now && (!next || t < *next)) next = t;
  };
  for (const auto& [name, rt] : state_->runtime) {
    // A pod made to fail only crashes again: nothing the rollout waits for.
    if (rt.wake_at && !state_->failing.contains(name)) consider(*rt.wake_at);
  }
  const int min_ready = clone_set_.spec().min_ready_seconds();
  if (min_ready > 0) {
    for (const auto& [_, pod] : pods()) {
      const pb::Condition* ready = planner::FindCondition(pod, "Ready");
      if (ready != nullptr && ready->status() == "True") {
        // avail() needs lastTransitionTime + minReadySeconds strictly before now.
        consider(planner::ToTime(ready->last_transition_time()) + absl::Seconds(min_ready) + absl::Milliseconds(1));
      }
    }
  }
  return next;
}

PodCounts SimCluster::Counts(absl::Time now) const {
  PodCounts c;
  c.desired = clone_set_.spec().has_replicas() ? clone_set_.spec().replicas() : 1;
  const std::string& update_revision = clone_set_.status().update_revision();
  for (const auto& [_, pod] : pods()) {
    if (!planner::IsActive(pod) || !HasOwner(pod.metadata(), clone_set_.metadata().uid())) continue;
    ++c.pods;
    if (planner::IsK8sReady(pod)) ++c.ready;
    if (planner::IsAvailable(pod, clone_set_.spec().min_ready_seconds(), now)) ++c.available;
    if (!update_revision.empty() && planner::RevisionMatches(pod, update_revision)) ++c.updated;
  }
  c.unavailable = std::max(c.desired - c.available, 0);
  c.surge = std::max(c.pods - c.desired, 0);
  return c;
}

int SimCluster::failed_starts() const {
  int n = 0;
  for (const std::string& name : state_->failing) n += state_->runtime.contains(name) ? 1 : 0;
  return n;
}

}  // namespace cloneset::clonesetctl
