#include "devcluster/nodes/pvc_binder.h"

#include "base/json_read.h"

namespace cloneset::devcluster::nodes {
namespace {

using base::json_read::Str;

const nlohmann::json& Obj(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

std::optional<std::string> DefaultStorageClass(const std::vector<nlohmann::json>& classes) {
  std::optional<std::string> best;
  std::string best_created;
  for (const auto& sc : classes) {
    const auto& meta = Obj(sc, "metadata");
    const auto& ann = Obj(meta, "annotations");
    if (Str(ann, "storageclass.kubernetes.io/is-default-class") != "true" &&
        Str(ann, "storageclass.beta.kubernetes.io/is-default-class") != "true") {
      continue;
    }
    std::string created = Str(meta, "creationTimestamp"), name = Str(meta, "name");
    if (!best || created > best_created || (created == best_created && name < *best)) {
      best = name;
      best_created = created;
    }
  }
  return best;
}

const nlohmann::json* ClaimClass(const nlohmann::json& pvc, const std::vector<nlohmann::json>& classes) {
  const auto& spec = Obj(pvc, "spec");
  std::string cls;
  if (spec.contains("storageClassName") && spec["storageClassName"].is_string()) {
    cls = spec["storageClassName"].get<std::string>();
  } else if (auto def = DefaultStorageClass(classes)) {
    cls = *def;
  }
  if (cls.empty()) return nullptr;
  for (const auto& c : classes) {
    if (Str(Obj(c, "metadata"), "name") == cls) return &c;
  }
  return nullptr;
}

nlohmann::json DefaultStorageClassObject(const std::string& name) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", name}, {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
          {"provisioner", "devcluster.local/simulated"},
          {"reclaimPolicy", "Delete"},
          {"volumeBindingMode", "WaitForFirstConsumer"}};
}

bool BindsImmediately(const nlohmann::json& storage_class) {
  return Str(storage_class, "volumeBindingMode") != "WaitForFirstConsumer";
}

bool Provisionable(const nlohmann::json& storage_class) { return Str(storage_class, "provisioner") != kNoProvisioner; }

PvcDecision DecidePvc(const nlohmann::json& pvc, const std::vector<nlohmann::json>& classes,
                      const std::optional<nlohmann::json>& existing_volume, const std::string& now) {
  PvcDecision d;
  const auto& meta = Obj(pvc, "metadata");
  const auto& spec = Obj(pvc, "spec");
  const nlohmann::json status = Obj(pvc, "status");
  if (meta.contains("deletionTimestamp")) return d;

  const nlohmann::json* sc = ClaimClass(pvc, classes);
  const bool has_class = spec.contains("storageClassName") && spec["storageClassName"].is_string();
  const std::string cls = sc != nullptr ? Str(Obj(*sc, "metadata"), "name") : std::string();
  // Like the PersistentVolume controller (Kubernetes 1.28+), an unbound claim without a class gets the default
  // one written down even while it waits.
  if (sc != nullptr && !has_class) d.class_to_record = cls;
  // Waiting: no class, a class nothing provisions, or a WaitForFirstConsumer class before a pod's node is picked.
  const bool waits = sc == nullptr || !Provisionable(*sc) ||
                     (!BindsImmediately(*sc) && Str(Obj(meta, "annotations"), kSelectedNodeAnnotation).empty());
  if (waits && Str(spec, "volumeName").empty()) {
    nlohmann::json pending = status;
    pending["phase"] = "Pending";
    if (pending != status) d.claim_status = std::move(pending);
    return d;
  }

  const std::string volume_name = Str(spec, "volumeName").empty() ? "pvc-" + Str(meta, "uid") : Str(spec, "volumeName");
  nlohmann::json capacity = Obj(Obj(spec, "resources"), "requests").contains("storage")
                                ? nlohmann::json{{"storage", spec["resources"]["requests"]["storage"]}}
                                : nlohmann::json{{"storage", "1Gi"}};
  nlohmann::json modes = spec.contains("accessModes") && spec["accessModes"].is_array()
                             ? spec["accessModes"]
                             : nlohmann::json::array({"ReadWriteOnce"});
  if (!existing_volume && sc != nullptr) {
    std::string reclaim = Str(*sc, "reclaimPolicy");
    nlohmann::json pv = {
        {"apiVersion", "v1"},
        {"kind", "PersistentVolume"},
        {"metadata",
         {{"name", volume_name},
          {"annotations", {{"pv.kubernetes.io/provisioned-by", Str(*sc, "provisioner")}}},
          {"finalizers", nlohmann::json::array({"kubernetes.io/pv-protection"})}}},
        {"spec",
         {{"capacity", capacity},
          {"accessModes", modes},
          {"persistentVolumeReclaimPolicy", reclaim.empty() ? "Delete" : reclaim},
          {"storageClassName", cls},
          {"volumeMode", spec.contains("volumeMode") ? spec["volumeMode"] : nlohmann::json("Filesystem")},
          {"hostPath", {{"path", "/var/lib/devcluster/volumes/" + volume_name}}},
          {"claimRef",
           {{"apiVersion", "v1"},
            {"kind", "PersistentVolumeClaim"},
            {"namespace", Str(meta, "namespace")},
            {"name", Str(meta, "name")},
            {"uid", Str(meta, "uid")}}}}},
        {"status", {{"phase", "Bound"}}}};
    d.volume = std::move(pv);
  }
  if (Str(spec, "volumeName").empty()) d.volume_name = volume_name;
  nlohmann::json bound = status;
  bound["phase"] = "Bound";
  bound["accessModes"] = modes;
  bound["capacity"] = existing_volume ? Obj(Obj(*existing_volume, "spec"), "capacity") : capacity;
  if (bound != status) d.claim_status = std::move(bound);
  (void)now;
  return d;
}

}  // namespace cloneset::devcluster::nodes
