// Has a pod's in-place update completed? The one rule the planner (the pod's InPlaceUpdateReady, its lifecycle
// progress and the next container batch, planner/inplace.cc and planner/refresh.cc) and the node agent
// (agent/readiness_gate.cc) both decide with, so they cannot disagree about whether a pod finished its update
// (semantics §5.9, "containers completed"; the deviations from upstream are in docs/compatibility.md, "Same image ID
// completes"). agent/completion_agreement_test.cc runs every kind of state through both.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cloneset/planner/v1/planner.pb.h"
#include "kruise/inplace_state.h"

namespace cloneset::kruise {

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

// ---- The whole pod ----

enum class InPlaceProgress {
  kNoUpdate,           // no state annotation: no in-place update ever ran, nothing to wait for
  kComplete,           // the last batch's containers restarted on their new spec and any resize was carried out
  kGracePending,       // the grace annotation is there: the update has not started
  kInvalidState,       // the state annotation is not a JSON object: never complete (semantics §5.9)
  kNextBatchPending,   // nextContainerImages, nextContainerRefMetadata or nextContainerResources waits
  kContainersPending,  // a container of lastContainerStatuses has not restarted on its new spec
  kResizePending,      // updateResources and the kubelet has not carried the resize out (common/resources.h)
};

struct InPlaceCompletion {
  InPlaceProgress progress = InPlaceProgress::kNoUpdate;
  std::string why;                           // for kInvalidState and the pending ones: what it waits for
  std::optional<InPlaceUpdateState> state;   // the parsed state, when it parsed
  // kNoUpdate or kComplete: the planner may take the pod for updated (upstream DefaultCheckInPlaceUpdateCompleted
  // returning nil). An unparsable state is not complete, as upstream's check returns its parse error.
  bool Completed() const {
    return progress == InPlaceProgress::kNoUpdate || progress == InPlaceProgress::kComplete;
  }
};

// The containers of `state`'s last batch and its resize only (the planner checks them before starting a next
// batch): kComplete, kContainersPending or kResizePending.
InPlaceCompletion ContainersCompletion(const ::cloneset::planner::v1::Pod& pod, const InPlaceUpdateState& state);

// The pod's update, in this order: no state (kNoUpdate), grace pending, unparsable state, next batch pending,
// containers, resize. The state annotation is read under its current key, else the legacy key.
InPlaceCompletion CheckInPlaceUpdate(const ::cloneset::planner::v1::Pod& pod);

}  // namespace cloneset::kruise
