// The pods/resize subresource as kube-apiserver 1.34 serves it (pkg/registry/core/pod/strategy.go's resize
// strategy and ValidatePodResize): a write through it changes only spec.containers[*].resources and resizePolicy
// (and those of init containers); everything else of the request is dropped, and the result is validated: only
// cpu and memory may change, no request or limit may be removed, the QoS class stays, containers keep their names
// and order, and the pod's running containers must report status resources (a node that resizes).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "devcluster/schema.h"

namespace cloneset::devcluster {

// The pod a resize write of `incoming` (the whole pod after the patch or the PUT body) makes of the stored `prev`:
// `prev` with the containers' resources and resizePolicy of `incoming` (dropNonResizeUpdates). When `incoming`
// adds, removes, renames or reorders containers its spec is kept as it is, for ValidatePodResize to refuse.
nlohmann::json MergePodResize(const nlohmann::json& prev, const nlohmann::json& incoming);

// kube-apiserver 1.34's errors for resizing `old_pod` into `new_pod` (both stored forms), in its order; empty when
// the resize is allowed.
std::vector<FieldError> ValidatePodResize(const nlohmann::json& old_pod, const nlohmann::json& new_pod);

}  // namespace cloneset::devcluster
