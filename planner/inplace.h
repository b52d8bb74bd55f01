// What can be updated in place (semantics §5.7), the in-place update state and grace annotations (§5.8), applying
// one batch of an in-place update, and completion detection (§5.9).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "planner/context.h"
#include "planner/pod_facts.h"
#include "planner/pod_source.h"

namespace cloneset::planner {

// Label/annotation values a container reads through env valueFrom.fieldRef (env from metadata).
struct RefMetadata {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  bool operator==(const RefMetadata&) const = default;
};

struct InPlaceUpdateSpec {
  std::string revision;
  std::string old_revision;  // the pod's revision before this update (ours; lets a rollback during grace undo it)
  std::map<std::string, std::string> container_images;               // container -> image
  std::map<std::string, RefMetadata> container_ref_metadata;         // container -> metadata it reads
  std::map<std::string, std::string> set_labels;                     // template metadata changes
  std::map<std::string, std::string> set_annotations;
  std::vector<std::string> remove_labels;
  std::vector<std::string> remove_annotations;
  std::vector<std::string> add_finalizers;
  std::vector<std::string> remove_finalizers;
  bool update_env_from_metadata = false;
  int32_t grace_seconds = 0;
};

// nullopt when the change from `old_template_json` to `new_template_json` cannot be applied in place; the reason
// ("spec.containers[0].env changed") is written to `why_not` when given.
std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdateSpec(const PlanContext& ctx,
                                                            const std::string& old_template_json,
                                                            const std::string& new_template_json,
                                                            const std::string& target_revision,
                                                            std::string* why_not = nullptr);

// The same for a pod on `old_revision` (nullptr: unknown revision) moving to `target_revision` (the current or
// update revision of `ctx`), including the volumeClaimTemplates rule: when both revisions carry a VCT hash and
// they differ, the pod is recreated (on by default, docs/compatibility.md), except under InPlaceOnly.
std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdate(const PlanContext& ctx,
                                                        const pb::ControllerRevision* old_revision,
                                                        const std::string& target_revision, std::string* why_not);

// True when moving the current revision's pods to the update revision can be done in place under the CloneSet's
// policy. The diff stage uses it to avoid surge pods for in-place-able rollouts (field notes §2 #5).
bool RolloutIsInPlace(const PlanContext& ctx);

// The first revision (in ctx.revisions order) the pod's revision label matches, or nullptr.
const pb::ControllerRevision* PodRevision(const PlanContext& ctx, const pb::Pod& pod);
// The same from the pod's facts (its revision label), without the pod object.
const pb::ControllerRevision* PodRevision(const PlanContext& ctx, const PodFacts& pod);
// The VCT hash annotation of a revision known to `ctx` ("" if absent or unknown).
std::string RevisionVctHash(const PlanContext& ctx, const std::string& revision);

// ---- The apps.kruise.io/inplace-update-state annotation ----
struct LastContainerStatus {
  std::string image_id;
  std::string container_id;  // ours (ignored by Go readers): a restart with the same image ID still completes
};
struct ContainerBatch {
  std::string timestamp;
  std::vector<std::string> containers;
};
struct InPlaceUpdateState {
  std::string revision;
  std::string update_timestamp;  // RFC3339
  std::map<std::string, LastContainerStatus> last_container_statuses;
  bool update_env_from_metadata = false;
  bool update_resources = false;
  bool update_images = false;
  std::map<std::string, std::string> next_container_images;
  std::map<std::string, RefMetadata> next_container_ref_metadata;
  std::vector<std::string> pre_check_containers_required_ready;  // preCheckBeforeNext; empty = nil
  std::vector<ContainerBatch> container_batches_record;
};

// Go struct field order, omitempty as upstream (lastContainerStatuses is null when empty).
std::string FormatInPlaceState(const InPlaceUpdateState& state);
absl::StatusOr<InPlaceUpdateState> ParseInPlaceState(const std::string& json);

// ---- The apps.kruise.io/inplace-update-grace annotation (the pending spec) ----
std::string FormatGraceSpec(const InPlaceUpdateSpec& spec);
absl::StatusOr<InPlaceUpdateSpec> ParseGraceSpec(const std::string& json);

// The state/grace annotation of a pod (current key, else the legacy key); "" if absent.
std::string_view InPlaceStateAnnotation(const pb::Pod& pod);
std::string_view InPlaceGraceAnnotation(const pb::Pod& pod);

// One batch of an in-place update (upstream PatchSpecToPod): the pod changes to write now and the new state.
struct InPlaceBatch {
  std::map<std::string, std::string> container_images;
  std::map<std::string, std::string> set_labels;
  std::map<std::string, std::string> set_annotations;
  std::vector<std::string> remove_labels;
  std::vector<std::string> remove_annotations;
  std::vector<std::string> add_finalizers;
  std::vector<std::string> remove_finalizers;
  InPlaceUpdateState state;
};
// `apply_metadata` is false for later batches (the template metadata went with the first one). Reads only the
// pod's containers (launch priorities) and container statuses.
InPlaceBatch ApplyInPlaceBatch(const PodContainers& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                               absl::Time now, bool apply_metadata);
InPlaceBatch ApplyInPlaceBatch(const pb::Pod& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                               absl::Time now, bool apply_metadata);

// The state annotation of the first batch of `spec` started at `now` when that batch takes every container of
// the spec: no container reads metadata through env and the pod's launch priorities do not split the
// containers (nearly every update). It is then the same for every pod but for the containers' last statuses,
// so everything else is formatted once per spec instead of once per pod (a plan may start thousands).
// AppendTo writes what FormatInPlaceState writes for the state ApplyInPlaceBatch records from the fresh state
// {revision, updateTimestamp = now, updateEnvFromMetadata and updateImages of the spec}. `spec` must outlive it.
class SingleBatchState {
 public:
  SingleBatchState(const InPlaceUpdateSpec& spec, absl::Time now);

  // True when the first batch for `pod` takes every container (AppendTo applies); false: use ApplyInPlaceBatch.
  bool Covers(const PodContainers& pod) const;
  // Appends the state JSON for `pod`; Covers(pod) must hold. Without `whole`, only the part that differs between
  // pods (the lastContainerStatuses value): the state is then prefix() + that + suffix().
  void AppendTo(const PodContainers& pod, std::string* out, bool whole = true) const;
  const std::string& prefix() const { return prefix_; }
  const std::string& suffix() const { return suffix_; }

 private:
  bool has_ref_metadata_ = false;
  std::vector<std::string_view> names_;  // spec.container_images keys, in order
  std::vector<std::string> name_keys_;   // "<name>": as JSON
  std::string prefix_;                   // up to lastContainerStatuses' value
  std::string suffix_;                   // after it
};

// Containers of the state's last batch have restarted on their new spec (§5.9 "containers completed").
bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state);
// DefaultCheckInPlaceUpdateCompleted: no state -> true; grace pending or a next batch pending -> false.
bool InPlaceUpdateCompleted(const pb::Pod& pod);

// FormatRfc3339 with a per-thread memo of the last value (a plan formats the same `now` many times).
const std::string& Rfc3339(absl::Time t);

// "nginx" -> "docker.io/library/nginx:latest": equal references compare equal however they are spelled.
std::string NormalizeImage(std::string_view image);

}  // namespace cloneset::planner
