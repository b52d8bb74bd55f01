// The simulated persistent-volume controller and provisioner: a PVC whose StorageClass exists (any provisioner)
// gets a PersistentVolume "pvc-<uid>" with the requested capacity and a claimRef, and both go Bound. A PVC
// without storageClassName uses the class annotated storageclass.kubernetes.io/is-default-class=true; with an
// explicit "" class, or no usable class, it stays Pending.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cloneset::devcluster::nodes {

struct PvcDecision {
  std::optional<nlohmann::json> volume;        // the PersistentVolume to create (status Bound)
  std::optional<std::string> class_to_record;  // default class to write into spec.storageClassName
  std::optional<nlohmann::json> claim_status;  // new PVC .status when it differs
  std::string volume_name;                     // spec.volumeName to set ("" = leave)
};

// `classes`: the StorageClass objects. `existing_volume`: the PV named pvc-<uid> if it already exists.
PvcDecision DecidePvc(const nlohmann::json& pvc, const std::vector<nlohmann::json>& classes,
                      const std::optional<nlohmann::json>& existing_volume, const std::string& now_rfc3339);

// The default class name among `classes`, if exactly one is marked default (the newest wins when several are,
// as in Kubernetes 1.26+).
std::optional<std::string> DefaultStorageClass(const std::vector<nlohmann::json>& classes);

}  // namespace cloneset::devcluster::nodes
