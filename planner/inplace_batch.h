// Applying one batch of an in-place update to a pod (semantics §5.8, upstream PatchSpecToPod): which containers
// go now (launch priorities, shared env-from-metadata keys), which wait, and the state annotation that records it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "planner/inplace_spec.h"
#include "kruise/inplace_state.h"
#include "planner/pod_source.h"

namespace cloneset::planner {

// One batch of an in-place update (upstream PatchSpecToPod): the pod changes to write now and the new state.
struct InPlaceBatch {
  std::map<std::string, std::string> container_images;
  std::map<std::string, ContainerResources> container_resources;  // resized through pods/resize, before the patch
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
  bool has_resources_ = false;  // a resize is never written as part of a batch action
  std::vector<std::string_view> names_;  // spec.container_images keys, in order
  std::vector<std::string> name_keys_;   // "<name>": as JSON
  std::string prefix_;                   // up to lastContainerStatuses' value
  std::string suffix_;                   // after it
};
}  // namespace cloneset::planner
