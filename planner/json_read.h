// Lenient reads of values from nlohmann JSON for the in-place annotations and revision templates: a wrong type
// reads as empty (upstream's readers ignore what they cannot use; the writers are ours or upstream's).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace cloneset::planner::json_read {

inline bool ParseJsonObject(const std::string& text, nlohmann::json* out) {
  *out = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return out->is_object();
}

// The string members of an object.
inline std::map<std::string, std::string> StringMap(const nlohmann::json& object) {
  std::map<std::string, std::string> out;
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

// The string elements of an array.
inline std::vector<std::string> StringList(const nlohmann::json& array) {
  std::vector<std::string> out;
  if (!array.is_array()) return out;
  for (const nlohmann::json& item : array) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace cloneset::planner::json_read
