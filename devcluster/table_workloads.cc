#include "devcluster/table_workloads.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/label_selector.h"
#include "devcluster/object_meta.h"
#include "devcluster/table_cells.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

using namespace table_cells;  // NOLINT: Col, Str, Age, OrNone, the cells every printer is made of

const json& At(const json& o, const std::string& path) {
  static const json kNull;
  const json* v = LookupPath(o, path);
  return v ? *v : kNull;
}

int64_t Int(const json& o, const std::string& path, int64_t fallback = 0) {
  const json& v = At(o, path);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

// "k=v,k2=v2" of a string map (a nodeSelector).
std::string Pairs(const json& map) {
  std::vector<std::string> out;
  if (map.is_object())
    for (const auto& [k, v] : map.items()) out.push_back(absl::StrCat(k, "=", v.is_string() ? v.get<std::string>() : v.dump()));
  return absl::StrJoin(out, ",");
}

// A LabelSelector the way kube-apiserver's printers show it (metav1.FormatLabelSelector): the canonical string,
// "<error>" when it does not parse; "" (printed "<none>") when there is none.
std::string SelectorText(const json& sel) {
  if (!sel.is_object()) return "";
  absl::StatusOr<common::LabelSelector> selector = common::LabelSelector::FromJson(sel, "selector");
  return selector.ok() ? selector->String() : "<error>";
}

// Names and images of a pod template's containers, comma-joined.
std::pair<std::string, std::string> Containers(const json& o) {
  std::vector<std::string> names, images;
  const json& cs = At(o, ".spec.template.spec.containers");
  if (cs.is_array())
    for (const auto& c : cs) {
      if (!c.is_object()) continue;
      names.push_back(c.value("name", ""));
      images.push_back(c.value("image", ""));
    }
  return {absl::StrJoin(names, ","), absl::StrJoin(images, ",")};
}

std::vector<json> BindingCells(const json& o, base::Clock::TimePoint now) {
  std::vector<std::string> users, groups, accounts;
  const json& subjects = At(o, ".subjects");
  if (subjects.is_array())
    for (const auto& s : subjects) {
      if (!s.is_object()) continue;
      std::string kind = s.value("kind", ""), name = s.value("name", "");
      if (kind == "User") users.push_back(name);
      else if (kind == "Group") groups.push_back(name);
      else if (kind == "ServiceAccount") accounts.push_back(absl::StrCat(s.value("namespace", ""), "/", name));
    }
  return {Str(o, ".metadata.name"), absl::StrCat(Str(o, ".roleRef.kind"), "/", Str(o, ".roleRef.name")), Age(o, now),
          absl::StrJoin(users, ", "), absl::StrJoin(groups, ", "), absl::StrJoin(accounts, ", ")};
}

// "cpu: 40%/70%" per metric, like kubectl's HPA printer; <unknown> until a current value is reported.
std::string HpaTargets(const json& o) {
  const json& metrics = At(o, ".spec.metrics");
  if (!metrics.is_array() || metrics.empty()) return "<none>";
  const json& current = At(o, ".status.currentMetrics");
  std::vector<std::string> out;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const json& m = metrics[i];
    if (!m.is_object()) continue;
    std::string type = m.value("type", "");
    if (type != "Resource" && type != "ContainerResource") {
      out.push_back(absl::StrCat("<unknown>/<", type, ">"));
      continue;
    }
    const json& r = m.value(type == "Resource" ? "resource" : "containerResource", json::object());
    const json& target = r.is_object() ? r.value("target", json::object()) : json::object();
    std::string want = target.contains("averageUtilization") ? absl::StrCat(target["averageUtilization"].dump(), "%")
                       : target.contains("averageValue") ? Str(target, ".averageValue")
                                                         : Str(target, ".value");
    std::string have = "<unknown>";
    if (current.is_array() && i < current.size()) {
      const json& c = At(current[i], type == "Resource" ? ".resource.current" : ".containerResource.current");
      if (c.is_object() && c.contains("averageUtilization")) have = absl::StrCat(c["averageUtilization"].dump(), "%");
      else if (c.is_object() && c.contains("averageValue")) have = Str(c, ".averageValue");
    }
    out.push_back(absl::StrCat(r.is_object() ? r.value("name", "") : "", ": ", have, "/", want));
  }
  return absl::StrJoin(out, ", ");
}

}  // namespace

