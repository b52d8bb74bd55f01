// Server-side printing for the kinds the Helm chart installs (deployments, daemonsets, service
// accounts, RBAC, PodDisruptionBudgets, NetworkPolicies, HorizontalPodAutoscalers), with the
// columns kubectl's built-in printers use. table.cc dispatches here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"

namespace cloneset::devcluster {

// Column definitions for resource id `id` ("deployments.apps", "roles.rbac.authorization.k8s.io"...);
// nullopt when the id is not one of these kinds.
std::optional<nlohmann::json> WorkloadTableColumns(const std::string& id);
// The cells of one row, matching WorkloadTableColumns(id); nullopt for other ids.
std::optional<std::vector<nlohmann::json>> WorkloadTableCells(const std::string& id, const nlohmann::json& object,
                                                              base::Clock::TimePoint now);

}  // namespace cloneset::devcluster
