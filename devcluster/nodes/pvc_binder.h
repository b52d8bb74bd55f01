// The simulated persistent-volume controller and provisioner: a PVC whose StorageClass exists and names a
// provisioner (any but kubernetes.io/no-provisioner, the class of pre-created local volumes) gets a
// PersistentVolume "pvc-<uid>" with the requested capacity and a claimRef, and both go Bound. A class with
// volumeBindingMode WaitForFirstConsumer is provisioned only once the scheduler has picked a node for a pod using
// the claim (annotation volume.kubernetes.io/selected-node), as kube-scheduler and external provisioners do. A
// PVC without storageClassName uses the class annotated storageclass.kubernetes.io/is-default-class=true (the
// simulator creates one, "standard", see simulator.h); with an explicit "" class, or no usable class, it stays
// Pending.
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

// The annotation kube-scheduler writes on an unbound WaitForFirstConsumer claim once it picked the pod's node.
inline constexpr char kSelectedNodeAnnotation[] = "volume.kubernetes.io/selected-node";
// The provisioner name of classes without dynamic provisioning (pre-created volumes only).
inline constexpr char kNoProvisioner[] = "kubernetes.io/no-provisioner";

// The StorageClass `pvc` resolves to: its spec.storageClassName, or the default class when it names none;
// nullptr when that class does not exist (or the claim asks for no class, "").
const nlohmann::json* ClaimClass(const nlohmann::json& pvc, const std::vector<nlohmann::json>& classes);
// True when the class binds at once (volumeBindingMode Immediate, the default) rather than WaitForFirstConsumer.
bool BindsImmediately(const nlohmann::json& storage_class);
// True when some provisioner creates volumes for the class (the simulated one serves every provisioner but
// kubernetes.io/no-provisioner).
bool Provisionable(const nlohmann::json& storage_class);

// The default StorageClass the simulator creates (SimulatorConfig::default_storage_class): the simulated
// provisioner "devcluster.local/simulated", reclaimPolicy Delete, WaitForFirstConsumer, like the real backend's.
nlohmann::json DefaultStorageClassObject(const std::string& name);

// The default class name among `classes`, if exactly one is marked default (the newest wins when several are,
// as in Kubernetes 1.26+).
std::optional<std::string> DefaultStorageClass(const std::vector<nlohmann::json>& classes);

}  // namespace cloneset::devcluster::nodes
