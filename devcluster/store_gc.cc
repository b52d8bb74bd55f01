// Deletion and what follows it: the owner index, graceful pod deletion, finalizers, the propagation policies,
// the garbage collector's decisions (garbage_collector.h) applied to the store, foreground owners that wait for
// their dependents, a namespace's contents, and the pvc-protection controller.
#include "devcluster/store_state.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "devcluster/garbage_collector.h"
#include "devcluster/object_meta.h"
#include "devcluster/pvc_resize.h"

namespace cloneset::devcluster {

using store_internal::ConflictMessage;
using store_internal::FindObject;
using store_internal::Key;
using store_internal::TypeState;

void Store::State::IndexLocked(const std::string& id, const std::string& key, const ObjectPtr& obj,
                               const ObjectPtr& old) {
  if (old) {
    for (const auto& o : old->owner_uids) {
      auto it = dependents.find(o);
      if (it != dependents.end()) {
        it->second.erase({id, key});
        if (it->second.empty()) dependents.erase(it);
      }
    }
    if (!obj) by_uid.erase(old->uid);
  }
  if (obj) {
    by_uid[obj->uid] = {id, key};
    for (const auto& o : obj->owner_uids) dependents[o].insert({id, key});
  }
}

void Store::State::RemoveLocked(TypeState& ts, const std::string key, int depth) {
  auto it = ts.objects.find(key);
  if (it == ts.objects.end()) return;
  ObjectPtr last = it->second;
  nlohmann::json j = last->Parse();
  if (!CommitLocked(ts, EventType::kDeleted, j).ok()) return;
  if (depth > 64) return;  // ownership cycles: stop cascading
  if (ts.type.Id() == kPods)
    for (const std::string& claim : ClaimsOf(j)) ReleaseClaimIfUnusedLocked(last->ns, claim, key, depth + 1);
  CheckForegroundOwnersLocked(last, depth + 1);
  CollectDependentsLocked(last->uid, depth + 1);
}

// Background garbage collection of a removed owner's dependents.
void Store::State::CollectDependentsLocked(const std::string& owner_uid, int depth) {
  auto it = dependents.find(owner_uid);
  if (it == dependents.end()) return;
  auto deps = it->second;  // copy: collection mutates the index
  for (const auto& [id, key] : deps) {
    if (auto ts = FindLocked(id)) CollectIfGarbageLocked(*ts, key, owner_uid, depth);
  }
}

namespace {

// Owner references resolved against the store's own state (the lock is held by the caller).
class StoreOwnerLookup final : public OwnerLookup {
 public:
  explicit StoreOwnerLookup(const std::map<std::string, std::shared_ptr<TypeState>, std::less<>>& types)
      : types_(types) {}
  std::optional<bool> KindNamespaced(std::string_view api_version, std::string_view kind) const override {
    const TypeState* ts = Resolve(api_version, kind);
    if (!ts) return std::nullopt;
    return ts->type.namespaced;
  }
  std::optional<Owner> Find(std::string_view api_version, std::string_view kind, std::string_view ns,
                            std::string_view name) const override {
    const TypeState* ts = Resolve(api_version, kind);
    if (!ts) return std::nullopt;
    auto it = ts->objects.find(Key(ns, name));
    if (it == ts->objects.end()) return std::nullopt;
    const StoredObject& o = *it->second;
    bool foreground = std::find(o.finalizers.begin(), o.finalizers.end(), "foregroundDeletion") != o.finalizers.end();
    return Owner{o.uid, o.deleting && foreground};
  }

