// Size: the store is one state (Store::State) under one lock: commits, reads, watches with their history, the
// garbage collector's owner index and the CRD registry all read and change it together inside one critical
// section. An update decides and serializes outside it and only commits inside (State::GuaranteedWrite). The
// policies that need no state are already apart (garbage_collector.h, object_meta.h, schema.h).
#include "devcluster/store.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>

#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/time_format.h"
#include "common/label_selector.h"
#include "devcluster/garbage_collector.h"
#include "devcluster/object_meta.h"
#include "devcluster/pod_resize.h"
#include "devcluster/pvc_resize.h"
#include "devcluster/schema.h"
#include "devcluster/stored_object.h"
#include "devcluster/versions.h"

namespace cloneset::devcluster {

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
    case EventType::kBookmark: return "BOOKMARK";
    case EventType::kError: return "ERROR";
  }
  return "ERROR";
}

namespace {

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

std::string Key(std::string_view ns, std::string_view name) { return std::string(ns) + "/" + std::string(name); }

// kube-apiserver's NamespaceLifecycle admission: nothing new in a namespace that is being deleted (here: one whose
// finalizers hold it after a DELETE). The Forbidden answer names the object (api_server.cc) and carries the cause.
absl::Status NamespaceTerminating(const std::string& ns) {
  absl::Status s = absl::PermissionDeniedError(
      absl::StrCat("unable to create new content in namespace ", ns, " because it is being terminated"));
  s.SetPayload(kFieldCausesPayload,
               absl::Cord(nlohmann::json::array({{{"reason", "NamespaceTerminating"},
                                                  {"message", absl::StrCat("namespace ", ns, " is being terminated")},
                                                  {"field", "metadata.namespace"}}})
                              .dump()));
  return s;
}

// A ResourceQuota's hard limit on pods (spec.hard "pods" or "count/pods", an integer quantity), if it has one.
std::optional<std::pair<std::string, int64_t>> PodLimit(const nlohmann::json& quota) {
  const nlohmann::json* hard = LookupPath(quota, ".spec.hard");
  if (hard == nullptr || !hard->is_object()) return std::nullopt;
  for (const char* key : {"pods", "count/pods"}) {
    auto it = hard->find(key);
    if (it == hard->end()) continue;
    int64_t n = 0;
    if (it->is_number_integer()) return std::pair<std::string, int64_t>(key, it->get<int64_t>());
    if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), &n)) return std::pair<std::string, int64_t>(key, n);
  }
  return std::nullopt;
}

// Whether the quota counts `pod`: kube's pod evaluator leaves out terminal pods and pods whose deletion grace has
// passed; the embedded cluster's deleted pods are gone or have no grace left, so: not Succeeded, not Failed, not
// being deleted.
bool QuotaCountsPod(const nlohmann::json& pod) {
  const nlohmann::json* phase = LookupPath(pod, ".status.phase");
  if (phase != nullptr && phase->is_string() && (*phase == "Succeeded" || *phase == "Failed")) return false;
  return LookupPath(pod, ".metadata.deletionTimestamp") == nullptr;
}

std::string ConflictMessage(const ResourceType& t, std::string_view name) {
  return absl::StrCat("Operation cannot be fulfilled on ", QualifiedName(t, name),
                      ": the object has been modified; please apply your changes to the latest version "
                      "and try again");
}

// The object `name` in `ns` (ignored for cluster-scoped types), or kube-apiserver's 404 for it.
absl::StatusOr<std::map<std::string, ObjectPtr>::iterator> FindObject(TypeState& ts, std::string_view ns,
                                                                      std::string_view name) {
  auto it = ts.objects.find(Key(ts.type.namespaced ? ns : "", name));
  if (it == ts.objects.end()) return absl::NotFoundError(absl::StrCat(QualifiedName(ts.type, name), " not found"));
  return it;
}

}  // namespace

struct Store::State {
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

namespace {

class WatcherImpl final : public Watcher {
 public:
  WatcherImpl(Store::State* st, std::shared_ptr<TypeState> ts, const WatchOptions& o,
              common::LabelSelector labels, FieldSelector fields)
      : st_(st), ts_(std::move(ts)), ns_(o.ns), labels_(std::move(labels)), fields_(std::move(fields)),
        bookmarks_(o.allow_bookmarks) {}
  ~WatcherImpl() override {
    std::lock_guard<std::mutex> l(st_->mu);
    ts_->watchers.erase(this);
  }

  // Called with st_->mu held at creation.
  void InitLocked(const WatchOptions& o) {
    ts_->watchers.insert(this);
    if (o.send_initial_events) {
      for (const auto& [key, obj] : ts_->objects)
        if (Match(obj)) pending_.push_back({EventType::kAdded, obj->resource_version, obj, {}});
      last_rv_ = st_->rv;
      // As kube-apiserver: the end is marked only for a client that takes bookmarks.
      if (bookmarks_) pending_.push_back({EventType::kBookmark, st_->rv, nullptr, {}, /*initial_events_end=*/true});
    } else if (!o.resource_version || *o.resource_version == 0) {
      for (const auto& [key, obj] : ts_->objects)
        if (Match(obj)) pending_.push_back({EventType::kAdded, obj->resource_version, obj, {}});
      last_rv_ = st_->rv;
    } else {
      last_rv_ = *o.resource_version;
    }
  }

