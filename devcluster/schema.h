// Admission of custom resources against their CRD's structural schema (openAPIV3Schema), as kube-apiserver's
// apiextensions does: unknown fields are pruned (and reported, so fieldValidation=Strict can refuse them), schema
// defaults are applied, and the value is validated (type, enum, minimum/maximum, length, pattern, items,
// properties, required, int-or-string, list-type set/map uniqueness, anyOf/allOf/oneOf/not) and its
// x-kubernetes-validations CEL rules are evaluated (cel.h). Pure functions over JSON; the store calls them on
// every create and update of a custom resource.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "devcluster/cel.h"

namespace cloneset::devcluster {

// One field error as the API reports it in Status.details.causes.
struct FieldError {
  std::string reason;   // FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueTypeInvalid, ...
  std::string field;    // spec.replicas, spec.template.spec.containers[0].name
  std::string message;  // "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
};

// The payload key under which an InvalidArgument status carries its causes (a JSON array), so the API server
// answers with every cause and not just the first.
inline constexpr char kFieldCausesPayload[] = "type.googleapis.com/cloneset.devcluster.FieldCauses";
// InvalidArgument "field: message" (one error) or "[f1: m1, f2: m2]" (several), with the causes as payload.
absl::Status FieldErrorsStatus(const std::vector<FieldError>& errors);

// A CRD version's schema with its CEL rules compiled once.
struct StructuralSchema {
  nlohmann::json root;  // openAPIV3Schema
  std::map<std::string, std::shared_ptr<const cel::Program>> rules;  // by rule text
  // Rules outside the supported CEL subset: not evaluated (rule text -> why). The CRD write warns about them.
  std::map<std::string, std::string> not_evaluated;
};
// Compiles the rules of an openAPIV3Schema (never fails: a rule that does not compile is listed in not_evaluated).
std::shared_ptr<const StructuralSchema> CompileSchema(const nlohmann::json& open_api_v3_schema);

// Removes fields the schema does not declare (where it does not preserve unknown fields) and applies defaults.
// Returns the removed fields' paths ("spec.replicaz"). metadata at the root is left to the object-meta checks.
std::vector<std::string> PruneAndDefault(const StructuralSchema& schema, nlohmann::json& object);

// Validates `object` (with `old`, the stored object on an update, or null on a create). As kube-apiserver's
// validation ratcheting does, a value equal to the old one at the same place is not validated again, and
// transition rules (those reading oldSelf) run only where an old value exists. replicas_paths: the scale
// subresource's spec and status replica paths, whose values must not be negative.
std::vector<FieldError> ValidateAgainstSchema(const StructuralSchema& schema, const nlohmann::json& object,
                                              const nlohmann::json* old,
                                              const std::vector<std::string>& replicas_paths = {});

}  // namespace cloneset::devcluster