 private:
  // An owner reference may name any version the owner's type is served in (the executor's pods name v1alpha1 of
  // CloneSets stored as v1beta1).
  const TypeState* Resolve(std::string_view api_version, std::string_view kind) const {
    for (const auto& [id, ts] : types_) {
      if (ts->type.kind != kind) continue;
      if (ts->type.ApiVersion() == api_version) return ts.get();
      for (const ServedVersion& v : ts->type.served)
        if (absl::StrCat(ts->type.group, "/", v.name) == api_version) return ts.get();
    }
    return nullptr;
  }
  const std::map<std::string, std::shared_ptr<TypeState>, std::less<>>& types_;
};

}  // namespace

void Store::State::CollectIfGarbageLocked(TypeState& ts, const std::string& key, const std::string& gone_uid,
                                          int depth, const nlohmann::json* parsed) {
  auto oit = ts.objects.find(key);
  if (oit == ts.objects.end()) return;
  const ObjectPtr dep = oit->second;
  nlohmann::json own_parse;
  const nlohmann::json& obj = parsed ? *parsed : (own_parse = dep->Parse());  // both lvalues: no copy
  const std::vector<OwnerReference> refs = OwnerReferencesOf(obj);
  StoreOwnerLookup lookup(types);
  std::vector<OwnerStatus> statuses;
  statuses.reserve(refs.size());
  for (const auto& ref : refs)
    statuses.push_back(!gone_uid.empty() && ref.uid == gone_uid ? OwnerStatus::kDangling
                                                                : ClassifyOwner(ref, dep->ns, lookup));
  const GcDecision d =
      DecideCollection({dep->deleting, dep->finalizers, dependents.count(dep->uid) > 0}, refs, statuses);
  if (d.action == GcDecision::Action::kRemoveReferences) {
    nlohmann::json j = obj;
    auto& out = j["metadata"]["ownerReferences"];
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const nlohmann::json& r) {
                               return r.is_object() && std::find(d.remove_uids.begin(), d.remove_uids.end(),
                                                                 r.value("uid", "")) != d.remove_uids.end();
                             }),
              out.end());
    if (out.empty()) j["metadata"].erase("ownerReferences");
    if (!CommitLocked(ts, EventType::kModified, j).ok()) return;
    if (depth <= 64) CheckForegroundOwnersLocked(dep, depth + 1);  // a waiting owner may have lost its last dependent
  } else if (d.action == GcDecision::Action::kDelete) {
    DeleteOptions o;
    o.propagation = d.propagation;
    (void)DeleteLocked(ts, key, o, depth);
  }
}

void Store::State::ReleaseClaimIfUnusedLocked(const std::string& ns, const std::string& claim,
                                               const std::string& leaving_pod_key, int depth) {
  auto pvcs = FindLocked(kPersistentVolumeClaims);
  if (!pvcs) return;
  const std::string pvc_key = Key(ns, claim);
  auto pit = pvcs->objects.find(pvc_key);
  if (pit == pvcs->objects.end() || !pit->second->deleting) return;
  const auto& fins = pit->second->finalizers;
  if (std::find(fins.begin(), fins.end(), kPvcProtectionFinalizer) == fins.end()) return;
  // Only a deleted, protected claim gets here, so scanning its namespace's pods stays off the common path.
  if (auto pods = FindLocked(kPods)) {
    const std::string prefix = ns + "/";
    for (auto it = pods->objects.lower_bound(prefix);
         it != pods->objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      if (it->first == leaving_pod_key) continue;
      if (PodUsesClaim(it->second->Parse(), claim)) return;  // still in use
    }
  }
  nlohmann::json j = pit->second->Parse();
  auto& f = j["metadata"]["finalizers"];
  f.erase(std::remove(f.begin(), f.end(), nlohmann::json(kPvcProtectionFinalizer)), f.end());
  const bool last_finalizer = f.empty();
  if (last_finalizer) j["metadata"].erase("finalizers");  // `f` dangles from here on
  if (!CommitLocked(*pvcs, EventType::kModified, j).ok()) return;
  if (last_finalizer) RemoveLocked(*pvcs, pvc_key, depth);
}

