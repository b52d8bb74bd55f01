#include "clonesetctl/sim_cluster.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "clonesetctl/sim_objects.h"
#include "devcluster/nodes/images.h"
#include "devcluster/nodes/scheduler.h"
#include "kube/api_status.h"
#include "kube/object_patch.h"
#include "planapi/applier.h"
#include "planner/context.h"
#include "planner/predicates.h"
#include "snapshot/patch.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;
using planner::FindCondition;
using planner::ToTime;
using sim::ApplyRequest;
using sim::CheckPreconditions;
using sim::Decode;
using sim::Failed;
using sim::ParseObject;
using sim::SimTime;
namespace nodes = ::cloneset::devcluster::nodes;

// The API server's answer to a failed write, as the executor's REST client reads it (kube/api_status.h), so that
// the plan applier treats the simulation's failures as the executor treats the API server's.
absl::Status ApiError(int code, std::string_view reason, const std::string& message) {
  const Json body = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                     {"reason", std::string(reason)}, {"message", message},  {"code", code}};
  return kube::StatusFromHttp(code, body.dump());
}
// A failed resourceVersion or uid precondition.
absl::Status Conflict(const std::string& message) { return ApiError(409, "Conflict", message); }
absl::Status NotFound(const std::string& message) { return ApiError(404, "NotFound", message); }

bool HasOwner(const pb::ObjectMeta& meta, const std::string& uid) {
  return std::any_of(meta.owner_references().begin(), meta.owner_references().end(),
                     [&](const pb::OwnerReference& o) { return o.uid() == uid; });
}

}  // namespace

SimCluster::SimCluster(SimOptions options, absl::Time now) : options_(options), rng_(options.seed) {
  (void)now;
  if (options_.nodes < 1) options_.nodes = 1;
}

std::string SimCluster::pod_json(const std::string& name) const {
  auto it = pods_.find(name);
  return it == pods_.end() ? "" : it->second.doc.dump();
}

absl::Status SimCluster::ApplyCloneSet(const std::string& json, absl::Time now) {
  Json doc;
  try {
    doc = Json::parse(json);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("CloneSet: malformed JSON: ", e.what()));
  }
  if (!doc.is_object()) return absl::InvalidArgumentError("CloneSet: expected a JSON object");
  return ReplaceCloneSet(std::move(doc), now);
}

