// The live commands of clonesetctl: read one CloneSet and what it owns from a cluster (kube/ + snapshot/), render
// its rollout progress, and ask a planner over gRPC what it would do next.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "kruise/keys.h"
#include "kube/rest_client.h"
#include "planapi/request.h"

namespace cloneset::clonesetctl {

namespace pb = ::cloneset::planner::v1;

struct LiveCloneSet {
  pb::CloneSet clone_set;
  std::vector<pb::Pod> pods;  // owned by the CloneSet (owner reference uid), sorted by name
  std::vector<pb::PersistentVolumeClaim> pvcs;
  std::vector<pb::ControllerRevision> revisions;
  std::vector<pb::Node> nodes;
  // Every StorageClass the cluster lets us read (none without access): which claims may grow (semantics §4.11).
  std::vector<pb::StorageClass> storage_classes;
};

// NOT_FOUND "CloneSet ns/name not found"; UNAVAILABLE "cannot reach the cluster at <server>: ..." on transport
// errors; the API server's error otherwise.
absl::StatusOr<LiveCloneSet> FetchCloneSet(kube::RestClient& client, const std::string& server,
                                           const std::string& namespace_, const std::string& name);

// Every CloneSet of namespace `ns` (every namespace when empty) with what it owns, one LIST per kind. The
// CloneSets are listed in `api_version` (apps.kruise.io/v1alpha1 or v1beta1: the decoder reads both); listing
// them in the version the CRD stores needs no conversion webhook.
absl::StatusOr<std::vector<LiveCloneSet>> FetchCloneSets(kube::RestClient& client, const std::string& server,
                                                         const std::string& ns,
                                                         const std::string& api_version = kruise::kV1alpha1);

// The CloneSet's progress: a summary line, a progress bar of updated/ready/desired and one row per pod
// (name, node, revision, lifecycle state, ready, restarts, PVCs; a claim whose storage request is above its
// capacity shows "(expanding to <request>)").
std::string RenderStatus(const LiveCloneSet& live, absl::Time now);

// Asks the planner at `address` (gRPC target, e.g. 127.0.0.1:7070) for the next plan through the planner's client
// (planner/client/, one call, no health probe), and reads the answer as the executor does (planapi::RequestPlan:
// in-place batches expanded). UNAVAILABLE names the address when the planner cannot be reached.
absl::StatusOr<pb::PlanResponse> AskPlanner(const std::string& address, planapi::RequestWithPods snapshot,
                                            absl::Duration deadline = absl::Seconds(5));
// The request the executor would send for `live` at `now`: assembled by the same rules (planapi/request.h: seed of
// the state, terminating PVCs left out, the pods' Nodes only for a topology spread, the pods as a pod table).
// `gates` are the executor's (--feature-gates), as PlanRequest.feature_gates.
planapi::RequestWithPods PlanRequestFor(const LiveCloneSet& live, absl::Time now, const pb::FeatureGates& gates);
// One line saying what an action writes, e.g. "patch pod web-x (in-place-update): image app=nginx:2".
std::string DescribeAction(const pb::Action& action);
// One line per action, then the summary, status change, events and requeue.
std::string RenderPlan(const LiveCloneSet& live, const pb::PlanResponse& plan);

// The planner `plan` asks: --planner when given, else $CLONESET_PLANNER (`env`, "" when unset). Neither:
// INVALID_ARGUMENT naming both, since no address is right by default (a cluster's planner is its Service's, a local
// stack's is what `./run up` chose).
absl::StatusOr<std::string> PlannerAddress(const std::string& flag, const std::string& env);

}  // namespace cloneset::clonesetctl
