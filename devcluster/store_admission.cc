// Admission of a write, as kube-apiserver's admission plugins and validation decide it: NamespaceLifecycle,
// the ResourceQuota pod count, object metadata, and custom resources against their CRD's schema.
#include "devcluster/store_state.h"

#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devcluster/garbage_collector.h"
#include "devcluster/object_meta.h"
#include "devcluster/schema.h"

namespace cloneset::devcluster {

namespace {

// A ResourceQuota's hard limit on pods (spec.hard "pods" or "count/pods", an integer quantity), if it has one.
std::optional<std::pair<std::string, int64_t>> PodLimit(const nlohmann::json& quota) {
  const nlohmann::json* hard = LookupPath(quota, ".spec.hard");
  if (hard == nullptr || !hard->is_object()) return std::nullopt;
  for (const char* key : {"pods", "count/pods"}) {
    auto it = hard->find(key);
    if (it == hard->end()) continue;
    int64_t n = 0;
    if (it->is_number_integer()) return std::pair<std::string, int64_t>(key, it->get<int64_t>());
    if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), &n)) return std::pair<std::string, int64_t>(key, n);
  }
  return std::nullopt;
}

// Whether the quota counts `pod`: kube's pod evaluator leaves out terminal pods and pods whose deletion grace has
// passed; the embedded cluster's deleted pods are gone or have no grace left, so: not Succeeded, not Failed, not
// being deleted.
bool QuotaCountsPod(const nlohmann::json& pod) {
  const nlohmann::json* phase = LookupPath(pod, ".status.phase");
  if (phase != nullptr && phase->is_string() && (*phase == "Succeeded" || *phase == "Failed")) return false;
  return LookupPath(pod, ".metadata.deletionTimestamp") == nullptr;
}

}  // namespace

