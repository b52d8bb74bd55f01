// Whether a pod the API server returned still has the metadata and spec of the pod in a plan's snapshot: what
// decides if the version a uid-guarded status write returned may stand in for the snapshot's version in the pod's
// spec patch of the same plan (reconciler.h).
//
// Compared: every ObjectMeta field except resourceVersion, generation and creationTimestamp (labels, annotations,
// finalizers, owner references, deletion timestamp, name, namespace, uid), the containers (with their cpu and
// memory resources and resize policy) and the node name. Status
// (phase, conditions, container statuses) and readiness gates are not compared.
#pragma once

#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::executor {

namespace pb = ::cloneset::planner::v1;

// Field by field, without copying either pod: it runs once per status write of a rollout.
bool SameMetadataAndSpec(const pb::Pod& fresh, const pb::Pod& seen);

}  // namespace cloneset::executor
