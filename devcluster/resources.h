// Resource types served by the embedded cluster: built-ins and the ones CRDs register.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// What a CRD says per served version: its schema, printer columns and subresources.
struct ServedVersion {
  std::string name;
  bool has_status = false;
  bool has_scale = false;
  std::string scale_spec_path = ".spec.replicas";
  std::string scale_status_path = ".status.replicas";
  std::string scale_selector_path;
  std::vector<PrinterColumn> printer_columns;
  std::shared_ptr<const StructuralSchema> schema;
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
  // CRDs: every served version, in the CRD's order. `version` and the fields above are the storage version's; objects
  // are stored in it and converted (versions.h) for a request in another one.
  std::vector<ServedVersion> served;
  // CRDs: spec.conversion.strategy, "None" (only apiVersion changes between versions) or "Webhook".
  std::string conversion_strategy = "None";

  // The type as served in `v`: that version's schema, printer columns and subresources, `version` = v. Nullopt when
  // not served. A built-in type is served in its own version only.
  std::optional<ResourceType> InVersion(std::string_view v) const;
  // Served in more than one version: requests may need a conversion.
  bool MultiVersion() const { return served.size() > 1; }

  // "pods" / "clonesets.apps.kruise.io"
  std::string Id() const { return group.empty() ? resource : resource + "." + group; }
  // "v1" / "apps.kruise.io/v1alpha1"
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  std::string GroupVersion() const { return ApiVersion(); }
};

// The built-in types (namespaces, pods, nodes, ... customresourcedefinitions).
std::vector<ResourceType> BuiltinResourceTypes();

// The type a CustomResourceDefinition object (apiextensions.k8s.io/v1) defines, in its storage version (the served
// version marked storage, or the first served one), with every served version in `served`. InvalidArgument names
// the bad field.
absl::StatusOr<ResourceType> ResourceTypeFromCrd(const nlohmann::json& crd);

// kube-apiserver's order of versions (discovery lists them so and prefers the first): GA before beta before alpha,
// then the higher major and minor number, then other names alphabetically. True when `a` comes before `b`.
bool KubeAwareVersionBefore(std::string_view a, std::string_view b);

// Validation of DNS-1123 names; returns an empty string when valid, else the reason.
std::string ValidateDns1123Subdomain(const std::string& name);
std::string ValidateDns1123Label(const std::string& name);

}  // namespace cloneset::devcluster
