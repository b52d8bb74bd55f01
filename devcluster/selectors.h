// Field selectors as kube-apiserver parses them from ?fieldFieldSelector= (label selectors, ?labelFieldSelector=, are
// common::LabelFieldSelector: common/label_selector.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cloneset::devcluster {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct Requirement {
  enum class Op { kEquals, kNotEquals };
  std::string key;
  Op op = Op::kEquals;
  std::vector<std::string> values;
};

// A conjunction of requirements; empty matches everything.
class FieldSelector {
 public:
  FieldSelector() = default;
  explicit FieldSelector(std::vector<Requirement> requirements) : reqs_(std::move(requirements)) {}
  // Field syntax: "metadata.name=x,involvedObject.kind==CloneSet,status.phase!=Running".
  static absl::StatusOr<FieldSelector> ParseFields(std::string_view text);

  bool Matches(const KeyValues& values) const;
  bool empty() const { return reqs_.empty(); }
  const std::vector<Requirement>& requirements() const { return reqs_; }

 private:
  std::vector<Requirement> reqs_;
};

}  // namespace cloneset::devcluster
