// Request body decoding: JSON and YAML (kubectl sends YAML for apply-patch+yaml; users may POST YAML).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::devcluster {

// FailedPrecondition (400) with the parser's position on malformed input.
absl::StatusOr<nlohmann::json> ParseJson(std::string_view text);
// First YAML document as JSON (plain scalars typed per the YAML core schema, quoted stay strings).
absl::StatusOr<nlohmann::json> ParseYaml(std::string_view text);

}  // namespace cloneset::devcluster
