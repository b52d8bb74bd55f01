#include "common/inplace_completion.h"

#include "common/image_ref.h"

namespace cloneset::common {

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
  if (!now.has_spec || !SameImage(now.spec_image, now.image)) return ContainerUpdate::kOldImage;
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

}  // namespace cloneset::common
