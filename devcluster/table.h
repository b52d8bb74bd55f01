// Server-side printing (meta.k8s.io/v1 Table) as kubectl requests with Accept: ...;as=Table.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "devcluster/resources.h"

namespace cloneset::devcluster {

// Evaluates a CRD printer-column JSONPath (".spec.replicas", ".spec.template.spec.containers[*].image").
// Multiple results are joined with ','. Null when nothing matches.
nlohmann::json EvaluateJsonPath(const nlohmann::json& object, const std::string& path);

// Column definitions for a type (built-in printers or the CRD's additionalPrinterColumns).
nlohmann::json TableColumns(const ResourceType& type);
// One row: cells plus rows[].object = PartialObjectMetadata (or the full object when
// include_object), so kubectl's -L / --show-labels work.
nlohmann::json TableRow(const ResourceType& type, const nlohmann::json& object, base::Clock::TimePoint now,
                        bool include_object);
// A Table of objects; resource_version/continue go into the Table's metadata.
nlohmann::json BuildTable(const ResourceType& type, const std::vector<nlohmann::json>& objects,
                          base::Clock::TimePoint now, const std::string& resource_version,
                          const std::string& continue_token, bool include_object, bool include_columns = true);

}  // namespace cloneset::devcluster
