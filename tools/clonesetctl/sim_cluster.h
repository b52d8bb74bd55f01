// A small in-process cluster for `clonesetctl simulate`: one CloneSet, and its pods, PVCs and ControllerRevisions
// kept by the embedded cluster's own REST layer (devcluster/api_server.h over an in-memory store, no sockets). Plans
// go the executor's way: the request is assembled by the executor's rules (planapi/request.h) from objects decoded
// by the executor's decoders (snapshot/), and applied by the executor's plan applier (planapi/applier.h: stages,
// slow-start batch stop, stop on a conflict, status write last) over a writer that sends the very requests the
// executor sends (snapshot/patch.h: paths, strategic and merge patches, resourceVersion and uid preconditions,
// DeleteOptions) to that REST layer, which answers as the embedded cluster answers the executor (409, 404,
// AlreadyExists...). The pods' lives come from the embedded cluster's node model: the scheduler's placement
// (devcluster/nodes/scheduler.h) and the kubelet's decisions (devcluster/nodes/kubelet.h: start, readiness, in-place
// restarts, resizes, graceful removal), so the prediction cannot drift from what the embedded cluster does.
// Time is an input: every call takes `now`, the store reads it from a clock this class sets, and randomness (start
// failures) comes from the seed.
//
// The CloneSet itself stays beside the store (the store serves no CloneSet CRD here, so the pods' owner references
// are left alone by its garbage collector, as an unknown kind's are): its spec comes from ApplyCloneSet, its
// metadata patches go through the embedded cluster's merge patch, its status is the plan's.
//
// Kubelet timing: an image is usable at once (no pull), a container runs `start_delay` after its start and is
// ready `ready_after` later; with `fail_rate`, each created pod's containers crash in a loop with that probability
// (they never become ready); a deleted pod goes `terminate_after` after the delete (its grace period, capped)
// once its finalizers are gone.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"
#include "planapi/request.h"

namespace cloneset::devcluster {
class ApiServer;
class Store;
}  // namespace cloneset::devcluster

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
  ~SimCluster();
  SimCluster(SimCluster&&) noexcept;
  SimCluster& operator=(SimCluster&&) noexcept;

  // Creates the CloneSet from a JSON object, or replaces its spec (generation + 1 when the spec changed).
  absl::Status ApplyCloneSet(const std::string& json, absl::Time now);
  const pb::CloneSet& clone_set() const { return clone_set_; }
  const std::string& clone_set_json() const { return clone_set_json_; }

  // What the executor would send the planner for this cluster at `now`.
  planapi::PlanSnapshot Snapshot(absl::Time now) const;
  // Applies `plan` (in-place batches expanded) with the executor's plan applier.
  AppliedPlan Apply(const pb::PlanResponse& plan, absl::Time now);

  // Runs the kubelets up to `now`; true when any pod changed.
  bool Advance(absl::Time now);
  // The earliest future moment a pod will change by itself.
  std::optional<absl::Time> NextTransition(absl::Time now) const;

  PodCounts Counts(absl::Time now) const;
  // The pods and claims as the executor's decoders read them from the store.
  std::map<std::string, pb::Pod> pods() const;
  std::map<std::string, pb::PersistentVolumeClaim> pvcs() const;
  void set_fail_rate(double rate) { options_.fail_rate = rate; }
  // Pods whose containers were made to fail (never ready).
  int failed_starts() const;

 private:
  class Writer;  // the plan applier's writer: the executor's requests, sent to the REST layer
  struct State;  // the clock, the store and its REST layer, the node model's memory

  // Sends one request as the executor's REST client would, at `now`: the answer's body, or the error the executor's
  // client makes of a failed answer (kube/api_status.h).
  absl::StatusOr<nlohmann::json> Send(const std::string& method, const std::string& path,
                                      const std::string& content_type, const std::string& body, absl::Time now);
  absl::Status ApplyAction(const pb::Action& action, absl::Time now, AppliedPlan& out);
  absl::Status CreatePod(const pb::CreatePod& create, absl::Time now, AppliedPlan& out);
  // POSTs a claim; one that exists already counts as done (AlreadyExists), as for the executor. The simulated
  // provisioner binds it at once.
  absl::Status CreatePvc(const std::string& pvc_json, absl::Time now, AppliedPlan& out);
  absl::Status Delete(const std::string& path, const std::string& uid, absl::Time now, AppliedPlan& out);
  // With `fail_rate`, whether the containers of pod `name` that start now fail (crash in a loop, never ready);
  // true when this draw made them fail.
  bool DrawStartFailure(const std::string& name);
  // Makes the embedded cluster's kubelet crash the pod's containers in a loop (the fault annotation it reads).
  void MarkFailing(const std::string& name, absl::Time now);
  // Places a new pod on a node as the embedded cluster's scheduler would, and binds it.
  void Schedule(const std::string& name, absl::Time now);
  // One kubelet decision for pod `name`, written to the store; true when the pod changed or went.
  bool StepPod(const nlohmann::json& pod, absl::Time now);
  std::string Namespace() const;

  SimOptions options_;
  std::mt19937_64 rng_;
  std::unique_ptr<State> state_;
  std::string clone_set_json_;
  pb::CloneSet clone_set_;
  // The version our own status write in the current plan returned, per pod: a metadata or spec write that follows
  // it is preconditioned on it, as the executor does (executor/apply.cc).
  std::map<std::string, std::string> own_status_versions_;
};

}  // namespace cloneset::clonesetctl