absl::Status SimCluster::ReplaceCloneSet(Json doc, absl::Time now) {
  if (!doc.is_object()) return absl::InvalidArgumentError("CloneSet: expected a JSON object");
  const bool first = clone_set_.doc.is_null();
  int64_t generation = 1;
  if (!first) {
    const Json& old = clone_set_.doc;
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
  doc["metadata"]["resourceVersion"] = NextVersion();
  // The status is the status subresource's: a write of the CloneSet itself leaves it as it is.
  doc.erase("status");
  if (!first && clone_set_.doc.contains("status")) doc["status"] = clone_set_.doc["status"];
  auto stored = Load<pb::CloneSet>(std::move(doc));
  if (!stored.ok()) return stored.status();
  clone_set_ = *std::move(stored);
  return absl::OkStatus();
}

void SimCluster::StampCreated(Json& doc, const char* uid_prefix, absl::Time now) {
  Json& meta = doc["metadata"];
  meta["uid"] = absl::StrCat(uid_prefix, ++uid_counter_);
  meta["resourceVersion"] = NextVersion();
  meta["creationTimestamp"] = SimTime(now);
}

template <typename T>
absl::StatusOr<SimCluster::Stored<T>> SimCluster::Load(Json doc) {
  Stored<T> stored{std::move(doc), {}};
  if (absl::Status s = Decode(stored.doc, &stored.object); !s.ok()) return s;
  return stored;
}

planapi::RequestWithPods SimCluster::Snapshot(absl::Time now) const {
  planapi::OwnedObjects objects;
  for (const auto& [_, pod] : pods_) objects.pods.push_back(pod.object);
  for (const auto& [_, pvc] : pvcs_) objects.pvcs.push_back(pvc.object);
  for (const auto& [_, rev] : revisions_) objects.revisions.push_back(rev.object);
  const int node_count = options_.nodes;
  const planapi::NodeLookup nodes = [node_count](const std::vector<std::string>& names) {
    std::vector<pb::Node> out;
    for (const std::string& name : names) {
      for (int i = 0; i < node_count; ++i) {
        if (name == absl::StrCat("sim-node-", i + 1)) out.emplace_back().set_name(name);
      }
    }
    return out;
  };
  return planapi::AssembleRequest(clone_set_.object, std::move(objects), nodes, now,
                                  planapi::RequestOptions{.feature_gates = options_.feature_gates});
}

// The writer of one plan: every action changes the cluster at `now`; what happened goes to `out`.
class SimCluster::Writer final : public planapi::PlanWriter {
 public:
  Writer(SimCluster& cluster, absl::Time now, AppliedPlan& out) : cluster_(cluster), now_(now), out_(out) {}
  bool MayWrite() override { return true; }
  absl::StatusOr<bool> CloneSetExists() override { return true; }
  absl::Status Write(const pb::Action& action) override { return cluster_.ApplyAction(action, now_, out_); }
  absl::Status WriteStatus(const pb::CloneSetStatus& status) override {
    ++out_.writes;
    return cluster_.WriteCloneSetStatus(status);
  }
  void Event(std::string_view type, std::string_view reason, std::string_view message) override {}

 private:
  SimCluster& cluster_;
  const absl::Time now_;
  AppliedPlan& out_;
};

AppliedPlan SimCluster::Apply(const pb::PlanResponse& plan, absl::Time now) {
  AppliedPlan out;
  own_status_versions_.clear();
  Writer writer(*this, now, out);
  const pb::CloneSet snapshot = clone_set_.object;  // the CloneSet the plan was made from (the executor's cached one)
  const planapi::ApplyResult applied = planapi::PlanApplier().Apply(snapshot, plan, writer, now);
  if (!applied.stopped.ok()) out.stopped = std::string(applied.stopped.message());
  return out;
}

absl::Status SimCluster::ApplyAction(const pb::Action& action, absl::Time now, AppliedPlan& out) {
  switch (action.kind_case()) {
    case pb::Action::kCreateRevision: {
      // POST of the action's body.
      const std::string& body = action.create_revision().revision_json();
      auto rev = snapshot::RevisionFromJson(body);
      if (!rev.ok()) return rev.status();
      // AlreadyExists: seen by the next snapshot (the executor counts it as done).
      if (revisions_.contains(rev->metadata().name())) return absl::OkStatus();
      auto doc = ParseObject(body, "revision_json");
      if (!doc.ok()) return doc.status();
      StampCreated(*doc, "sim-rev-", now);
      auto stored = Load<pb::ControllerRevision>(*std::move(doc));
      if (!stored.ok()) return stored.status();
      revisions_[rev->metadata().name()] = *std::move(stored);
      ++out.writes;
      return absl::OkStatus();
    }
    case pb::Action::kUpdateRevision: {
      absl::Status s = UpdateRevision(action.update_revision());
      if (s.ok()) ++out.writes;
      return s;
    }
    case pb::Action::kDeleteRevision:
      // DELETE with DeleteBody(""): no precondition, a revision that is gone is done.
      revisions_.erase(action.delete_revision().name());
      ++out.writes;
      return absl::OkStatus();
    case pb::Action::kCreatePod: return CreatePod(action.create_pod(), now, out);
    case pb::Action::kDeletePod: return DeletePod(action.delete_pod(), now, out);
    case pb::Action::kPatchPod: return PatchPod(action.patch_pod(), out);
    case pb::Action::kPatchPodStatus:
      ++out.writes;
      return PatchPodStatus(action.patch_pod_status());
    case pb::Action::kResizePod:
      ++out.writes;
      return ResizePod(action.resize_pod());
    case pb::Action::kDeletePvc: {
      const pb::DeletePvc& del = action.delete_pvc();
      ++out.writes;
      auto it = pvcs_.find(del.name());
      if (it == pvcs_.end()) return absl::OkStatus();  // gone already: a 404 on a delete is done
      if (CheckPreconditions(Json::parse(snapshot::DeleteBody(del.uid())), "preconditions", it->second.doc) !=
          Failed::kNone) {
        return Conflict(absl::StrCat("pvc ", del.name(), ": uid precondition failed"));
      }
      pvcs_.erase(it);
      return absl::OkStatus();
    }
    case pb::Action::kCreatePvc: return CreatePvc(action.create_pvc().pvc_json(), now, out);
    case pb::Action::kUpdatePvcOwner: {
      absl::Status s = UpdatePvcOwner(action.update_pvc_owner());
      if (s.ok()) ++out.writes;
      return s;
    }
    case pb::Action::kExpandPvc: {
      absl::Status s = ExpandPvc(action.expand_pvc());
      if (s.ok()) ++out.writes;
      return s;
    }
    case pb::Action::kPatchCloneSet:
      ++out.writes;
      return PatchCloneSet(action.patch_clone_set(), now);
    case pb::Action::kCreateImagePullJob:
    case pb::Action::kDeleteImagePullJob:
      ++out.writes;  // no node images in the simulation
      return absl::OkStatus();
    case pb::Action::kStartInPlaceUpdates:  // never sent: the simulation does not set accept_in_place_batches
      return absl::InvalidArgumentError("StartInPlaceUpdates: expand in-place batches before applying a plan");
    case pb::Action::KIND_NOT_SET: break;
  }
  return absl::InvalidArgumentError("action without a kind");
}

template <typename T>
absl::Status SimCluster::Write(Stored<T>& stored, const snapshot::ApiRequest& req, std::string_view kind,
                               const std::function<absl::Status(Failed)>& refused) {
  auto body = ParseObject(req.body, req.path);
  if (!body.ok()) return body.status();
  if (const Failed failed = CheckPreconditions(*body, "metadata", stored.doc); failed != Failed::kNone) {
    return refused(failed);
  }
  auto patched = ApplyRequest(req, *body, stored.doc, kind);
  if (!patched.ok()) return patched.status();
  (*patched)["metadata"]["resourceVersion"] = NextVersion();
  auto next = Load<T>(*std::move(patched));
  if (!next.ok()) return next.status();
  stored = *std::move(next);
  return absl::OkStatus();
}

absl::Status SimCluster::CreatePvc(const std::string& pvc_json, absl::Time now, AppliedPlan& out) {
  auto pvc = snapshot::PvcFromJson(pvc_json);
  if (!pvc.ok()) return pvc.status();
  if (pvcs_.contains(pvc->metadata().name())) return absl::OkStatus();  // left over: reused, as the executor does
  auto doc = ParseObject(pvc_json, "pvc_json");
  if (!doc.ok()) return doc.status();
  StampCreated(*doc, "sim-pvc-", now);
  (*doc)["status"]["phase"] = "Bound";  // the simulated provisioner binds at once
  auto stored = Load<pb::PersistentVolumeClaim>(*std::move(doc));
  if (!stored.ok()) return stored.status();
  pvcs_[pvc->metadata().name()] = *std::move(stored);
  ++out.writes;
  return absl::OkStatus();
}

absl::Status SimCluster::CreatePod(const pb::CreatePod& create, absl::Time now, AppliedPlan& out) {
  for (const std::string& pvc_json : create.pvc_jsons()) {
    if (absl::Status s = CreatePvc(pvc_json, now, out); !s.ok()) return s;
  }
  auto pod = snapshot::PodFromJson(create.pod_json());
  if (!pod.ok()) return pod.status();
  const std::string name = pod->metadata().name();
  if (pods_.contains(name)) return absl::OkStatus();  // left over from an earlier attempt: reused, as the executor does
  auto doc = ParseObject(create.pod_json(), "pod_json");
  if (!doc.ok()) return doc.status();
  StampCreated(*doc, "sim-pod-uid-", now);
  // The scheduler binds at once, round-robin over the simulated nodes, in the same write.
  const int node = next_node_++ % options_.nodes;
  (*doc)["status"] = Json{{"phase", "Pending"}};
  nodes::ApplyBinding(*doc, absl::StrCat("sim-node-", node + 1), SimTime(now));
  auto stored = Load<pb::Pod>(*std::move(doc));
  if (!stored.ok()) return stored.status();
  Kubelet& k = kubelets_[name];
  k = Kubelet();
  k.node = node;
  k.pod_ip = absl::StrCat("10.244.", node, ".", ++pod_ips_[node]);
  k.first_start_fails = DrawStartFails();
  pods_[name] = *std::move(stored);
  out.created.push_back(name);
  ++out.writes;
  return absl::OkStatus();
}

bool SimCluster::DrawStartFails() {
  return options_.fail_rate > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < options_.fail_rate;
}

absl::Status SimCluster::PatchPod(const pb::PatchPod& action, AppliedPlan& out) {
  auto it = pods_.find(action.name());
  if (it == pods_.end()) return NotFound(absl::StrCat("pod ", action.name(), " not found"));
  const pb::PatchPod patch = UnderOwnVersion(action);
  const pb::ObjectMeta was = it->second.object.metadata();
  absl::Status s = Write(it->second, snapshot::PodPatchRequest(Namespace(), patch), "Pod", [&](Failed) {
    return Conflict(absl::StrCat("pod ", patch.name(), ": the object has been modified"));
  });
  if (!s.ok()) return s;
  const std::string old_revision(planner::Label(was, planner::kRevisionLabel));
  const std::string old_state(planner::Label(was, planner::kLifecycleStateLabel));
  ++out.writes;
  const pb::ObjectMeta& meta = it->second.object.metadata();
  const std::string new_revision(planner::Label(meta, planner::kRevisionLabel));
  if (!old_revision.empty() && new_revision != old_revision) out.updated_in_place.push_back(patch.name());
  const std::string new_state(planner::Label(meta, planner::kLifecycleStateLabel));
  if (new_state != old_state) {
    out.lifecycle.push_back(absl::StrCat(patch.name(), ": ", old_state.empty() ? "-" : old_state, " -> ",
                                         new_state.empty() ? "-" : new_state));
  }
  return absl::OkStatus();
}

absl::Status SimCluster::ResizePod(const pb::ResizePod& action) {
  auto it = pods_.find(action.name());
  if (it == pods_.end()) return NotFound(absl::StrCat("pod ", action.name(), " not found"));
  const pb::ResizePod resize = UnderOwnVersion(action);
  const snapshot::ApiRequest req = snapshot::PodResizeRequest(Namespace(), resize);
  auto body = ParseObject(req.body, req.path);
  if (!body.ok()) return body.status();
  if (CheckPreconditions(*body, "metadata", it->second.doc) != Failed::kNone) {
    return Conflict(absl::StrCat("pod ", resize.name(), ": the object has been modified"));
  }
  auto resized = ApplyRequest(req, *body, it->second.doc, "Pod");
  if (!resized.ok()) return resized.status();
  // The kubelet takes the resize up at its next sync (the model's resize: accepted, then applied).
  (*resized)["metadata"]["resourceVersion"] = NextVersion();
  auto next = Load<pb::Pod>(*std::move(resized));
  if (!next.ok()) return next.status();
  it->second = *std::move(next);
  own_status_versions_[resize.name()] = it->second.object.metadata().resource_version();
  return absl::OkStatus();
}

absl::Status SimCluster::PatchPodStatus(const pb::PatchPodStatus& patch) {
  auto it = pods_.find(patch.name());
  if (it == pods_.end()) return NotFound(absl::StrCat("pod ", patch.name(), " not found"));
  absl::Status s = Write(it->second, snapshot::PodStatusPatchRequest(Namespace(), patch), "Pod", [&](Failed f) {
    return Conflict(f == Failed::kUid ? absl::StrCat("pod ", patch.name(), ": uid precondition failed")
                                      : absl::StrCat("pod ", patch.name(), " status: the object has been modified"));
  });
  if (!s.ok()) return s;
  own_status_versions_[patch.name()] = it->second.object.metadata().resource_version();
  return absl::OkStatus();
}

absl::Status SimCluster::DeletePod(const pb::DeletePod& del, absl::Time now, AppliedPlan& out) {
  // The pod's claims go with DeleteBody(""): no precondition, a claim that is gone is done.
  const auto delete_claims = [&] {
    for (const std::string& pvc : del.pvc_names()) {
      if (pvcs_.erase(pvc) > 0) ++out.writes;
    }
  };
  auto it = pods_.find(del.name());
  if (it == pods_.end()) {
    // Gone already: the executor counts a 404 on a delete as done, and deletes the pod's claims all the same.
    ++out.writes;
    delete_claims();
    return absl::OkStatus();
  }
  if (CheckPreconditions(Json::parse(snapshot::DeleteBody(del.uid())), "preconditions", it->second.doc) !=
      Failed::kNone) {
    return Conflict(absl::StrCat("pod ", del.name(), ": uid precondition failed"));
  }
  ++out.writes;
  out.deleted.push_back(del.name());
  if (!planner::IsSet(it->second.object.metadata().deletion_timestamp())) {
    Json doc = it->second.doc;
    doc["metadata"]["deletionTimestamp"] = SimTime(now);
    doc["metadata"]["resourceVersion"] = NextVersion();
    auto next = Load<pb::Pod>(std::move(doc));
    if (!next.ok()) return next.status();
    it->second = *std::move(next);
  }
  if (it->second.object.metadata().finalizers().empty() && options_.terminate_after <= absl::ZeroDuration()) {
    pods_.erase(it);
    kubelets_.erase(del.name());
  }
  delete_claims();
  return absl::OkStatus();
}

absl::Status SimCluster::UpdatePvcOwner(const pb::UpdatePvcOwner& update) {
  auto it = pvcs_.find(update.name());
  if (it == pvcs_.end()) return NotFound(update.name());
  // The executor builds the owner list from its snapshot's claim: the stored one, while the version matches.
  return Write(it->second, snapshot::PvcOwnerPatchRequest(Namespace(), it->second.object, update),
               "PersistentVolumeClaim", [&](Failed) {
                 return Conflict(absl::StrCat("pvc ", update.name(), ": the object has been modified"));
               });
}

absl::Status SimCluster::ExpandPvc(const pb::ExpandPvc& expand) {
  auto it = pvcs_.find(expand.name());
  if (it == pvcs_.end()) return NotFound(expand.name());
  return Write(it->second, snapshot::PvcExpandRequest(Namespace(), expand), "PersistentVolumeClaim", [&](Failed) {
    return Conflict(absl::StrCat("pvc ", expand.name(), ": the object has been modified"));
  });
}

absl::Status SimCluster::UpdateRevision(const pb::UpdateRevision& update) {
  auto it = revisions_.find(update.name());
  if (it == revisions_.end()) return NotFound(update.name());
  return Write(it->second, snapshot::RevisionPatchRequest(Namespace(), update), "ControllerRevision", [&](Failed) {
    return Conflict(absl::StrCat("conflict on revision ", update.name()));
  });
}

absl::Status SimCluster::PatchCloneSet(const pb::PatchCloneSet& patch, absl::Time now) {
  const pb::CloneSet& cs = clone_set_.object;
  auto req = snapshot::CloneSetPatchRequest(Namespace(), cs.metadata().name(), cs.api_version(), patch);
  if (!req.ok()) return req.status();
  auto body = ParseObject(req->body, req->path);
  if (!body.ok()) return body.status();
  if (CheckPreconditions(*body, "metadata", clone_set_.doc) != Failed::kNone) {
    return Conflict(absl::StrCat("CloneSet ", cs.metadata().name(), ": the object has been modified"));
  }
  auto patched = ApplyRequest(*req, *body, clone_set_.doc, "CloneSet");
  if (!patched.ok()) return patched.status();
  return ReplaceCloneSet(*std::move(patched), now);
}

absl::Status SimCluster::WriteCloneSetStatus(const pb::CloneSetStatus& status) {
  const pb::CloneSet& cs = clone_set_.object;
  const snapshot::ApiRequest req =
      snapshot::CloneSetStatusRequest(Namespace(), cs.metadata().name(), cs.api_version(), status);
  auto body = ParseObject(req.body, req.path);
  if (!body.ok()) return body.status();
  auto patched = ApplyRequest(req, *body, clone_set_.doc, "CloneSet");
  if (!patched.ok()) return patched.status();
  // The status subresource takes only the status; the version stays (see the top of sim_cluster.h).
  Json doc = clone_set_.doc;
  doc["status"] = (*patched)["status"];
  auto stored = Load<pb::CloneSet>(std::move(doc));
  if (!stored.ok()) return stored.status();
  clone_set_ = *std::move(stored);
  return absl::OkStatus();
}

absl::StatusOr<bool> SimCluster::SyncPod(const std::string& name, absl::Time now, bool* changed) {
  Stored<pb::Pod>& stored = pods_.at(name);
  Kubelet& k = kubelets_[name];
  nodes::KubeletTiming timing;
  timing.start_delay = absl::ToChronoNanoseconds(options_.start_delay);
  timing.ready_delay = absl::ToChronoNanoseconds(options_.ready_after);
  timing.max_grace = absl::ToChronoNanoseconds(options_.terminate_after);
  nodes::NodeContext node;  // its resize capacity unknown: every resize fits
  node.name = absl::StrCat("sim-node-", k.node + 1);
  node.host_ip = absl::StrCat("10.0.0.", k.node + 1);
  // Every start in one decision is one start of the pod's containers: one draw (the creation's, at the first).
  std::optional<bool> drawn;
  const nodes::KubeletDecision d = nodes::DecidePod(
      stored.doc, k.progress, node, k.pod_ip, timing, absl::ToChronoTime(now),
      [](const std::string&) {
        nodes::ImageView present;  // every image is on every node
        present.present = true;
        return present;
      },
      [&](const std::string&) {
        if (!drawn) drawn = k.first_start_fails.has_value() ? *k.first_start_fails : DrawStartFails();
        return *drawn;
      });
  if (drawn) {
    k.never_ready = *drawn;
    k.first_start_fails.reset();
  }
  if (!d.keep_progress) k.progress = {};
  k.wake = d.wake_at ? std::optional<absl::Time>(absl::FromChrono(*d.wake_at)) : std::nullopt;
  if (d.remove) {
    if (!stored.object.metadata().finalizers().empty()) return true;  // the API server waits for them
    pods_.erase(name);
    kubelets_.erase(name);
    *changed = true;
    return false;
  }
  if (!d.status) return true;
  // The kubelet's status write (pods/<name>/status): the status it decided, at a new version.
  Json doc = stored.doc;
  doc["status"] = *d.status;
  doc["metadata"]["resourceVersion"] = NextVersion();
  auto next = Load<pb::Pod>(std::move(doc));
  if (!next.ok()) return next.status();
  stored = *std::move(next);
  *changed = true;
  return true;
}

absl::StatusOr<bool> SimCluster::Advance(absl::Time now) {
  bool changed = false;
  std::vector<std::string> names;
  for (const auto& [name, _] : pods_) names.push_back(name);
  for (const std::string& name : names) {
    if (absl::StatusOr<bool> kept = SyncPod(name, now, &changed); !kept.ok()) return kept.status();
  }
  return changed;
}

std::optional<absl::Time> SimCluster::NextTransition(absl::Time now) const {
  std::optional<absl::Time> next;
  auto consider = [&](absl::Time t) {
    if (t > now && (!next || t < *next)) next = t;
  };
  const int min_ready = clone_set_.object.spec().min_ready_seconds();
  for (const auto& [name, stored] : pods_) {
    const pb::Pod& pod = stored.object;
    auto k = kubelets_.find(name);
    if (k != kubelets_.end() && k->second.wake) consider(*k->second.wake);
    if (planner::IsSet(pod.metadata().deletion_timestamp())) continue;
    const pb::Condition* ready = FindCondition(pod, "Ready");
    if (min_ready > 0 && ready != nullptr && ready->status() == "True") {
      // avail() needs lastTransitionTime + minReadySeconds strictly before now.
      consider(ToTime(ready->last_transition_time()) + absl::Seconds(min_ready) + absl::Milliseconds(1));
    }
  }
  return next;
}

PodCounts SimCluster::Counts(absl::Time now) const {
  const pb::CloneSet& cs = clone_set_.object;
  PodCounts c;
  c.desired = cs.spec().has_replicas() ? cs.spec().replicas() : 1;
  const std::string& update_revision = cs.status().update_revision();
  for (const auto& [_, stored] : pods_) {
    const pb::Pod& pod = stored.object;
    if (!planner::IsActive(pod) || !HasOwner(pod.metadata(), cs.metadata().uid())) continue;
    ++c.pods;
    if (planner::IsK8sReady(pod)) ++c.ready;
    if (planner::IsAvailable(pod, cs.spec().min_ready_seconds(), now)) ++c.available;
    if (!update_revision.empty() && planner::RevisionMatches(pod, update_revision)) ++c.updated;
  }
  c.unavailable = std::max(c.desired - c.available, 0);
  c.surge = std::max(c.pods - c.desired, 0);
  return c;
}

int SimCluster::failed_starts() const {
  int n = 0;
  for (const auto& [name, k] : kubelets_) n += (k.never_ready && pods_.contains(name)) ? 1 : 0;
  return n;
}

}  // namespace cloneset::clonesetctl
