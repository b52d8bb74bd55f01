#include "devcluster/resources.h"

#include <tuple>
#include <utility>

#include <algorithm>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace cloneset::devcluster {
namespace {

ResourceType Core(std::string plural, std::string singular, std::string kind, bool namespaced,
                  std::vector<std::string> short_names, bool status = false) {
  ResourceType t;
  t.version = "v1";
  t.resource = std::move(plural);
  t.singular = std::move(singular);
  t.kind = std::move(kind);
  t.namespaced = namespaced;
  t.short_names = std::move(short_names);
  t.has_status = status;
  return t;
}

ResourceType Grouped(std::string group, std::string plural, std::string singular, std::string kind, bool namespaced,
                     std::vector<std::string> short_names, bool status = false) {
  ResourceType t = Core(std::move(plural), std::move(singular), std::move(kind), namespaced, std::move(short_names),
                        status);
  t.group = std::move(group);
  return t;
}

}  // namespace

std::vector<ResourceType> BuiltinResourceTypes() {
  std::vector<ResourceType> types = {
      Core("namespaces", "namespace", "Namespace", false, {"ns"}, true),
      Core("pods", "pod", "Pod", true, {"po"}, true),
      Core("persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, {"pvc"}, true),
      Core("persistentvolumes", "persistentvolume", "PersistentVolume", false, {"pv"}, true),
      Core("configmaps", "configmap", "ConfigMap", true, {"cm"}),
      Core("secrets", "secret", "Secret", true, {}),
      Core("services", "service", "Service", true, {"svc"}, true),
      Core("events", "event", "Event", true, {"ev"}),
      Core("nodes", "node", "Node", false, {"no"}, true),
      Core("resourcequotas", "resourcequota", "ResourceQuota", true, {"quota"}, true),
  };
  types[1].categories = {"all"};
  types[6].categories = {"all"};
  ResourceType sc;
  sc.group = "storage.k8s.io";
  sc.version = "v1";
  sc.resource = "storageclasses";
  sc.singular = "storageclass";
  sc.kind = "StorageClass";
  sc.namespaced = false;
  sc.short_names = {"sc"};
  types.push_back(sc);
  ResourceType cr;
  cr.group = "apps";
  cr.version = "v1";
  cr.resource = "controllerrevisions";
  cr.singular = "controllerrevision";
  cr.kind = "ControllerRevision";
  types.push_back(cr);
  ResourceType lease;
  lease.group = "coordination.k8s.io";
  lease.version = "v1";
  lease.resource = "leases";
  lease.singular = "lease";
  lease.kind = "Lease";
  types.push_back(lease);
  // Workload, identity and policy kinds the Helm chart installs. They are stored and served as is:
  // no controller acts on them (a Deployment creates no pods here).
  ResourceType deploy = Grouped("apps", "deployments", "deployment", "Deployment", true, {"deploy"}, true);
  deploy.has_scale = true;
  deploy.categories = {"all"};
  types.push_back(deploy);
  ResourceType ds = Grouped("apps", "daemonsets", "daemonset", "DaemonSet", true, {"ds"}, true);
  ds.categories = {"all"};
  types.push_back(ds);
  types.push_back(Core("serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}));
  constexpr char kRbac[] = "rbac.authorization.k8s.io";
  types.push_back(Grouped(kRbac, "roles", "role", "Role", true, {}));
  types.push_back(Grouped(kRbac, "rolebindings", "rolebinding", "RoleBinding", true, {}));
  types.push_back(Grouped(kRbac, "clusterroles", "clusterrole", "ClusterRole", false, {}));
  types.push_back(Grouped(kRbac, "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false, {}));
  types.push_back(Grouped("policy", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true,
                          {"pdb"}, true));
  types.push_back(Grouped("networking.k8s.io", "networkpolicies", "networkpolicy", "NetworkPolicy", true,
                          {"netpol"}));
  ResourceType hpa = Grouped("autoscaling", "horizontalpodautoscalers", "horizontalpodautoscaler",
                             "HorizontalPodAutoscaler", true, {"hpa"}, true);
  hpa.version = "v2";
  hpa.categories = {"all"};
  types.push_back(hpa);
  ResourceType crd;
  crd.group = "apiextensions.k8s.io";
  crd.version = "v1";
  crd.resource = "customresourcedefinitions";
  crd.singular = "customresourcedefinition";
  crd.kind = "CustomResourceDefinition";
  crd.namespaced = false;
  crd.short_names = {"crd", "crds"};
  crd.has_status = true;
  types.push_back(crd);
  return types;
}

namespace {

absl::Status CrdField(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
}

absl::StatusOr<ServedVersion> ParseServedVersion(const nlohmann::json& v) {
  ServedVersion out;
  out.name = v["name"];
  if (v.contains("subresources") && v["subresources"].is_object()) {
    const auto& sub = v["subresources"];
    out.has_status = sub.contains("status");
    if (sub.contains("scale") && sub["scale"].is_object()) {
      out.has_scale = true;
      const auto& sc = sub["scale"];
      out.scale_spec_path = sc.value("specReplicasPath", ".spec.replicas");
      out.scale_status_path = sc.value("statusReplicasPath", ".status.replicas");
      out.scale_selector_path = sc.value("labelSelectorPath", "");
    }
  }
  if (const nlohmann::json* schema = v.contains("schema") && v["schema"].is_object() &&
                                             v["schema"].contains("openAPIV3Schema")
                                         ? &v["schema"]["openAPIV3Schema"]
                                         : nullptr) {
    if (!schema->is_object()) return CrdField("spec.versions[].schema.openAPIV3Schema", "Invalid value: must be an object");
    out.schema = CompileSchema(*schema);
  }
  if (v.contains("additionalPrinterColumns") && v["additionalPrinterColumns"].is_array()) {
    for (const auto& c : v["additionalPrinterColumns"]) {
      if (!c.is_object()) continue;
      PrinterColumn col;
      col.name = c.value("name", "");
      col.type = c.value("type", "string");
      col.json_path = c.value("jsonPath", "");
      col.priority = c.value("priority", 0);
      col.description = c.value("description", "");
      if (col.name.empty() || col.json_path.empty())
        return CrdField("spec.versions[].additionalPrinterColumns", "name and jsonPath are required");
      out.printer_columns.push_back(std::move(col));
    }
  }
  return out;
}

void UseVersion(const ServedVersion& v, ResourceType* t) {
  t->version = v.name;
  t->has_status = v.has_status;
  t->has_scale = v.has_scale;
  t->scale_spec_path = v.scale_spec_path;
  t->scale_status_path = v.scale_status_path;
  t->scale_selector_path = v.scale_selector_path;
  t->printer_columns = v.printer_columns;
  t->schema = v.schema;
}

// (kind, major, minor) of "v<major>[alpha|beta<minor>]"; kind 2 GA, 1 beta, 0 alpha, -1 not such a name.
std::tuple<int, int64_t, int64_t> VersionRank(std::string_view v) {
  auto number = [](std::string_view s, size_t* i) -> int64_t {
    int64_t n = -1;
    while (*i < s.size() && s[*i] >= '0' && s[*i] <= '9') n = (n < 0 ? 0 : n) * 10 + (s[(*i)++] - '0');
    return n;
  };
  if (v.size() < 2 || v[0] != 'v') return {-1, 0, 0};
  size_t i = 1;
  const int64_t major = number(v, &i);
  if (major < 0) return {-1, 0, 0};
  if (i == v.size()) return {2, major, 0};
  for (auto [word, kind] : {std::pair<std::string_view, int>{"alpha", 0}, {"beta", 1}}) {
    if (v.substr(i, word.size()) != word) continue;
    i += word.size();
    const int64_t minor = number(v, &i);
    if (minor < 0 || i != v.size()) return {-1, 0, 0};
    return {kind, major, minor};
  }
  return {-1, 0, 0};
}

}  // namespace

bool KubeAwareVersionBefore(std::string_view a, std::string_view b) {
  const auto ra = VersionRank(a), rb = VersionRank(b);
  if (std::get<0>(ra) < 0 || std::get<0>(rb) < 0) {
    if (std::get<0>(ra) != std::get<0>(rb)) return std::get<0>(rb) < 0;  // kube-like names first
    return a < b;
  }
  if (ra != rb) return ra > rb;
  return a < b;
}

std::optional<ResourceType> ResourceType::InVersion(std::string_view v) const {
  if (served.empty()) return v == version ? std::optional<ResourceType>(*this) : std::nullopt;
  for (const ServedVersion& s : served) {
    if (s.name != v) continue;
    ResourceType t = *this;
    UseVersion(s, &t);
    return t;
  }
  return std::nullopt;
}

absl::StatusOr<ResourceType> ResourceTypeFromCrd(const nlohmann::json& crd) {
  auto field = CrdField;
  if (!crd.is_object() || !crd.contains("spec") || !crd["spec"].is_object())
    return field("spec", "Required value");
  const auto& spec = crd["spec"];
  ResourceType t;
  t.custom = true;
  if (!spec.contains("group") || !spec["group"].is_string() || spec["group"].get<std::string>().empty())
    return field("spec.group", "Required value");
  t.group = spec["group"];
  const auto names = spec.value("names", nlohmann::json::object());
  if (!names.is_object() || !names.contains("plural") || !names["plural"].is_string())
    return field("spec.names.plural", "Required value");
  if (!names.contains("kind") || !names["kind"].is_string())
    return field("spec.names.kind", "Required value");
  t.resource = names["plural"];
  t.kind = names["kind"];
  t.singular = names.contains("singular") && names["singular"].is_string()
                   ? names["singular"].get<std::string>()
                   : absl::AsciiStrToLower(t.kind);
  if (names.contains("shortNames") && names["shortNames"].is_array())
    for (const auto& s : names["shortNames"])
      if (s.is_string()) t.short_names.push_back(s);
  if (names.contains("categories") && names["categories"].is_array())
    for (const auto& s : names["categories"])
      if (s.is_string()) t.categories.push_back(s);
  std::string scope = spec.value("scope", "Namespaced");
  if (scope != "Namespaced" && scope != "Cluster")
    return field("spec.scope", "Unsupported value: must be Namespaced or Cluster");
  t.namespaced = scope == "Namespaced";
  if (!spec.contains("versions") || !spec["versions"].is_array() || spec["versions"].empty())
    return field("spec.versions", "Required value");
  int storage = -1;
  for (const auto& v : spec["versions"]) {
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string())
      return field("spec.versions[].name", "Required value");
    if (!v.value("served", true)) continue;
    auto parsed = ParseServedVersion(v);
    if (!parsed.ok()) return parsed.status();
    if (storage < 0 || v.value("storage", false)) storage = static_cast<int>(t.served.size());
    t.served.push_back(*std::move(parsed));
  }
  if (storage < 0) return field("spec.versions", "Invalid value: no served version");
  UseVersion(t.served[storage], &t);
  if (const auto* conversion = spec.contains("conversion") && spec["conversion"].is_object() ? &spec["conversion"] : nullptr) {
    t.conversion_strategy = conversion->value("strategy", "None");
    if (t.conversion_strategy != "None" && t.conversion_strategy != "Webhook")
      return field("spec.conversion.strategy", "Unsupported value: must be None or Webhook");
  }
  return t;
}

std::string ValidateDns1123Label(const std::string& name) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  if (name.size() > 63) return "must be no more than 63 characters";
  if (!std::regex_match(name, re))
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
           "and must start and end with an alphanumeric character";
  return "";
}

std::string ValidateDns1123Subdomain(const std::string& name) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  if (name.size() > 253) return "must be no more than 253 characters";
  if (!std::regex_match(name, re))
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
           "or '.', and must start and end with an alphanumeric character";
  return "";
}

}  // namespace cloneset::devcluster
