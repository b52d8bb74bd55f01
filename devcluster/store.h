// In-process object store of the embedded cluster: the semantics of kube-apiserver + etcd for the
// resources we serve, without HTTP. The API server (api_server.h) and the node simulator
// (devcluster/nodes/) both drive it directly.
//
// Conventions
// * A resource is named by its id: "<plural>" for the core group ("pods", "nodes", "events",
//   "persistentvolumeclaims", "persistentvolumes", "namespaces", "configmaps", ...) and
//   "<plural>.<group>" otherwise ("storageclasses.storage.k8s.io", "clonesets.apps.kruise.io",
//   "customresourcedefinitions.apiextensions.k8s.io"), like `kubectl get <id>`.
// * Objects are nlohmann::json in their wire form (apiVersion, kind, metadata, spec, status).
//   Internally they are kept serialized plus a small index (labels, selectable fields, owners), so
//   100 000 pods fit in memory; Get/List parse on demand.
// * resourceVersion is one cluster-wide counter, bumped once per committed change (a no-op write
//   does not bump it). Values are decimal strings on the wire, int64 here.
// * Errors are absl::Status with these codes (the API server maps them to HTTP):
//     NotFound -> 404, AlreadyExists -> 409 AlreadyExists, Aborted -> 409 Conflict (stale RV),
//     InvalidArgument -> 422 Invalid (message starts with the field path),
//     FailedPrecondition -> 400 BadRequest (bad selector, bad continue token, name mismatch),
//     OutOfRange -> 410 Gone (watch/continue from a resourceVersion older than the history).
// * Namespaced writes require the namespace to exist ("default", "kube-system", "kube-public" and
//   "kube-node-lease" exist from the start).
// * Thread-safe. All methods may be called concurrently. Updates, status updates and Mutate decide and serialize
//   outside the store lock and commit under it only if the object is still the version they read, else decide
//   again (kube-apiserver's GuaranteedUpdate): a callback passed to Mutate may run more than once, on successive
//   versions, and only the last run's result counts, so it must be a function of its argument alone; it must not
//   call back into the store (a write that keeps losing its race runs it under the lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/clock.h"
#include "devcluster/resources.h"
#include "devcluster/selectors.h"
#include "devcluster/store_types.h"

namespace cloneset::devcluster {

// Well-known resource ids.
inline constexpr char kPods[] = "pods";
inline constexpr char kNodes[] = "nodes";
inline constexpr char kNamespaces[] = "namespaces";
inline constexpr char kEvents[] = "events";
inline constexpr char kConfigMaps[] = "configmaps";
inline constexpr char kSecrets[] = "secrets";
inline constexpr char kServices[] = "services";
inline constexpr char kPersistentVolumeClaims[] = "persistentvolumeclaims";
inline constexpr char kPersistentVolumes[] = "persistentvolumes";
inline constexpr char kResourceQuotas[] = "resourcequotas";
inline constexpr char kStorageClasses[] = "storageclasses.storage.k8s.io";
inline constexpr char kControllerRevisions[] = "controllerrevisions.apps";
inline constexpr char kLeases[] = "leases.coordination.k8s.io";
inline constexpr char kCustomResourceDefinitions[] = "customresourcedefinitions.apiextensions.k8s.io";
inline constexpr char kCloneSets[] = "clonesets.apps.kruise.io";  // exists once its CRD is applied

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };
const char* EventTypeName(EventType t);  // "ADDED", "MODIFIED", ...

struct WatchEvent {
  EventType type = EventType::kAdded;
  int64_t resource_version = 0;  // for kBookmark: the progress RV; for kError: 0
  ObjectPtr object;               // null for kBookmark / kError
  absl::Status error;             // kError only (OutOfRange = 410 Expired)
  // kBookmark only: the bookmark that ends a sendInitialEvents watch's initial ADDED events (its object carries the
  // annotation k8s.io/initial-events-end: "true").
  bool initial_events_end = false;
};

