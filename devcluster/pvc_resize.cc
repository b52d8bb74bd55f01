#include "devcluster/pvc_resize.h"

#include <optional>
#include <string>

#include "common/resources.h"
#include "devcluster/schema.h"

namespace cloneset::devcluster {

namespace {

using nlohmann::json;

const json* At(const json& object, const json::json_pointer& path) {
  return object.contains(path) ? &object.at(path) : nullptr;
}

// The quantity at `path` (0 when absent or not a quantity: Kubernetes' zero Quantity).
__int128 Size(const json& object, const json::json_pointer& path) {
  const json* v = At(object, path);
  if (v == nullptr) return 0;
  absl::StatusOr<__int128> n = common::JsonQuantityNanos(*v);
  return n.ok() ? *n : 0;
}

std::string ClassOf(const json& pvc) {
  const json* v = At(pvc, json::json_pointer("/spec/storageClassName"));
  if (v != nullptr && v->is_string()) return v->get<std::string>();
  // The beta annotation older claims carry (apihelper.GetPersistentVolumeClaimClass reads it first).
  const json* a = At(pvc, json::json_pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class"));
  return a != nullptr && a->is_string() ? a->get<std::string>() : "";
}

}  // namespace

absl::Status ValidatePvcStorageUpdate(const json& old_pvc, const json& new_pvc, const std::vector<json>& classes) {
  const json::json_pointer request("/spec/resources/requests/storage");
  const __int128 old_size = Size(old_pvc, request);
  const __int128 new_size = Size(new_pvc, request);
  if (new_size == old_size) return absl::OkStatus();
  const json* phase = At(old_pvc, json::json_pointer("/status/phase"));
  const bool bound = phase != nullptr && *phase == "Bound";
  const bool new_bound = [&] {
    const json* p = At(new_pvc, json::json_pointer("/status/phase"));
    return p != nullptr && *p == "Bound";
  }();
  // Validation: only a bound claim's request may change at all.
  if (!new_bound) {
    return FieldErrorsStatus({{"FieldValueForbidden", "spec",
                               "Forbidden: spec is immutable after creation except resources.requests and "
                               "volumeAttributesClassName for bound claims"}});
  }
  if (new_size < old_size && new_size <= Size(old_pvc, json::json_pointer("/status/capacity/storage"))) {
    return FieldErrorsStatus({{"FieldValueForbidden", "spec.resources.requests.storage",
                               "Forbidden: field can not be less than status.capacity"}});
  }
  if (new_size < old_size) return absl::OkStatus();
  // Admission (PersistentVolumeClaimResize); the API layer prefixes `persistentvolumeclaims "<name>" is forbidden: `.
  if (!bound) return absl::PermissionDeniedError("Only bound persistent volume claims can be expanded");
  const std::string cls = ClassOf(new_pvc);
  bool allowed = false;
  if (!cls.empty() && cls == ClassOf(old_pvc)) {
    for (const json& sc : classes) {
      if (sc.contains("metadata") && sc["metadata"].value("name", "") == cls) {
        allowed = sc.value("allowVolumeExpansion", false);
      }
    }
  }
  if (!allowed) {
    return absl::PermissionDeniedError(
        "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support "
        "resize");
  }
  return absl::OkStatus();
}

}  // namespace cloneset::devcluster
