// The PlanRequest for one CloneSet, assembled from the objects a cluster holds, and the plan a planner answers it
// with, as every caller of the planner asks and reads it: the executor on every reconcile, `clonesetctl plan` for
// a live CloneSet. One set of rules, so that what the tool shows is what the executor would get:
//  * the pods sorted by name (the planner's tie-breaks assume a defined order);
//  * the random seed a function of the state (PlanSeed): the same snapshot always gets the same instance ids;
//  * the Nodes of the pods only when the template has a topology spread constraint (NeedsNodes), so that
//    ordinary snapshots stay small; a node the caller cannot read is left out;
//  * PVCs that are being deleted left out (the planner must not count a claim that is going away as the pod's);
//  * the pods as a pod table (pod_table.h) unless a caller says otherwise or a timestamp does not fit the table;
//  * accept_in_place_batches, and every batch expanded (in_place_batches.h) before anyone reads the plan;
//  * the feature gates the caller runs with (feature_gates.h), in every request;
//  * the StorageClasses the claims name (SetStorageClasses), so the planner can tell which claims may grow.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

// A pod table shared, not copied, by the cache that keeps it and every request that carries it, with its serialized
// bytes, made once on first use and cached: a request carrying the table is sent as its other fields and these bytes
// as they are (RequestWithPods::Serialize, planner/client/grpc_planner_client.cc), so an idle reconcile of a large
// CloneSet neither copies nor serializes its table again (docs/performance.md "The request as cached bytes").
// Immutable; copies share it.
class SharedPodTable {
 public:
  SharedPodTable();  // an empty table
  // Takes `table` over (implicit, so that a StatusOr<pb::PodTable> converts).
  SharedPodTable(pb::PodTable table);  // NOLINT(google-explicit-constructor)
  const pb::PodTable& message() const;
  // message().SerializeAsString(), made on the first call (any thread) and cached.
  const std::string& bytes() const;

 private:
  struct Cached;
  std::shared_ptr<Cached> cached_;
};

// A request's serialization in pieces: `head`, then the shared table's cached bytes when `table` is set, then `tail`.
// Concatenated they are the bytes request.SerializeAsString() gives.
struct RequestBytes {
  // The fields before pod_table and, with a table, pod_table's tag and length.
  std::string head;
  // Holds the table's bytes alive as long as these pieces are.
  std::optional<SharedPodTable> table;
  // The fields after pod_table (accept_in_place_batches, storage_classes).
  std::string tail;
};

// The request sent to the planner and the snapshot's pods, sorted by name, that the plan's writes are checked
// against.
struct RequestWithPods {
  RequestWithPods() = default;
  ~RequestWithPods();
  RequestWithPods(RequestWithPods&& other) noexcept;
  RequestWithPods& operator=(RequestWithPods&& other) noexcept;
  // A copy owns a copy of the table (a copy of its message); rare, so not shared.
  RequestWithPods(const RequestWithPods& other);
  RequestWithPods& operator=(const RequestWithPods& other);

  // When the pods are in a shared table (SetPodTable), request.pod_table is that table's message, which the request
  // does not own: read it, never change request.pod_table through the request (SendPodsAsObjects drops it).
  pb::PlanRequest request;
  // The pods when the request carries them in `pod_table`; empty when they are in `request.pods`. Shared with the
  // cache that holds them: a snapshot copies no pod. Also empty when the cache keeps only the pods' table rows
  // (the executor's does): the pods are in `pod_table` only then, and materialized from it when asked for.
  mutable std::vector<std::shared_ptr<const pb::Pod>> table_pods;
  // The snapshot's pods, wherever they are. Pods only in the table are materialized (once, into `table_pods`):
  // not thread-safe then, and a copy of every pod; a caller that needs a few looks them up in the table.
  std::vector<const pb::Pod*> Pods() const;
  // Moves the pods from `table_pods` into `request.pods` and drops the table: a snapshot the table cannot carry,
  // or a planner that did not read it.
  void SendPodsAsObjects();
  // Makes `table` the request's pod_table, shared: request.pod_table is its message, not a copy.
  void SetPodTable(SharedPodTable table);
  // The request's bytes, with a shared table's cached bytes as they are (not serialized again); the same bytes as
  // request.SerializeAsString(). Not const: the shared table leaves the request for the moment the other fields are
  // serialized.
  RequestBytes Serialize();

 private:
  // Takes the shared table out of `request` without deleting it (the request does not own it).
  void ReleaseSharedTable();
  std::optional<SharedPodTable> shared_table_;
};