// Foreground deletion: an owner waiting with the foregroundDeletion finalizer goes once its last
// dependent is gone.
void Store::State::CheckForegroundOwnersLocked(const ObjectPtr& removed, int depth) {
  for (const std::string& owner : removed->owner_uids) {
    auto u = by_uid.find(owner);
    if (u == by_uid.end() || dependents.count(owner)) continue;
    const std::pair<std::string, std::string> where = u->second;  // Commit may rehash by_uid
    auto ts = FindLocked(where.first);
    if (!ts) continue;
    auto oit = ts->objects.find(where.second);
    if (oit == ts->objects.end()) continue;
    const auto& fins = oit->second->finalizers;
    if (std::find(fins.begin(), fins.end(), "foregroundDeletion") == fins.end()) continue;
    nlohmann::json j = oit->second->Parse();
    auto& f = j["metadata"]["finalizers"];
    f.erase(std::remove(f.begin(), f.end(), nlohmann::json("foregroundDeletion")), f.end());
    if (f.empty()) {
      j["metadata"].erase("finalizers");
      (void)CommitLocked(*ts, EventType::kModified, j);
      RemoveLocked(*ts, where.second, depth);
    } else {
      (void)CommitLocked(*ts, EventType::kModified, j);
    }
  }
}

absl::StatusOr<nlohmann::json> Store::State::DeleteLocked(TypeState& ts, const std::string& key,
                                                          const DeleteOptions& opts, int depth) {
  auto it = ts.objects.find(key);
  if (it == ts.objects.end()) {
    std::string name = key.substr(key.find('/') + 1);
    return absl::NotFoundError(absl::StrCat(QualifiedName(ts.type, name), " not found"));
  }
  ObjectPtr old = it->second;
  if (opts.precondition_uid && *opts.precondition_uid != old->uid)
    return absl::AbortedError(absl::StrCat("Precondition failed: UID in precondition: ", *opts.precondition_uid,
                                           ", UID in object meta: ", old->uid));
  if (opts.precondition_resource_version &&
      *opts.precondition_resource_version != std::to_string(old->resource_version))
    return absl::AbortedError(ConflictMessage(ts.type, old->name));
  nlohmann::json j = old->Parse();
  if (opts.dry_run) return j;
  const std::string id = ts.type.Id();
  auto now = clock->ChronoNow();
  if (id == kPods) {
    int64_t grace = opts.grace_period_seconds.value_or(
        j["spec"].is_object() ? j["spec"].value("terminationGracePeriodSeconds", int64_t{30}) : 30);
    std::string phase = j.contains("status") && j["status"].is_object() ? j["status"].value("phase", "") : "";
    bool scheduled = j["spec"].is_object() && !j["spec"].value("nodeName", "").empty();
    if (grace > 0 && scheduled && phase != "Succeeded" && phase != "Failed") {
      int64_t current = j["metadata"].value("deletionGracePeriodSeconds", int64_t{-1});
      if (old->deleting && current >= 0 && current <= grace) return j;
      j["metadata"]["deletionTimestamp"] = base::FormatTime(absl::FromChrono(now + std::chrono::seconds(grace)));
      j["metadata"]["deletionGracePeriodSeconds"] = grace;
      if (absl::Status s = CommitLocked(ts, EventType::kModified, j); !s.ok()) return s;
      return j;
    }
  }
  if (opts.propagation == Propagation::kOrphan) {
    if (auto d = dependents.find(old->uid); d != dependents.end()) {
      auto deps = d->second;
      for (const auto& [did, dkey] : deps) {
        auto dts = FindLocked(did);
        if (!dts || !dts->objects.count(dkey)) continue;
        nlohmann::json dj = dts->objects[dkey]->Parse();
        auto& refs = dj["metadata"]["ownerReferences"];
        refs.erase(std::remove_if(refs.begin(), refs.end(),
                                  [&](const nlohmann::json& r) { return r.value("uid", "") == old->uid; }),
                   refs.end());
        if (refs.empty()) dj["metadata"].erase("ownerReferences");
        (void)CommitLocked(*dts, EventType::kModified, dj);
      }
    }
  }
  if (opts.propagation == Propagation::kForeground && dependents.count(old->uid)) {
    if (!old->deleting) {
      j["metadata"]["deletionTimestamp"] = base::FormatTime(absl::FromChrono(now));
      j["metadata"]["deletionGracePeriodSeconds"] = 0;
      auto& f = j["metadata"]["finalizers"];
      if (!f.is_array()) f = nlohmann::json::array();
      f.push_back("foregroundDeletion");
      if (absl::Status s = CommitLocked(ts, EventType::kModified, j); !s.ok()) return s;
    }
    auto deps = dependents[old->uid];
    for (const auto& [did, dkey] : deps) {
      auto dts = FindLocked(did);
      if (!dts) continue;
      auto dit = dts->objects.find(dkey);
      if (dit == dts->objects.end() || dit->second->deleting) continue;
      (void)DeleteLocked(*dts, dkey, DeleteOptions{}, depth + 1);
    }
    auto now_it = ts.objects.find(key);
    return now_it == ts.objects.end() ? j : now_it->second->Parse();
  }
  if (!old->finalizers.empty()) {
    if (!old->deleting) {
      j["metadata"]["deletionTimestamp"] = base::FormatTime(absl::FromChrono(now));
      j["metadata"]["deletionGracePeriodSeconds"] = 0;
      if (absl::Status s = CommitLocked(ts, EventType::kModified, j); !s.ok()) return s;
    }
    if (id == kPersistentVolumeClaims) {
      ReleaseClaimIfUnusedLocked(old->ns, old->name, "", depth + 1);
      auto now_it = ts.objects.find(key);
      return now_it == ts.objects.end() ? j : now_it->second->Parse();
    }
    return j;
  }
  if (id == kNamespaces) {
    for (auto& [tid, tts] : types) {
      if (!tts->type.namespaced) continue;
      std::vector<std::string> keys;
      std::string prefix = old->name + "/";
      for (auto oit = tts->objects.lower_bound(prefix); oit != tts->objects.end() && oit->first.rfind(prefix, 0) == 0;
           ++oit)
        keys.push_back(oit->first);
      for (const auto& k : keys) RemoveLocked(*tts, k, depth + 1);
    }
  }
  RemoveLocked(ts, key, depth);
  return j;
}

