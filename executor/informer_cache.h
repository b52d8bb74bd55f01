// ClusterCache over kube::Informer: CloneSets, pods, PVCs and ControllerRevisions (cluster-wide list+watch),
// decoded straight into planner protos (snapshot/snapshot.h), PVCs/revisions indexed by owner uid, and pods kept
// only as their pod-table rows, by owner uid (pod_rows.h). Event handlers map every change to the owning CloneSet's key
// ("ns/name") and hand it to `enqueue`.
//
// Nodes are cached too (name and labels only) for the spread ranker of scale-in (semantics §4.6). They are
// optional: node changes enqueue nothing (a label change alone does not need a reconcile), and when nodes cannot
// be listed (no RBAC for them) the cache still counts as synced, NodesNamed returns nothing and the planner falls
// back to the same-node ranker. StorageClasses are cached the same way (name and allowVolumeExpansion), for the
// volume expansion of claims (semantics §4.11): optional, and a class added or changed enqueues every CloneSet
// (classes are few and rarely change; a claim held for its class may now grow).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "executor/interfaces.h"
#include "executor/pod_rows.h"
#include "kruise/keys.h"
#include "kube/informer.h"
#include "kube/rest_client.h"

namespace cloneset::executor {

// The version the executor reads and writes CloneSets in by default: the CRD's storage version (docs/deployment.md,
// "The CloneSet CRD"), so that the conversion webhook is never on its path.
inline constexpr const char* kCloneSetApiVersion = kruise::kV1beta1;

class InformerCache final : public ClusterCache {
 public:
  using Enqueue = std::function<void(const std::string& key)>;
  // `cloneset_api_version`: the version CloneSets are listed and watched in, "apps.kruise.io/v1beta1" (the CRD's
  // storage version, which the API server serves without calling the conversion webhook) or
  // "apps.kruise.io/v1alpha1"; the CloneSets' writes follow the version they were read in.
  InformerCache(kube::RestClient& client, Enqueue enqueue, absl::Duration resync = absl::Hours(10),
                const std::string& cloneset_api_version = kCloneSetApiVersion);
  ~InformerCache() override;

  void Start();
  void Stop();

  std::shared_ptr<const pb::CloneSet> GetCloneSet(const std::string& key) override;
  std::vector<pb::Pod> PodsOwnedBy(const std::string& ns, const std::string& owner_uid) override;
  planapi::SnapshotPods PodSnapshot(const std::string& ns, const std::string& owner_uid, bool with_table) override;
  std::vector<pb::PersistentVolumeClaim> PvcsOwnedBy(const std::string& ns, const std::string& owner_uid) override;
  std::vector<pb::ControllerRevision> RevisionsOwnedBy(const std::string& ns, const std::string& owner_uid) override;
  Observed Lookup(ObjectKind kind, const std::string& ns, const std::string& name) override;
  absl::StatusOr<std::vector<pb::Pod>> ListPodsFresh(const std::string& ns, const std::string& owner_uid) override;
  std::vector<pb::Node> NodesNamed(const std::vector<std::string>& names) override;
  std::vector<pb::StorageClass> StorageClasses() override;
  // Synced once the CloneSet/pod/PVC/revision informers are, and the node and StorageClass informers have synced or
  // failed.
  bool HasSynced() override;

  // Why nodes are not cached (OK while they are, or before the first LIST answered).
  absl::Status NodesError() const;
  // The same for StorageClasses.
  absl::Status StorageClassesError() const;

  std::vector<std::string> CloneSetKeys() const;
  size_t pods() const { return pod_rows_.size(); }
  const PodRowIndex& pod_rows() const { return pod_rows_; }
  // Pods the watch delivered that could not be decoded (skipped, not cached), and why the last one was.
  int pod_decode_errors() const { return pods_->decode_errors(); }
  absl::Status last_pod_decode_error() const { return pods_->last_decode_error(); }

 private:
  kube::RestClient& client_;
  Enqueue enqueue_;
  // The pods, as their table rows only, by owner: updated by the pod watch before it enqueues, and what Lookup and
  // the snapshots read pods from (pod_rows.h).
  PodRowIndex pod_rows_;
  std::unique_ptr<kube::Informer<pb::CloneSet>> clonesets_;
  std::unique_ptr<PodRowInformer> pods_;
  std::unique_ptr<kube::Informer<pb::PersistentVolumeClaim>> pvcs_;
  std::unique_ptr<kube::Informer<pb::ControllerRevision>> revisions_;
  std::unique_ptr<kube::Informer<pb::Node>> nodes_;
  std::unique_ptr<kube::Informer<pb::StorageClass>> storage_classes_;
};

// The keys of the CloneSets listed in `meta`'s owner references (kind CloneSet).
std::vector<std::string> OwnerCloneSetKeys(const pb::ObjectMeta& meta);

}  // namespace cloneset::executor
