// A CEL (Common Expression Language) evaluator for the subset that CRD validation rules
// (x-kubernetes-validations) use in this project's charts. Debian ships no CEL library, so the embedded cluster
// parses and evaluates rules itself; a rule outside the subset fails to compile with a message naming what is not
// supported, and the CRD's rule is then reported as not evaluated (schema.h) instead of being guessed at.
//
// Supported (README, "kubectl on the embedded cluster", lists the same):
//  * literals: int, double, string ('...', "...", r'...', escapes \\ \' \" \n \r \t), true, false, null,
//    lists [a, b];
//  * variables self and oldSelf; type names int, uint, double, string, bool, list, map, null_type;
//  * operators ! - * / % + - < <= > >= == != in && || ?: with CEL's error-absorbing && and ||;
//  * field selection a.b, indexing a[i] / a['k'] (a missing field or key is an evaluation error);
//  * has(a.b); size(x) and x.size(); type(x); int(x), string(x), double(x);
//    x.matches(re) (RE2), x.startsWith(s), x.endsWith(s), x.contains(s);
//  * macros over lists (elements) and maps (keys): all, exists, exists_one, map(x, e), filter.
// Not supported: uint and bytes values, timestamps and durations, optional values, the Kubernetes library
// extensions (quantity, url, ip, lists/sets/regex libraries, format), map literals, messages and
// comprehension variables shadowing self.
// Every evaluation has a step budget, so a rule over a large list cannot run unbounded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::devcluster::cel {

struct Node;  // the parsed expression (cel_parse.h)

class Program {
 public:
  // Parses `expression`; InvalidArgument says where and why (also for constructs outside the subset).
  static absl::StatusOr<std::shared_ptr<const Program>> Compile(const std::string& expression);
  // Whether the expression reads oldSelf (a transition rule, evaluated on updates only).
  bool UsesOldSelf() const { return uses_old_self_; }
  // Evaluates with self (and oldSelf when not null) bound. The result of a validation rule must be a bool;
  // InvalidArgument for evaluation errors (no such key, type mismatch, budget exceeded).
  absl::StatusOr<bool> EvaluateRule(const nlohmann::json& self, const nlohmann::json* old_self) const;

  ~Program();

 private:
  Program() = default;
  std::unique_ptr<Node> root_;
  bool uses_old_self_ = false;
};

// The evaluation budget in steps (one per evaluated sub-expression); kube-apiserver's per-call cost limit is of
// the same order.
inline constexpr int64_t kStepBudget = 1'000'000;

}  // namespace cloneset::devcluster::cel
