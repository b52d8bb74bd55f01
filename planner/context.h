// The planner's view of one reconcile: the request with defaults resolved, the pods split and sorted, and the
// revisions chosen. Built once per Plan() by BuildContext (context.cc) and read by every stage.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "common/label_selector.h"
#include "planapi/in_place_batches.h"
#include "planner/predicates.h"
#include "planner/plan_limits.h"
#include "planner/pod_facts.h"
#include "planner/resolved_spec.h"

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;

class PodStore;

// One reconcile's inputs, indexed. Pointers point into `request`, which outlives the context.
struct PlanContext {
  const pb::PlanRequest* request = nullptr;
  const pb::CloneSet* clone_set = nullptr;
  absl::Time now;
  ResolvedSpec spec;
  std::string selector_string;  // canonical labels.Selector.String() form
  // The effective selector: spec.selector, or the template's labels when the CloneSet has none (seed 000).
  pb::LabelSelector selector;
  bool selector_defaulted = false;  // spec.selector was missing and `selector` comes from the template labels
  common::LabelSelector label_selector;  // `selector`, checked, for matching pods

  // Claimed active pods (owned, selector matches, not terminating, not Succeeded/Failed), sorted by name. When the
  // request carried a pod table the entries are nullptr: read pod_facts, or PodAt/PodOf (pod_source.h).
  std::vector<const pb::Pod*> pods;
  // Set when the request carried a pod table: the checked table and the pods built from it on demand.
  std::shared_ptr<PodStore> pod_store;
  // ComputePodFacts(*pods[i]) for each i (pod_facts.h), in two arrays: what every stage's walk reads, and the
  // pod's strings; read through AllFacts / AllColdFacts / FactsAt, which tolerate edited `pods`.
  std::vector<PodHotFacts> pod_facts;
  std::vector<PodColdFacts> pod_cold;
  // The update/current revision names the facts' on_*_revision flags were computed against (a test may change
  // the context's revisions afterwards; OnRevision then compares the labels).
  std::string facts_update_revision;
  std::string facts_current_revision;
  // Owned pods that are terminating or finished (kept for instance-id and PVC bookkeeping).
  std::vector<const pb::Pod*> inactive_pods;
  // Owned pods whose labels no longer match the selector (to be released).
  std::vector<const pb::Pod*> released_pods;
  // CloneSet-owned PVCs without a deletionTimestamp, sorted by name.
  std::vector<const pb::PersistentVolumeClaim*> pvcs;

  // Revisions sorted by (revision, creationTimestamp, name) (semantics §3.5).
  std::vector<const pb::ControllerRevision*> revisions;
  std::string current_revision;  // name
  std::string update_revision;   // name
  // Template JSON of the two revisions (the PodTemplateSpec, without "$patch").
  std::string current_template_json;
  std::string update_template_json;
  std::string update_vct_hash;
  int32_t collision_count = 0;  // from ChooseRevisions (status.collisionCount)
  // RolloutIsInPlace(*this), computed once per plan: the current-to-update change is applied in place, so the diff
  // uses no surge for it (docs/compatibility.md, "maxSurge with an in-place-able rollout creates no surge pods").
  bool rollout_in_place = false;

  pb::FeatureGates gates;

  // Whether to abandon the plan (plan_limits.h); null or empty: never. Long loops ask it through Cancelled().
  const CancelCheck* cancelled = nullptr;
};

inline bool Cancelled(const PlanContext& ctx) {
  return ctx.cancelled != nullptr && *ctx.cancelled && (*ctx.cancelled)();
}

}  // namespace cloneset::planner
