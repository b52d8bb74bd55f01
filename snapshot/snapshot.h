// Conversion from Kubernetes JSON objects to the planner's snapshot messages (and the CloneSet status back to
// JSON). Used by the executor's caches, the CLI and tests. Every malformed field is an INVALID_ARGUMENT whose
// message starts with the JSON path of the field, e.g. `spec.updateStrategy.partition: expected integer or string`.
//
// Pods are decoded with simdjson On-Demand because the executor decodes LIST responses of thousands of pods; the
// other objects are few and small and use nlohmann.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::snapshot {

namespace pb = ::cloneset::planner::v1;

// An apps.kruise.io/v1alpha1 or v1beta1 CloneSet (metadata, spec and status) in the planner's vocabulary:
// v1beta1's updateStrategy.rollingUpdate is flattened (type = podUpdatePolicy, or OnDelete), the v1alpha1
// pre-download annotations and the scaling-exclude-preparing-delete label are mapped (semantics §1.2), the pod
// template and volume claim templates are kept as compact JSON.
absl::StatusOr<pb::CloneSet> CloneSetFromJson(std::string_view json);

// A v1 Pod: the fields of pb::Pod, including container launch priorities (env KRUISE_CONTAINER_BARRIER with a
// configMapKeyRef key "p_<n>").
absl::StatusOr<pb::Pod> PodFromJson(std::string_view json);
// Which parts of a pod PodFromJson decodes.
enum class PodParts {
  kAll,
  // metadata and spec only: the status is skipped unread (so a malformed status is not an error), for a caller
  // that compares only those (the executor's check of a status write's returned pod, executor/same_pod.h).
  kMetadataAndSpec,
};
// The same decoder into `out`, which is cleared first: a caller that decodes pod after pod (the executor's pod
// watch) passes the same message, whose strings and repeated entries keep their capacity. On error `out` holds
// what was decoded before the bad field.
absl::Status PodFromJson(std::string_view json, pb::Pod* out, PodParts parts = PodParts::kAll);
// A v1 PodList (or any object with an `items` array of pods); decodes every item.
absl::StatusOr<std::vector<pb::Pod>> PodListFromJson(std::string_view json);

// Metadata, status.phase, and what a volume expansion reads: spec.storageClassName, spec.resources.requests.storage
// and status.capacity.storage.
absl::StatusOr<pb::PersistentVolumeClaim> PvcFromJson(std::string_view json);
// A storage.k8s.io/v1 StorageClass: its name and allowVolumeExpansion (absent: false).
absl::StatusOr<pb::StorageClass> StorageClassFromJson(std::string_view json);
// An apps/v1 ControllerRevision; `data` becomes compact JSON with sorted keys.
absl::StatusOr<pb::ControllerRevision> RevisionFromJson(std::string_view json);
absl::StatusOr<pb::Node> NodeFromJson(std::string_view json);

// The CloneSet `.status` object: camelCase keys, RFC3339 times (seconds, UTC), every counter present (so a merge
// patch of the whole status also resets counters that dropped to zero).
std::string StatusToJson(const pb::CloneSetStatus& status);

// YAML (one document) to compact JSON, for manifests. Integers stay integers, "true"/"false" become booleans,
// quoted scalars stay strings.
absl::StatusOr<std::string> YamlToJson(std::string_view yaml);
// Every document of a multi-document YAML stream, skipping empty ones.
absl::StatusOr<std::vector<std::string>> YamlDocumentsToJson(std::string_view yaml);

}  // namespace cloneset::snapshot
