#include "executor/pod_rows.h"

#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "snapshot/snapshot.h"

namespace cloneset::executor {
namespace {

std::string KeyOf(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append(1, '/').append(name);
  return key;
}

}  // namespace

void PodRowIndex::OwnerKeysLocked(const Entry& e, OwnerKeys* keys) const {
  if (keys == nullptr) return;
  const planapi::PodRowKey key = planapi::ReadPodRowKey(e.row, pool_);
  const absl::Span<const uint32_t> owners = planapi::PodRowOwnerStrings(e.row);
  for (size_t i = 0; i + 3 < owners.size(); i += 4) {
    const auto text = [&](uint32_t slot) { return slot == 0 ? std::string_view() : pool_.Text(planapi::PoolNumber(slot)); };
    if (text(owners[i + 1]) == "CloneSet") keys->push_back(KeyOf(key.namespace_, text(owners[i + 2])));
  }
}

void PodRowIndex::UnfileLocked(const Entry& e) {
  const std::string_view name = planapi::ReadPodRowKey(e.row, pool_).name;
  const uint64_t ns = planapi::PoolNumber(e.row.strings[1]);
  const absl::Span<const uint32_t> owners = planapi::PodRowOwnerStrings(e.row);
  for (size_t i = 0; i + 3 < owners.size(); i += 4) {
    auto it = by_owner_.find((ns << 32) | planapi::PoolNumber(owners[i + 3]));
    if (it == by_owner_.end()) continue;
    it->second.pods.erase(name);
    it->second.table.reset();  // under mu_ held exclusively: no reader holds table_mu_ for it
    if (it->second.pods.empty()) by_owner_.erase(it);
  }
}

void PodRowIndex::Upsert(const pb::Pod& pod, OwnerKeys* keys) {
  const pb::ObjectMeta& meta = pod.metadata();
  std::unique_lock l(mu_);
  auto [it, inserted] = entries_.try_emplace(KeyOf(meta.namespace_(), meta.name()));
  Entry& e = it->second;
  OwnerKeys old_keys;
  if (inserted) {
    planapi::EncodePodRow(pod, pool_, &e.row);
  } else {
    OwnerKeysLocked(e, keys != nullptr ? &old_keys : nullptr);
    UnfileLocked(e);
    // Encoded beside the previous row, which is released after: the strings both hold are counted again by
    // number, not looked up (or dropped and added again when this pod alone held them).
    planapi::EncodePodRow(pod, pool_, &scratch_row_, &e.row);
    planapi::ReleasePodRow(pool_, e.row);
    std::swap(e.row, scratch_row_);
  }
  e.unencodable = e.row.error.empty() ? nullptr : std::make_unique<const pb::Pod>(pod);
  e.deleting = meta.has_deletion_timestamp();
  e.mark = mark_;
  const std::string_view name = planapi::ReadPodRowKey(e.row, pool_).name;
  const uint64_t ns = planapi::PoolNumber(e.row.strings[1]);
  const absl::Span<const uint32_t> owners = planapi::PodRowOwnerStrings(e.row);
  for (size_t i = 0; i + 3 < owners.size(); i += 4) {
    OwnerPods& owned = by_owner_[(ns << 32) | planapi::PoolNumber(owners[i + 3])];
    owned.pods[name] = &e;
    owned.table.reset();
  }
  OwnerKeysLocked(e, keys);
  if (keys != nullptr) keys->insert(keys->end(), old_keys.begin(), old_keys.end());
}

void PodRowIndex::Remove(std::string_view ns, std::string_view name, OwnerKeys* keys) {
  std::unique_lock l(mu_);
  auto it = entries_.find(KeyOf(ns, name));
  if (it == entries_.end()) return;
  OwnerKeysLocked(it->second, keys);
  UnfileLocked(it->second);
  planapi::ReleasePodRow(pool_, it->second.row);
  entries_.erase(it);
}

std::string PodRowIndex::ResourceVersion(std::string_view ns, std::string_view name) const {
  std::shared_lock l(mu_);
  auto it = entries_.find(KeyOf(ns, name));
  if (it == entries_.end()) return "";
  return std::string(planapi::ReadPodRowKey(it->second.row, pool_).resource_version);
}

void PodRowIndex::AllOwnerKeys(OwnerKeys* keys) const {
  std::shared_lock l(mu_);
  for (const auto& [key, e] : entries_) OwnerKeysLocked(e, keys);
}

uint64_t PodRowIndex::Mark() {
  std::unique_lock l(mu_);
  return ++mark_;
}

bool PodRowIndex::KeepIfUnchanged(std::string_view ns, std::string_view name, std::string_view resource_version) {
  std::unique_lock l(mu_);
  auto it = entries_.find(KeyOf(ns, name));
  if (it == entries_.end() || planapi::ReadPodRowKey(it->second.row, pool_).resource_version != resource_version) {
    return false;
  }
  it->second.mark = mark_;
  return true;
}

void PodRowIndex::RemoveUnmarked(uint64_t since, OwnerKeys* keys) {
  std::unique_lock l(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.mark >= since) {
      ++it;
      continue;
    }
    OwnerKeysLocked(it->second, keys);
    UnfileLocked(it->second);
    planapi::ReleasePodRow(pool_, it->second.row);
    it = entries_.erase(it);
  }
}

