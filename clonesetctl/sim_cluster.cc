#include "clonesetctl/sim_cluster.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "planapi/applier.h"
#include "planner/context.h"
#include "planner/predicates.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;
using planner::FindCondition;
using planner::SetTimestamp;
using planner::ToTime;

std::string ImageId(const std::string& image) {
  return absl::StrCat("sim://", image, "@sha256:", std::hash<std::string>{}(image));
}

// Sets condition `type` to `status`; the transition time only moves when the status changes (as the kubelet does).
bool SetCondition(pb::Pod& pod, const std::string& type, bool value, absl::Time now) {
  const std::string status = value ? "True" : "False";
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() != type) continue;
    if (c.status() == status) return false;
    c.set_status(status);
    SetTimestamp(now, c.mutable_last_transition_time());
    return true;
  }
  pb::Condition* c = pod.add_conditions();
  c->set_type(type);
  c->set_status(status);
  SetTimestamp(now, c->mutable_last_transition_time());
  return true;
}

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

absl::Status SimCluster::ApplyCloneSet(const std::string& json, absl::Time now) {
  Json doc;
  try {
    doc = Json::parse(json);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("CloneSet: malformed JSON: ", e.what()));
  }
  if (!doc.is_object()) return absl::InvalidArgumentError("CloneSet: expected a JSON object");
  const bool first = clone_set_json_.empty();
  int64_t generation = 1;
  Json status = Json::object();
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
  doc["metadata"]["resourceVersion"] = NextVersion();
  doc.erase("status");
  auto decoded = snapshot::CloneSetFromJson(doc.dump());
  if (!decoded.ok()) return decoded.status();
  const pb::CloneSetStatus kept = clone_set_.status();
  clone_set_ = *std::move(decoded);
  *clone_set_.mutable_status() = kept;
  clone_set_json_ = doc.dump();
  return absl::OkStatus();
}