absl::StatusOr<nlohmann::json> Store::Delete(std::string_view resource, std::string_view ns, std::string_view name,
                                             const DeleteOptions& options) {
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  return state_->DeleteLocked(**ts, Key((*ts)->type.namespaced ? ns : "", name), options, 0);
}

absl::Status Store::DeleteNow(std::string_view resource, std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  auto found = FindObject(**ts, ns, name);
  if (!found.ok()) return found.status();
  auto it = *found;
  if (!it->second->finalizers.empty()) {
    // As kube-apiserver answers the kubelet's final delete (grace period 0): an object with finalizers stays,
    // deleting, until a write removes the last one (GuaranteedWrite then removes it). Before, the kubelet simulator's
    // delete dropped a pod whatever its finalizers, so a foreground owner never waited for a held pod.
    nlohmann::json j = it->second->Parse();
    if (j["metadata"].value("deletionGracePeriodSeconds", int64_t{-1}) == 0) return absl::OkStatus();
    j["metadata"]["deletionGracePeriodSeconds"] = 0;
    if (!j["metadata"].contains("deletionTimestamp"))
      j["metadata"]["deletionTimestamp"] = base::FormatTime(absl::FromChrono(state_->clock->ChronoNow()));
    return state_->CommitLocked(**ts, EventType::kModified, j);
  }
  state_->RemoveLocked(**ts, it->first, 0);
  return absl::OkStatus();
}

}  // namespace cloneset::devcluster
