// A tiny in-memory cluster for `clonesetctl simulate`: one CloneSet, its pods, PVCs and ControllerRevisions, a
// simulated kubelet, and the executor's way with plans: the request is assembled by the executor's rules
// (planapi/request.h) and plans are applied by the executor's plan applier (planapi/applier.h: stages, slow-start
// batch stop, stop on a conflict, status write last) over a writer that changes this state and answers as the API
// server would (409 for a failed precondition, AlreadyExists and a delete of what is gone count as done). Time is
// an input: every call takes `now`, nothing reads a clock, and randomness (start failures) comes from the seed.
//
// Kubelet model, per pod: created -> scheduled at once (round-robin over the nodes) -> container running after
// `start_delay` -> container ready `ready_after` later -> pod Ready when every container is ready and every
// readiness gate's condition is True. A spec image change restarts the container in place (restartCount + 1, new
// imageID) with the same delays. With `fail_rate`, each container start fails with that probability: the
// container runs but never becomes ready. Deleted pods disappear `terminate_after` after the delete once their
// finalizers are gone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "planapi/request.h"

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

  // Creates the CloneSet from a JSON object, or replaces its spec (generation + 1 when the spec changed).
  absl::Status ApplyCloneSet(const std::string& json, absl::Time now);
  const pb::CloneSet& clone_set() const { return clone_set_; }
  const std::string& clone_set_json() const { return clone_set_json_; }

  // What the executor would send the planner for this cluster at `now`.
  planapi::RequestWithPods Snapshot(absl::Time now) const;
  // Applies `plan` (in-place batches expanded) with the executor's plan applier.
  AppliedPlan Apply(const pb::PlanResponse& plan, absl::Time now);

  // Runs the kubelets up to `now`; true when any pod changed.
  bool Advance(absl::Time now);
  // The earliest future moment a pod will change by itself.
  std::optional<absl::Time> NextTransition(absl::Time now) const;

  PodCounts Counts(absl::Time now) const;
  const std::map<std::string, pb::Pod>& pods() const { return pods_; }
  const std::map<std::string, pb::PersistentVolumeClaim>& pvcs() const { return pvcs_; }
  void set_fail_rate(double rate) { options_.fail_rate = rate; }
  // Pods whose container start failed (never ready).
  int failed_starts() const;

 private:
  class Writer;  // the plan applier's writer to this cluster

  struct Kubelet {  // per-pod progress of the simulated kubelet
    std::map<std::string, std::string> images;  // container -> image the current attempt runs
    absl::Time running_at = absl::InfinitePast();
    absl::Time ready_at = absl::InfinitePast();
    bool failing = false;
    bool started = false;
  };

  std::string NextVersion() { return std::to_string(++resource_version_); }
  void StartContainers(const pb::Pod& pod, Kubelet& k, absl::Time now);
  bool StepPod(pb::Pod& pod, Kubelet& k, absl::Time now);
  // A PVC POSTed by a CreatePod or CreatePvc action; one that exists already is left as it is (AlreadyExists).
  void CreatePvc(const pb::PersistentVolumeClaim& pvc, absl::Time now, AppliedPlan& out);
  absl::Status CreatePod(const pb::CreatePod& create, absl::Time now, AppliedPlan& out);
  absl::Status PatchPod(const pb::PatchPod& patch, absl::Time now, AppliedPlan& out);
  absl::Status PatchPodStatus(const pb::PatchPodStatus& patch, absl::Time now);
  absl::Status ResizePod(const pb::ResizePod& resize);
  absl::Status DeletePod(const pb::DeletePod& del, absl::Time now, AppliedPlan& out);
  absl::Status PatchCloneSet(const pb::PatchCloneSet& patch, absl::Time now);
  absl::Status ApplyAction(const pb::Action& action, absl::Time now, AppliedPlan& out);

  SimOptions options_;
  std::mt19937_64 rng_;
  int64_t resource_version_ = 100;
  int64_t uid_counter_ = 0;
  int next_node_ = 0;
  std::string clone_set_json_;
  pb::CloneSet clone_set_;
  std::map<std::string, pb::Pod> pods_;
  std::map<std::string, Kubelet> kubelets_;
  std::map<std::string, absl::Time> deleting_since_;
  std::map<std::string, pb::PersistentVolumeClaim> pvcs_;
  std::map<std::string, pb::ControllerRevision> revisions_;
  // Versions our own status writes produced in the current plan (see PatchPod in planner.proto).
  std::map<std::string, std::string> own_status_versions_;
};

}  // namespace cloneset::clonesetctl
