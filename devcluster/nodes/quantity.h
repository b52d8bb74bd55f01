// Kubernetes resource quantities ("250m", "1.5", "512Mi", "1e3") as integers for scheduling arithmetic.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::devcluster::nodes {

// Value * 1000, rounded up (cpu in millicores). Accepts a JSON string or number.
absl::StatusOr<int64_t> ParseMilliQuantity(const nlohmann::json& value, std::string_view field);
// Value rounded up (memory in bytes, pod counts).
absl::StatusOr<int64_t> ParseQuantity(const nlohmann::json& value, std::string_view field);

}  // namespace cloneset::devcluster::nodes