  bool Next(WatchEvent* event, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> l(st_->mu);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!pending_.empty()) {
        *event = std::move(pending_.front());
        pending_.pop_front();
        return true;
      }
      if (stopped_ || failed_ || ts_->removed) return false;
      if (last_rv_ < ts_->floor_rv) {
        failed_ = true;
        event->type = EventType::kError;
        event->resource_version = 0;
        event->object = nullptr;
        event->error = absl::OutOfRangeError(absl::StrCat("too old resource version: ", last_rv_, " (",
                                                          ts_->floor_rv + 1, ")"));
        return true;
      }
      auto& h = ts_->history;
      auto it = std::upper_bound(h.begin(), h.end(), last_rv_,
                                 [](int64_t rv, const HistoryEvent& e) { return rv < e.rv; });
      for (; it != h.end(); ++it) {
        last_rv_ = it->rv;
        if (Translate(*it, event)) return true;
      }
      if (last_rv_ < st_->rv) last_rv_ = st_->rv;  // all events up to st_->rv are in history
      // A zero timeout only polls (the HTTP layer drains a burst this way): no wait, no bookmark.
      if (timeout.count() <= 0) return false;
      if (ts_->cv.wait_until(l, deadline) == std::cv_status::timeout) {
        if (!pending_.empty() || (!ts_->history.empty() && ts_->history.back().rv > last_rv_)) continue;
        if (bookmarks_ && !stopped_) {
          event->type = EventType::kBookmark;
          event->resource_version = last_rv_;
          event->object = nullptr;
          event->initial_events_end = false;
          return true;
        }
        return false;
      }
    }
  }

  bool NextOrBookmark(WatchEvent* event) override {
    if (Next(event, std::chrono::milliseconds(0))) return true;
    std::lock_guard<std::mutex> l(st_->mu);
    if (!bookmarks_ || stopped_ || failed_ || ts_->removed) return false;
    event->type = EventType::kBookmark;
    event->resource_version = last_rv_;
    event->object = nullptr;
    event->error = absl::OkStatus();
    event->initial_events_end = false;
    return true;
  }

  bool Ended() const override {
    std::lock_guard<std::mutex> l(st_->mu);
    return pending_.empty() && (stopped_ || failed_ || ts_->removed);
  }

  void Stop() override {
    std::lock_guard<std::mutex> l(st_->mu);
    stopped_ = true;
    ts_->cv.notify_all();
  }

 private:
  bool Match(const ObjectPtr& o) const {
    if (!o) return false;
    if (!ns_.empty() && o->ns != ns_) return false;
    return labels_.Matches(o->labels) && fields_.Matches(o->fields);
  }
  bool Translate(const HistoryEvent& e, WatchEvent* out) {
    bool now = Match(e.object);
    EventType type = e.type;
    if (e.type == EventType::kModified) {
      bool before = Match(e.previous);
      if (!now && !before) return false;
      if (now && !before) type = EventType::kAdded;
      if (!now && before) type = EventType::kDeleted;
    } else if (!now) {
      return false;
    }
    out->type = type;
    out->resource_version = e.rv;
    out->object = e.object;
    out->error = absl::OkStatus();
    return true;
  }

  Store::State* st_;
  std::shared_ptr<TypeState> ts_;
  std::string ns_;
  common::LabelSelector labels_;
  FieldSelector fields_;
  bool bookmarks_;
  int64_t last_rv_ = 0;
  std::deque<WatchEvent> pending_;
  bool stopped_ = false;
  bool failed_ = false;
};

}  // namespace

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

absl::Status Store::State::CommitLocked(TypeState& ts, EventType type, nlohmann::json& object,
                                       ObjectPtr* stored) {
  int64_t rv = 0;
  absl::Status s = CommitPreparedLocked(ts, type, MakeUnversionedObject(object, ts.type.Id()), stored, &rv);
  if (s.ok()) object["metadata"]["resourceVersion"] = std::to_string(rv);
  return s;
}

absl::Status Store::State::CommitPreparedLocked(TypeState& ts, EventType type, UnversionedObject prepared,
                                               ObjectPtr* stored, int64_t* rv_out) {
  const std::string id = ts.type.Id();
  const int64_t rv = this->rv + 1;
  // etcd refuses larger requests, and past 2 MiB kube-apiserver's etcd client does not even send them; nothing is
  // committed, and the API answers 500 with the same messages.
  if (const size_t size = VersionedSize(prepared, rv); size > kMaxStoredObjectBytes) {
    // About what the etcd client would send: the value and its key.
    const size_t request = size + id.size() + prepared.object->ns.size() + prepared.object->name.size() + 16;
    if (request > kMaxEtcdClientMessageBytes)
      return absl::ResourceExhaustedError(
          absl::StrCat("rpc error: code = ResourceExhausted desc = trying to send message larger than max (", request,
                       " vs. ", kMaxEtcdClientMessageBytes, ")"));
    return absl::ResourceExhaustedError("etcdserver: request is too large");
  }
  this->rv = rv;
  *rv_out = rv;
  ObjectPtr obj = SetVersion(std::move(prepared), rv);
  if (stored) *stored = obj;
  const std::string key = Key(obj->ns, obj->name);
  ObjectPtr old;
  if (auto it = ts.objects.find(key); it != ts.objects.end()) old = it->second;
  if (options.journal) {
    absl::Status s = options.journal->Append({type == EventType::kDeleted, id, obj, rv});
    if (!s.ok()) return absl::InternalError(absl::StrCat("write-ahead log: ", s.message()));
  }
  if (type == EventType::kDeleted) {
    ts.objects.erase(key);
    IndexLocked(id, key, nullptr, old);
  } else {
    ts.objects[key] = obj;
    IndexLocked(id, key, obj, old);
  }
  ts.history.push_back({type, rv, obj, type == EventType::kModified ? old : nullptr});
  while (ts.history.size() > options.watch_history) {
    ts.floor_rv = ts.history.front().rv;
    ts.history.pop_front();
  }
  NotifyLocked(ts, id);
  if (id == kCustomResourceDefinitions) OnCrdChangeLocked(obj, type == EventType::kDeleted);
  return absl::OkStatus();
}