std::optional<json> WorkloadTableColumns(const std::string& id) {
  auto name = [] { return Col("Name", "string", 0, "name"); };
  std::vector<json> cols;
  if (id == "deployments.apps") {
    cols = {name(), Col("Ready", "string"), Col("Up-to-date", "integer"), Col("Available", "integer"),
            Col("Age", "string"), Col("Containers", "string", 1), Col("Images", "string", 1),
            Col("Selector", "string", 1)};
  } else if (id == "daemonsets.apps") {
    cols = {name(), Col("Desired", "integer"), Col("Current", "integer"), Col("Ready", "integer"),
            Col("Up-to-date", "integer"), Col("Available", "integer"), Col("Node Selector", "string"),
            Col("Age", "string"), Col("Containers", "string", 1), Col("Images", "string", 1),
            Col("Selector", "string", 1)};
  } else if (id == "serviceaccounts") {
    cols = {name(), Col("Secrets", "string"), Col("Age", "string")};
  } else if (id == "roles.rbac.authorization.k8s.io" || id == "clusterroles.rbac.authorization.k8s.io") {
    cols = {name(), Col("Created At", "date")};
  } else if (id == "rolebindings.rbac.authorization.k8s.io" || id == "clusterrolebindings.rbac.authorization.k8s.io") {
    cols = {name(), Col("Role", "string"), Col("Age", "string"), Col("Users", "string", 1),
            Col("Groups", "string", 1), Col("ServiceAccounts", "string", 1)};
  } else if (id == "poddisruptionbudgets.policy") {
    cols = {name(), Col("Min Available", "string"), Col("Max Unavailable", "string"),
            Col("Allowed Disruptions", "integer"), Col("Age", "string")};
  } else if (id == "networkpolicies.networking.k8s.io") {
    cols = {name(), Col("Pod-Selector", "string"), Col("Age", "string")};
  } else if (id == "horizontalpodautoscalers.autoscaling") {
    cols = {name(), Col("Reference", "string"), Col("Targets", "string"), Col("MinPods", "string"),
            Col("MaxPods", "string"), Col("Replicas", "string"), Col("Age", "string")};
  } else {
    return std::nullopt;
  }
  return json(cols);
}

std::optional<std::vector<json>> WorkloadTableCells(const std::string& id, const json& o, base::Clock::TimePoint now) {
  const std::string name = Str(o, ".metadata.name");
  if (id == "deployments.apps") {
    auto [containers, images] = Containers(o);
    return std::vector<json>{name,
                             absl::StrCat(Int(o, ".status.readyReplicas"), "/", Int(o, ".spec.replicas", 1)),
                             Int(o, ".status.updatedReplicas"), Int(o, ".status.availableReplicas"), Age(o, now),
                             containers, images, OrNone(SelectorText(At(o, ".spec.selector")))};
  }
  if (id == "daemonsets.apps") {
    auto [containers, images] = Containers(o);
    return std::vector<json>{name, Int(o, ".status.desiredNumberScheduled"), Int(o, ".status.currentNumberScheduled"),
                             Int(o, ".status.numberReady"), Int(o, ".status.updatedNumberScheduled"),
                             Int(o, ".status.numberAvailable"), OrNone(Pairs(At(o, ".spec.template.spec.nodeSelector"))),
                             Age(o, now), containers, images, OrNone(SelectorText(At(o, ".spec.selector")))};
  }
  if (id == "serviceaccounts") {
    const json& secrets = At(o, ".secrets");
    return std::vector<json>{name, std::to_string(secrets.is_array() ? secrets.size() : 0), Age(o, now)};
  }
  if (id == "roles.rbac.authorization.k8s.io" || id == "clusterroles.rbac.authorization.k8s.io")
    return std::vector<json>{name, Str(o, ".metadata.creationTimestamp")};
  if (id == "rolebindings.rbac.authorization.k8s.io" || id == "clusterrolebindings.rbac.authorization.k8s.io")
    return BindingCells(o, now);
  if (id == "poddisruptionbudgets.policy") {
    auto or_na = [](const std::string& s) { return s.empty() ? std::string("N/A") : s; };
    return std::vector<json>{name, or_na(Str(o, ".spec.minAvailable")), or_na(Str(o, ".spec.maxUnavailable")),
                             Int(o, ".status.disruptionsAllowed"), Age(o, now)};
  }
  if (id == "networkpolicies.networking.k8s.io")
    return std::vector<json>{name, OrNone(SelectorText(At(o, ".spec.podSelector"))), Age(o, now)};
  if (id == "horizontalpodautoscalers.autoscaling") {
    return std::vector<json>{name,
                             absl::StrCat(Str(o, ".spec.scaleTargetRef.kind"), "/", Str(o, ".spec.scaleTargetRef.name")),
                             HpaTargets(o), std::to_string(Int(o, ".spec.minReplicas", 1)),
                             std::to_string(Int(o, ".spec.maxReplicas")),
                             std::to_string(Int(o, ".status.currentReplicas")), Age(o, now)};
  }
  return std::nullopt;
}

}  // namespace cloneset::devcluster
