// Structured logs: one JSON object per line on stderr.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cloneset::devcluster {

// {"ts":...,"level":...,"msg":...,<fields>}
void LogJson(const std::string& level, const std::string& msg, const nlohmann::json& fields = nlohmann::json::object());

}  // namespace cloneset::devcluster
