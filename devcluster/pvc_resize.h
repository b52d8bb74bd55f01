// A PersistentVolumeClaim's storage request changed by an update, as kube-apiserver 1.34 decides it: its validation
// (pkg/apis/core/validation ValidatePersistentVolumeClaimUpdate: the request of a claim that is not Bound cannot
// change; a smaller request is allowed only above status.capacity, RecoverVolumeExpansionFailure being GA) and its
// PersistentVolumeClaimResize admission plugin (a larger request needs a Bound claim whose StorageClass, the same
// before and after, exists with allowVolumeExpansion: true).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"

namespace cloneset::devcluster {

// OK, or the API server's refusal of updating `old_pvc` into `new_pvc` (both stored forms) given the StorageClass
// objects `classes`: INVALID_ARGUMENT with field causes (422 Invalid) for the validation, PERMISSION_DENIED with the
// plugin's reason (403 Forbidden, which the API layer words `persistentvolumeclaims "<name>" is forbidden: <reason>`)
// for the admission plugin.
absl::Status ValidatePvcStorageUpdate(const nlohmann::json& old_pvc, const nlohmann::json& new_pvc,
                                      const std::vector<nlohmann::json>& classes);

}  // namespace cloneset::devcluster