void Store::State::OnCrdChangeLocked(const ObjectPtr& obj, bool deleted) {
  auto parsed = ResourceTypeFromCrd(obj->Parse());
  if (!parsed.ok()) return;
  if (deleted) {
    auto it = types.find(parsed->Id());
    if (it == types.end() || !it->second->type.custom) return;
    auto ts = it->second;
    for (const auto& [key, o] : ts->objects) IndexLocked(ts->type.Id(), key, nullptr, o);
    ts->removed = true;
    NotifyLocked(*ts, it->first);
    types.erase(it);
    ++types_generation;
    return;
  }
  RegisterLocked(*parsed);
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

}  // namespace cloneset::devcluster

namespace cloneset::devcluster {
namespace {

bool HasOwnerReferences(const nlohmann::json& object) {
  const nlohmann::json* refs = OwnerReferencesJson(object);
  return refs && refs->is_array() && !refs->empty();
}

bool SameOwnerReferences(const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json *ra = OwnerReferencesJson(a), *rb = OwnerReferencesJson(b);
  return ra && rb ? *ra == *rb : ra == rb;
}

// Admission of a custom resource against its CRD schema (schema.h): prune unknown fields (per fieldValidation),
// default, validate. `old` is the stored object on an update.
absl::Status AdmitCustomResource(const ResourceType& type, nlohmann::json& object, const nlohmann::json* old,
                                 const WriteOptions& options) {
  if (!type.schema) return absl::OkStatus();
  std::vector<std::string> unknown = PruneAndDefault(*type.schema, object);
  if (!unknown.empty() && options.field_validation == "Strict") {
    std::vector<std::string> parts;
    for (const auto& f : unknown) parts.push_back(absl::StrCat("unknown field \"", f, "\""));
    return absl::FailedPreconditionError(absl::StrCat(type.kind, " in version \"", type.version,
                                                      "\" cannot be handled as a ", type.kind,
                                                      ": strict decoding error: ", absl::StrJoin(parts, ", ")));
  }
  if (options.field_validation == "Warn" && options.warnings)
    for (const auto& f : unknown) options.warnings->push_back(absl::StrCat("unknown field \"", f, "\""));
  std::vector<std::string> replicas_paths;
  if (type.has_scale) replicas_paths = {type.scale_spec_path, type.scale_status_path};
  return FieldErrorsStatus(ValidateAgainstSchema(*type.schema, object, old, replicas_paths));
}

// A CRD rule outside the CEL subset the cluster evaluates (cel.h) is said so on the CRD write, not silently skipped.
void WarnAboutUnevaluatedRules(const ResourceType& type, const WriteOptions& options) {
  if (!type.schema || !options.warnings) return;
  for (const auto& [rule, why] : type.schema->not_evaluated)
    options.warnings->push_back(absl::StrCat("x-kubernetes-validations rule not evaluated by the embedded cluster: ",
                                             rule, " (", why, ")"));
}

absl::Status ValidateMeta(const nlohmann::json& meta) {
  for (const char* field : {"labels", "annotations"}) {
    auto it = meta.find(field);
    if (it == meta.end() || it->is_null()) continue;
    if (!it->is_object())
      return absl::InvalidArgumentError(absl::StrCat("metadata.", field, ": Invalid value: must be a map of strings"));
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string())
        return absl::InvalidArgumentError(
            absl::StrCat("metadata.", field, "[", k, "]: Invalid value: ", v.dump(), ": must be a string"));
      if (k.empty() || k.size() > 317)
        return absl::InvalidArgumentError(absl::StrCat("metadata.", field, ": Invalid value: \"", k, "\": invalid key"));
    }
  }
  if (auto it = meta.find("annotations"); it != meta.end() && it->is_object()) {
    size_t total = 0;
    for (const auto& [k, v] : it->items()) total += k.size() + v.get_ref<const std::string&>().size();
    if (total > kTotalAnnotationSizeLimit)
      return FieldErrorsStatus({{"FieldValueTooLong", "metadata.annotations",
                                 absl::StrCat("Too long: may not be more than ", kTotalAnnotationSizeLimit, " bytes")}});
  }
  for (const char* field : {"finalizers", "ownerReferences"}) {
    auto it = meta.find(field);
    if (it != meta.end() && !it->is_null() && !it->is_array())
      return absl::InvalidArgumentError(absl::StrCat("metadata.", field, ": Invalid value: must be a list"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// What a write of `incoming` over the current version `old` (parsed: `prev`) of an object of `type` makes, decided
// from those alone (no store state, no lock): the checks, defaults, generation and admission of an update, and the
// result serialized for the commit.
struct PreparedWrite {
  enum class Outcome { kCommit, kNoop, kDryRun } outcome = Outcome::kCommit;
  nlohmann::json next;        // the answer (kNoop: the stored object)
  UnversionedObject stored;   // kCommit: `next` serialized and indexed, without its resourceVersion
  bool finalize = false;      // the last finalizer of a deleting object went: remove it after the commit
  bool owners_changed = false;  // owner references added or changed: collect it if they dangle
};

// The type as the write's request sees it: in options.version (the storage version when empty). A type served in
// one version is itself (no copy on the hot path of pods); `holder` keeps another version's.
absl::StatusOr<const ResourceType*> RequestType(const ResourceType& type, const WriteOptions& options,
                                                std::optional<ResourceType>* holder) {
  if (options.version.empty() || options.version == type.version) return &type;
  *holder = type.InVersion(options.version);
  if (!*holder) return absl::NotFoundError(absl::StrCat("the server could not find the requested resource (", type.Id(),
                                                        " is not served in version ", options.version, ")"));
  return &**holder;
}

absl::StatusOr<PreparedWrite> PrepareWrite(const ResourceType& stored_type, const StoredObject& old,
                                           nlohmann::json prev, nlohmann::json incoming, bool status,
                                           const WriteOptions& options) {
  // Decided in the request's version, as kube-apiserver admits a write; stored in the storage version. `prev` is
  // converted first (it may also be stored in a version the CRD no longer stores in).
  std::optional<ResourceType> holder;
  absl::StatusOr<const ResourceType*> request_type = RequestType(stored_type, options, &holder);
  if (!request_type.ok()) return request_type.status();
  const ResourceType& type = **request_type;
  nlohmann::json stored_prev;  // multi-version types: prev as stored, which the no-op check compares with
  if (stored_type.MultiVersion()) {
    stored_prev = prev;
    absl::StatusOr<nlohmann::json> p = ConvertToVersion(stored_type, prev, type.version);
    if (!p.ok()) return p.status();
    prev = *std::move(p);
  }
  auto& meta = incoming["metadata"];
  const std::string name = meta["name"];
  if (auto rv = meta.find("resourceVersion");
      rv != meta.end() && rv->is_string() && !rv->get<std::string>().empty() &&
      rv->get<std::string>() != std::to_string(old.resource_version))
    return absl::AbortedError(ConflictMessage(type, name));
  if (auto uid = meta.find("uid"); uid != meta.end() && uid->is_string() && !uid->get<std::string>().empty() &&
                                   uid->get<std::string>() != old.uid)
    return absl::AbortedError(absl::StrCat("Precondition failed: UID in precondition: ", uid->get<std::string>(),
                                           ", UID in object meta: ", old.uid));
  if (absl::Status s = ValidateMeta(meta); !s.ok()) return s;
  PreparedWrite out;
  nlohmann::json& next = out.next;
  if (options.pod_resize && type.Id() == kPods && !status) {
    next = MergePodResize(prev, incoming);
    ApplyDefaults(type.Id(), next);
    if (absl::Status s = FieldErrorsStatus(ValidatePodResize(prev, next)); !s.ok()) return s;
    next["metadata"]["generation"] =
        prev["metadata"].value("generation", int64_t{1}) + (BumpsGeneration(type.Id(), prev, next) ? 1 : 0);
  } else if (status) {
    next = prev;
    if (incoming.contains("status")) next["status"] = std::move(incoming["status"]);
    else next.erase("status");
  } else {
    next = std::move(incoming);
    auto& nm = next["metadata"];
    const auto& om = prev["metadata"];
    for (const char* f : {"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds",
                          "namespace", "name", "resourceVersion"}) {
      if (om.contains(f)) nm[f] = om[f];
      else nm.erase(f);
    }
    if (type.has_status) {
      if (prev.contains("status")) next["status"] = prev["status"];
      else next.erase("status");
    }
    // Fields the API server owns once set.
    for (const char* path : {".spec.clusterIP", ".spec.nodeName", ".spec.volumeName"})
      if (const auto* v = LookupPath(prev, path); v && !LookupPath(next, path)) SetPath(next, path, *v);
    if (type.Id() == kSecrets)
      if (absl::Status s = MergeSecretStringData(next); !s.ok()) return s;
    ApplyDefaults(type.Id(), next);
    if (absl::Status s = ValidateDataSize(type.Id(), next); !s.ok()) return s;
    if (type.Id() == kPods) {
      std::vector<FieldError> errors = ValidatePodUpdate(prev, next);
      if (!errors.empty()) {  // perhaps only defaults a pod stored by an earlier version lacks
        nlohmann::json defaulted = prev;
        ApplyDefaults(kPods, defaulted);
        errors = ValidatePodUpdate(defaulted, next);
      }
      if (absl::Status s = FieldErrorsStatus(errors); !s.ok()) return s;
    }
    if (type.Id() == kPersistentVolumeClaims) {
      static const std::vector<nlohmann::json> kNoClasses;
      if (absl::Status s = ValidatePvcStorageUpdate(prev, next, options.storage_classes.value_or(kNoClasses));
          !s.ok())
        return s;
    }
    next["metadata"]["generation"] =
        prev["metadata"].value("generation", int64_t{1}) + (BumpsGeneration(type.Id(), prev, next) ? 1 : 0);
  }
  next["apiVersion"] = type.ApiVersion();
  next["kind"] = type.kind;
  if (next["metadata"].contains("finalizers") && next["metadata"]["finalizers"].empty())
    next["metadata"].erase("finalizers");
  if (absl::Status s = AdmitCustomResource(type, next, &prev, options); !s.ok()) return s;
  if (type.Id() == kCustomResourceDefinitions) {
    auto t = ResourceTypeFromCrd(next);
    if (!t.ok()) return t.status();
    WarnAboutUnevaluatedRules(*t, options);
  }
  nlohmann::json to_store;
  if (stored_type.MultiVersion()) {
    absl::StatusOr<nlohmann::json> s = ConvertToVersion(stored_type, next, stored_type.version);
    if (!s.ok()) return s.status();
    to_store = *std::move(s);
  }
  nlohmann::json& written = stored_type.MultiVersion() ? to_store : next;
  if (written == (stored_type.MultiVersion() ? stored_prev : prev)) {  // no-op: no new resourceVersion, no event
    out.outcome = PreparedWrite::Outcome::kNoop;
    return out;
  }
  if (options.dry_run) {
    out.outcome = PreparedWrite::Outcome::kDryRun;
    return out;
  }
  out.finalize = old.deleting && (!next["metadata"].contains("finalizers"));
  // A reference added or changed may name an owner that does not exist (or no longer does).
  out.owners_changed = HasOwnerReferences(next) && !SameOwnerReferences(next, prev);
  out.stored = MakeUnversionedObject(written, type.Id());
  return out;
}

// Optimistic attempts of a write before the last one, which holds the store's lock throughout.
constexpr int kOptimisticAttempts = 8;

}  // namespace

absl::StatusOr<nlohmann::json> Store::State::GuaranteedWrite(
    std::string_view resource, bool status, const WriteOptions& options,
    const std::function<absl::StatusOr<std::pair<std::string, std::string>>(const ResourceType&)>& locate,
    const std::function<absl::StatusOr<nlohmann::json>(const ResourceType&, const StoredObject& current,
                                                       const nlohmann::json& parsed)>& incoming) {
  // Warnings of the attempt that counts only (an attempt that lost its race would repeat them).
  std::vector<std::string> warnings;
  WriteOptions attempt_options = options;
  attempt_options.warnings = options.warnings ? &warnings : nullptr;
  auto answer = [&](auto result) {
    if (options.warnings) options.warnings->insert(options.warnings->end(), warnings.begin(), warnings.end());
    return result;
  };
  for (int attempt = 1;; ++attempt) {
    const bool locked_throughout = attempt > kOptimisticAttempts;
    warnings.clear();
    std::unique_lock<std::mutex> l(mu);
    auto ts_or = TypeOr404(resource);
    if (!ts_or.ok()) return ts_or.status();
    std::shared_ptr<TypeState> ts = *std::move(ts_or);
    std::shared_ptr<const ResourceType> type = ts->shared_type;
    auto target = locate(*type);
    if (!target.ok()) return target.status();
    auto found = FindObject(*ts, target->first, target->second);
    if (!found.ok()) return found.status();
    const std::string key = (*found)->first;
    const ObjectPtr old = (*found)->second;
    const int64_t types_generation_seen = types_generation;
    if (!locked_throughout) l.unlock();
    nlohmann::json prev = old->Parse();
    // A Mutate callback edits the object in the request's version.
    absl::StatusOr<nlohmann::json> in;
    if (type->MultiVersion()) {
      absl::StatusOr<nlohmann::json> in_version =
          ConvertToVersion(*type, prev, options.version.empty() ? type->version : options.version);
      if (!in_version.ok()) return answer(in_version.status());
      in = incoming(*type, *old, *in_version);
    } else {
      in = incoming(*type, *old, prev);
    }
    if (!in.ok()) return answer(in.status());
    auto prepared = PrepareWrite(*type, *old, std::move(prev), *std::move(in), status, attempt_options);
    if (!prepared.ok()) return answer(prepared.status());
    if (prepared->outcome == PreparedWrite::Outcome::kNoop) {
      if (options.stored) *options.stored = old;
      return answer(std::move(prepared->next));
    }
    if (prepared->outcome == PreparedWrite::Outcome::kDryRun) return answer(std::move(prepared->next));
    if (!locked_throughout) {
      l.lock();
      auto now = ts->objects.find(key);
      // Another write got there first (or the type changed): decide again on what it left.
      if (types_generation != types_generation_seen || now == ts->objects.end() || now->second != old) continue;
    }
    int64_t rv = 0;
    if (absl::Status s = CommitPreparedLocked(*ts, EventType::kModified, std::move(prepared->stored), options.stored,
                                              &rv);
        !s.ok())
      return answer(s);
    nlohmann::json& next = prepared->next;
    next["metadata"]["resourceVersion"] = std::to_string(rv);
    if (prepared->finalize) RemoveLocked(*ts, key, 0);
    else if (prepared->owners_changed) CollectIfGarbageLocked(*ts, key, "", 0, &next);
    return answer(std::move(next));
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

Store::Store(base::Clock* clock, StoreOptions options)
    : clock_(clock), options_(options), state_(std::make_unique<State>()) {
  state_->clock = clock;
  state_->options = options;
  state_->options.journal = nullptr;  // bootstrap objects are not journaled (see SetJournal)
  for (const auto& t : BuiltinResourceTypes()) state_->RegisterLocked(t);
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"})
    (void)Create(kNamespaces, {{"metadata", {{"name", ns}}}});
  state_->options.journal = options.journal;
}

Store::~Store() = default;

void Store::SetJournal(Journal* journal) {
  std::lock_guard<std::mutex> l(state_->mu);
  state_->options.journal = journal;
}

std::optional<ResourceType> Store::FindType(std::string_view id) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto t = state_->FindLocked(id);
  if (!t) return std::nullopt;
  return t->type;
}

std::vector<ResourceType> Store::Types() const {
  std::lock_guard<std::mutex> l(state_->mu);
  std::vector<ResourceType> out;
  for (const auto& [id, t] : state_->types) out.push_back(t->type);
  return out;
}

int64_t Store::TypesGeneration() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->types_generation;
}

absl::StatusOr<nlohmann::json> Store::Create(std::string_view resource, nlohmann::json object,
                                             const WriteOptions& options) {
  if (!object.is_object()) return absl::InvalidArgumentError("body: Invalid value: must be an object");
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts_or = state_->TypeOr404(resource);
  if (!ts_or.ok()) return ts_or.status();
  TypeState& ts = **ts_or;
  std::optional<ResourceType> holder;  // admitted in the request's version, stored converted
  absl::StatusOr<const ResourceType*> request_type = RequestType(ts.type, options, &holder);
  if (!request_type.ok()) return request_type.status();
  const ResourceType& type = **request_type;
  auto& meta = object["metadata"];
  if (meta.is_null()) meta = nlohmann::json::object();
  if (!meta.is_object()) return absl::InvalidArgumentError("metadata: Invalid value: must be an object");
  if (object.contains("apiVersion") && object["apiVersion"] != type.ApiVersion())
    return absl::FailedPreconditionError(absl::StrCat("the API version in the data (", object["apiVersion"].dump(),
                                                      ") does not match the expected API version (",
                                                      type.ApiVersion(), ")"));
  if (object.contains("kind") && object["kind"] != type.kind)
    return absl::FailedPreconditionError(absl::StrCat("the kind in the data (", object["kind"].dump(),
                                                      ") does not match the expected kind (", type.kind, ")"));
  object["apiVersion"] = type.ApiVersion();
  object["kind"] = type.kind;
  std::string ns;
  if (type.namespaced) {
    if (!meta.contains("namespace") || !meta["namespace"].is_string() || meta["namespace"].get<std::string>().empty())
      return absl::InvalidArgumentError("metadata.namespace: Required value");
    ns = meta["namespace"];
    auto nts = state_->FindLocked(kNamespaces);
    auto ns_it = nts->objects.find(Key("", ns));
    if (ns_it == nts->objects.end()) return absl::NotFoundError(absl::StrCat("namespaces \"", ns, "\" not found"));
    if (ns_it->second->deleting) return NamespaceTerminating(ns);
  } else {
    meta.erase("namespace");
  }
  std::string name = meta.contains("name") && meta["name"].is_string() ? meta["name"].get<std::string>() : "";
  if (name.empty()) {
    if (!meta.contains("generateName") || !meta["generateName"].is_string() ||
        meta["generateName"].get<std::string>().empty())
      return absl::InvalidArgumentError("metadata.name: Required value: name or generateName is required");
    std::string prefix = meta["generateName"];
    do name = prefix + RandomSuffix(state_->gen);
    while (ts.objects.count(Key(ns, name)));
    meta["name"] = name;
  }
  std::string why = type.Id() == kNamespaces ? ValidateDns1123Label(name) : ValidateDns1123Subdomain(name);
  if (!why.empty()) return absl::InvalidArgumentError(absl::StrCat("metadata.name: Invalid value: \"", name, "\": ", why));
  if (absl::Status s = ValidateMeta(meta); !s.ok()) return s;
  if (type.Id() == kCustomResourceDefinitions) {
    auto t = ResourceTypeFromCrd(object);
    if (!t.ok()) return t.status();
    WarnAboutUnevaluatedRules(*t, options);
    if (name != t->resource + "." + t->group)
      return absl::InvalidArgumentError(absl::StrCat("metadata.name: Invalid value: \"", name,
                                                     "\": must be spec.names.plural+\".\"+spec.group"));
    if (auto existing = state_->FindLocked(t->Id()); existing && !existing->type.custom)
      return absl::InvalidArgumentError(absl::StrCat("spec.group: Invalid value: \"", t->group, "\": conflicts with a built-in resource"));
  }
  if (ts.objects.count(Key(ns, name)))
    return absl::AlreadyExistsError(absl::StrCat(QualifiedName(type, name), " already exists"));
  meta["uid"] = NewUid(state_->gen);
  meta["creationTimestamp"] = base::FormatTime(absl::FromChrono(clock_->ChronoNow()));
  meta["generation"] = 1;
  for (const char* f : {"deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"}) meta.erase(f);
  if (meta.contains("finalizers") && meta["finalizers"].empty()) meta.erase("finalizers");
  ResetStatusOnCreate(type, object);
  if (type.Id() == kSecrets)
    if (absl::Status s = MergeSecretStringData(object); !s.ok()) return s;
  ApplyDefaults(type.Id(), object);
  if (absl::Status s = ValidateDataSize(type.Id(), object); !s.ok()) return s;
  if (type.Id() == kPersistentVolumeClaims) {  // the StorageObjectInUseProtection admission plugin
    auto& f = meta["finalizers"];
    if (!f.is_array()) f = nlohmann::json::array();
    if (std::find(f.begin(), f.end(), nlohmann::json(kPvcProtectionFinalizer)) == f.end())
      f.push_back(kPvcProtectionFinalizer);
  }
  if (absl::Status s = AdmitCustomResource(type, object, nullptr, options); !s.ok()) return s;
  if (type.Id() == kPods) {
    if (absl::Status s = AdmitPodQuotaLocked(ns, object); !s.ok()) return s;
  }
  if (options.dry_run) return object;
  if (ts.type.MultiVersion()) {
    absl::StatusOr<nlohmann::json> stored = ConvertToVersion(ts.type, object, ts.type.version);
    if (!stored.ok()) return stored.status();
    if (absl::Status s = state_->CommitLocked(ts, EventType::kAdded, *stored, options.stored); !s.ok()) return s;
    if (HasOwnerReferences(*stored)) state_->CollectIfGarbageLocked(ts, Key(ns, name), "", 0, &*stored);
    return ConvertToVersion(ts.type, *stored, type.version);  // the answer, read back as the request's version
  }
  if (absl::Status s = state_->CommitLocked(ts, EventType::kAdded, object, options.stored); !s.ok()) return s;
  if (HasOwnerReferences(object)) state_->CollectIfGarbageLocked(ts, Key(ns, name), "", 0, &object);
  return object;
}

// kube-apiserver's ResourceQuota admission for the pod count: a pod that would take the namespace's pods past a
// quota's hard limit is refused with the real wording. The embedded cluster counts the pods when asked (kube keeps
// the count in the quota's status.used, kept by the quota controller and by this admission).
absl::Status Store::AdmitPodQuotaLocked(const std::string& ns, const nlohmann::json& pod) {
  auto quotas = state_->FindLocked(kResourceQuotas);
  if (quotas == nullptr) return absl::OkStatus();
  const std::string prefix = Key(ns, "");
  std::optional<int64_t> used;
  for (auto it = quotas->objects.lower_bound(prefix); it != quotas->objects.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    const auto limit = PodLimit(it->second->Parse());
    if (!limit.has_value()) continue;
    if (!used.has_value()) {
      used = 0;
      auto pods = state_->FindLocked(kPods);
      for (auto p = pods->objects.lower_bound(prefix); p != pods->objects.end() && p->first.rfind(prefix, 0) == 0; ++p) {
        if (QuotaCountsPod(p->second->Parse())) ++*used;
      }
    }
    if (!QuotaCountsPod(pod) || *used + 1 <= limit->second) continue;
    const std::string& r = limit->first;
    return absl::PermissionDeniedError(absl::StrCat("exceeded quota: ", it->second->name, ", requested: ", r,
                                                    "=1, used: ", r, "=", *used, ", limited: ", r, "=",
                                                    limit->second));
  }
  return absl::OkStatus();
}

absl::StatusOr<ObjectPtr> Store::GetStored(std::string_view resource, std::string_view ns,
                                           std::string_view name) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  auto it = FindObject(**ts, ns, name);
  if (!it.ok()) return it.status();
  return (*it)->second;
}

absl::StatusOr<nlohmann::json> Store::Get(std::string_view resource, std::string_view ns,
                                          std::string_view name) const {
  auto obj = GetStored(resource, ns, name);
  if (!obj.ok()) return obj.status();
  return (*obj)->Parse();
}

namespace {

// An Update's object names the object it replaces: checked before anything is looked up.
absl::StatusOr<std::pair<std::string, std::string>> UpdateTarget(const ResourceType& type,
                                                                 const nlohmann::json& incoming) {
  if (!incoming.is_object()) return absl::InvalidArgumentError("body: Invalid value: must be an object");
  auto meta = incoming.find("metadata");
  if (meta == incoming.end() || !meta->is_object()) return absl::InvalidArgumentError("metadata: Required value");
  auto name = meta->find("name");
  if (name == meta->end() || !name->is_string()) return absl::InvalidArgumentError("metadata.name: Required value");
  auto ns = meta->find("namespace");
  return std::pair<std::string, std::string>(
      type.namespaced && ns != meta->end() && ns->is_string() ? ns->get<std::string>() : "", name->get<std::string>());
}

}  // namespace

absl::StatusOr<nlohmann::json> Store::Update(std::string_view resource, nlohmann::json object,
                                             const WriteOptions& options) {
  return state_->GuaranteedWrite(
      resource, false, options, [&](const ResourceType& type) { return UpdateTarget(type, object); },
      [&](const ResourceType&, const StoredObject&, const nlohmann::json&) -> absl::StatusOr<nlohmann::json> {
        return object;  // a copy: an attempt that loses its race starts again from the request
      });
}

absl::StatusOr<nlohmann::json> Store::UpdateStatus(std::string_view resource, nlohmann::json object,
                                                   const WriteOptions& options) {
  return state_->GuaranteedWrite(
      resource, true, options, [&](const ResourceType& type) { return UpdateTarget(type, object); },
      [&](const ResourceType&, const StoredObject&, const nlohmann::json&) -> absl::StatusOr<nlohmann::json> {
        // A status write reads only the request's metadata (its preconditions) and status.
        nlohmann::json in = nlohmann::json::object();
        in["metadata"] = object["metadata"];
        if (auto st = object.find("status"); st != object.end()) in["status"] = *st;
        return in;
      });
}

absl::StatusOr<nlohmann::json> Store::Mutate(std::string_view resource, std::string_view ns, std::string_view name,
                                             bool status,
                                             const std::function<absl::Status(nlohmann::json&)>& mutate,
                                             const WriteOptions& options) {
  return state_->GuaranteedWrite(
      resource, status, options,
      [&](const ResourceType&) { return std::pair<std::string, std::string>(ns, name); },
      [&](const ResourceType& type, const StoredObject& current,
          const nlohmann::json& parsed) -> absl::StatusOr<nlohmann::json> {
        nlohmann::json j = parsed;
        if (absl::Status s = mutate(j); !s.ok()) return s;
        if (!j.is_object()) return absl::InvalidArgumentError("body: Invalid value: must be an object");
        if (!j["metadata"].is_object()) j["metadata"] = nlohmann::json::object();
        j["metadata"]["name"] = current.name;
        if (type.namespaced) j["metadata"]["namespace"] = current.ns;
        return j;
      });
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

absl::StatusOr<ListResult> Store::List(std::string_view resource, const ListOptions& options) const {
  auto labels = common::LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return absl::FailedPreconditionError(labels.status().message());
  auto fields = FieldSelector::ParseFields(options.field_selector);
  if (!fields.ok()) return absl::FailedPreconditionError(fields.status().message());
  if (absl::Status s = CheckFieldSelector(*fields, resource); !s.ok()) return s;
  std::string start;
  if (!options.continue_token.empty() && !absl::WebSafeBase64Unescape(options.continue_token, &start))
    return absl::FailedPreconditionError("invalid continue token");
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  ListResult result;
  result.resource_version = state_->rv;
  const auto& objects = (*ts)->objects;
  std::string prefix = options.ns.empty() || !(*ts)->type.namespaced ? "" : options.ns + "/";
  auto it = start.empty() ? objects.lower_bound(prefix) : objects.upper_bound(start);
  for (; it != objects.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
    const ObjectPtr& o = it->second;
    if (!labels->Matches(o->labels) || !fields->Matches(o->fields)) continue;
    if (options.limit > 0 && static_cast<int64_t>(result.items.size()) >= options.limit) {
      if (result.continue_token.empty()) result.continue_token = absl::WebSafeBase64Escape(result.items.back() ? Key(result.items.back()->ns, result.items.back()->name) : "");
      ++result.remaining;
      continue;
    }
    result.items.push_back(o);
  }
  return result;
}

absl::StatusOr<std::vector<nlohmann::json>> Store::ListObjects(std::string_view resource,
                                                               const ListOptions& options) const {
  auto list = List(resource, options);
  if (!list.ok()) return list.status();
  std::vector<nlohmann::json> out;
  out.reserve(list->items.size());
  for (const auto& o : list->items) out.push_back(o->Parse());
  return out;
}

absl::StatusOr<std::unique_ptr<Watcher>> Store::Watch(std::string_view resource, const WatchOptions& options) {
  auto labels = common::LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return absl::FailedPreconditionError(labels.status().message());
  auto fields = FieldSelector::ParseFields(options.field_selector);
  if (!fields.ok()) return absl::FailedPreconditionError(fields.status().message());
  if (absl::Status s = CheckFieldSelector(*fields, resource); !s.ok()) return s;
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  WatchOptions o = options;
  if (!(*ts)->type.namespaced) o.ns.clear();
  auto w = std::make_unique<WatcherImpl>(state_.get(), *ts, o, std::move(*labels), std::move(*fields));
  w->InitLocked(o);
  return std::unique_ptr<Watcher>(std::move(w));
}

int64_t Store::CurrentResourceVersion() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->rv;
}

size_t Store::ObjectCount(std::string_view resource) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto t = state_->FindLocked(resource);
  return t ? t->objects.size() : 0;
}

int Store::AddCommitListener(std::function<void(const std::string&)> fn) {
  std::lock_guard<std::mutex> l(state_->mu);
  int id = state_->next_listener_id++;
  state_->commit_listeners.emplace_back(id, std::move(fn));
  return id;
}

void Store::RemoveCommitListener(int id) {
  std::lock_guard<std::mutex> l(state_->mu);
  auto& v = state_->commit_listeners;
  v.erase(std::remove_if(v.begin(), v.end(), [id](const auto& p) { return p.first == id; }), v.end());
}

size_t Store::WatcherCount(std::string_view resource) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto t = state_->FindLocked(resource);
  return t ? t->watchers.size() : 0;
}

