#include "executor/pod_rows.h"

#include <mutex>
#include <utility>

namespace cloneset::executor {
namespace {

std::string KeyOf(const pb::ObjectMeta& meta) { return meta.namespace_() + "/" + meta.name(); }

}  // namespace

void PodRowIndex::UnfileLocked(const std::string& name, Entry& e) {
  for (const std::string& owner : e.owners) {
    auto it = by_owner_.find(owner);
    if (it == by_owner_.end()) continue;
    it->second.erase(name);
    if (it->second.empty()) by_owner_.erase(it);
  }
  e.owners.clear();
  planapi::ReleasePodRow(pool_, e.row);
}

void PodRowIndex::Upsert(const std::shared_ptr<const pb::Pod>& pod) {
  const pb::ObjectMeta& meta = pod->metadata();
  std::unique_lock l(mu_);
  Entry& e = entries_[KeyOf(meta)];
  if (e.pod == pod) return;
  if (e.pod != nullptr) UnfileLocked(e.pod->metadata().name(), e);
  e.pod = pod;
  planapi::EncodePodRow(*pod, pool_, &e.row);
  for (const pb::OwnerReference& o : meta.owner_references()) {
    e.owners.push_back(meta.namespace_() + "/" + o.uid());
    by_owner_[e.owners.back()][meta.name()] = &e;
  }
}

void PodRowIndex::Remove(const pb::Pod& pod) {
  std::unique_lock l(mu_);
  auto it = entries_.find(KeyOf(pod.metadata()));
  if (it == entries_.end()) return;
  UnfileLocked(it->second.pod->metadata().name(), it->second);
  entries_.erase(it);
}

Observed PodRowIndex::Lookup(const std::string& ns, const std::string& name) const {
  std::shared_lock l(mu_);
  auto it = entries_.find(ns + "/" + name);
  if (it == entries_.end()) return {};
  const pb::ObjectMeta& meta = it->second.pod->metadata();
  return {true, meta.has_deletion_timestamp(), meta.resource_version()};
}

planapi::SnapshotPods PodRowIndex::Owned(const std::string& ns, const std::string& owner_uid,
                                         bool with_table) const {
  planapi::SnapshotPods out;
  std::shared_lock l(mu_);
  auto owned = by_owner_.find(ns + "/" + owner_uid);
  if (owned == by_owner_.end()) {
    if (with_table) out.table = pb::PodTable();
    return out;
  }
  out.pods.reserve(owned->second.size());
  for (const auto& [name, e] : owned->second) out.pods.push_back(e->pod);
  if (!with_table) return out;
  pb::PodTable table;
  planapi::PodTableBuilder builder(&table, pool_, owned->second.size());
  for (const auto& [name, e] : owned->second) {
    if (absl::Status s = builder.Add(e->row); !s.ok()) {
      out.table = std::move(s);
      return out;
    }
  }
  builder.Finish();
  out.table = std::move(table);
  return out;
}

size_t PodRowIndex::size() const {
  std::shared_lock l(mu_);
  return entries_.size();
}

size_t PodRowIndex::shared_strings() const {
  std::shared_lock l(mu_);
  return pool_.size();
}

}  // namespace cloneset::executor