struct WriteOptions {
  bool dry_run = false;  // validate and compute the result, store nothing, emit nothing
  // When set, receives the stored version after a successful write (the unchanged one for a no-op, untouched for
  // a dry run), so the API server answers with its serialized form instead of serializing the object again.
  ObjectPtr* stored = nullptr;
  // Custom resources: what to do with fields their schema does not declare (the fieldValidation query parameter):
  // "Ignore" prunes them silently, "Warn" (kube-apiserver's default) prunes them and adds a warning per field to
  // `warnings`, "Strict" refuses the write (FailedPrecondition naming the fields).
  std::string field_validation = "Warn";
  std::vector<std::string>* warnings = nullptr;
  // Custom resources served in several versions: the version of the request (empty: the storage version). The
  // object is admitted against that version's schema, given to Mutate callbacks and answered in it, and stored
  // converted to the storage version (versions.h), as kube-apiserver does.
  std::string version = "";
  // Pods only, with status = false: the write is one of the pods/resize subresource (pod_resize.h): only the
  // containers' resources and resize policies are taken from it, validated as kube-apiserver's ValidatePodResize.
  bool pod_resize = false;
  // PersistentVolumeClaim updates: the StorageClass objects, read before the write, that decide whether a larger
  // storage request is admitted (pvc_resize.h). Unset: no StorageClass exists.
  std::optional<std::vector<nlohmann::json>> storage_classes = std::nullopt;
};

struct DeleteOptions {
  Propagation propagation = Propagation::kBackground;
  // Pods only: nullopt = spec.terminationGracePeriodSeconds (default 30). A scheduled, not yet
  // terminated pod with grace > 0 gets deletionTimestamp = now + grace and
  // deletionGracePeriodSeconds; the kubelet simulator then calls DeleteNow. Others go at once.
  std::optional<int64_t> grace_period_seconds;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;
};

struct ListOptions {
  std::string ns;  // empty = all namespaces (or cluster-scoped resource)
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;           // 0 = no limit
  std::string continue_token;  // from ListResult::continue_token
};

struct ListResult {
  std::vector<ObjectPtr> items;  // ordered by (namespace, name)
  int64_t resource_version = 0;  // store RV at the time of the list
  std::string continue_token;    // non-empty when more items remain
  int64_t remaining = 0;         // items left after this page (when continue_token is set)
};

struct WatchOptions {
  std::string ns;
  std::string label_selector;
  std::string field_selector;
  // Send changes with RV > resource_version. nullopt (or 0) = first synthetic ADDED events for the
  // current matching objects, then changes.
  std::optional<int64_t> resource_version;
  bool allow_bookmarks = false;
  // sendInitialEvents=true (with resourceVersionMatch=NotOlderThan): ADDED events for the current matching objects
  // whatever resource_version says, then (with allow_bookmarks) one initial_events_end bookmark at the store's RV,
  // then changes.
  bool send_initial_events = false;
};

// A watch stream. Objects leaving the selector are reported as DELETED, entering as ADDED.
class Watcher {
 public:
  virtual ~Watcher() = default;
  // Waits up to `timeout` for the next event. Returns false on timeout or after Stop(). When the
  // watcher falls behind the bounded history it returns one kError event (410) and then false.
  // With allow_bookmarks, a timeout yields a kBookmark event carrying the current progress RV. A zero
  // timeout only polls: it returns what is ready without waiting and never a bookmark.
  virtual bool Next(WatchEvent* event, std::chrono::milliseconds timeout) = 0;
  // Next with a zero timeout that, when nothing is ready and bookmarks were asked for, yields a kBookmark with the
  // progress RV instead of false: the non-blocking form a fan-out writer polls on its idle tick.
  virtual bool NextOrBookmark(WatchEvent* event) { return Next(event, std::chrono::milliseconds(0)); }
  // Wakes a blocked Next and ends the stream (thread-safe).
  virtual void Stop() = 0;
  // True once the stream can produce no more events (stopped, expired, or its CRD was deleted).
  virtual bool Ended() const { return false; }
};

// Durability hook (implemented by wal.h). Called under the store lock for every committed change.
struct JournalRecord {
  bool deleted = false;
  std::string resource;  // resource id
  ObjectPtr object;      // the new state, or the last state for deletions
  int64_t resource_version = 0;
};
class Journal {
 public:
  virtual ~Journal() = default;
  virtual absl::Status Append(const JournalRecord& record) = 0;
};

struct StoreOptions {
  size_t watch_history = 10000;  // events kept per resource for watch resumption
  Journal* journal = nullptr;    // not owned; null = memory only
};

