// The parser of the CEL subset cel.h evaluates: an expression's text into a tree of Nodes. Apart from the evaluator
// (cel.cc), which walks the tree; the two share only the Node type.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::devcluster::cel {

enum class NodeKind { kLiteral, kIdent, kSelect, kIndex, kCall, kList, kNot, kNeg, kBinary, kTernary, kHas, kMacro };

struct Node {
  NodeKind kind;
  nlohmann::json literal;  // kLiteral
  std::string name;  // identifier, field, function, operator or macro name; macro variable in `var`
  std::string var;
  std::vector<std::unique_ptr<Node>> args;  // operands; for calls with a target, args[0] is the target
  bool has_target = false;
};

// Parses the whole of `text`; sets *uses_old_self when the expression reads oldSelf. InvalidArgument says where
// and why (also for constructs outside the subset, and for nesting deeper than 64).
absl::StatusOr<std::unique_ptr<Node>> Parse(const std::string& text, bool* uses_old_self);

}  // namespace cloneset::devcluster::cel
