// The three PATCH flavours kube-apiserver accepts, applied to an object's JSON. Pure functions over nlohmann::json,
// with no store or HTTP: the embedded cluster serves PATCH with them, and `clonesetctl simulate` applies the
// executor's own requests (snapshot/patch.h) with them, so the simulation stores what an API server would.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::kube {

// RFC 7386 JSON merge patch (null deletes). A non-object patch replaces the target.
nlohmann::json ApplyMergePatch(const nlohmann::json& target, const nlohmann::json& patch);

// RFC 6902 JSON patch. FailedPrecondition when the patch document is malformed, InvalidArgument
// (422) when an operation cannot be applied (missing path, failed test).
absl::StatusOr<nlohmann::json> ApplyJsonPatch(const nlohmann::json& target, const nlohmann::json& patch);

// Strategic merge patch for built-in kinds, as kubectl apply/patch send it: lists of objects are
// merged by their merge key (containers/volumes/env/... by name, ports by containerPort or port,
// conditions by type, volumeMounts by mountPath, ownerReferences by uid), finalizers merged as a
// set, other lists replaced; directives $patch (replace/delete/merge), $retainKeys,
// $setElementOrder/<list> and $deleteFromPrimitiveList/<list> are applied.
// Objects are merged key by key except the fields of `kind` tagged patchStrategy:"replace" upstream
// (PodDisruptionBudget spec.selector), which the patch's value replaces.
// FailedPrecondition for a malformed patch (not an object, bad directive).
absl::StatusOr<nlohmann::json> ApplyStrategicMergePatch(const nlohmann::json& target,
                                                        const nlohmann::json& patch, std::string_view kind = {});

}  // namespace cloneset::kube
