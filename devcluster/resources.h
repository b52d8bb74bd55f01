// Resource types served by the embedded cluster: built-ins and the ones CRDs register.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "devcluster/schema.h"

namespace cloneset::devcluster {

struct PrinterColumn {
  std::string name;
  std::string type;       // string, integer, number, boolean, date
  std::string json_path;  // e.g. ".spec.replicas"
  int priority = 0;
  std::string description;
};

struct ResourceType {
  std::string group;  // "" for core
  std::string version;
  std::string resource;  // plural
  std::string singular;
  std::string kind;
  bool namespaced = true;
  bool has_status = false;  // status subresource
  bool has_scale = false;   // scale subresource
  std::string scale_spec_path = ".spec.replicas";
  std::string scale_status_path = ".status.replicas";
  std::string scale_selector_path;  // e.g. ".status.labelSelector"
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<PrinterColumn> printer_columns;  // CRDs only; built-ins are printed by table.cc
  bool custom = false;                         // defined by a CRD (no strategic merge patch)
  std::vector<std::string> verbs;              // discovery verbs; empty = the full set of a stored kind
  // CRDs: the served version's openAPIV3Schema, enforced on every write (schema.h); null = no schema.
  std::shared_ptr<const StructuralSchema> schema;

  // "pods" / "clonesets.apps.kruise.io"
  std::string Id() const { return group.empty() ? resource : resource + "." + group; }
  // "v1" / "apps.kruise.io/v1alpha1"
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  std::string GroupVersion() const { return ApiVersion(); }
};

// The built-in types (namespaces, pods, nodes, ... customresourcedefinitions).
std::vector<ResourceType> BuiltinResourceTypes();

// The types a CustomResourceDefinition object (apiextensions.k8s.io/v1) defines: the served
// version marked storage (or the first served one). InvalidArgument names the bad field.
absl::StatusOr<ResourceType> ResourceTypeFromCrd(const nlohmann::json& crd);

// Validation of DNS-1123 names; returns an empty string when valid, else the reason.
std::string ValidateDns1123Subdomain(const std::string& name);
std::string ValidateDns1123Label(const std::string& name);

}  // namespace cloneset::devcluster
