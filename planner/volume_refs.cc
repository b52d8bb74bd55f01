#include "planner/volume_refs.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace cloneset::planner {

std::vector<VolumeRef> VolumeReferences(const nlohmann::json& pod_spec, std::string_view spec_field) {
  std::vector<VolumeRef> refs;
  if (!pod_spec.is_object()) return refs;
  for (const char* list : {"initContainers", "containers"}) {
    auto containers = pod_spec.find(list);
    if (containers == pod_spec.end() || !containers->is_array()) continue;
    for (size_t i = 0; i < containers->size(); ++i) {
      const nlohmann::json& c = (*containers)[i];
      if (!c.is_object()) continue;
      for (const char* kind : {"volumeMounts", "volumeDevices"}) {
        auto uses = c.find(kind);
        if (uses == c.end() || !uses->is_array()) continue;
        for (size_t j = 0; j < uses->size(); ++j) {
          const nlohmann::json& use = (*uses)[j];
          if (!use.is_object()) continue;
          auto name = use.find("name");
          if (name == use.end() || !name->is_string()) continue;
          VolumeRef ref;
          ref.field = absl::StrCat(std::string(spec_field), ".", list, "[", i, "].");
          absl::StrAppend(&ref.field, kind, "[", j, "].name");
          ref.name = name->get<std::string>();
          refs.push_back(std::move(ref));
        }
      }
    }
  }
  return refs;
}

}  // namespace cloneset::planner
