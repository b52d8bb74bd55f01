// Applying a plan: the plan applier (planapi/applier.h: schedule, stop rules, status, events) over a writer to the
// API server, and that writer's translation of each action into API requests (see reconciler.h for the rules).
#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "executor/reconciler.h"
#include "executor/same_pod.h"
#include "kube/api_status.h"
#include "kube/watch_stream.h"
#include "nlohmann/json.hpp"
#include "planapi/pod_table.h"
#include "snapshot/patch.h"
#include "snapshot/snapshot.h"

namespace cloneset::executor {

using json = nlohmann::json;

struct Reconciler::ApplyState {
  const std::string& key;
  const pb::CloneSet& cs;
  const pb::PlanRequest& req;
  const std::string& ns;
  const RequestWithPods& snapshot;
  // The snapshot's pod `name` (null: not in it), found when a write first needs one: most plans need none, and a
  // rollout's status writes a few. When the pods are only in the request's table (the executor's cache keeps rows,
  // not pods), the pod is materialized from its row, and only that one.
  const pb::Pod* SnapshotPod(const std::string& name) {
    absl::MutexLock l(&pods_mu);
    if (!pods_indexed) {
      pods_indexed = true;
      if (req.pods_size() == 0 && snapshot.table_pods.empty() && req.has_pod_table()) {
        if (auto view = planapi::PodTableView::Open(req.pod_table()); view.ok()) table = *std::move(view);
      } else {
        for (const pb::Pod* p : snapshot.Pods()) pods_by_name.emplace(p->metadata().name(), p);
      }
    }
    if (table == nullptr) {
      auto it = pods_by_name.find(name);
      return it == pods_by_name.end() ? nullptr : it->second;
    }
    // The table's rows are in name order (planapi/request.h).
    uint32_t lo = 0, hi = table->size();
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (table->name(mid) < name) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == table->size() || table->name(lo) != name) return nullptr;
    const pb::Pod*& pod = materialized[lo];
    if (pod == nullptr) pod = table->Materialize(lo, &arena);
    return pod;
  }
  absl::Mutex pods_mu;
  bool pods_indexed ABSL_GUARDED_BY(pods_mu) = false;
  absl::flat_hash_map<std::string_view, const pb::Pod*> pods_by_name ABSL_GUARDED_BY(pods_mu);
  std::unique_ptr<planapi::PodTableView> table ABSL_GUARDED_BY(pods_mu);
  absl::flat_hash_map<uint32_t, const pb::Pod*> materialized ABSL_GUARDED_BY(pods_mu);
  google::protobuf::Arena arena;  // the materialized pods
  absl::Mutex mu;  // groups of a stage run concurrently (planapi/plan_schedule.h)
  // Pods whose status we wrote earlier in this plan, with metadata and spec still as in the snapshot -> the
  // version our write returned.
  std::map<std::string, std::string> written_rv ABSL_GUARDED_BY(mu);
  // Pods whose status write showed metadata or spec changed since the snapshot: no spec patch from this plan.
  std::set<std::string> changed_pods ABSL_GUARDED_BY(mu);
  // Pods this plan resized -> the pod (metadata and spec) the resize returned: what a later write of the same pod
  // in this plan compares a fresh read with, in place of the snapshot's pod (whose resources are the old ones).
  std::map<std::string, std::unique_ptr<pb::Pod>> resized ABSL_GUARDED_BY(mu);
  // The pod a fresh read of `name` must still match (metadata and spec) for a write to be retried at its version.
  const pb::Pod* ReferencePod(const std::string& name) {
    {
      absl::MutexLock l(&mu);
      if (auto it = resized.find(name); it != resized.end()) return it->second.get();
    }
    return SnapshotPod(name);
  }
};

