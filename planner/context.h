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
#include "planapi/in_place_batches.h"
#include "planner/plan_limits.h"
#include "planner/pod_facts.h"

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;

enum class PodUpdatePolicy { kReCreate, kInPlaceIfPossible, kInPlaceOnly };

// Well-known keys (semantics §1.4).
inline constexpr char kRevisionLabel[] = "controller-revision-hash";
inline constexpr char kPodTemplateHashLabel[] = "pod-template-hash";
inline constexpr char kInstanceIdLabel[] = "apps.kruise.io/cloneset-instance-id";
// Not upstream: seed 000 lists PVCs by this label, so every PVC (and pod) also carries it with the CloneSet name.
inline constexpr char kInstanceLabel[] = "app.kruise.io/instance";
inline constexpr char kLifecycleStateLabel[] = "lifecycle.apps.kruise.io/state";
inline constexpr char kLifecycleTimestampAnnotation[] = "lifecycle.apps.kruise.io/timestamp";
inline constexpr char kSpecifiedDeleteLabel[] = "apps.kruise.io/specified-delete";
using planapi::kInPlaceStateAnnotation;  // the in-place batch expansion writes it too
inline constexpr char kInPlaceGraceAnnotation[] = "apps.kruise.io/inplace-update-grace";
inline constexpr char kLegacyInPlaceStateAnnotation[] = "inplace-update-state";
inline constexpr char kLegacyInPlaceGraceAnnotation[] = "inplace-update-grace";
inline constexpr char kDeletionCostAnnotation[] = "controller.kubernetes.io/pod-deletion-cost";
inline constexpr char kInPlaceUpdateReadyCondition[] = "InPlaceUpdateReady";
inline constexpr char kKruisePodReadyCondition[] = "KruisePodReady";
inline constexpr char kRevisionHashLabel[] = "controller.kubernetes.io/hash";
inline constexpr char kVctHashAnnotation[] = "kruise.io/cloneset-volumeclaimtemplate-hash";
inline constexpr char kPreDownloadCreatedLabel[] = "apps.kruise.io/pre-predownload-created";
inline constexpr char kPreDownloadIgnoredLabel[] = "apps.kruise.io/image-predownload-ignored";

// Lifecycle states (label values).
inline constexpr char kStatePreparingNormal[] = "PreparingNormal";
inline constexpr char kStateNormal[] = "Normal";
inline constexpr char kStatePreparingUpdate[] = "PreparingUpdate";
inline constexpr char kStateUpdating[] = "Updating";
inline constexpr char kStateUpdated[] = "Updated";
inline constexpr char kStatePreparingDelete[] = "PreparingDelete";

// The CloneSet spec in the controller's (v1beta1) terms, with every default applied and every int-or-percent
// resolved against spec.replicas (semantics §1.1, §0.4, §4.1 "Parameters").
class PodStore;

struct ResolvedSpec {
  int32_t replicas = 1;
  bool rolling_update = true;       // false for OnDelete (rollingUpdate == nil upstream)
  PodUpdatePolicy policy = PodUpdatePolicy::kReCreate;
  int32_t partition = 0;            // R-partition, clamped to [0, replicas]
  int32_t max_surge = 0;            // 0 while paused
  int32_t max_unavailable = 0;      // rounded up iff max_surge == 0 (down when !rolling_update)
  int32_t scale_max_unavailable = INT32_MAX;  // scaleStrategy.maxUnavailable, rounded up
  bool paused = false;
  int32_t min_ready_seconds = 0;
  int32_t grace_period_seconds = 0;
  int32_t revision_history_limit = 10;
  bool pvc_reuse = true;            // enablePVCReuse (version-dependent default)
  bool retain_pvcs = false;         // pvcRetentionPolicy == Retain
  bool exclude_preparing_delete = false;
  std::vector<std::string> pods_to_delete;
  bool has_progress_deadline = false;
  int32_t progress_deadline_seconds = 0;
  int32_t expected_updated_replicas = 0;  // replicas - partition (rolling), else replicas
};

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

  // Claimed active pods (owned, selector matches, not terminating, not Succeeded/Failed), sorted by name. When the
  // request carried a pod table the entries are nullptr: read pod_facts, or PodAt/PodOf (pod_source.h).
  std::vector<const pb::Pod*> pods;
  // Set when the request carried a pod table: the checked table and the pods built from it on demand.
  std::shared_ptr<PodStore> pod_store;
  // ComputePodFacts(*pods[i]) for each i (pod_facts.h); read through FactsAt, which tolerates edited `pods`.
  std::vector<PodFacts> pod_facts;
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
