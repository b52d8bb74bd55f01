// Shapes of the objects the planner asks to create (semantics §1.5): pods and their PVCs.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/context.h"

namespace cloneset::planner {

struct NewPod {
  std::string pod_json;
  std::vector<std::string> pvc_jsons;  // only PVCs that do not exist yet
};

// Builds pod `<cs>-<id>` at `revision` from `template_json`, with its missing PVCs.
absl::StatusOr<NewPod> BuildPod(const PlanContext& ctx, const std::string& template_json,
                                const std::string& revision, const std::string& instance_id);

}  // namespace cloneset::planner
