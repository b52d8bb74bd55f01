// YAML manifests to JSON with yaml-cpp. Plain scalars are typed the way Kubernetes' YAML decoder types them for
// the common cases (integers, floats, true/false, null); quoted scalars always stay strings.
#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"
#include "yaml-cpp/yaml.h"

namespace cloneset::snapshot {
namespace {

nlohmann::json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() != "?") return text;  // quoted ("!") or explicitly tagged: a string
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  int64_t i = 0;
  if (absl::SimpleAtoi(text, &i) && text.find_first_of("+") == std::string::npos) return i;
  double d = 0;
  if (text.find_first_of("0123456789") != std::string::npos &&
      text.find_first_not_of("0123456789.eE+-") == std::string::npos && absl::SimpleAtod(text, &d)) {
    return d;
  }
  return text;
}

absl::StatusOr<nlohmann::json> NodeToJson(const YAML::Node& node, int depth) {
  if (depth > 64) return absl::InvalidArgumentError("YAML nesting deeper than 64 levels");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nlohmann::json(nullptr);
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      nlohmann::json arr = nlohmann::json::array();
      for (const YAML::Node& item : node) {
        auto v = NodeToJson(item, depth + 1);
        if (!v.ok()) return v.status();
        arr.push_back(*std::move(v));
      }
      return arr;
    }
    case YAML::NodeType::Map: {
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return absl::InvalidArgumentError(internal::Cat("YAML line ", kv.first.Mark().line + 1, ": non-scalar key"));
        }
        auto v = NodeToJson(kv.second, depth + 1);
        if (!v.ok()) return v.status();
        obj[kv.first.Scalar()] = *std::move(v);
      }
      return obj;
    }
  }
  return nlohmann::json(nullptr);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> YamlDocumentsToJson(std::string_view yaml) {
  std::vector<std::string> out;
  try {
    for (const YAML::Node& doc : YAML::LoadAll(std::string(yaml))) {
      if (doc.IsNull()) continue;
      auto json = NodeToJson(doc, 0);
      if (!json.ok()) return json.status();
      out.push_back(json->dump());
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(internal::Cat("YAML line ", e.mark.line + 1, ": ", e.msg));
  }
  return out;
}

absl::StatusOr<std::string> YamlToJson(std::string_view yaml) {
  auto docs = YamlDocumentsToJson(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return absl::InvalidArgumentError(internal::Cat("expected one YAML document, got ", docs->size()));
  }
  return std::move(docs->front());
}

}  // namespace cloneset::snapshot
