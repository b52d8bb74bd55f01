#include "executor/informer_cache.h"

#include <algorithm>
#include <set>

#include "snapshot/snapshot.h"

namespace cloneset::executor {
namespace {

std::vector<std::string> OwnerUids(const pb::ObjectMeta& meta) {
  std::vector<std::string> out;
  for (const auto& o : meta.owner_references()) out.push_back(meta.namespace_() + "/" + o.uid());
  return out;
}

template <typename T>
typename kube::Informer<T>::Handlers OwnerHandlers(const InformerCache::Enqueue& enqueue) {
  typename kube::Informer<T>::Handlers h;
  const auto notify = [enqueue](const T& obj) {
    for (const auto& key : OwnerCloneSetKeys(obj.metadata())) enqueue(key);
  };
  h.on_add = [notify](const auto& p) { notify(*p); };
  h.on_delete = [notify](const auto& p) { notify(*p); };
  h.on_update = [notify](const auto& o, const auto& n) {
    notify(*n);
    if (o != n) notify(*o);  // released pods tell their former owner too
  };
  return h;
}

template <typename T>
std::vector<T> Owned(const kube::Informer<T>& informer, const std::string& ns, const std::string& uid) {
  std::vector<T> out;
  for (const auto& p : informer.ByIndex(ns + "/" + uid)) out.push_back(*p);
  std::sort(out.begin(), out.end(), [](const T& a, const T& b) { return a.metadata().name() < b.metadata().name(); });
  return out;
}

template <typename T>
Observed ObservedOf(const kube::Informer<T>& informer, const std::string& key) {
  auto p = informer.Get(key);
  if (p == nullptr) return {};
  return {true, p->metadata().has_deletion_timestamp(), p->metadata().resource_version()};
}

}  // namespace

std::vector<std::string> OwnerCloneSetKeys(const pb::ObjectMeta& meta) {
  std::vector<std::string> out;
  for (const auto& o : meta.owner_references()) {
    if (o.kind() == "CloneSet") out.push_back(meta.namespace_() + "/" + o.name());
  }
  return out;
}

InformerCache::InformerCache(kube::RestClient& client, Enqueue enqueue, absl::Duration resync,
                             const std::string& cloneset_api_version)
    : client_(client), enqueue_(std::move(enqueue)) {
  kube::InformerOptions cs_opts{.path = "/apis/" + cloneset_api_version + "/clonesets", .resync_period = resync};
  kube::Informer<pb::CloneSet>::Handlers cs_handlers;
  const auto key_of = [](const pb::CloneSet& cs) { return cs.metadata().namespace_() + "/" + cs.metadata().name(); };
  cs_handlers.on_add = [this, key_of](const auto& p) { enqueue_(key_of(*p)); };
  cs_handlers.on_update = [this, key_of](const auto&, const auto& n) { enqueue_(key_of(*n)); };
  cs_handlers.on_delete = [this, key_of](const auto& p) { enqueue_(key_of(*p)); };
  clonesets_ = std::make_unique<kube::Informer<pb::CloneSet>>(
      client, cs_opts, [](std::string_view j) { return snapshot::CloneSetFromJson(j); }, cs_handlers);
  // The row index first, then the CloneSet's key: a reconcile that the event starts finds the pod's new row.
  pods_ = std::make_unique<PodRowInformer>(client, kube::InformerOptions{.path = "/api/v1/pods"}, pod_rows_,
                                           enqueue_);
  pvcs_ = std::make_unique<kube::Informer<pb::PersistentVolumeClaim>>(
      client, kube::InformerOptions{.path = "/api/v1/persistentvolumeclaims"},
      [](std::string_view j) { return snapshot::PvcFromJson(j); },
      OwnerHandlers<pb::PersistentVolumeClaim>(enqueue_),
      [](const pb::PersistentVolumeClaim& p) { return OwnerUids(p.metadata()); });
  revisions_ = std::make_unique<kube::Informer<pb::ControllerRevision>>(
      client, kube::InformerOptions{.path = "/apis/apps/v1/controllerrevisions"},
      [](std::string_view j) { return snapshot::RevisionFromJson(j); },
      OwnerHandlers<pb::ControllerRevision>(enqueue_),
      [](const pb::ControllerRevision& r) { return OwnerUids(r.metadata()); });
  nodes_ = std::make_unique<kube::Informer<pb::Node>>(client, kube::InformerOptions{.path = "/api/v1/nodes"},
                                                       [](std::string_view j) { return snapshot::NodeFromJson(j); });
  kube::Informer<pb::StorageClass>::Handlers class_handlers;
  const auto enqueue_all = [this] {
    for (const std::string& key : CloneSetKeys()) enqueue_(key);
  };
  class_handlers.on_add = [enqueue_all](const auto&) { enqueue_all(); };
  class_handlers.on_update = [enqueue_all](const auto& o, const auto& n) {
    if (o->allow_volume_expansion() != n->allow_volume_expansion()) enqueue_all();
  };
  storage_classes_ = std::make_unique<kube::Informer<pb::StorageClass>>(
      client, kube::InformerOptions{.path = "/apis/storage.k8s.io/v1/storageclasses"},
      [](std::string_view j) { return snapshot::StorageClassFromJson(j); }, class_handlers);
}

InformerCache::~InformerCache() { Stop(); }

void InformerCache::Start() {
  nodes_->Start();
  storage_classes_->Start();
  pods_->Start();
  pvcs_->Start();
  revisions_->Start();
  clonesets_->Start();
}

void InformerCache::Stop() {
  clonesets_->Stop();
  revisions_->Stop();
  pvcs_->Stop();
  pods_->Stop();
  storage_classes_->Stop();
  nodes_->Stop();
}

bool InformerCache::HasSynced() {
  const bool nodes_settled = nodes_->HasSynced() || !nodes_->list_watch().last_error().ok();
  const bool classes_settled = storage_classes_->HasSynced() || !storage_classes_->list_watch().last_error().ok();
  return clonesets_->HasSynced() && pods_->HasSynced() && pvcs_->HasSynced() && revisions_->HasSynced() &&
         nodes_settled && classes_settled;
}

absl::Status InformerCache::NodesError() const {
  if (nodes_->HasSynced()) return absl::OkStatus();
  return nodes_->list_watch().last_error();
}

absl::Status InformerCache::StorageClassesError() const {
  if (storage_classes_->HasSynced()) return absl::OkStatus();
  return storage_classes_->list_watch().last_error();
}

std::vector<pb::Node> InformerCache::NodesNamed(const std::vector<std::string>& names) {
  std::vector<pb::Node> out;
  for (const auto& name : names) {
    if (auto n = nodes_->Get(name)) out.push_back(*n);
  }
  return out;
}

std::vector<pb::StorageClass> InformerCache::StorageClasses() {
  std::vector<pb::StorageClass> out;
  for (const auto& sc : storage_classes_->List()) out.push_back(*sc);
  return out;
}

std::shared_ptr<const pb::CloneSet> InformerCache::GetCloneSet(const std::string& key) {
  return clonesets_->Get(key);
}

std::vector<pb::Pod> InformerCache::PodsOwnedBy(const std::string& ns, const std::string& uid) {
  std::vector<pb::Pod> out;
  for (const auto& p : pod_rows_.Owned(ns, uid, false).pods) out.push_back(*p);  // materialized from the rows
  return out;
}
planapi::SnapshotPods InformerCache::PodSnapshot(const std::string& ns, const std::string& uid, bool with_table) {
  return pod_rows_.Owned(ns, uid, with_table);
}
std::vector<pb::PersistentVolumeClaim> InformerCache::PvcsOwnedBy(const std::string& ns, const std::string& uid) {
  return Owned(*pvcs_, ns, uid);
}
std::vector<pb::ControllerRevision> InformerCache::RevisionsOwnedBy(const std::string& ns, const std::string& uid) {
  return Owned(*revisions_, ns, uid);
}

Observed InformerCache::Lookup(ObjectKind kind, const std::string& ns, const std::string& name) {
  const std::string key = ns + "/" + name;
  switch (kind) {
    case ObjectKind::kPod: return pod_rows_.Lookup(ns, name);  // what the snapshot reads (pod_rows.h)
    case ObjectKind::kPvc: return ObservedOf(*pvcs_, key);
    case ObjectKind::kRevision: return ObservedOf(*revisions_, key);
    case ObjectKind::kCloneSet: return ObservedOf(*clonesets_, key);
  }
  return {};
}

absl::StatusOr<std::vector<pb::Pod>> InformerCache::ListPodsFresh(const std::string& ns, const std::string& uid) {
  auto body = client_.List("/api/v1/namespaces/" + ns + "/pods", {});
  if (!body.ok()) return body.status();
  auto pods = snapshot::PodListFromJson(*body);
  if (!pods.ok()) return pods.status();
  std::vector<pb::Pod> out;
  for (auto& p : *pods) {
    for (const auto& o : p.metadata().owner_references()) {
      if (o.uid() == uid) {
        out.push_back(std::move(p));
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> InformerCache::CloneSetKeys() const {
  std::vector<std::string> out;
  for (const auto& cs : clonesets_->List()) out.push_back(cs->metadata().namespace_() + "/" + cs->metadata().name());
  return out;
}

}  // namespace cloneset::executor