struct RequestOptions {
  // Send the pods as PlanRequest.pod_table (the compact encoding); false sends PlanRequest.pods, for a planner
  // older than the table.
  bool pod_table = true;
  // Set PlanRequest.accept_in_place_batches (a planner that predates batches ignores it).
  bool in_place_batches = true;
  // PlanRequest.feature_gates, as the caller was configured (feature_gates.h ParseFeatureGates); the default is
  // upstream's defaults.
  pb::FeatureGates feature_gates;
};

// What the request is made of: the CloneSet and the objects it owns, in any order.
struct OwnedObjects {
  std::vector<pb::Pod> pods;
  std::vector<pb::PersistentVolumeClaim> pvcs;
  std::vector<pb::ControllerRevision> revisions;
};

// The pods of a snapshot, and their pod table when the caller keeps one: the executor's pod cache keeps every pod's
// table row (pod_table.h, PodRow) up to date as pods change and assembles a CloneSet's table from them, the same
// bytes as EncodePodTable of the same pods without encoding them again.
struct SnapshotPods {
  // Sorted by name when `table` is set (the table's rows are in this order); in any order otherwise. Empty when
  // the caller keeps only the table: `table` is then set and holds the pods.
  std::vector<std::shared_ptr<const pb::Pod>> pods;
  // The table of `pods`, or why it cannot be made (a timestamp it cannot carry); unset: encoded from `pods` when
  // the request carries a table. Shared with the cache that keeps it: the request carries it without a copy.
  std::optional<absl::StatusOr<SharedPodTable>> table;
};

// The Nodes among `names` (sorted, distinct) that the caller can read, in the order given.
using NodeLookup = std::function<std::vector<pb::Node>(const std::vector<std::string>& names)>;

// The request by the rules above. `nodes` is called only when the request needs nodes and some pod has one.
// `table_error`, when not null, receives why the pods could not be encoded as a table (they are sent as objects
// then); it is left as it is otherwise.
RequestWithPods AssembleRequest(const pb::CloneSet& cs, OwnedObjects objects, const NodeLookup& nodes, absl::Time now,
                             const RequestOptions& options, absl::Status* table_error = nullptr);
// The same from pods shared with a cache (no pod is copied) and, when the caller keeps it, their table.
RequestWithPods AssembleRequest(const pb::CloneSet& cs, SnapshotPods pods, std::vector<pb::PersistentVolumeClaim> pvcs,
                             std::vector<pb::ControllerRevision> revisions, const NodeLookup& nodes, absl::Time now,
                             const RequestOptions& options, absl::Status* table_error = nullptr);

// Sets request.storage_classes to those of `known` that the request's PVCs name, sorted by name (the planner
// expands a claim only when its class allows it, semantics §4.11). A caller that cannot read StorageClasses passes
// none: no claim is expanded.
void SetStorageClasses(const std::vector<pb::StorageClass>& known, pb::PlanRequest* request);

// Whether a PodTemplateSpec JSON has topologySpreadConstraints with a topologyKey (the planner's rule for the
// spread ranker): only then does the snapshot carry the Nodes of the pods. A cheap substring test comes first;
// malformed JSON counts as no constraints.
bool NeedsNodes(std::string_view template_json);

// A stable, per-state seed: FNV-1a over the CloneSet's uid and resourceVersion and the pods' resourceVersions (in
// the order given, which AssembleRequest makes the name order).
uint64_t PlanSeed(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods);
uint64_t PlanSeed(const pb::CloneSet& cs, const std::vector<std::shared_ptr<const pb::Pod>>& pods);

// One call of the planner's Plan.
using PlanCall = std::function<absl::StatusOr<pb::PlanResponse>(const pb::PlanRequest&)>;

// What RequestPlan does with the plan's in-place batches: expand them (what a reader of the plan sees), or keep
// them for PlanApplier, which writes each batch's actions as it expands them (the first write comes sooner).
enum class Batches { kExpand, kKeep };

// Asks `call` for the plan of `snapshot` and returns it with every in-place batch expanded (kKeep: left for
// PlanApplier). A planner that answers a pod-table request without reading its pods (PlanResponse.pods_read
// differs: a planner older than the table saw no pods and would create every replica) gets the request again with
// the pods as objects (`snapshot` is changed so); `table_unread` then receives why, when not null.
absl::StatusOr<pb::PlanResponse> RequestPlan(RequestWithPods& snapshot, const PlanCall& call,
                                             absl::Status* table_unread = nullptr,
                                             Batches batches = Batches::kExpand);

}  // namespace cloneset::planapi
