// A tiny in-memory cluster for `clonesetctl simulate`: one CloneSet, its pods, PVCs and ControllerRevisions, a
// simulated kubelet, and the executor's way with plans: the request is assembled by the executor's rules
// (planapi/request.h) and plans are applied by the executor's plan applier (planapi/applier.h: stages, slow-start
// batch stop, stop on a conflict, status write last). Time is an input: every call takes `now`, nothing reads a
// clock, and randomness (start failures) comes from the seed.
//
// One write path with the executor. The cluster stores what an API server stores, each object's JSON document,
// and every action of a plan becomes exactly the request the executor sends for it (snapshot/patch.h: the pod,
// status, resize, revision, PVC and CloneSet patches, the creations' JSON bodies, DeleteOptions with the uid
// precondition), applied to that JSON by its content type with the API server's patch code (kube/object_patch.h)
// after the body's preconditions are checked (metadata.uid, metadata.resourceVersion: 409 Conflict, and 404 for a
// missing object, read by the applier as the executor reads the API server's answers). AlreadyExists on a create
// and a delete of what is gone count as done, as for the executor. The planner's snapshot is decoded from that
// JSON with the executor's own decoders (snapshot/snapshot.h), so a request or decoder that loses a field shows in
// the simulation as it would in a cluster.
//
// What the simulation keeps of its own, because the planner's seed (planapi/request.h PlanSeed) hashes the
// resourceVersions and the clients' example fleets mirror this cluster's version sequence step by step: one
// counter numbers every change of a pod, PVC, revision or CloneSet spec; the CloneSet's status writes leave its
// version as it is; the timestamps the simulation writes itself keep the simulated clock's fraction of a second
// (metav1.Time has whole seconds, the decoders read either). The CloneSet's status is read back from the stored
// JSON as the executor reads it from its watch: its conditions' times in whole seconds (snapshot::StatusToJson),
// so a progress deadline fires up to a second earlier than the simulated clock alone would say, as it does in a
// cluster.
//
// Kubelet model: the embedded cluster's (devcluster/nodes/kubelet.h DecidePod), so that a prediction and the
// embedded cluster's pods move alike. Per pod: created and bound at once (round-robin over the nodes, in the
// creation write) -> the kubelet's first sync at the same instant (Pending, ContainerCreating; images are present)
// -> container running after `start_delay` -> ready `ready_after` later -> pod Ready when every container is ready
// and every readiness gate's condition is True. A spec image change restarts that container in place
// (restartCount + 1, new imageID) with the same delays; an in-place resize is accepted and applied as that model
// says. With `fail_rate`, each start of a pod's containers (its first, and each restart) fails with that
// probability: the containers run but never become ready. A deleted pod goes once its finalizers are gone, at once
// with no `terminate_after`, else after its grace period capped at `terminate_after`. The kubelet's status write
// replaces the pod's status (pods/<name>/status), as the embedded cluster's does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"
#include "clonesetctl/sim_objects.h"
#include "devcluster/nodes/kubelet.h"
#include "planapi/request.h"
#include "snapshot/patch.h"

namespace cloneset::clonesetctl {

namespace pb = ::cloneset::planner::v1;

struct SimOptions {
  absl::Duration start_delay = absl::Seconds(1);
  absl::Duration ready_after = absl::Seconds(5);
  absl::Duration terminate_after = absl::ZeroDuration();
  double fail_rate = 0;
  uint64_t seed = 1;
  int nodes = 3;
  pb::FeatureGates feature_gates;  // --feature-gates: the planner decides as for an executor started so
};

// What one applied plan did, for the timeline.
struct AppliedPlan {
  std::vector<std::string> created;
  std::vector<std::string> deleted;
  std::vector<std::string> updated_in_place;  // pods whose revision label moved by a patch
  std::vector<std::string> lifecycle;         // "pod: Normal -> PreparingUpdate"
  int writes = 0;                             // API writes the executor would have made
  std::string stopped;                        // non-empty: why the rest of the plan was skipped
};

struct PodCounts {
  int desired = 0;
  int pods = 0;         // active pods
  int ready = 0;        // Ready condition True
  int available = 0;    // avail(p, minReadySeconds)
  int updated = 0;      // at the update revision
  int unavailable = 0;  // max(desired - available, 0)
  int surge = 0;        // max(pods - desired, 0)
};

class SimCluster {
 public:
  SimCluster(SimOptions options, absl::Time now);

  // Creates the CloneSet from a JSON object, or replaces it as `kubectl apply` would (generation + 1 when the spec
  // changed; the status is the status subresource's and stays).
  absl::Status ApplyCloneSet(const std::string& json, absl::Time now);
  // The CloneSet as the executor's decoder reads the stored document.
  const pb::CloneSet& clone_set() const { return clone_set_.object; }
  std::string clone_set_json() const { return clone_set_.doc.dump(); }
  // The stored document of pod `name` ("" when there is none).
  std::string pod_json(const std::string& name) const;

  // What the executor would send the planner for this cluster at `now`.
  planapi::RequestWithPods Snapshot(absl::Time now) const;
  // Applies `plan` (in-place batches expanded) with the executor's plan applier.
  AppliedPlan Apply(const pb::PlanResponse& plan, absl::Time now);

