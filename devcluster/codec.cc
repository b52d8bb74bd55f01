#include "devcluster/codec.h"

#include <regex>
#include <string>

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"

namespace cloneset::devcluster {
namespace {

nlohmann::json Scalar(const YAML::Node& node) {
  const std::string& v = node.Scalar();
  if (node.Tag() == "!") return v;  // quoted: always a string
  static const std::regex kInt("[-+]?(0|[1-9][0-9]*)");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (v == "null" || v == "Null" || v == "NULL" || v == "~" || v.empty()) return nullptr;
  if (v == "true" || v == "True" || v == "TRUE") return true;
  if (v == "false" || v == "False" || v == "FALSE") return false;
  if (std::regex_match(v, kInt)) {
    try {
      return std::stoll(v);
    } catch (...) {
      return v;
    }
  }
  if (std::regex_match(v, kFloat)) {
    try {
      return std::stod(v);
    } catch (...) {
      return v;
    }
  }
  return v;
}

nlohmann::json Convert(const YAML::Node& node, int depth) {
  if (depth > 256) throw YAML::Exception(YAML::Mark::null_mark(), "document nested too deeply");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return Scalar(node);
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& x : node) a.push_back(Convert(x, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : node) o[kv.first.as<std::string>()] = Convert(kv.second, depth + 1);
      return o;
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJson(std::string_view text) {
  // Serializing is recursive: refuse absurd nesting up front instead of overflowing the stack later.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 256) return absl::FailedPreconditionError("invalid JSON body: nested deeper than 256 levels");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::FailedPreconditionError(absl::StrCat("invalid JSON body: ", e.what()));
  }
}

absl::StatusOr<nlohmann::json> ParseYaml(std::string_view text) {
  try {
    YAML::Node node = YAML::Load(std::string(text));
    return Convert(node, 0);
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(absl::StrCat("invalid YAML body: ", e.what()));
  }
}

}  // namespace cloneset::devcluster
