// Env-from-metadata in-place updates on a real node. When an in-place update changes a label or annotation that a
// container reads through an env `fieldRef`, the planner patches only pod metadata and waits for that container's
// restart (a new containerID, kruise/inplace_completion.h). A kubelet restarts nothing for a metadata change: the
// container's spec is unchanged. The agent restarts such a container by stopping it through CRI; the kubelet starts
// it again under the pod's restartPolicy and resolves the env from the pod's current metadata. Upstream's
// kruise-daemon does the same from hashes of the env values; we decide from the state annotation instead, the
// same record the planner's completion rule reads.
#pragma once

#include <string>
#include <vector>

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::agent {

namespace pb = ::cloneset::planner::v1;

struct ContainerRestart {
  std::string container;     // the container's name in the pod
  std::string container_id;  // the runtime's id, without the "containerd://" scheme
};

struct EnvRestartDecision {
  std::vector<ContainerRestart> restarts;  // empty: nothing to do now
  std::string why;                         // when empty: the reason (for logs and tests)
};

// Containers to stop now: the pod is not terminating, its apps.kruise.io/inplace-update-state parses and says
// updateEnvFromMetadata, no grace period is pending (the metadata is not written yet), and for each container of
// lastContainerStatuses whose recorded containerID is still the one running. A container whose spec image differs
// from its status image is left alone: the kubelet restarts it for the image change anyway. A state without
// recorded containerIDs (written by upstream's controller) restarts nothing.
EnvRestartDecision DecideEnvRestarts(const pb::Pod& pod);

// "containerd://abc" -> "abc"; an id without a scheme is returned as it is.
std::string RuntimeContainerId(const std::string& status_container_id);

}  // namespace cloneset::agent