planapi::RequestWithPods SimCluster::Snapshot(absl::Time now) const {
  planapi::OwnedObjects objects;
  for (const auto& [_, pod] : pods_) objects.pods.push_back(pod);
  for (const auto& [_, pvc] : pvcs_) objects.pvcs.push_back(pvc);
  for (const auto& [_, rev] : revisions_) objects.revisions.push_back(rev);
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
  return planapi::AssembleRequest(clone_set_, std::move(objects), nodes, now,
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
    *cluster_.clone_set_.mutable_status() = status;
    ++out_.writes;
    return absl::OkStatus();
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
  const pb::CloneSet snapshot = clone_set_;  // the CloneSet the plan was made from (the executor's cached one)
  const planapi::ApplyResult applied = planapi::PlanApplier().Apply(snapshot, plan, writer, now);
  if (!applied.stopped.ok()) out.stopped = std::string(applied.stopped.message());
  return out;
}

absl::Status SimCluster::ApplyAction(const pb::Action& action, absl::Time now, AppliedPlan& out) {
  switch (action.kind_case()) {
    case pb::Action::kCreateRevision: {
      auto rev = snapshot::RevisionFromJson(action.create_revision().revision_json());
      if (!rev.ok()) return rev.status();
      // AlreadyExists: seen by the next snapshot (the executor counts it as done).
      if (revisions_.contains(rev->metadata().name())) return absl::OkStatus();
      rev->mutable_metadata()->set_uid(absl::StrCat("sim-rev-", ++uid_counter_));
      rev->mutable_metadata()->set_resource_version(NextVersion());
      SetTimestamp(now, rev->mutable_metadata()->mutable_creation_timestamp());
      revisions_[rev->metadata().name()] = *rev;
      ++out.writes;
      return absl::OkStatus();
    }
    case pb::Action::kUpdateRevision: {
      const pb::UpdateRevision& u = action.update_revision();
      auto it = revisions_.find(u.name());
      if (it == revisions_.end()) return NotFound(u.name());
      if (!u.resource_version().empty() && u.resource_version() != it->second.metadata().resource_version()) {
        return Conflict(absl::StrCat("conflict on revision ", u.name()));
      }
      if (u.revision() != 0) it->second.set_revision(u.revision());
      for (const auto& [k, v] : u.set_labels()) (*it->second.mutable_metadata()->mutable_labels())[k] = v;
      for (const auto& [k, v] : u.set_annotations()) (*it->second.mutable_metadata()->mutable_annotations())[k] = v;
      it->second.mutable_metadata()->set_resource_version(NextVersion());
      ++out.writes;
      return absl::OkStatus();
    }
    case pb::Action::kDeleteRevision:
      revisions_.erase(action.delete_revision().name());
      ++out.writes;
      return absl::OkStatus();
    case pb::Action::kCreatePod: return CreatePod(action.create_pod(), now, out);
    case pb::Action::kDeletePod: return DeletePod(action.delete_pod(), now, out);
    case pb::Action::kPatchPod: return PatchPod(action.patch_pod(), now, out);
    case pb::Action::kPatchPodStatus:
      ++out.writes;
      return PatchPodStatus(action.patch_pod_status(), now);
    case pb::Action::kResizePod:
      ++out.writes;
      return ResizePod(action.resize_pod());
    case pb::Action::kDeletePvc:
      pvcs_.erase(action.delete_pvc().name());
      ++out.writes;
      return absl::OkStatus();
    case pb::Action::kCreatePvc: {
      auto pvc = snapshot::PvcFromJson(action.create_pvc().pvc_json());
      if (!pvc.ok()) return pvc.status();
      CreatePvc(*pvc, now, out);
      return absl::OkStatus();
    }
    case pb::Action::kUpdatePvcOwner: {
      const pb::UpdatePvcOwner& u = action.update_pvc_owner();
      auto it = pvcs_.find(u.name());
      if (it == pvcs_.end()) return NotFound(u.name());
      auto* owners = it->second.mutable_metadata()->mutable_owner_references();
      owners->erase(std::remove_if(owners->begin(), owners->end(),
                                   [&](const pb::OwnerReference& o) { return o.uid() == u.remove_owner_uid(); }),
                    owners->end());
      if (u.has_add_owner()) *owners->Add() = u.add_owner();
      it->second.mutable_metadata()->set_resource_version(NextVersion());
      ++out.writes;
      return absl::OkStatus();
    }
    case pb::Action::kExpandPvc: {
      const pb::ExpandPvc& e = action.expand_pvc();
      auto it = pvcs_.find(e.name());
      if (it == pvcs_.end()) return NotFound(e.name());
      it->second.set_storage_request(e.storage());
      it->second.mutable_metadata()->set_resource_version(NextVersion());
      ++out.writes;
      return absl::OkStatus();
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

void SimCluster::CreatePvc(const pb::PersistentVolumeClaim& pvc, absl::Time now, AppliedPlan& out) {
  if (pvcs_.contains(pvc.metadata().name())) return;  // left over: reused, as the executor does
  pb::PersistentVolumeClaim& stored = pvcs_[pvc.metadata().name()] = pvc;
  stored.mutable_metadata()->set_uid(absl::StrCat("sim-pvc-", ++uid_counter_));
  stored.mutable_metadata()->set_resource_version(NextVersion());
  SetTimestamp(now, stored.mutable_metadata()->mutable_creation_timestamp());
  stored.set_phase("Bound");
  ++out.writes;
}

absl::Status SimCluster::CreatePod(const pb::CreatePod& create, absl::Time now, AppliedPlan& out) {
  for (const std::string& pvc_json : create.pvc_jsons()) {
    auto pvc = snapshot::PvcFromJson(pvc_json);
    if (!pvc.ok()) return pvc.status();
    CreatePvc(*pvc, now, out);
  }
  auto pod = snapshot::PodFromJson(create.pod_json());
  if (!pod.ok()) return pod.status();
  const std::string name = pod->metadata().name();
  if (pods_.contains(name)) return absl::OkStatus();  // left over from an earlier attempt: reused, as the executor does
  pb::ObjectMeta* meta = pod->mutable_metadata();
  meta->set_uid(absl::StrCat("sim-pod-uid-", ++uid_counter_));
  meta->set_resource_version(NextVersion());
  SetTimestamp(now, meta->mutable_creation_timestamp());
  // The scheduler binds at once, round-robin over the simulated nodes.
  pod->set_node_name(absl::StrCat("sim-node-", next_node_++ % options_.nodes + 1));
  pod->set_phase("Pending");
  SetCondition(*pod, "PodScheduled", true, now);
  Kubelet& k = kubelets_[name];
  StartContainers(*pod, k, now);
  pods_[name] = *std::move(pod);
  out.created.push_back(name);
  ++out.writes;
  return absl::OkStatus();
}

void SimCluster::StartContainers(const pb::Pod& pod, Kubelet& k, absl::Time now) {
  k.images.clear();
  for (const pb::Container& c : pod.containers()) k.images[c.name()] = c.image();
  k.running_at = now + options_.start_delay;
  k.ready_at = k.running_at + options_.ready_after;
  k.failing = options_.fail_rate > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < options_.fail_rate;
}

absl::Status SimCluster::PatchPod(const pb::PatchPod& patch, absl::Time now, AppliedPlan& out) {
  auto it = pods_.find(patch.name());
  if (it == pods_.end()) return NotFound(absl::StrCat("pod ", patch.name(), " not found"));
  pb::Pod& pod = it->second;
  pb::ObjectMeta* meta = pod.mutable_metadata();
  if (!patch.uid().empty() && patch.uid() != meta->uid()) {
    return Conflict(absl::StrCat("pod ", patch.name(), ": uid precondition failed"));
  }
  if (!patch.resource_version().empty() && patch.resource_version() != meta->resource_version()) {
    auto own = own_status_versions_.find(patch.name());
    if (own == own_status_versions_.end() || own->second != meta->resource_version()) {
      return Conflict(absl::StrCat("pod ", patch.name(), ": the object has been modified"));
    }
  }
  const std::string old_revision(planner::Label(*meta, planner::kRevisionLabel));
  const std::string old_state(planner::Label(*meta, planner::kLifecycleStateLabel));
  for (const auto& [k, v] : patch.set_labels()) (*meta->mutable_labels())[k] = v;
  for (const std::string& k : patch.remove_labels()) meta->mutable_labels()->erase(k);
  for (const auto& [k, v] : patch.set_annotations()) (*meta->mutable_annotations())[k] = v;
  for (const std::string& k : patch.remove_annotations()) meta->mutable_annotations()->erase(k);
  for (const std::string& f : patch.add_finalizers()) {
    if (std::find(meta->finalizers().begin(), meta->finalizers().end(), f) == meta->finalizers().end()) {
      meta->add_finalizers(f);
    }
  }
  for (const std::string& f : patch.remove_finalizers()) {
    auto* fs = meta->mutable_finalizers();
    fs->erase(std::remove(fs->begin(), fs->end(), f), fs->end());
  }
  for (pb::Container& c : *pod.mutable_containers()) {
    auto image = patch.container_images().find(c.name());
    if (image != patch.container_images().end()) c.set_image(image->second);
  }
  for (const std::string& uid : patch.remove_owner_uids()) {
    auto* owners = meta->mutable_owner_references();
    owners->erase(std::remove_if(owners->begin(), owners->end(),
                                 [&](const pb::OwnerReference& o) { return o.uid() == uid; }),
                  owners->end());
  }
  meta->set_resource_version(NextVersion());
  ++out.writes;
  const std::string new_revision(planner::Label(*meta, planner::kRevisionLabel));
  if (!old_revision.empty() && new_revision != old_revision) out.updated_in_place.push_back(patch.name());
  const std::string new_state(planner::Label(*meta, planner::kLifecycleStateLabel));
  if (new_state != old_state) {
    out.lifecycle.push_back(absl::StrCat(patch.name(), ": ", old_state.empty() ? "-" : old_state, " -> ",
                                         new_state.empty() ? "-" : new_state));
  }
  (void)now;
  return absl::OkStatus();
}

absl::Status SimCluster::ResizePod(const pb::ResizePod& resize) {
  auto it = pods_.find(resize.name());
  if (it == pods_.end()) return NotFound(absl::StrCat("pod ", resize.name(), " not found"));
  pb::Pod& pod = it->second;
  if (!resize.uid().empty() && resize.uid() != pod.metadata().uid()) {
    return Conflict(absl::StrCat("pod ", resize.name(), ": uid precondition failed"));
  }
  if (!resize.resource_version().empty() && resize.resource_version() != pod.metadata().resource_version()) {
    auto own = own_status_versions_.find(resize.name());
    if (own == own_status_versions_.end() || own->second != pod.metadata().resource_version()) {
      return Conflict(absl::StrCat("pod ", resize.name(), ": the object has been modified"));
    }
  }
  // The simulated kubelet resizes at once: the spec and the containers' status resources together.
  for (const pb::ResizePod::ContainerResources& want : resize.containers()) {
    for (pb::Container& c : *pod.mutable_containers()) {
      if (c.name() != want.name()) continue;
      for (const auto& [k, v] : want.requests()) (*c.mutable_resource_requests())[k] = v;
      for (const auto& [k, v] : want.limits()) (*c.mutable_resource_limits())[k] = v;
      for (pb::ContainerStatus& status : *pod.mutable_container_statuses()) {
        if (status.name() != c.name()) continue;
        *status.mutable_resource_requests() = c.resource_requests();
        *status.mutable_resource_limits() = c.resource_limits();
      }
    }
  }
  pod.mutable_metadata()->set_resource_version(NextVersion());
  own_status_versions_[resize.name()] = pod.metadata().resource_version();
  return absl::OkStatus();
}

absl::Status SimCluster::PatchPodStatus(const pb::PatchPodStatus& patch, absl::Time now) {
  auto it = pods_.find(patch.name());
  if (it == pods_.end()) return NotFound(absl::StrCat("pod ", patch.name(), " not found"));
  pb::Pod& pod = it->second;
  if (!patch.uid().empty() && patch.uid() != pod.metadata().uid()) {
    return Conflict(absl::StrCat("pod ", patch.name(), ": uid precondition failed"));
  }
  if (!patch.resource_version().empty() && patch.resource_version() != pod.metadata().resource_version()) {
    return Conflict(absl::StrCat("pod ", patch.name(), " status: the object has been modified"));
  }
  for (const pb::Condition& set : patch.set_conditions()) {
    bool found = false;
    for (pb::Condition& c : *pod.mutable_conditions()) {
      if (c.type() == set.type()) {
        c = set;
        found = true;
      }
    }
    if (!found) *pod.add_conditions() = set;
  }
  pod.mutable_metadata()->set_resource_version(NextVersion());
  own_status_versions_[patch.name()] = pod.metadata().resource_version();
  (void)now;
  return absl::OkStatus();
}

absl::Status SimCluster::DeletePod(const pb::DeletePod& del, absl::Time now, AppliedPlan& out) {
  auto it = pods_.find(del.name());
  if (it == pods_.end()) {
    // Gone already: the executor counts a 404 on a delete as done, and deletes the pod's claims all the same.
    ++out.writes;
    for (const std::string& pvc : del.pvc_names()) {
      if (pvcs_.erase(pvc) > 0) ++out.writes;
    }
    return absl::OkStatus();
  }
  if (!del.uid().empty() && del.uid() != it->second.metadata().uid()) {
    return Conflict(absl::StrCat("pod ", del.name(), ": uid precondition failed"));
  }
  ++out.writes;
  out.deleted.push_back(del.name());
  if (!planner::IsSet(it->second.metadata().deletion_timestamp())) {
    SetTimestamp(now, it->second.mutable_metadata()->mutable_deletion_timestamp());
    it->second.mutable_metadata()->set_resource_version(NextVersion());
    deleting_since_[del.name()] = now;
  }
  if (it->second.metadata().finalizers().empty() && options_.terminate_after <= absl::ZeroDuration()) {
    pods_.erase(it);
    kubelets_.erase(del.name());
    deleting_since_.erase(del.name());
  }
  for (const std::string& pvc : del.pvc_names()) {
    if (pvcs_.erase(pvc) > 0) ++out.writes;
  }
  return absl::OkStatus();
}

absl::Status SimCluster::PatchCloneSet(const pb::PatchCloneSet& patch, absl::Time now) {
  Json doc = Json::parse(clone_set_json_);
  try {
    doc.merge_patch(Json::parse(patch.merge_patch_json()));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("patch_clone_set: ", e.what()));
  }
  return ApplyCloneSet(doc.dump(), now);
}

bool SimCluster::StepPod(pb::Pod& pod, Kubelet& k, absl::Time now) {
  bool changed = false;
  // A spec image that differs from what the kubelet runs restarts that container in place.
  bool restart = false;
  for (const pb::Container& c : pod.containers()) {
    if (k.images[c.name()] != c.image()) restart = true;
  }
  if (restart && now >= k.running_at) {
    for (pb::ContainerStatus& cs : *pod.mutable_container_statuses()) {
      for (const pb::Container& c : pod.containers()) {
        if (c.name() == cs.name() && k.images[c.name()] != c.image()) {
          cs.set_restart_count(cs.restart_count() + 1);
          cs.set_ready(false);
        }
      }
    }
    StartContainers(pod, k, now);
    changed = true;
  }
  if (now >= k.running_at) {
    if (pod.phase() != "Running") {
      pod.set_phase("Running");
      changed = true;
    }
    for (const pb::Container& c : pod.containers()) {
      pb::ContainerStatus* status = nullptr;
      for (pb::ContainerStatus& cs : *pod.mutable_container_statuses()) {
        if (cs.name() == c.name()) status = &cs;
      }
      if (status == nullptr) {
        status = pod.add_container_statuses();
        status->set_name(c.name());
        // A started container reports the resources it runs with (a resize updates them, ResizePod).
        *status->mutable_resource_requests() = c.resource_requests();
        *status->mutable_resource_limits() = c.resource_limits();
        changed = true;
      }
      const std::string& image = k.images[c.name()];
      if (status->image() != image) {
        status->set_image(image);
        status->set_image_id(ImageId(image));
        status->set_container_id(absl::StrCat("sim://", pod.metadata().uid(), "/", c.name(), "/",
                                              status->restart_count()));
        changed = true;
      }
      const bool ready = now >= k.ready_at && !k.failing;
      if (status->ready() != ready) {
        status->set_ready(ready);
        changed = true;
      }
    }
  }
  bool containers_ready = pod.container_statuses_size() == pod.containers_size() && now >= k.running_at;
  for (const pb::ContainerStatus& cs : pod.container_statuses()) containers_ready = containers_ready && cs.ready();
  changed |= SetCondition(pod, "ContainersReady", containers_ready, now);
  bool ready = containers_ready;
  for (const std::string& gate : pod.readiness_gates()) {
    const pb::Condition* c = FindCondition(pod, gate);
    ready = ready && c != nullptr && c->status() == "True";
  }
  changed |= SetCondition(pod, "Ready", ready, now);
  if (changed) pod.mutable_metadata()->set_resource_version(NextVersion());
  return changed;
}

bool SimCluster::Advance(absl::Time now) {
  bool changed = false;
  for (auto it = pods_.begin(); it != pods_.end();) {
    const std::string name = it->first;
    auto del = deleting_since_.find(name);
    if (del != deleting_since_.end() && it->second.metadata().finalizers().empty() &&
        now >= del->second + options_.terminate_after) {
      kubelets_.erase(name);
      deleting_since_.erase(del);
      it = pods_.erase(it);
      changed = true;
      continue;
    }
    changed |= StepPod(it->second, kubelets_[name], now);
    ++it;
  }
  return changed;
}

std::optional<absl::Time> SimCluster::NextTransition(absl::Time now) const {
  std::optional<absl::Time> next;
  auto consider = [&](absl::Time t) {
    if (t > now && (!next || t < *next)) next = t;
  };
  const int min_ready = clone_set_.spec().min_ready_seconds();
  for (const auto& [name, pod] : pods_) {
    auto del = deleting_since_.find(name);
    if (del != deleting_since_.end()) {
      if (pod.metadata().finalizers().empty()) consider(del->second + options_.terminate_after);
      continue;
    }
    auto k = kubelets_.find(name);
    if (k == kubelets_.end()) continue;
    consider(k->second.running_at);
    if (!k->second.failing) consider(k->second.ready_at);
    const pb::Condition* ready = FindCondition(pod, "Ready");
    if (min_ready > 0 && ready != nullptr && ready->status() == "True") {
      // avail() needs lastTransitionTime + minReadySeconds strictly before now.
      consider(ToTime(ready->last_transition_time()) + absl::Seconds(min_ready) + absl::Milliseconds(1));
    }
  }
  return next;
}

PodCounts SimCluster::Counts(absl::Time now) const {
  PodCounts c;
  c.desired = clone_set_.spec().has_replicas() ? clone_set_.spec().replicas() : 1;
  const std::string& update_revision = clone_set_.status().update_revision();
  for (const auto& [_, pod] : pods_) {
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
  for (const auto& [name, k] : kubelets_) n += (k.failing && pods_.contains(name)) ? 1 : 0;
  return n;
}

}  // namespace cloneset::clonesetctl
