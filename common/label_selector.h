// Kubernetes label selectors, the one implementation: metav1.LabelSelector (matchLabels and matchExpressions with
// In, NotIn, Exists, DoesNotExist) as the planner API's message and as JSON, and the string form kubectl -l and the
// ?labelSelector= query parameter take ("a=b,c!=d,e in (x,y),f notin (z),g,!h"): parse, validate, match, print.
//
// It lives in common/ rather than kruise/: a label selector is Kubernetes core (apimachinery's labels and metav1
// packages), not part of the Kruise API; CloneSets, ImagePullJobs, update priorities and the embedded cluster's
// list and watch filters all use it as Kubernetes defines it. tests/layout/label_selectors.py refuses selector
// operator literals ("NotIn", "notin", "DoesNotExist") in C++ sources anywhere else.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"

namespace cloneset::common {

namespace pb = ::cloneset::planner::v1;

enum class LabelOperator {
  kEquals,        // matchLabels entry, or "k=v" / "k==v"
  kNotEquals,     // "k!=v" (metav1: NotIn with one value)
  kIn,            // "k in (a,b)"
  kNotIn,         // "k notin (a,b)"
  kExists,        // "k"
  kDoesNotExist,  // "!k"
};

struct LabelRequirement {
  std::string key;
  LabelOperator op = LabelOperator::kEquals;
  std::vector<std::string> values;  // one for kEquals/kNotEquals, at least one for kIn/kNotIn, none otherwise
  bool operator==(const LabelRequirement&) const = default;
};

// A conjunction of requirements; the empty selector matches everything. Built only by the factories below, which
// validate, so every LabelSelector is well-formed.
class LabelSelector {
 public:
  LabelSelector() = default;

  // The message form. Checks what kube-apiserver's LabelSelector validation checks that matching depends on: keys
  // are not empty, the operator is one of the four, In/NotIn have values and Exists/DoesNotExist have none. Errors
  // are INVALID_ARGUMENT "<field>.matchExpressions[i].<member>: <why>".
  static absl::StatusOr<LabelSelector> FromProto(const pb::LabelSelector& selector, std::string_view field);
  // The JSON form: DecodeLabelSelector, then FromProto.
  static absl::StatusOr<LabelSelector> FromJson(const nlohmann::json& selector, std::string_view field);
  // The string form (kube-apiserver's labels.Parse): terms separated by commas, keys of letters, digits, '-', '_',
  // '.', '/', values of at most 63 letters, digits, '-', '_', '.'. Blank text is the empty selector.
  static absl::StatusOr<LabelSelector> Parse(std::string_view text);
  // matchLabels = `labels`.
  static LabelSelector ForLabels(const google::protobuf::Map<std::string, std::string>& labels);

  bool Matches(absl::FunctionRef<const std::string*(const std::string& key)> lookup) const;
  bool Matches(const google::protobuf::Map<std::string, std::string>& labels) const;
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool Matches(const std::vector<std::pair<std::string, std::string>>& labels) const;

  // labels.Selector.String(): requirements sorted by key (stably), each "k=v", "k!=v", "k in (a,b)", "k notin (a,b)",
  // "k" or "!k", set values sorted and deduplicated, joined with ","; "" for the empty selector.
  std::string String() const;
  // metav1.LabelSelector as JSON: "matchLabels" (sorted) when there are any, then "matchExpressions" in order
  // ("k!=v" as NotIn [v]) when there are any; "values" omitted when empty.
  nlohmann::ordered_json ToJson() const;
  pb::LabelSelector ToProto() const;

  // Adds a requirement (one built by the caller, e.g. the pre-download job's revision exclusion).
  absl::Status Add(LabelRequirement requirement, std::string_view field);

  bool empty() const { return requirements_.empty(); }
  const std::vector<LabelRequirement>& requirements() const { return requirements_; }
  bool operator==(const LabelSelector&) const = default;

 private:
  std::vector<LabelRequirement> requirements_;
};

// A metav1.LabelSelector JSON object into the message, checking JSON types only (a null member counts as absent);
// errors are INVALID_ARGUMENT "<path>.<member>: expected <type>, got <type>". Meaning is FromProto's to check, so a
// decoder can keep a selector that the planner's validation then reports.
absl::Status DecodeLabelSelector(const nlohmann::json& value, std::string_view path, pb::LabelSelector* out);

// The terms of a selector's string form: split on the commas that are not inside parentheses (`k in (a,b)`); a
// backslash escapes the next character. Label and field selectors (the embedded cluster's) split alike.
std::vector<std::string> SplitTopLevel(absl::string_view text);

}  // namespace cloneset::common
