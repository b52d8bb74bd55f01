// The executor's pod cache: every pod as its pod-table row (planapi/pod_table.h, PodRow) and nothing else, indexed
// by owner and kept up to date by the pod watch. A reconcile assembles a CloneSet's table from the rows of its pods,
// already in name order, instead of copying every pod out of a cache, sorting and encoding them again; the few pods
// that Apply and validation read as objects are materialized from the table (docs/performance.md "Executor
// reconcile at 100 000 pods" and "Memory and startup at 100 000 pods").
//
// The expectations gate reads the pods through Lookup, from here too: a reconcile whose gate saw a pod also finds
// it in its snapshot. The watch's handler updates the index before it enqueues the owners' keys.
#pragma once

#include <cstdint>
#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "executor/expectations.h"
#include "kube/informer.h"
#include "planapi/pod_table.h"
#include "planapi/request.h"

namespace cloneset::executor {

namespace pb = ::cloneset::planner::v1;

class PodRowIndex {
 public:
  // Owners of fewer pods have their table assembled on every snapshot: keeping every table would cost about as
  // much memory as the rows (1 000 CloneSets of 100 pods) to save a walk of a few rows each.
  static constexpr size_t kCachedTableMinPods = 1000;
  explicit PodRowIndex(size_t cached_table_min_pods = kCachedTableMinPods)
      : cached_table_min_pods_(cached_table_min_pods) {}

  // The keys ("ns/name") of the CloneSets an event concerns, in the order the handlers enqueue them: the new
  // object's CloneSet owners, then the old one's (a released pod tells its former owner too).
  using OwnerKeys = std::vector<std::string>;

  // Files `pod` (its row, encoded now) under the uid of each of its owners ("ns/uid"), replacing what the index
  // held for its key ("ns/name"). `keys`, when not null, receives the CloneSet owners to tell.
  void Upsert(const pb::Pod& pod, OwnerKeys* keys = nullptr);
  void Remove(std::string_view ns, std::string_view name, OwnerKeys* keys = nullptr);
  // The pod's resourceVersion, or "" when the index does not hold it.
  std::string ResourceVersion(std::string_view ns, std::string_view name) const;
  // The CloneSet owners of every pod (a resync tells each owner once per pod).
  void AllOwnerKeys(OwnerKeys* keys) const;
  // A full LIST replaces the cache: Mark starts it, every listed pod is upserted or kept (KeepIfUnchanged: held
  // at `resource_version` already, nothing to encode and no one to tell), and RemoveUnmarked removes the others.
  uint64_t Mark();
  bool KeepIfUnchanged(std::string_view ns, std::string_view name, std::string_view resource_version);
  void RemoveUnmarked(uint64_t since, OwnerKeys* keys);

  Observed Lookup(const std::string& ns, const std::string& name) const;
  // The pods owned by `ns`/`owner_uid` in name order. With `with_table`, their pod table (the bytes
  // planapi::EncodePodTable gives for the same pods) and no pod objects; without, or when a pod's row cannot go into
  // a table (a timestamp the table cannot carry), the pods, materialized from the rows.
  planapi::SnapshotPods Owned(const std::string& ns, const std::string& owner_uid, bool with_table) const;

  size_t size() const;
  // Distinct shared strings the rows hold (label keys and values, images, ...).
  size_t shared_strings() const;

 private:
  struct Entry {
    planapi::PodRow row;
    // Only for a pod whose row has an error (a timestamp the table cannot carry): the pod as decoded, which a
    // snapshot then sends as an object.
    std::unique_ptr<const pb::Pod> unencodable;
    bool deleting = false;
    uint64_t mark = 0;  // the Mark counter when last upserted
  };
  using OwnerKey = uint64_t;  // (namespace pool number << 32) | owner uid pool number
  void UnfileLocked(const Entry& e);
  void OwnerKeysLocked(const Entry& e, OwnerKeys* keys) const;
  std::shared_ptr<const pb::Pod> PodLocked(const Entry& e) const;

  mutable std::shared_mutex mu_;
  planapi::StringPool pool_;
  planapi::PodRow scratch_row_;  // under mu_: Upsert's new row, swapped with the previous one (buffers reused)
  uint64_t mark_ = 0;
  std::unordered_map<std::string, Entry> entries_;  // "ns/name"; nodes do not move (by_owner_ points at them)
  struct OwnerPods {
    std::map<std::string_view, const Entry*> pods;  // pod name (a view of the row's name) -> entry
    // The table last assembled from `pods` (only for owners of at least cached_table_min_pods_ pods), dropped
    // when one of them changes: an idle reconcile of a large CloneSet shares it (and its serialized bytes, made
    // once when first sent) instead of walking every row. Set under table_mu_ by readers (who share mu_); dropped
    // under mu_ held exclusively.
    mutable std::optional<planapi::SharedPodTable> table;
  };
  const size_t cached_table_min_pods_;
  std::unordered_map<OwnerKey, OwnerPods> by_owner_;
  mutable std::mutex table_mu_;
};

// The pod informer over a PodRowIndex: a list+watch whose pods are decoded (snapshot::PodFromJson, into one reused
// message), encoded into their rows and dropped. The owners' keys go to `enqueue` after the index has the change; a
// LIST's go once it is whole (kube::Informer's order). Pods that cannot be decoded are skipped and counted, as
// kube::Informer does.
class PodRowInformer final : private kube::ListWatch::Sink {
 public:
  using Enqueue = std::function<void(const std::string& key)>;
  PodRowInformer(kube::RestClient& client, kube::InformerOptions options, PodRowIndex& index, Enqueue enqueue);
  ~PodRowInformer() override;
  void Start() { lw_.Start(); }
  void Stop() { lw_.Stop(); }
  bool HasSynced() const { return lw_.HasSynced(); }
  const kube::ListWatch& list_watch() const { return lw_; }
  int decode_errors() const { return decode_errors_.load(); }
  // Why the last pod that could not be decoded was skipped (the error names the field).
  absl::Status last_decode_error() const;

 private:
  void BeginReplace() override;
  void ReplaceItem(const kube::ObjectMeta& meta, std::string_view json) override;
  void EndReplace() override;
  void Apply(const kube::WatchEvent& event) override;
  void Resync() override;
  void Tell(const PodRowIndex::OwnerKeys& keys);
  // Decodes into pod_ (false: counted, the error kept).
  bool Decode(std::string_view json);

  PodRowIndex& index_;
  Enqueue enqueue_;
  std::atomic<int> decode_errors_{0};
  mutable std::mutex error_mu_;
  absl::Status last_decode_error_;
  uint64_t replace_mark_ = 0;          // informer thread only
  PodRowIndex::OwnerKeys replace_keys_;  // informer thread only
  // The pod of the event being applied (informer thread only): one message decoded into again and again, so an
  // event costs no allocation for the strings and list entries the previous pod had too.
  pb::Pod pod_;
  kube::ListWatch lw_;  // last: its thread must stop before the members above go
};

}  // namespace cloneset::executor