Observed PodRowIndex::Lookup(const std::string& ns, const std::string& name) const {
  std::shared_lock l(mu_);
  auto it = entries_.find(KeyOf(ns, name));
  if (it == entries_.end()) return {};
  return {true, it->second.deleting, std::string(planapi::ReadPodRowKey(it->second.row, pool_).resource_version)};
}

std::shared_ptr<const pb::Pod> PodRowIndex::PodLocked(const Entry& e) const {
  if (e.unencodable != nullptr) return std::make_shared<const pb::Pod>(*e.unencodable);
  return std::make_shared<const pb::Pod>(planapi::MaterializePodRow(e.row, pool_));
}

planapi::SnapshotPods PodRowIndex::Owned(const std::string& ns, const std::string& owner_uid,
                                         bool with_table) const {
  planapi::SnapshotPods out;
  std::shared_lock l(mu_);
  const uint32_t ns_number = ns.empty() ? 0 : pool_.Find(ns);
  const uint32_t uid_number = owner_uid.empty() ? 0 : pool_.Find(owner_uid);
  auto owned = (ns.empty() || ns_number != 0) && (owner_uid.empty() || uid_number != 0)
                   ? by_owner_.find((uint64_t{ns_number} << 32) | uid_number)
                   : by_owner_.end();
  if (owned == by_owner_.end()) {
    if (with_table) out.table = planapi::SharedPodTable();
    return out;
  }
  const std::map<std::string_view, const Entry*>& pods = owned->second.pods;
  const auto materialize = [&] {
    out.pods.reserve(pods.size());
    for (const auto& [name, e] : pods) out.pods.push_back(PodLocked(*e));
  };
  if (!with_table) {
    materialize();
    return out;
  }
  {
    std::lock_guard t(table_mu_);
    if (owned->second.table.has_value()) {
      out.table = *owned->second.table;  // shared, not copied
      return out;
    }
  }
  pb::PodTable table;
  planapi::PodTableBuilder builder(&table, pool_, pods.size());
  for (const auto& [name, e] : pods) {
    if (absl::Status s = builder.Add(e->row); !s.ok()) {
      // The request sends these pods as objects.
      out.table = std::move(s);
      materialize();
      return out;
    }
  }
  builder.Finish();
  planapi::SharedPodTable shared(std::move(table));
  if (pods.size() >= cached_table_min_pods_) {
    std::lock_guard t(table_mu_);
    owned->second.table = shared;  // the rows cannot change while mu_ is shared
  }
  out.table = std::move(shared);
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

PodRowInformer::PodRowInformer(kube::RestClient& client, kube::InformerOptions options, PodRowIndex& index,
                               Enqueue enqueue)
    : index_(index), enqueue_(std::move(enqueue)), lw_(client, std::move(options), *this) {}

PodRowInformer::~PodRowInformer() { Stop(); }

absl::Status PodRowInformer::last_decode_error() const {
  std::lock_guard l(error_mu_);
  return last_decode_error_;
}

bool PodRowInformer::Decode(std::string_view json) {
  absl::Status decoded = snapshot::PodFromJson(json, &pod_);
  if (!decoded.ok()) {
    ++decode_errors_;
    std::lock_guard l(error_mu_);
    last_decode_error_ = std::move(decoded);
    return false;
  }
  return true;
}

void PodRowInformer::Tell(const PodRowIndex::OwnerKeys& keys) {
  if (!enqueue_) return;
  for (const std::string& key : keys) enqueue_(key);
}

void PodRowInformer::BeginReplace() {
  replace_mark_ = index_.Mark();
  replace_keys_.clear();
}

void PodRowInformer::ReplaceItem(const kube::ObjectMeta& meta, std::string_view json) {
  // Unchanged pods are kept as they are, without decoding them: a relist costs what changed.
  if (index_.KeepIfUnchanged(meta.namespace_, meta.name, meta.resource_version)) return;
  if (Decode(json)) index_.Upsert(pod_, &replace_keys_);
}

void PodRowInformer::EndReplace() {
  index_.RemoveUnmarked(replace_mark_, &replace_keys_);
  PodRowIndex::OwnerKeys keys;
  keys.swap(replace_keys_);
  Tell(keys);
}

void PodRowInformer::Apply(const kube::WatchEvent& ev) {
  PodRowIndex::OwnerKeys keys;
  if (ev.type == "DELETED") {
    index_.Remove(ev.meta.namespace_, ev.meta.name, &keys);
  } else {
    if (!Decode(ev.object_json)) return;
    index_.Upsert(pod_, &keys);
  }
  Tell(keys);
}

void PodRowInformer::Resync() {
  PodRowIndex::OwnerKeys keys;
  index_.AllOwnerKeys(&keys);
  Tell(keys);
}

}  // namespace cloneset::executor