  // Runs the kubelets up to `now`; true when any pod changed.
  absl::StatusOr<bool> Advance(absl::Time now);
  // The earliest future moment a pod will change by itself.
  std::optional<absl::Time> NextTransition(absl::Time now) const;

  PodCounts Counts(absl::Time now) const;
  void set_fail_rate(double rate) { options_.fail_rate = rate; }
  // Pods whose container start failed (never ready).
  int failed_starts() const;

 private:
  class Writer;  // the plan applier's writer to this cluster

  // The simulated kubelet's memory of one pod.
  struct Kubelet {
    int node = 0;        // index of its node (sim-node-<node + 1>)
    std::string pod_ip;  // allocated when it was created
    devcluster::nodes::PodProgress progress;
    std::optional<absl::Time> wake;  // when the last decision may change by itself
    bool never_ready = false;        // the latest start of its containers was drawn to fail (--fail-rate)
    // The draw for the first start, made when the pod was created, so that draws follow the plan's order.
    std::optional<bool> first_start_fails;
  };

  // An object as the API server stores it, and as the executor's decoder reads that document.
  template <typename T>
  struct Stored {
    nlohmann::json doc;
    T object;
  };
  // `doc` stored with the executor's decoding of it; the decoder's error when it does not decode.
  template <typename T>
  static absl::StatusOr<Stored<T>> Load(nlohmann::json doc);

  std::string NextVersion() { return std::to_string(++resource_version_); }
  // What the API server sets on a created object: a uid (`uid_prefix` and the next number), the next version and
  // the creation time, in that order (the order the version counter sees them).
  void StampCreated(nlohmann::json& doc, const char* uid_prefix, absl::Time now);
  std::string Namespace() const { return clone_set_.object.metadata().namespace_(); }
  // Whether a start of containers fails (--fail-rate): one seeded draw; none at rate 0.
  bool DrawStartFails();
  // One kubelet sync of pod `name` at `now` (the model's decision, its status written). False: the pod is gone.
  absl::StatusOr<bool> SyncPod(const std::string& name, absl::Time now, bool* changed);
  // A PVC POSTed by a CreatePod or CreatePvc action; one that exists already is left as it is (AlreadyExists).
  absl::Status CreatePvc(const std::string& pvc_json, absl::Time now, AppliedPlan& out);
  absl::Status CreatePod(const pb::CreatePod& create, absl::Time now, AppliedPlan& out);
  absl::Status PatchPod(const pb::PatchPod& patch, AppliedPlan& out);
  absl::Status PatchPodStatus(const pb::PatchPodStatus& patch);
  absl::Status ResizePod(const pb::ResizePod& resize);
  absl::Status DeletePod(const pb::DeletePod& del, absl::Time now, AppliedPlan& out);
  absl::Status UpdatePvcOwner(const pb::UpdatePvcOwner& update);
  absl::Status ExpandPvc(const pb::ExpandPvc& expand);
  absl::Status UpdateRevision(const pb::UpdateRevision& update);
  absl::Status PatchCloneSet(const pb::PatchCloneSet& patch, absl::Time now);
  absl::Status WriteCloneSetStatus(const pb::CloneSetStatus& status);
  // Stores `doc` as the CloneSet, the metadata a write of the object itself keeps or sets, at a new version.
  absl::Status ReplaceCloneSet(nlohmann::json doc, absl::Time now);
  absl::Status ApplyAction(const pb::Action& action, absl::Time now, AppliedPlan& out);
  // Applies `req` to `stored` as the API server would: the body's preconditions (a failure is `refused`'s answer),
  // the body by its content type, a new version, then the executor's decoder over the new document.
  template <typename T>
  absl::Status Write(Stored<T>& stored, const snapshot::ApiRequest& req, std::string_view kind,
                     const std::function<absl::Status(sim::Failed)>& refused);

  SimOptions options_;
  std::mt19937_64 rng_;
  int64_t resource_version_ = 100;
  int64_t uid_counter_ = 0;
  int next_node_ = 0;
  std::map<int, int> pod_ips_;  // node -> pod addresses handed out there
  Stored<pb::CloneSet> clone_set_;  // doc is null until ApplyCloneSet
  std::map<std::string, Stored<pb::Pod>> pods_;
  std::map<std::string, Kubelet> kubelets_;
  std::map<std::string, Stored<pb::PersistentVolumeClaim>> pvcs_;
  std::map<std::string, Stored<pb::ControllerRevision>> revisions_;
  // Versions our own status writes and resizes produced in the current plan: a later metadata/spec write of the
  // pod in the same plan is guarded by that version instead of the snapshot's (see PatchPod in planner.proto).
  std::map<std::string, std::string> own_status_versions_;
  // `action` (a PatchPod or ResizePod) under the version our own status or resize write of that pod produced in
  // this plan, when there was one and the action has a version precondition.
  template <typename PodAction>
  PodAction UnderOwnVersion(const PodAction& action) const {
    PodAction out = action;
    auto own = own_status_versions_.find(out.name());
    if (own != own_status_versions_.end() && !out.resource_version().empty()) out.set_resource_version(own->second);
    return out;
  }
};

}  // namespace cloneset::clonesetctl