// The plan applier's writer for one plan: the API server, through the Reconciler's clients, caches and
// expectations.
class Reconciler::RestPlanWriter final : public planapi::PlanWriter {
 public:
  RestPlanWriter(Reconciler& r, ApplyState& st) : r_(r), st_(st) {}
  bool MayWrite() override { return r_.Owns(st_.key); }
  absl::StatusOr<bool> CloneSetExists() override {
    // A reconcile can race the garbage collector: pods deleted with their CloneSet can reach the pod cache before
    // the CloneSet's own deletion does, and the stale CloneSet would be scaled back up with pods nobody owns. One
    // GET per plan that creates; no extra write.
    const pb::CloneSet& cs = st_.cs;
    auto fresh = r_.d_.client->Get(snapshot::CloneSetPath(st_.ns, cs.metadata().name(), cs.api_version()));
    if (!fresh.ok() && !absl::IsNotFound(fresh.status())) return fresh.status();
    auto meta = fresh.ok() ? kube::ReadObjectMeta(*fresh) : absl::StatusOr<kube::ObjectMeta>(fresh.status());
    return meta.ok() && meta->uid == cs.metadata().uid();
  }
  absl::Status Write(const pb::Action& action) override { return r_.ApplyAction(st_, action); }
  absl::Status WriteStatus(const pb::CloneSetStatus& status) override {
    return r_.PatchStatus(st_.key, st_.cs, status);
  }
  void Event(std::string_view type, std::string_view reason, std::string_view message) override {
    r_.d_.events->Event(st_.cs, type, reason, message);
  }
  void Written(std::string_view type, const absl::Status& outcome) override { r_.CountAction(type, outcome); }

 private:
  Reconciler& r_;
  ApplyState& st_;
};

namespace {

std::string NameOf(std::string_view object_json) {
  auto meta = kube::ReadObjectMeta(object_json);
  return meta.ok() ? meta->name : "";
}

// Whether a failed write may still have been applied: the API server answered 5xx (it may fail after the commit,
// e.g. a timeout writing the response) or the connection broke. 429 and 4xx are refusals.
bool OutcomeUnknown(const absl::Status& s) {
  // An answered 4xx (413, 429, ...) is a refusal: nothing was stored. Only a 5xx or no answer at all may hide a
  // committed write.
  if (const auto http = kube::HttpCode(s)) return *http >= 500;
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsInternal(s) || absl::IsUnknown(s);
}

// Whether `fresh` has the metadata and spec of `seen`, the pod in the snapshot (null: not in the snapshot).
bool SameMetadataAndSpec(const pb::Pod& fresh, const pb::Pod* seen) {
  return seen != nullptr && executor::SameMetadataAndSpec(fresh, *seen);
}

// The metadata and spec of a pod the API server returned (null: it does not decode), all the same-pod check
// reads: the status is skipped, and the message is the calling thread's, decoded into again (a rollout decodes
// one per status write, on the apply threads).
const pb::Pod* DecodeMetadataAndSpec(std::string_view json) {
  thread_local pb::Pod pod;
  if (!snapshot::PodFromJson(json, &pod, snapshot::PodParts::kMetadataAndSpec).ok()) return nullptr;
  return &pod;
}

}  // namespace

void Reconciler::ExpectFromResponse(const std::string& key, ObjectKind kind, const std::string& name, Want want,
                                    const std::string& body) {
  auto meta = kube::ReadObjectMeta(body);
  Expect(key, kind, name, want, meta.ok() ? meta->resource_version : "");
}

void Reconciler::ReReadAfterConflict(const std::string& key, ObjectKind kind, const std::string& path,
                                     const std::string& name) {
  // Never retry from the stale cache: learn the current version and wait until the cache shows it.
  auto fresh = d_.client->Get(path);
  if (fresh.ok()) ExpectFromResponse(key, kind, name, Want::kAtLeastVersion, *fresh);
}

ReconcileResult Reconciler::Apply(const std::string& key, const pb::CloneSet& cs, const RequestWithPods& snapshot,
                                  const pb::PlanResponse& plan) {
  ApplyState st{key, cs, snapshot.request, cs.metadata().namespace_(), snapshot};
  RestPlanWriter writer(*this, st);
  const planapi::ApplyResult applied =
      planapi::PlanApplier({.parallelism = d_.apply_parallelism}).Apply(cs, plan, writer, d_.clock->Now());
  return {applied.error, applied.requeue_after, applied.result};
}

absl::Status Reconciler::CreateObject(const std::string& key, ObjectKind kind, const std::string& collection,
                                      const std::string& body) {
  const std::string name = NameOf(body);
  auto resp = d_.client->Create(collection, body);
  if (absl::IsAlreadyExists(resp.status())) {
    Expect(key, kind, name, Want::kPresent);  // left over from an earlier attempt: reuse it
    return absl::OkStatus();
  }
  if (resp.ok()) {
    ExpectFromResponse(key, kind, name, Want::kPresent, *resp);
    return absl::OkStatus();
  }
  if (!OutcomeUnknown(resp.status()) || name.empty()) return resp.status();
  // The create may have been committed. If it was and we reported a failure, the next snapshot could lack the
  // object (nothing would hold the plan until the cache shows it): a pod unseen while its claim is seen makes the
  // claim look orphaned, and the claim cleanup deletes the volume of a pod that runs.
  auto fresh = d_.client->Get(collection + "/" + name);
  if (!fresh.ok()) return resp.status();
  ExpectFromResponse(key, kind, name, Want::kPresent, *fresh);
  return absl::OkStatus();
}

