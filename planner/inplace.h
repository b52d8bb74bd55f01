// What can be updated in place (semantics §5.7) and the in-place update state annotation (§5.8).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "planner/context.h"

namespace cloneset::planner {

struct InPlaceUpdateSpec {
  std::string revision;
  std::map<std::string, std::string> container_images;                         // container -> image
  std::map<std::string, std::map<std::string, std::string>> container_ref_metadata;  // container -> key -> value
  std::map<std::string, std::string> set_labels;        // template metadata changes
  std::map<std::string, std::string> set_annotations;
  std::vector<std::string> remove_labels;
  std::vector<std::string> remove_annotations;
  bool update_env_from_metadata = false;
  int32_t grace_seconds = 0;
};

// nullopt when the change from `old_template_json` to `new_template_json` cannot be applied in place; the reason
// (for events and the simulate CLI) is written to `why_not` when given.
std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdateSpec(const PlanContext& ctx,
                                                            const std::string& old_template_json,
                                                            const std::string& new_template_json,
                                                            const std::string& target_revision,
                                                            std::string* why_not = nullptr);

}  // namespace cloneset::planner
