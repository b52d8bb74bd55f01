// Private to the store's sources (store_state.cc, store_write.cc, store_watch.cc, store_gc.cc and
// store_admission.cc): the one state behind Store's lock. A commit, a read, a watch and the garbage collector read
// and change it together inside one critical section; the code that acts on it is split by concern into those files.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "devcluster/store.h"
#include "devcluster/stored_object.h"

namespace cloneset::devcluster {
namespace store_internal {

struct HistoryEvent {
  EventType type;
  int64_t rv;
  ObjectPtr object;
  ObjectPtr previous;  // MODIFIED only: to report selector transitions
};


class WatcherImpl;

struct TypeState {
  ResourceType type;
  // The same type, immutable and shared: a writer takes it under the lock and decides its write outside it (a CRD
  // update replaces the pointer, never the object).
  std::shared_ptr<const ResourceType> shared_type;
  std::map<std::string, ObjectPtr> objects;  // "ns/name" (cluster scope: "/name")
  std::deque<HistoryEvent> history;
  int64_t floor_rv = 0;  // events with rv <= floor_rv are no longer available
  std::condition_variable cv;
  std::set<WatcherImpl*> watchers;
  bool removed = false;
};

inline std::string Key(std::string_view ns, std::string_view name) { return std::string(ns) + "/" + std::string(name); }

// kube-apiserver's 409 answer to a write over a version that is no longer the current one.
std::string ConflictMessage(const ResourceType& t, std::string_view name);

// The object `name` in `ns` (ignored for cluster-scoped types), or kube-apiserver's 404 for it.
absl::StatusOr<std::map<std::string, ObjectPtr>::iterator> FindObject(TypeState& ts, std::string_view ns,
                                                                      std::string_view name);

// Admission (store_admission.cc): checks a write must pass before it is committed.
absl::Status NamespaceTerminating(const std::string& ns);
bool HasOwnerReferences(const nlohmann::json& object);
bool SameOwnerReferences(const nlohmann::json& a, const nlohmann::json& b);
absl::Status AdmitCustomResource(const ResourceType& type, nlohmann::json& object, const nlohmann::json* old,
                                 const WriteOptions& options);
void WarnAboutUnevaluatedRules(const ResourceType& type, const WriteOptions& options);
absl::Status ValidateMeta(const nlohmann::json& meta);

}  // namespace store_internal

struct Store::State {
  using TypeState = store_internal::TypeState;

  mutable std::mutex mu;
  int64_t rv = 0;
  int64_t types_generation = 0;
  std::map<std::string, std::shared_ptr<TypeState>, std::less<>> types;
  std::unordered_map<std::string, std::pair<std::string, std::string>> by_uid;  // uid -> (type id, key)
  std::unordered_map<std::string, std::set<std::pair<std::string, std::string>>> dependents;  // owner uid
  absl::BitGen gen;
  base::Clock* clock = nullptr;
  StoreOptions options;
  std::vector<std::pair<int, std::function<void(const std::string&)>>> commit_listeners;
  int next_listener_id = 1;

  // `id` is ts.type.Id(), which every caller already holds (no string built per commit under the lock).
  void NotifyLocked(TypeState& ts, const std::string& id) {
    ts.cv.notify_all();
    for (const auto& [lid, fn] : commit_listeners) fn(id);
  }

  std::shared_ptr<TypeState> FindLocked(std::string_view id) const {
    auto it = types.find(id);
    return it == types.end() ? nullptr : it->second;
  }
  absl::StatusOr<std::shared_ptr<TypeState>> TypeOr404(std::string_view id) const {
    auto t = FindLocked(id);
    if (!t) return absl::NotFoundError(absl::StrCat("the server could not find the requested resource (", std::string(id), ")"));
    return t;
  }
  void RegisterLocked(const ResourceType& type) {
    auto& slot = types[type.Id()];
    if (!slot) slot = std::make_shared<TypeState>();
    slot->type = type;
    slot->shared_type = std::make_shared<const ResourceType>(type);
    ++types_generation;
  }
  void IndexLocked(const std::string& id, const std::string& key, const ObjectPtr& obj, const ObjectPtr& old);
  // stored (optional) receives the committed version.
  absl::Status CommitLocked(TypeState& ts, EventType type, nlohmann::json& object, ObjectPtr* stored = nullptr);
  // CommitLocked for an object serialized and indexed before the lock was taken: assigns the next resourceVersion
  // (into *rv), inserts it into the serialization and commits.
  absl::Status CommitPreparedLocked(TypeState& ts, EventType type, UnversionedObject prepared, ObjectPtr* stored,
                                    int64_t* rv);
  void RemoveLocked(TypeState& ts, const std::string key, int depth);
  void CollectDependentsLocked(const std::string& owner_uid, int depth);
  // Garbage-collects the object at `key` when its owners are all gone (garbage_collector.h). `gone_uid`, when set,
  // is an owner just removed: dangling whatever its reference says. `parsed`: the stored object already parsed by the
  // caller (saves a parse per create), or null.
  void CollectIfGarbageLocked(TypeState& ts, const std::string& key, const std::string& gone_uid, int depth,
                              const nlohmann::json* parsed = nullptr);
  void CheckForegroundOwnersLocked(const ObjectPtr& removed, int depth);
  // The pvc-protection controller: removes kPvcProtectionFinalizer from the deleted claim ns/claim once no pod
  // (other than the one at `leaving_pod_key`, which is going away) uses it (PodUsesClaim); the claim then goes.
  // Checked when the claim is deleted and when a pod using it is removed.
  void ReleaseClaimIfUnusedLocked(const std::string& ns, const std::string& claim, const std::string& leaving_pod_key,
                                  int depth);
  absl::StatusOr<nlohmann::json> DeleteLocked(TypeState& ts, const std::string& key, const DeleteOptions& opts,
                                              int depth);
  // Update, UpdateStatus and Mutate: a write over the current version of one object, as kube-apiserver's
  // GuaranteedUpdate does it. Under the lock it only reads the object's current version (`locate` names it from the
  // type); outside the lock it parses it, builds the incoming object (`incoming`, given the type, that version and
  // its parse), decides the write (PrepareWrite) and serializes the result; then, under the lock again, commits it
  // if the object is still that version and the type unchanged, else starts over. After kOptimisticAttempts
  // attempts lost that way, the last one holds the lock throughout, so a write always finishes. Every decision is
  // taken on one consistent version, as if under one lock: answers, resourceVersions (assigned at commit, in commit
  // order) and watch events are those of the one-lock store.
  absl::StatusOr<nlohmann::json> GuaranteedWrite(
      std::string_view resource, bool status, const WriteOptions& options,
      const std::function<absl::StatusOr<std::pair<std::string, std::string>>(const ResourceType&)>& locate,
      const std::function<absl::StatusOr<nlohmann::json>(const ResourceType&, const StoredObject& current,
                                                         const nlohmann::json& parsed)>& incoming);
  void OnCrdChangeLocked(const ObjectPtr& obj, bool deleted);
};

}  // namespace cloneset::devcluster
