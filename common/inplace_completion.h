// When has a container restarted on the spec an in-place update gave it? The one rule the planner (the pod's
// InPlaceUpdateReady and lifecycle progress, planner/inplace.cc) and the node agent (agent/readiness.cc) both
// decide with, so they cannot disagree about whether a pod finished its update (docs/semantics.md, "In-place
// completion"; the deviations from upstream are in docs/compatibility.md, "Same image ID completes").
#pragma once

#include <string_view>

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::common {

// What the state annotation's lastContainerStatuses recorded for the container when its batch started.
struct RecordedContainer {
  std::string_view image_id;
  std::string_view container_id;  // "" when the writer did not record it (upstream's writers do not)
};

// The container as the pod shows it now.
struct ObservedContainer {
  bool has_status = false;          // status.containerStatuses has an entry for it
  std::string_view image;           // status image
  std::string_view image_id;        // status imageID
  std::string_view container_id;    // status containerID
  bool has_spec = false;            // spec.containers has it
  std::string_view spec_image;      // its spec image
};

// The container `name` of `pod`: its entries in status.containerStatuses and spec.containers (first match).
ObservedContainer Observe(const ::cloneset::planner::v1::Pod& pod, std::string_view name);

enum class ContainerUpdate {
  kDone,             // restarted on the new spec
  kNoStatus,         // no container status yet
  kAwaitingRestart,  // an env-from-metadata change: only a new containerID shows it was applied
  kOldImage,         // same imageID and the status image is not the spec image
};

// A container counts as updated when its containerID changed since the batch started (a restart), or, for an
// image change, when its imageID changed or, with the same imageID, its status image is the spec image compared
// as normalized references (common/image_ref.h: "nginx:1.26" == "docker.io/library/nginx:1.26").
ContainerUpdate ContainerUpdateProgress(const RecordedContainer& recorded, const ObservedContainer& now,
                                        bool update_env_from_metadata);

// "has no status", "still runs the old image"...: how the agent says why it waits.
std::string_view Describe(ContainerUpdate progress);

}  // namespace cloneset::common