absl::Status Store::Restore(const std::vector<JournalRecord>& records, int64_t resource_version) {
  std::lock_guard<std::mutex> l(state_->mu);
  for (auto& [id, ts] : state_->types) ts->objects.clear();
  state_->by_uid.clear();
  state_->dependents.clear();
  auto load = [&](const JournalRecord& r) {
    auto ts = state_->FindLocked(r.resource);
    if (!ts || !r.object) return;
    std::string key = Key(r.object->ns, r.object->name);
    ObjectPtr old = ts->objects.count(key) ? ts->objects[key] : nullptr;
    if (r.deleted) {
      ts->objects.erase(key);
      state_->IndexLocked(r.resource, key, nullptr, old);
    } else {
      ts->objects[key] = r.object;
      state_->IndexLocked(r.resource, key, r.object, old);
    }
  };
  for (const auto& r : records)
    if (r.resource == kCustomResourceDefinitions) load(r);
  for (const auto& [key, obj] : state_->FindLocked(kCustomResourceDefinitions)->objects) {
    auto t = ResourceTypeFromCrd(obj->Parse());
    if (t.ok()) state_->RegisterLocked(*t);
  }
  for (const auto& r : records)
    if (r.resource != kCustomResourceDefinitions) load(r);
  state_->rv = std::max(state_->rv, resource_version);
  for (auto& [id, ts] : state_->types) {
    ts->history.clear();
    ts->floor_rv = state_->rv;
  }
  return absl::OkStatus();
}

void Store::ForEach(const std::function<void(const std::string&, const ObjectPtr&)>& fn) const {
  std::lock_guard<std::mutex> l(state_->mu);
  for (const auto& [id, ts] : state_->types)
    for (const auto& [key, obj] : ts->objects) fn(id, obj);
}

void Store::ConsistentView(
    const std::function<void(const std::vector<std::pair<std::string, ObjectPtr>>&, int64_t)>& fn) const {
  std::lock_guard<std::mutex> l(state_->mu);
  std::vector<std::pair<std::string, ObjectPtr>> all;
  for (const auto& [id, ts] : state_->types)
    for (const auto& [key, obj] : ts->objects) all.emplace_back(id, obj);
  fn(all, state_->rv);
}

}  // namespace cloneset::devcluster
