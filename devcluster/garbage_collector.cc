#include "devcluster/garbage_collector.h"

#include <algorithm>

namespace cloneset::devcluster {
namespace {

std::string StringField(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

bool Has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

const nlohmann::json* OwnerReferencesJson(const nlohmann::json& object) {
  if (!object.is_object()) return nullptr;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  auto refs = meta->find("ownerReferences");
  return refs == meta->end() ? nullptr : &*refs;
}

std::vector<OwnerReference> OwnerReferencesOf(const nlohmann::json& object) {
  std::vector<OwnerReference> out;
  const nlohmann::json* refs = OwnerReferencesJson(object);
  if (!refs || !refs->is_array()) return out;
  for (const auto& r : *refs) {
    if (!r.is_object()) continue;
    out.push_back({StringField(r, "apiVersion"), StringField(r, "kind"), StringField(r, "name"), StringField(r, "uid")});
  }
  return out;
}

OwnerStatus ClassifyOwner(const OwnerReference& ref, std::string_view dependent_ns, const OwnerLookup& lookup) {
  if (ref.api_version.empty() || ref.kind.empty() || ref.name.empty()) return OwnerStatus::kUnresolvable;
  std::optional<bool> namespaced = lookup.KindNamespaced(ref.api_version, ref.kind);
  if (!namespaced) return OwnerStatus::kUnresolvable;
  if (*namespaced && dependent_ns.empty()) return OwnerStatus::kUnresolvable;
  auto owner = lookup.Find(ref.api_version, ref.kind, *namespaced ? dependent_ns : "", ref.name);
  if (!owner || owner->uid != ref.uid) return OwnerStatus::kDangling;
  return owner->waiting_for_dependents ? OwnerStatus::kWaitingForDependents : OwnerStatus::kSolid;
}

GcDecision DecideCollection(const GcSubject& subject, const std::vector<OwnerReference>& refs,
                            const std::vector<OwnerStatus>& statuses) {
  GcDecision keep;
  if (refs.empty() || subject.deleting || statuses.size() != refs.size()) return keep;
  auto any = [&](OwnerStatus s) { return std::find(statuses.begin(), statuses.end(), s) != statuses.end(); };
  if (any(OwnerStatus::kUnresolvable)) return keep;
  if (any(OwnerStatus::kSolid)) {
    GcDecision strip{GcDecision::Action::kRemoveReferences, {}, Propagation::kBackground};
    for (size_t i = 0; i < refs.size(); ++i)
      if (statuses[i] != OwnerStatus::kSolid && !Has(strip.remove_uids, refs[i].uid))
        strip.remove_uids.push_back(refs[i].uid);
    return strip.remove_uids.empty() ? keep : strip;
  }
  GcDecision del{GcDecision::Action::kDelete, {}, Propagation::kBackground};
  if (any(OwnerStatus::kWaitingForDependents) && subject.has_dependents) del.propagation = Propagation::kForeground;
  else if (Has(subject.finalizers, "orphan")) del.propagation = Propagation::kOrphan;
  else if (Has(subject.finalizers, "foregroundDeletion")) del.propagation = Propagation::kForeground;
  return del;
}

}  // namespace cloneset::devcluster
