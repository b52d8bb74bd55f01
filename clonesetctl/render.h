// Output of `clonesetctl simulate`: a human table or a JSON document (stable field names, for tools).
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "clonesetctl/simulate.h"

namespace cloneset::clonesetctl {

std::string SimulationTable(const SimulateResult& result, const SimOptions& options);
nlohmann::json SimulationJson(const SimulateResult& result);

// "+12s", "+1m30s"; "+0s" for zero.
std::string FormatOffset(absl::Duration d);

}  // namespace cloneset::clonesetctl
