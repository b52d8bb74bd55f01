// The cells server-side printing is made of, shared by the built-in printers (table.cc) and the workload kinds'
// printers (table_workloads.cc): a column definition, a string cell read by path, an object's age the way
// kubectl prints it. Both printers include this header; neither includes the other's.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>


namespace cloneset::devcluster {

// apimachinery's duration.HumanDuration: "45s", "3m2s", "25m", "4h5m", "20h", "3d4h", "12d", "2y40d".
std::string HumanDuration(std::chrono::seconds d);

namespace table_cells {

// One columnDefinitions entry of a meta.k8s.io/v1 Table.
nlohmann::json Col(const std::string& name, const std::string& type, int priority = 0,
                   const std::string& format = "");
// The value at dotted `path` as a cell: a string as is, another JSON value dumped, "" when absent or null.
std::string Str(const nlohmann::json& o, const std::string& path);
// The time since the timestamp at `path` (HumanDuration), "<unknown>" when it does not parse.
std::string Age(const nlohmann::json& o, std::chrono::system_clock::time_point now,
                const std::string& path = ".metadata.creationTimestamp");
// "<none>" for an empty cell, as kubectl prints it.
std::string OrNone(const std::string& s);

}  // namespace table_cells
}  // namespace cloneset::devcluster
