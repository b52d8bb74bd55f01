#include "kube/object_patch.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cloneset::kube {

nlohmann::json ApplyMergePatch(const nlohmann::json& target, const nlohmann::json& patch) {
  nlohmann::json result = target;
  result.merge_patch(patch);
  return result;
}

absl::StatusOr<nlohmann::json> ApplyJsonPatch(const nlohmann::json& target, const nlohmann::json& patch) {
  if (!patch.is_array()) return absl::FailedPreconditionError("json patch: the patch must be a JSON array");
  for (const auto& op : patch) {
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("path") ||
        !op["path"].is_string())
      return absl::FailedPreconditionError(absl::StrCat("json patch: invalid operation ", op.dump()));
  }
  try {
    return target.patch(patch);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("json patch: ", e.what()));
  }
}

namespace {

constexpr char kPatchDirective[] = "$patch";
constexpr char kRetainKeys[] = "$retainKeys";
constexpr char kSetOrderPrefix[] = "$setElementOrder/";
constexpr char kDeletePrimitivePrefix[] = "$deleteFromPrimitiveList/";

// Merge key of a list field of built-in kinds; empty = replace the list.
std::string MergeKeyFor(const std::string& field, const nlohmann::json& sample) {
  static const std::map<std::string, std::string> kKeys = {
      {"containers", "name"},      {"initContainers", "name"}, {"ephemeralContainers", "name"},
      {"volumes", "name"},         {"env", "name"},            {"imagePullSecrets", "name"},
      {"volumeMounts", "mountPath"}, {"volumeDevices", "devicePath"}, {"conditions", "type"},
      {"ownerReferences", "uid"},  {"hostAliases", "ip"},      {"topologySpreadConstraints", "topologyKey"},
      {"containerStatuses", "name"}, {"initContainerStatuses", "name"}, {"readinessGates", "conditionType"},
      {"secrets", "name"},  // ServiceAccount.secrets
  };
  if (field == "ports") {
    for (const auto& item : sample)
      if (item.is_object() && item.contains("containerPort")) return "containerPort";
    return "port";
  }
  auto it = kKeys.find(field);
  return it == kKeys.end() ? "" : it->second;
}

bool IsSetList(const std::string& field) { return field == "finalizers"; }

// Drops directive keys from a value that is inserted as is.
nlohmann::json StripDirectives(const nlohmann::json& v) {
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, x] : v.items()) {
      if (absl::StartsWith(k, "$")) continue;
      out[k] = StripDirectives(x);
    }
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : v) {
      if (x.is_object() && x.value(kPatchDirective, "") == "delete") continue;
      out.push_back(StripDirectives(x));
    }
    return out;
  }
  return v;
}

// Where in which kind a merge happens, for the fields whose Go tag says patchStrategy:"replace".
struct Location {
  std::string_view kind;
  std::string path;  // dotted, list items take their list's path

  Location Child(const std::string& field) const { return {kind, path.empty() ? field : absl::StrCat(path, ".", field)}; }
};

// Object fields of k8s.io/api types tagged patchStrategy:"replace" (objects are otherwise merged).
bool ReplacedObject(const Location& at) {
  // policy/v1 PodDisruptionBudgetSpec.Selector: +patchStrategy=replace.
  return at.kind == "PodDisruptionBudget" && at.path == "spec.selector";
}

absl::StatusOr<nlohmann::json> MergeObject(const nlohmann::json& original, const nlohmann::json& patch,
                                           const Location& at);

absl::StatusOr<nlohmann::json> MergeList(const std::string& field, const nlohmann::json& original,
                                         const nlohmann::json& patch, const nlohmann::json* order,
                                         const Location& at) {
  nlohmann::json base = original.is_array() ? original : nlohmann::json::array();
  if (IsSetList(field)) {
    for (const auto& v : patch)
      if (std::find(base.begin(), base.end(), v) == base.end()) base.push_back(v);
    return base;
  }
  std::string key = MergeKeyFor(field, patch.empty() ? base : patch);
  if (key.empty()) {
    // A list without merge key is replaced, unless the patch asks for a whole-list replace anyway.
    return StripDirectives(patch);
  }
  for (const auto& item : patch) {
    if (!item.is_object()) return absl::FailedPreconditionError(absl::StrCat("strategic merge patch: ", field, ": list items must be objects"));
    std::string directive = item.value(kPatchDirective, "");
    if (directive == "replace") return StripDirectives(patch);
    if (!item.contains(key)) {
      if (directive.empty()) {
        base.push_back(StripDirectives(item));
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat("strategic merge patch: ", field, ": item without merge key \"", key, "\""));
    }
    auto pos = std::find_if(base.begin(), base.end(),
                            [&](const nlohmann::json& o) { return o.is_object() && o.contains(key) && o[key] == item[key]; });
    if (directive == "delete") {
      if (pos != base.end()) base.erase(pos);
      continue;
    }
    if (pos == base.end()) {
      base.push_back(StripDirectives(item));
    } else {
      auto merged = MergeObject(*pos, item, at);
      if (!merged.ok()) return merged.status();
      *pos = std::move(*merged);
    }
  }
  if (order && order->is_array()) {
    nlohmann::json sorted = nlohmann::json::array();
    std::vector<bool> used(base.size(), false);
    for (const auto& o : *order) {
      if (!o.is_object() || !o.contains(key)) continue;
      for (size_t i = 0; i < base.size(); ++i) {
        if (!used[i] && base[i].is_object() && base[i].contains(key) && base[i][key] == o[key]) {
          sorted.push_back(base[i]);
          used[i] = true;
          break;
        }
      }
    }
    for (size_t i = 0; i < base.size(); ++i)
      if (!used[i]) sorted.push_back(base[i]);
    base = std::move(sorted);
  }
  return base;
}

