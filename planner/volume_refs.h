// The volumes a pod spec's containers use (semantics §1.5, §2.2 rule 4): the names in the volumeMounts and
// volumeDevices of its containers and init containers, in document order, with the field each comes from.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace cloneset::planner {

struct VolumeRef {
  std::string field;  // e.g. spec.template.spec.containers[0].volumeMounts[1].name
  std::string name;
};

// `pod_spec` is a pod (template) spec, `spec_field` its path for the fields. Entries that are not objects with a
// string name are skipped (the template's own validation reports them).
std::vector<VolumeRef> VolumeReferences(const nlohmann::json& pod_spec, std::string_view spec_field);

}  // namespace cloneset::planner
