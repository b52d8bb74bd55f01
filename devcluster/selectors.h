// Label and field selectors as kube-apiserver parses them from ?labelSelector= / ?fieldSelector=.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cloneset::devcluster {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct Requirement {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = Op::kEquals;
  std::vector<std::string> values;
};

// A conjunction of requirements; empty matches everything.
class Selector {
 public:
  Selector() = default;
  explicit Selector(std::vector<Requirement> requirements) : reqs_(std::move(requirements)) {}
  // Label syntax: "a=b,c==d,e!=f,g in (x,y),h notin (z),i,!j".
  static absl::StatusOr<Selector> ParseLabels(std::string_view text);
  // Field syntax: "metadata.name=x,involvedObject.kind==CloneSet,status.phase!=Running".
  static absl::StatusOr<Selector> ParseFields(std::string_view text);

  bool Matches(const KeyValues& values) const;
  bool empty() const { return reqs_.empty(); }
  const std::vector<Requirement>& requirements() const { return reqs_; }

 private:
  std::vector<Requirement> reqs_;
};

}  // namespace cloneset::devcluster