absl::Status Reconciler::DeleteObject(const std::string& key, ObjectKind kind, const std::string& collection,
                                      const std::string& name, const std::string& uid) {
  const std::string path = collection + "/" + name;
  auto resp = d_.client->Delete(path, DeleteBody(uid));
  if (!resp.ok() && !absl::IsNotFound(resp.status())) {
    if (!OutcomeUnknown(resp.status())) return resp.status();
    // The delete may have been committed: gone, terminating, or replaced by another object (other uid) all mean
    // the object we meant to delete is on its way out.
    auto fresh = d_.client->Get(path);
    if (fresh.ok()) {
      const json obj = json::parse(*fresh, nullptr, /*allow_exceptions=*/false);
      const auto meta = obj.is_object() ? obj.find("metadata") : obj.end();
      const bool has_meta = meta != obj.end() && meta->is_object();
      const auto uid_field = has_meta ? meta->find("uid") : obj.end();
      const bool same = uid.empty() || !has_meta || uid_field == meta->end() || *uid_field == uid;
      if (same && !(has_meta && meta->contains("deletionTimestamp"))) return resp.status();
    } else if (!absl::IsNotFound(fresh.status())) {
      return resp.status();
    }
  }
  Expect(key, kind, name, Want::kAbsent);
  return absl::OkStatus();
}

absl::Status Reconciler::CreatePod(ApplyState& st, const pb::CreatePod& create) {
  std::set<std::string> created;
  for (const std::string& pvc_json : create.pvc_jsons()) {
    // No pod without its claim: a claim that could not be created stops the action before the pod.
    if (absl::Status s = CreateObject(st.key, ObjectKind::kPvc, PvcsPath(st.ns), pvc_json); !s.ok()) return s;
    created.insert(NameOf(pvc_json));
  }
  for (const std::string& claim : create.claim_names()) {
    if (created.count(claim)) continue;
    // The planner left it out because its snapshot had it; the cache may have learnt since that it is gone.
    const Observed seen = d_.cache->Lookup(ObjectKind::kPvc, st.ns, claim);
    if (!seen.exists || seen.deleting) {
      return absl::FailedPreconditionError(absl::StrCat("claim ", claim, " of pod ", NameOf(create.pod_json()),
                                                        seen.exists ? " is being deleted" : " does not exist",
                                                        ": the pod is not created without it"));
    }
  }
  return CreateObject(st.key, ObjectKind::kPod, PodsPath(st.ns), create.pod_json());
}