class Store {
 public:
  explicit Store(base::Clock* clock, StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- resource types -----------------------------------------------------------------------
  // Built-in types are registered by the constructor; CRDs register (and unregister) theirs when
  // a customresourcedefinition object is written.
  std::optional<ResourceType> FindType(std::string_view resource_id) const;
  std::vector<ResourceType> Types() const;
  // Generation of the type registry; changes when a CRD registers or drops a type.
  int64_t TypesGeneration() const;

  // ---- CRUD ---------------------------------------------------------------------------------
  // Sets uid, creationTimestamp, resourceVersion, generation 1; name from generateName + 5 random
  // chars. Namespaced kinds need metadata.namespace (the API server fills it from the URL).
  absl::StatusOr<nlohmann::json> Create(std::string_view resource, nlohmann::json object,
                                        const WriteOptions& options = {});
  absl::StatusOr<nlohmann::json> Get(std::string_view resource, std::string_view ns,
                                     std::string_view name) const;
  absl::StatusOr<ObjectPtr> GetStored(std::string_view resource, std::string_view ns,
                                      std::string_view name) const;
  // PUT semantics. A non-empty metadata.resourceVersion must equal the stored one (else Aborted).
  // For types with a status subresource, .status is ignored (kept from the stored object).
  // generation is bumped when anything outside metadata and status changes.
  absl::StatusOr<nlohmann::json> Update(std::string_view resource, nlohmann::json object,
                                        const WriteOptions& options = {});
  // Status subresource: only .status is taken from `object` (plus the RV precondition).
  absl::StatusOr<nlohmann::json> UpdateStatus(std::string_view resource, nlohmann::json object,
                                              const WriteOptions& options = {});
  // Atomic read-modify-write (PATCH, scale, simulator updates): `mutate` edits a copy of the
  // current object, which is then written like Update (status=false) or UpdateStatus (status=true),
  // committed only if the object is still the version `mutate` saw (else `mutate` runs again on the
  // newer one). A resourceVersion left in the result is checked as a precondition.
  absl::StatusOr<nlohmann::json> Mutate(std::string_view resource, std::string_view ns,
                                        std::string_view name, bool status,
                                        const std::function<absl::Status(nlohmann::json&)>& mutate,
                                        const WriteOptions& options = {});
  // Returns the object as it is after the call: with deletionTimestamp when finalizers or the pod
  // grace period keep it, else its last state. Dependents are garbage-collected per propagation.
  absl::StatusOr<nlohmann::json> Delete(std::string_view resource, std::string_view ns,
                                        std::string_view name, const DeleteOptions& options = {});
  // Removes the object now, ignoring finalizers and grace periods (the kubelet simulator calls it
  // when a terminating pod's grace period is over). Dependents are collected in the background.
  absl::Status DeleteNow(std::string_view resource, std::string_view ns, std::string_view name);

  absl::StatusOr<ListResult> List(std::string_view resource, const ListOptions& options) const;
  // Convenience: List + Parse of every item.
  absl::StatusOr<std::vector<nlohmann::json>> ListObjects(std::string_view resource,
                                                          const ListOptions& options) const;
  absl::StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view resource,
                                                 const WatchOptions& options);

  int64_t CurrentResourceVersion() const;
  size_t ObjectCount(std::string_view resource) const;
  size_t WatcherCount(std::string_view resource) const;
  // Commit listeners learn, under the store lock, that a resource's watchers may have something new (a committed
  // change, or the type going away), so a fan-out writer can poll just those watchers instead of every watcher
  // waiting on the store. The callback must be quick and must not call into the store. Returns an id for Remove.
  int AddCommitListener(std::function<void(const std::string& resource)> fn);
  void RemoveCommitListener(int id);
  base::Clock* clock() const { return clock_; }
  // Attaches the durability journal (after Restore). The namespaces the constructor creates are
  // not journaled: the WAL snapshots the initial state instead.
  void SetJournal(Journal* journal);

  // ---- durability -----------------------------------------------------------------------------
  // Loads objects (CRDs first, so their types exist) and the resource version counter; used by the
  // WAL on start-up before any client connects. Emits no events and writes no journal records.
  absl::Status Restore(const std::vector<JournalRecord>& records, int64_t resource_version);
  // Calls fn for every stored object under the lock.
  void ForEach(const std::function<void(const std::string& resource, const ObjectPtr&)>& fn) const;
  // Calls fn once, under the lock, with every object and the current resourceVersion: a consistent
  // cut for snapshots (no write can commit while fn runs, so the WAL can be rotated inside fn).
  void ConsistentView(
      const std::function<void(const std::vector<std::pair<std::string, ObjectPtr>>& objects, int64_t rv)>& fn) const;

  struct State;  // implementation detail (store_state.h)

 private:
  // ResourceQuota admission of a pod about to be created in `ns` (store_admission.cc); the store's lock is held.
  absl::Status AdmitPodQuotaLocked(const std::string& ns, const nlohmann::json& pod);

  base::Clock* clock_;
  StoreOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace cloneset::devcluster
