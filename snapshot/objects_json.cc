// The small owned objects: PVCs, ControllerRevisions and Nodes (nlohmann: few and small).
#include "absl/strings/str_cat.h"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {

using internal::Field;
using internal::Json;

absl::StatusOr<pb::PersistentVolumeClaim> PvcFromJson(std::string_view json) {
  Json doc;
  SNAPSHOT_RETURN_IF_ERROR(internal::ParseDocument(json, "PersistentVolumeClaim", &doc));
  pb::PersistentVolumeClaim pvc;
  if (const Json* f = Field(doc, "metadata")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadObjectMeta(*f, "metadata", pvc.mutable_metadata()));
  }
  if (const Json* spec = Field(doc, "spec")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*spec, "spec"));
    if (const Json* f = Field(*spec, "storageClassName")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "spec.storageClassName", pvc.mutable_storage_class_name()));
    }
    if (const Json* resources = Field(*spec, "resources")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*resources, "spec.resources"));
      if (const Json* requests = Field(*resources, "requests")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*requests, "spec.resources.requests"));
        if (const Json* f = Field(*requests, "storage")) {
          SNAPSHOT_RETURN_IF_ERROR(
              internal::ReadString(*f, "spec.resources.requests.storage", pvc.mutable_storage_request()));
        }
      }
    }
  }
  if (const Json* status = Field(doc, "status")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*status, "status"));
    if (const Json* f = Field(*status, "phase")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "status.phase", pvc.mutable_phase()));
    }
    if (const Json* capacity = Field(*status, "capacity")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*capacity, "status.capacity"));
      if (const Json* f = Field(*capacity, "storage")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "status.capacity.storage", pvc.mutable_storage_capacity()));
      }
    }
  }
  return pvc;
}

absl::StatusOr<pb::StorageClass> StorageClassFromJson(std::string_view json) {
  Json doc;
  SNAPSHOT_RETURN_IF_ERROR(internal::ParseDocument(json, "StorageClass", &doc));
  pb::StorageClass sc;
  if (const Json* meta = Field(doc, "metadata")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*meta, "metadata"));
    if (const Json* f = Field(*meta, "name")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "metadata.name", sc.mutable_name()));
  }
  if (const Json* f = Field(doc, "allowVolumeExpansion")) {
    bool allow = false;
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadBool(*f, "allowVolumeExpansion", &allow));
    sc.set_allow_volume_expansion(allow);
  }
  return sc;
}

absl::StatusOr<pb::ControllerRevision> RevisionFromJson(std::string_view json) {
  Json doc;
  SNAPSHOT_RETURN_IF_ERROR(internal::ParseDocument(json, "ControllerRevision", &doc));
  pb::ControllerRevision rev;
  if (const Json* f = Field(doc, "metadata")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadObjectMeta(*f, "metadata", rev.mutable_metadata()));
  }
  if (const Json* f = Field(doc, "revision")) {
    int64_t n = 0;
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt64(*f, "revision", &n));
    rev.set_revision(n);
  }
  if (const Json* f = Field(doc, "data")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*f, "data"));
    rev.set_data_json(f->dump());  // nlohmann objects are sorted maps: compact with sorted keys.
  }
  return rev;
}

absl::StatusOr<pb::Node> NodeFromJson(std::string_view json) {
  Json doc;
  SNAPSHOT_RETURN_IF_ERROR(internal::ParseDocument(json, "Node", &doc));
  pb::Node node;
  if (const Json* meta = Field(doc, "metadata")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*meta, "metadata"));
    if (const Json* f = Field(*meta, "name")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "metadata.name", node.mutable_name()));
    if (const Json* f = Field(*meta, "labels")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadStringMap(*f, "metadata.labels", node.mutable_labels()));
    }
  }
  return node;
}

}  // namespace cloneset::snapshot
