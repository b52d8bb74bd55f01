// Lenient reads of values from nlohmann JSON: a missing member or one of the wrong type reads as empty. For the
// documents whose readers ignore what they cannot use (Kruise's annotations, revision templates, the objects the
// embedded cluster's simulated nodes and the agent read); decoders that must name a bad field are in snapshot/.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace cloneset::base::json_read {

inline bool ParseJsonObject(std::string_view text, nlohmann::json* out) {
  *out = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return out->is_object();
}

// The member `key` of `object`; a null value when `object` is not an object or has no such member.
inline const nlohmann::json& Member(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json* const kNull = new nlohmann::json();
  if (!object.is_object()) return *kNull;
  const auto it = object.find(key);
  return it == object.end() ? *kNull : *it;
}

// The string member `key` of `object`; "" when absent or not a string.
inline std::string Str(const nlohmann::json& object, std::string_view key) {
  const nlohmann::json& value = Member(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// The boolean member `key` of `object`; false when absent or not a boolean.
inline bool Bool(const nlohmann::json& object, std::string_view key) {
  const nlohmann::json& value = Member(object, key);
  return value.is_boolean() && value.get<bool>();
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

}  // namespace cloneset::base::json_read