absl::Status Reconciler::PatchFromAction(ApplyState& st, const pb::Action& original) {
  pb::Action action = original;
  ObjectKind kind = ObjectKind::kPod;
  std::string name;
  // A pod's metadata/spec writes: PatchPod, and ResizePod (its pods/resize subresource).
  const bool spec_write = action.has_patch_pod() || action.has_resize_pod();
  const auto set_version = [&action](const std::string& rv) {
    if (action.has_patch_pod()) {
      action.mutable_patch_pod()->set_resource_version(rv);
    } else {
      action.mutable_resize_pod()->set_resource_version(rv);
    }
  };
  if (spec_write) {
    name = action.has_patch_pod() ? action.patch_pod().name() : action.resize_pod().name();
    absl::MutexLock l(&st.mu);
    if (st.changed_pods.count(name)) {
      // Our status write returned a pod whose metadata or spec is not what the planner saw: re-plan (the
      // expectation on that write's version is recorded).
      return kube::StatusFromHttp(409, absl::StrCat(R"({"kind":"Status","status":"Failure","reason":"Conflict",)",
                                                    R"("code":409,"message":"pod )", name,
                                                    R"( changed since the snapshot"})"));
    }
    // After our own write in this plan, the precondition is the version that write returned.
    if (auto it = st.written_rv.find(name); it != st.written_rv.end()) set_version(it->second);
  } else if (action.has_patch_pod_status()) {
    name = action.patch_pod_status().name();
    absl::MutexLock l(&st.mu);
    if (auto it = st.written_rv.find(name); it != st.written_rv.end()) {
      action.mutable_patch_pod_status()->set_resource_version(it->second);
    }
  } else if (action.has_update_revision()) {
    kind = ObjectKind::kRevision;
    name = action.update_revision().name();
  } else {
    kind = ObjectKind::kCloneSet;
    name = st.cs.metadata().name();
  }
  auto req = snapshot::ActionToPatch(action, st.ns, st.cs.metadata().name(), st.cs.api_version());
  if (!req.ok()) return req.status();
  const kube::PatchType type =
      req->content_type == snapshot::kStrategicMergePatch ? kube::PatchType::kStrategicMerge : kube::PatchType::kMerge;
  auto resp = d_.client->Patch(req->path, type, req->body);
  for (int attempt = 0; attempt < 3 && spec_write && kube::IsConflict(resp.status()); ++attempt) {
    // Fresh read and retry (semantics §0.6): a pod whose metadata and spec are still what the
    // planner saw (only status moved on, e.g. the kubelet reacting to our InPlaceUpdateReady write or to our
    // resize) gets the same patch at its fresh version; after our own resize, "what the planner saw" is the pod
    // the resize returned. Any other metadata/spec change is a real conflict: re-plan.
    auto fresh = d_.client->Get(PodsPath(st.ns) + "/" + name);
    if (!fresh.ok()) break;
    const pb::Pod* pod = DecodeMetadataAndSpec(*fresh);
    if (pod == nullptr || !SameMetadataAndSpec(*pod, st.ReferencePod(name))) break;
    set_version(pod->metadata().resource_version());
    req = snapshot::ActionToPatch(action, st.ns, st.cs.metadata().name(), st.cs.api_version());
    if (!req.ok()) return req.status();
    resp = d_.client->Patch(req->path, type, req->body);
  }
  if (kube::IsConflict(resp.status())) {
    std::string object_path = req->path;
    for (std::string_view sub : {"/status", "/resize"}) {
      if (object_path.ends_with(sub)) object_path.resize(object_path.size() - sub.size());
    }
    ReReadAfterConflict(st.key, kind, object_path, name);
  }
  if (!resp.ok()) return resp.status();
  auto meta = kube::ReadObjectMeta(*resp);
  const std::string rv = meta.ok() ? meta->resource_version : "";
  if (action.has_patch_pod_status()) {
    // The status write may be guarded by the uid only (snapshot/patch.h), so the version it returns can include
    // other writers' changes: it stands in for the snapshot's version only while metadata and spec are unchanged.
    const pb::Pod* pod = DecodeMetadataAndSpec(*resp);
    const bool same = pod != nullptr && SameMetadataAndSpec(*pod, st.SnapshotPod(name));
    absl::MutexLock l(&st.mu);
    if (same) {
      st.written_rv[name] = rv;
    } else {
      st.written_rv.erase(name);
      st.changed_pods.insert(name);
    }
  } else if (action.has_resize_pod()) {
    const pb::Pod* pod = DecodeMetadataAndSpec(*resp);
    absl::MutexLock l(&st.mu);
    st.written_rv[name] = rv;
    if (pod != nullptr) {
      st.resized[name] = std::make_unique<pb::Pod>(*pod);
    } else {
      st.changed_pods.insert(name);  // nothing to check the pod's next write against: re-plan instead
    }
  } else if (kind == ObjectKind::kPod) {
    absl::MutexLock l(&st.mu);
    st.written_rv[name] = rv;
  }
  Expect(st.key, kind, name, Want::kAtLeastVersion, rv);
  return absl::OkStatus();
}

absl::Status Reconciler::ResizeNotServed(ApplyState& st, const pb::ResizePod& resize, const absl::Status& error) {
  // A 404 names either the pod (gone: the plan stops and the next snapshot shows it) or the subresource.
  auto pod = d_.client->Get(PodsPath(st.ns) + "/" + resize.name());
  if (!pod.ok()) return error;
  const bool first = !resize_unsupported_.exchange(true);
  const std::string message = absl::StrCat(
      "the API server does not serve pods/resize (Kubernetes 1.32 and later do): pod ", resize.name(),
      " is not resized in place; resources changes recreate pods from now on");
  if (first) d_.events->Event(st.cs, "Warning", "PodResizeUnsupported", message);
  return absl::FailedPreconditionError(message);
}

