#include "kruise/inplace_completion.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/image_ref.h"
#include "common/resources.h"

namespace cloneset::kruise {

ObservedContainer Observe(const ::cloneset::planner::v1::Pod& pod, std::string_view name) {
  ObservedContainer now;
  for (const auto& status : pod.container_statuses()) {
    if (status.name() != name) continue;
    now.has_status = true;
    now.image = status.image();
    now.image_id = status.image_id();
    now.container_id = status.container_id();
    break;
  }
  for (const auto& container : pod.containers()) {
    if (container.name() != name) continue;
    now.has_spec = true;
    now.spec_image = container.image();
    break;
  }
  return now;
}

ContainerUpdate ContainerUpdateProgress(const RecordedContainer& recorded, const ObservedContainer& now,
                                        bool update_env_from_metadata) {
  if (!now.has_status) return ContainerUpdate::kNoStatus;
  const bool restarted =
      !recorded.container_id.empty() && !now.container_id.empty() && now.container_id != recorded.container_id;
  if (restarted) return ContainerUpdate::kDone;
  // An env-from-metadata change keeps image and image ID: only a restart shows it was applied.
  if (update_env_from_metadata && !recorded.container_id.empty()) return ContainerUpdate::kAwaitingRestart;
  if (now.image_id != recorded.image_id) return ContainerUpdate::kDone;
  if (!now.has_spec || !common::SameImage(now.spec_image, now.image)) return ContainerUpdate::kOldImage;
  return ContainerUpdate::kDone;
}

std::string_view Describe(ContainerUpdate progress) {
  switch (progress) {
    case ContainerUpdate::kDone: return "updated";
    case ContainerUpdate::kNoStatus: return "has no status";
    case ContainerUpdate::kAwaitingRestart: return "has not restarted";
    case ContainerUpdate::kOldImage: return "still runs the old image";
  }
  return "unknown";
}

InPlaceCompletion ContainersCompletion(const ::cloneset::planner::v1::Pod& pod, const InPlaceUpdateState& state) {
  InPlaceCompletion out;
  for (const auto& [name, last] : state.last_container_statuses) {
    const ContainerUpdate progress =
        ContainerUpdateProgress({last.image_id, last.container_id}, Observe(pod, name), state.update_env_from_metadata);
    if (progress != ContainerUpdate::kDone) {
      out.progress = InPlaceProgress::kContainersPending;
      out.why = absl::StrCat("container ", name, " ", std::string(Describe(progress)));
      return out;
    }
  }
  // A resize is done when the kubelet reports the spec's resources and no resize condition is left.
  if (state.update_resources) {
    const common::ResizeProgress resize = common::PodResizeProgress(pod);
    if (resize.state != common::ResizeState::kDone) {
      out.progress = InPlaceProgress::kResizePending;
      out.why = common::DescribeResize(resize);
      return out;
    }
  }
  out.progress = InPlaceProgress::kComplete;
  return out;
}

InPlaceCompletion CheckInPlaceUpdate(const ::cloneset::planner::v1::Pod& pod) {
  InPlaceCompletion out;
  const std::string_view state_json = InPlaceStateAnnotation(pod);
  if (state_json.empty()) {
    out.why = "no in-place update state";
    return out;
  }
  if (!InPlaceGraceAnnotation(pod).empty()) {
    out.progress = InPlaceProgress::kGracePending;
    out.why = "grace period pending";
    return out;
  }
  absl::StatusOr<InPlaceUpdateState> state = ParseInPlaceState(state_json);
  if (!state.ok()) {
    out.progress = InPlaceProgress::kInvalidState;
    out.why = std::string(state.status().message());
    return out;
  }
  if (HasNextBatch(*state)) {
    out.progress = InPlaceProgress::kNextBatchPending;
    out.why = "later container batch pending";
    out.state = *std::move(state);
    return out;
  }
  InPlaceCompletion containers = ContainersCompletion(pod, *state);
  containers.state = *std::move(state);
  return containers;
}

}  // namespace cloneset::kruise
