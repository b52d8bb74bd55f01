#include "devcluster/selectors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/label_selector.h"

namespace cloneset::devcluster {
namespace {

std::string Unescape(absl::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    out += v[i];
  }
  return out;
}

const std::string* Lookup(const KeyValues& values, const std::string& key) {
  for (const auto& [k, v] : values)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace

absl::StatusOr<FieldSelector> FieldSelector::ParseFields(std::string_view text_in) {
  absl::string_view text(text_in.data(), text_in.size());
  std::vector<Requirement> reqs;
  if (absl::StripAsciiWhitespace(text).empty()) return FieldSelector();
  for (const std::string& raw : common::SplitTopLevel(text)) {
    absl::string_view term = absl::StripAsciiWhitespace(raw);
    Requirement r;
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    if (ne != absl::string_view::npos && ne <= eq) {
      r.op = Requirement::Op::kNotEquals;
      r.key = std::string(term.substr(0, ne));
      r.values.push_back(Unescape(term.substr(ne + 2)));
    } else if (eq != absl::string_view::npos) {
      r.op = Requirement::Op::kEquals;
      r.key = std::string(term.substr(0, eq));
      absl::string_view v = term.substr(eq + 1);
      if (!v.empty() && v[0] == '=') v.remove_prefix(1);
      r.values.push_back(Unescape(v));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid field selector term \"", term, "\": expected key=value or key!=value"));
    }
    if (r.key.empty()) return absl::InvalidArgumentError(absl::StrCat("invalid field selector term \"", term, "\""));
    reqs.push_back(std::move(r));
  }
  return FieldSelector(std::move(reqs));
}

bool FieldSelector::Matches(const KeyValues& values) const {
  for (const Requirement& r : reqs_) {
    const std::string* v = Lookup(values, r.key);
    switch (r.op) {
      case Requirement::Op::kEquals:
        if (!v || *v != r.values[0]) return false;
        break;
      case Requirement::Op::kNotEquals:
        if (v && *v == r.values[0]) return false;
        break;
    }
  }
  return true;
}

}  // namespace cloneset::devcluster