absl::Status Reconciler::ApplyAction(ApplyState& st, const pb::Action& action) {
  const std::string& key = st.key;
  switch (action.kind_case()) {
    case pb::Action::kCreateRevision: {
      // AlreadyExists: seen by the next snapshot; the planner handles hash collisions.
      return CreateObject(key, ObjectKind::kRevision, RevisionsPath(st.ns), action.create_revision().revision_json());
    }
    case pb::Action::kDeleteRevision: {
      const std::string& name = action.delete_revision().name();
      auto resp = d_.client->Delete(RevisionsPath(st.ns) + "/" + name, DeleteBody(""));
      if (!resp.ok() && !absl::IsNotFound(resp.status())) return resp.status();
      Expect(key, ObjectKind::kRevision, name, Want::kAbsent);
      return absl::OkStatus();
    }
    case pb::Action::kCreatePod:
      return CreatePod(st, action.create_pod());
    case pb::Action::kDeletePod: {
      const auto& del = action.delete_pod();
      if (absl::Status s = DeleteObject(key, ObjectKind::kPod, PodsPath(st.ns), del.name(), del.uid()); !s.ok()) {
        return s;
      }
      for (const std::string& pvc : del.pvc_names()) {
        if (absl::Status s = DeleteObject(key, ObjectKind::kPvc, PvcsPath(st.ns), pvc, ""); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case pb::Action::kDeletePvc: {
      const auto& del = action.delete_pvc();
      return DeleteObject(key, ObjectKind::kPvc, PvcsPath(st.ns), del.name(), del.uid());
    }
    case pb::Action::kCreatePvc:
      return CreateObject(key, ObjectKind::kPvc, PvcsPath(st.ns), action.create_pvc().pvc_json());
    case pb::Action::kUpdatePvcOwner: {
      const auto& upd = action.update_pvc_owner();
      const pb::PersistentVolumeClaim* pvc = nullptr;
      for (const auto& p : st.req.pvcs()) {
        if (p.metadata().name() == upd.name()) pvc = &p;
      }
      if (pvc == nullptr) return absl::NotFoundError(absl::StrCat("pvc ", upd.name(), " is not in the snapshot"));
      const snapshot::ApiRequest req = snapshot::PvcOwnerPatchRequest(st.ns, *pvc, upd);
      auto resp = d_.client->Patch(req.path, kube::PatchType::kMerge, req.body);
      if (kube::IsConflict(resp.status())) ReReadAfterConflict(key, ObjectKind::kPvc, req.path, upd.name());
      if (!resp.ok()) return resp.status();
      ExpectFromResponse(key, ObjectKind::kPvc, upd.name(), Want::kAtLeastVersion, *resp);
      return absl::OkStatus();
    }
    case pb::Action::kExpandPvc: {
      const auto& expand = action.expand_pvc();
      const snapshot::ApiRequest req = snapshot::PvcExpandRequest(st.ns, expand);
      auto resp = d_.client->Patch(req.path, kube::PatchType::kMerge, req.body);
      if (kube::IsConflict(resp.status())) ReReadAfterConflict(key, ObjectKind::kPvc, req.path, expand.name());
      if (!resp.ok()) return resp.status();
      ExpectFromResponse(key, ObjectKind::kPvc, expand.name(), Want::kAtLeastVersion, *resp);
      return absl::OkStatus();
    }
    case pb::Action::kCreateImagePullJob: {
      auto resp = d_.client->Create(snapshot::ImagePullJobsPath(st.ns), action.create_image_pull_job().job_json());
      return resp.ok() || absl::IsAlreadyExists(resp.status()) ? absl::OkStatus() : resp.status();
    }
    case pb::Action::kDeleteImagePullJob: {
      auto resp = d_.client->Delete(
          absl::StrCat(snapshot::ImagePullJobsPath(st.ns), "/", action.delete_image_pull_job().name()), DeleteBody(""));
      return resp.ok() || absl::IsNotFound(resp.status()) ? absl::OkStatus() : resp.status();
    }
    case pb::Action::kResizePod: {
      absl::Status s = PatchFromAction(st, action);
      if (kube::HttpCode(s) == 404) return ResizeNotServed(st, action.resize_pod(), s);
      return s;
    }
    case pb::Action::kPatchPod:
    case pb::Action::kPatchPodStatus:
    case pb::Action::kUpdateRevision:
    case pb::Action::kPatchCloneSet:
      return PatchFromAction(st, action);
    case pb::Action::kStartInPlaceUpdates:  // the applier writes a batch as its per-pod actions (planapi/applier.h)
      return absl::InternalError("StartInPlaceUpdates reached Apply without being expanded");
    case pb::Action::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("action: no kind set");
}

}  // namespace cloneset::executor