namespace store_internal {

// kube-apiserver's NamespaceLifecycle admission: nothing new in a namespace that is being deleted (here: one whose
// finalizers hold it after a DELETE). The Forbidden answer names the object (api_server.cc) and carries the cause.
absl::Status NamespaceTerminating(const std::string& ns) {
  absl::Status s = absl::PermissionDeniedError(
      absl::StrCat("unable to create new content in namespace ", ns, " because it is being terminated"));
  s.SetPayload(kFieldCausesPayload,
               absl::Cord(nlohmann::json::array({{{"reason", "NamespaceTerminating"},
                                                  {"message", absl::StrCat("namespace ", ns, " is being terminated")},
                                                  {"field", "metadata.namespace"}}})
                              .dump()));
  return s;
}

bool HasOwnerReferences(const nlohmann::json& object) {
  const nlohmann::json* refs = OwnerReferencesJson(object);
  return refs && refs->is_array() && !refs->empty();
}

bool SameOwnerReferences(const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json *ra = OwnerReferencesJson(a), *rb = OwnerReferencesJson(b);
  return ra && rb ? *ra == *rb : ra == rb;
}

// Admission of a custom resource against its CRD schema (schema.h): prune unknown fields (per fieldValidation),
// default, validate. `old` is the stored object on an update.
absl::Status AdmitCustomResource(const ResourceType& type, nlohmann::json& object, const nlohmann::json* old,
                                 const WriteOptions& options) {
  if (!type.schema) return absl::OkStatus();
  std::vector<std::string> unknown = PruneAndDefault(*type.schema, object);
  if (!unknown.empty() && options.field_validation == "Strict") {
    std::vector<std::string> parts;
    for (const auto& f : unknown) parts.push_back(absl::StrCat("unknown field \"", f, "\""));
    return absl::FailedPreconditionError(absl::StrCat(type.kind, " in version \"", type.version,
                                                      "\" cannot be handled as a ", type.kind,
                                                      ": strict decoding error: ", absl::StrJoin(parts, ", ")));
  }
  if (options.field_validation == "Warn" && options.warnings)
    for (const auto& f : unknown) options.warnings->push_back(absl::StrCat("unknown field \"", f, "\""));
  std::vector<std::string> replicas_paths;
  if (type.has_scale) replicas_paths = {type.scale_spec_path, type.scale_status_path};
  return FieldErrorsStatus(ValidateAgainstSchema(*type.schema, object, old, replicas_paths));
}

// A CRD rule outside the CEL subset the cluster evaluates (cel.h) is said so on the CRD write, not silently skipped.
void WarnAboutUnevaluatedRules(const ResourceType& type, const WriteOptions& options) {
  if (!type.schema || !options.warnings) return;
  for (const auto& [rule, why] : type.schema->not_evaluated)
    options.warnings->push_back(absl::StrCat("x-kubernetes-validations rule not evaluated by the embedded cluster: ",
                                             rule, " (", why, ")"));
}

absl::Status ValidateMeta(const nlohmann::json& meta) {
  for (const char* field : {"labels", "annotations"}) {
    auto it = meta.find(field);
    if (it == meta.end() || it->is_null()) continue;
    if (!it->is_object())
      return absl::InvalidArgumentError(absl::StrCat("metadata.", field, ": Invalid value: must be a map of strings"));
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string())
        return absl::InvalidArgumentError(
            absl::StrCat("metadata.", field, "[", k, "]: Invalid value: ", v.dump(), ": must be a string"));
      if (k.empty() || k.size() > 317)
        return absl::InvalidArgumentError(absl::StrCat("metadata.", field, ": Invalid value: \"", k, "\": invalid key"));
    }
  }
  if (auto it = meta.find("annotations"); it != meta.end() && it->is_object()) {
    size_t total = 0;
    for (const auto& [k, v] : it->items()) total += k.size() + v.get_ref<const std::string&>().size();
    if (total > kTotalAnnotationSizeLimit)
      return FieldErrorsStatus({{"FieldValueTooLong", "metadata.annotations",
                                 absl::StrCat("Too long: may not be more than ", kTotalAnnotationSizeLimit, " bytes")}});
  }
  for (const char* field : {"finalizers", "ownerReferences"}) {
    auto it = meta.find(field);
    if (it != meta.end() && !it->is_null() && !it->is_array())
      return absl::InvalidArgumentError(absl::StrCat("metadata.", field, ": Invalid value: must be a list"));
  }
  return absl::OkStatus();
}

}  // namespace store_internal

using store_internal::Key;


// kube-apiserver's ResourceQuota admission for the pod count: a pod that would take the namespace's pods past a
// quota's hard limit is refused with the real wording. The embedded cluster counts the pods when asked (kube keeps
// the count in the quota's status.used, kept by the quota controller and by this admission).
absl::Status Store::AdmitPodQuotaLocked(const std::string& ns, const nlohmann::json& pod) {
  auto quotas = state_->FindLocked(kResourceQuotas);
  if (quotas == nullptr) return absl::OkStatus();
  const std::string prefix = Key(ns, "");
  std::optional<int64_t> used;
  for (auto it = quotas->objects.lower_bound(prefix); it != quotas->objects.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    const auto limit = PodLimit(it->second->Parse());
    if (!limit.has_value()) continue;
    if (!used.has_value()) {
      used = 0;
      auto pods = state_->FindLocked(kPods);
      for (auto p = pods->objects.lower_bound(prefix); p != pods->objects.end() && p->first.rfind(prefix, 0) == 0; ++p) {
        if (QuotaCountsPod(p->second->Parse())) ++*used;
      }
    }
    if (!QuotaCountsPod(pod) || *used + 1 <= limit->second) continue;
    const std::string& r = limit->first;
    return absl::PermissionDeniedError(absl::StrCat("exceeded quota: ", it->second->name, ", requested: ", r,
                                                    "=1, used: ", r, "=", *used, ", limited: ", r, "=",
                                                    limit->second));
  }
  return absl::OkStatus();
}

}  // namespace cloneset::devcluster
