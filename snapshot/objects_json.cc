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
  if (const Json* status = Field(doc, "status")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*status, "status"));
    if (const Json* f = Field(*status, "phase")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "status.phase", pvc.mutable_phase()));
    }
  }
  return pvc;
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
