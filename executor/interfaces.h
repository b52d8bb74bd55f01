// The executor's edges, as small interfaces so the reconcile can be tested with gmock (testing/mocks.h):
// the planner (gRPC, through planner/client/), the informer caches, and the event recorder.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "executor/expectations.h"
#include "planapi/request.h"
#include "planner/client/planner_client.h"

namespace cloneset::executor {

namespace pb = ::cloneset::planner::v1;

// The planner service: the client library's interface (planner/client/planner_client.h), which the reconcile calls
// and tests double (planner/client/testing/mock_planner_client.h).
using PlannerClient = ::cloneset::planner::client::PlannerClient;

// Read access to the caches, in planner vocabulary. Lists are sorted by name (the planner's tie-breaks assume a
// defined order, semantics §0.6).
class ClusterCache {
 public:
  virtual ~ClusterCache() = default;
  virtual std::shared_ptr<const pb::CloneSet> GetCloneSet(const std::string& key) = 0;  // "ns/name"
  virtual std::vector<pb::Pod> PodsOwnedBy(const std::string& ns, const std::string& owner_uid) = 0;
  // What a reconcile's snapshot takes: the pods owned by `owner_uid`, shared with the cache (not copied), and with
  // `with_table` their pod table when the cache keeps the pods' table rows (InformerCache does, pod_rows.h).
  // By default the pods of PodsOwnedBy, whose table the request then encodes.
  virtual planapi::SnapshotPods PodSnapshot(const std::string& ns, const std::string& owner_uid, bool with_table) {
    planapi::SnapshotPods out;
    for (pb::Pod& p : PodsOwnedBy(ns, owner_uid)) out.pods.push_back(std::make_shared<const pb::Pod>(std::move(p)));
    return out;
  }
  virtual std::vector<pb::PersistentVolumeClaim> PvcsOwnedBy(const std::string& ns, const std::string& owner_uid) = 0;
  virtual std::vector<pb::ControllerRevision> RevisionsOwnedBy(const std::string& ns, const std::string& owner_uid) = 0;
  virtual Observed Lookup(ObjectKind kind, const std::string& ns, const std::string& name) = 0;
  // Bypasses the cache: a LIST from the API server (after an expectation leak).
  virtual absl::StatusOr<std::vector<pb::Pod>> ListPodsFresh(const std::string& ns, const std::string& owner_uid) = 0;
  // The cached Nodes (name and labels) among `names`, in the order given; names not in the cache are skipped (the
  // planner skips pods on unreadable nodes, semantics §4.6), and so are all of them when nodes cannot be listed.
  virtual std::vector<pb::Node> NodesNamed(const std::vector<std::string>& names) = 0;
  // The cached StorageClasses (name and allowVolumeExpansion), in any order; none when they cannot be listed (no
  // RBAC for them): the planner then expands no claim (semantics §4.11).
  virtual std::vector<pb::StorageClass> StorageClasses() { return {}; }
  virtual bool HasSynced() = 0;
};

// Events about a CloneSet (the involved object), aggregated by kube::EventRecorder in production.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Event(const pb::CloneSet& cloneset, std::string_view type, std::string_view reason,
                     std::string_view message) = 0;
};

}  // namespace cloneset::executor