absl::StatusOr<nlohmann::json> MergeObject(const nlohmann::json& original, const nlohmann::json& patch,
                                           const Location& at) {
  if (!patch.is_object()) return absl::FailedPreconditionError("strategic merge patch: the patch must be an object");
  std::string directive;
  if (patch.contains(kPatchDirective)) {
    if (!patch[kPatchDirective].is_string())
      return absl::FailedPreconditionError("strategic merge patch: $patch must be a string");
    directive = patch[kPatchDirective];
    if (directive == "replace") return StripDirectives(patch);
    if (directive == "delete") return nlohmann::json();  // caller removes
    if (directive != "merge")
      return absl::FailedPreconditionError(absl::StrCat("strategic merge patch: unknown $patch value \"", directive, "\""));
  }
  nlohmann::json result = original.is_object() ? original : nlohmann::json::object();
  for (const auto& [k, v] : patch.items()) {
    if (k == kPatchDirective || k == kRetainKeys || absl::StartsWith(k, kSetOrderPrefix)) continue;
    if (absl::StartsWith(k, kDeletePrimitivePrefix)) {
      std::string field = k.substr(sizeof(kDeletePrimitivePrefix) - 1);
      if (!v.is_array()) return absl::FailedPreconditionError(absl::StrCat("strategic merge patch: ", k, " must be a list"));
      if (result.contains(field) && result[field].is_array()) {
        auto& list = result[field];
        const nlohmann::json& drop = v;  // structured bindings cannot be captured before C++20 in clang 14
        list.erase(std::remove_if(list.begin(), list.end(),
                                  [&](const nlohmann::json& x) { return std::find(drop.begin(), drop.end(), x) != drop.end(); }),
                   list.end());
      }
      continue;
    }
    if (absl::StartsWith(k, "$"))
      return absl::FailedPreconditionError(absl::StrCat("strategic merge patch: unknown directive \"", k, "\""));
    if (v.is_null()) {
      result.erase(k);
    } else if (v.is_object()) {
      const Location child = at.Child(k);  // built once: the replace check and the merge both need it
      if (ReplacedObject(child)) {
        result[k] = ApplyMergePatch(nlohmann::json::object(), StripDirectives(v));  // nulls mean absent
      } else {
        auto merged = MergeObject(result.contains(k) ? result[k] : nlohmann::json::object(), v, child);
        if (!merged.ok()) return merged.status();
        if (merged->is_null()) result.erase(k);
        else result[k] = std::move(*merged);
      }
    } else if (v.is_array()) {
      const nlohmann::json* order = nullptr;
      std::string order_key = std::string(kSetOrderPrefix) + k;
      if (patch.contains(order_key)) order = &patch[order_key];
      auto merged = MergeList(k, result.contains(k) ? result[k] : nlohmann::json::array(), v, order, at.Child(k));
      if (!merged.ok()) return merged.status();
      result[k] = std::move(*merged);
    } else {
      result[k] = v;
    }
  }
  // A $setElementOrder for a list the patch does not otherwise touch still reorders it.
  for (const auto& [k, v] : patch.items()) {
    if (!absl::StartsWith(k, kSetOrderPrefix)) continue;
    std::string field = k.substr(sizeof(kSetOrderPrefix) - 1);
    if (patch.contains(field) || !result.contains(field) || !result[field].is_array()) continue;
    auto merged = MergeList(field, result[field], nlohmann::json::array(), &v, at.Child(field));
    if (merged.ok()) result[field] = std::move(*merged);
  }
  if (patch.contains(kRetainKeys)) {
    const auto& keep = patch[kRetainKeys];
    if (!keep.is_array()) return absl::FailedPreconditionError("strategic merge patch: $retainKeys must be a list");
    for (auto it = result.begin(); it != result.end();) {
      if (std::find(keep.begin(), keep.end(), nlohmann::json(it.key())) == keep.end()) it = result.erase(it);
      else ++it;
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<nlohmann::json> ApplyStrategicMergePatch(const nlohmann::json& target, const nlohmann::json& patch,
                                                        std::string_view kind) {
  auto r = MergeObject(target, patch, Location{kind, ""});
  if (!r.ok()) return r.status();
  if (r->is_null()) return absl::FailedPreconditionError("strategic merge patch: cannot delete the whole object");
  return r;
}

}  // namespace cloneset::kube
