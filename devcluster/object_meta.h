// Pure helpers of the store: indexing, defaulting, timestamps, names. No locking, no state.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "base/clock.h"
#include "devcluster/resources.h"
#include "devcluster/schema.h"
#include "devcluster/selectors.h"
#include "devcluster/store_types.h"

namespace cloneset::devcluster {

// Timestamps are written and read with base::FormatTime / base::ParseTime (base/time_format.h).

// Reads a string, boolean or number at `path` of `obj` as text; "" when a step is missing or the value is of
// another kind.
std::string StringAt(const nlohmann::json& obj, std::initializer_list<const char*> path);

std::string NewUid(absl::BitGen& gen);
std::string RandomSuffix(absl::BitGen& gen);  // 5 chars as generateName uses

// Selectable fields of a resource (metadata.name and metadata.namespace for all).
const std::vector<std::string>& SupportedFields(std::string_view resource);
// Checks a field selector only names supported fields (FailedPrecondition otherwise).
absl::Status CheckFieldSelector(const FieldSelector& selector, std::string_view resource);

// Applies API defaults (pod container port protocol, grace period, service type...). Idempotent.
void ApplyDefaults(std::string_view resource, nlohmann::json& object);
// Secrets: merges the write-only stringData into data (base64) and drops it, as kube-apiserver's conversion does
// on every write. InvalidArgument names a stringData entry that is not a string.
absl::Status MergeSecretStringData(nlohmann::json& secret);
// metadata.annotations in total (keys plus values) may hold at most this many bytes (apimachinery's
// TotalAnnotationSizeLimitB).
inline constexpr size_t kTotalAnnotationSizeLimit = 256 * 1024;
// The largest serialized object the store keeps: etcd's default --max-request-bytes (1.5 MiB), past which
// kube-apiserver's write fails with etcd's "request is too large"; past 2 MiB its etcd client refuses to send it.
inline constexpr size_t kMaxStoredObjectBytes = 1536 * 1024;
inline constexpr size_t kMaxEtcdClientMessageBytes = 2 * 1024 * 1024;
// ConfigMaps (data + binaryData) and Secrets (data, decoded) hold at most 1 MiB (MaxSecretSize, and the ConfigMap
// total size check of kube-apiserver's validation).
inline constexpr size_t kMaxDataBytes = 1024 * 1024;
// The 1 MiB data limit of ConfigMaps and Secrets, with kube-apiserver's field error (reason FieldValueTooLong).
absl::Status ValidateDataSize(std::string_view resource, const nlohmann::json& object);

// The finalizer the StorageObjectInUseProtection admission plugin puts on every new PVC; the pvc-protection
// controller removes it from a deleted PVC once no pod uses the claim.
inline constexpr char kPvcProtectionFinalizer[] = "kubernetes.io/pvc-protection";
// The claims a pod uses: spec.volumes[].persistentVolumeClaim.claimName, and <pod>-<volume> for generic
// ephemeral volumes.
std::vector<std::string> ClaimsOf(const nlohmann::json& pod);
// Whether `pod` keeps `claim` in use, as the pvc-protection controller decides (podUsesPVC): only a scheduled pod
// (spec.nodeName set; the kubelet refuses to start one whose claim is being deleted) counts, whatever its phase (a
// Succeeded pod still holds its claim until it is deleted); for a generic ephemeral volume, a pod that is shut down
// (deletionTimestamp with a zero grace period) no longer does.
bool PodUsesClaim(const nlohmann::json& pod, const std::string& claim);

// The status a newly created object starts with (nullopt = keep/drop per type, see store_write.cc).
void ResetStatusOnCreate(const ResourceType& type, nlohmann::json& object);

// True when anything other than metadata and status differs (a generation bump).
bool SpecChanged(const nlohmann::json& before, const nlohmann::json& after);
// Whether a write of `resource` from `before` to `after` bumps metadata.generation: SpecChanged,
// except that binding a pod (setting spec.nodeName, by pods/binding or the scheduler) does not, as
// in kube-apiserver where the binding subresource never touches generation.
bool BumpsGeneration(std::string_view resource, const nlohmann::json& before, const nlohmann::json& after);

// Reads a dotted path like ".spec.replicas" ("status.replicas" also accepted). Null if absent.
const nlohmann::json* LookupPath(const nlohmann::json& object, std::string_view path);
// Sets a dotted path, creating intermediate objects.
void SetPath(nlohmann::json& object, std::string_view path, nlohmann::json value);

// kube-apiserver's rule for a pod update (ValidatePodUpdate of Kubernetes 1.34): the spec may change only in
// spec.containers[*].image, spec.initContainers[*].image, spec.activeDeadlineSeconds (set, or lowered, never
// raised or removed), spec.tolerations (additions; an existing one may change only its tolerationSeconds) and
// spec.schedulingGates (removals); anything else is one Forbidden error on `spec` naming those fields and the
// paths that changed. Both are the stored (defaulted) forms; metadata and status are not looked at. spec.nodeName
// set where it was empty is allowed: it is how the embedded scheduler and the binding subresource bind a pod (the
// real API server takes that only through pods/binding). Empty lists and maps equal absent ones, as the API
// server's semantic comparison has it for lists and maps.
std::vector<FieldError> ValidatePodUpdate(const nlohmann::json& old_pod, const nlohmann::json& new_pod);

// The API server's semantic equality over JSON as a form to compare: null, [] and {} removed where they stand for
// an absent field (recursively).
nlohmann::json SemanticForm(const nlohmann::json& v);

// "pods \"x\"" style qualified name used in error messages: <resource id> "<name>".
std::string QualifiedName(const ResourceType& type, std::string_view name);

}  // namespace cloneset::devcluster
