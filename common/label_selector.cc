#include "common/label_selector.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace cloneset::common {
namespace {

// The metav1 operator names.
constexpr char kIn[] = "In";
constexpr char kNotIn[] = "NotIn";
constexpr char kExists[] = "Exists";
constexpr char kDoesNotExist[] = "DoesNotExist";

absl::Status Invalid(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(absl::string_view(field.data(), field.size()), ": ",
                                                 absl::string_view(why.data(), why.size())));
}

std::string Member(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  if (key.empty()) return std::string(parent);
  return absl::StrCat(absl::string_view(parent.data(), parent.size()), ".", absl::string_view(key.data(), key.size()));
}

absl::Status TypeError(std::string_view path, std::string_view expected, const nlohmann::json& got) {
  return Invalid(path, absl::StrCat("expected ", absl::string_view(expected.data(), expected.size()), ", got ",
                                    got.type_name()));
}

// A member that is present and not null (Kubernetes reads a null member as absent).
const nlohmann::json* Present(const nlohmann::json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// The checks FromProto and Add share, for one requirement at `where`.
absl::Status CheckRequirement(const LabelRequirement& r, std::string_view where) {
  if (r.key.empty()) return Invalid(Member(where, "key"), "must not be empty");
  switch (r.op) {
    case LabelOperator::kIn:
    case LabelOperator::kNotIn:
      if (r.values.empty()) return Invalid(Member(where, "values"), "must be non-empty when operator is In or NotIn");
      break;
    case LabelOperator::kExists:
    case LabelOperator::kDoesNotExist:
      if (!r.values.empty()) {
        return Invalid(Member(where, "values"), "must be empty when operator is Exists or DoesNotExist");
      }
      break;
    case LabelOperator::kEquals:
    case LabelOperator::kNotEquals:
      if (r.values.size() != 1) return Invalid(Member(where, "values"), "must hold exactly one value");
      break;
  }
  return absl::OkStatus();
}

bool ValidKey(absl::string_view key) {
  if (key.empty() || key.size() > 317) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

bool ValidValue(absl::string_view v) {
  return v.size() <= 63 && std::all_of(v.begin(), v.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

// One term of the string form.
absl::StatusOr<LabelRequirement> ParseTerm(absl::string_view term) {
  LabelRequirement r;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("unable to parse requirement \"", term, "\": ", why));
  };
  const size_t ne = term.find("!=");
  const size_t eq = term.find('=');
  const size_t paren = term.find('(');
  if (term[0] == '!') {
    r.op = LabelOperator::kDoesNotExist;
    r.key = std::string(absl::StripAsciiWhitespace(term.substr(1)));
  } else if (paren != absl::string_view::npos) {
    if (term.back() != ')') return bad("missing ')'");
    const absl::string_view head = absl::StripAsciiWhitespace(term.substr(0, paren));
    const std::vector<absl::string_view> words = absl::StrSplit(head, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() != 2) return bad("expected '<key> in (...)' or '<key> notin (...)'");
    r.key = std::string(words[0]);
    if (words[1] == "in") {
      r.op = LabelOperator::kIn;
    } else if (words[1] == "notin") {
      r.op = LabelOperator::kNotIn;
    } else {
      return bad(absl::StrCat("unknown operator \"", words[1], "\""));
    }
    const absl::string_view inner = term.substr(paren + 1, term.size() - paren - 2);
    for (absl::string_view v : absl::StrSplit(inner, ',')) r.values.emplace_back(absl::StripAsciiWhitespace(v));
  } else if (ne != absl::string_view::npos) {
    r.op = LabelOperator::kNotEquals;
    r.key = std::string(absl::StripAsciiWhitespace(term.substr(0, ne)));
    r.values.emplace_back(absl::StripAsciiWhitespace(term.substr(ne + 2)));
  } else if (eq != absl::string_view::npos) {
    r.op = LabelOperator::kEquals;
    r.key = std::string(absl::StripAsciiWhitespace(term.substr(0, eq)));
    absl::string_view v = term.substr(eq + 1);
    if (!v.empty() && v[0] == '=') v.remove_prefix(1);
    r.values.emplace_back(absl::StripAsciiWhitespace(v));
  } else {
    r.op = LabelOperator::kExists;
    r.key = std::string(term);
  }
  if (!ValidKey(r.key)) return bad(absl::StrCat("invalid label key \"", r.key, "\""));
  for (const std::string& v : r.values) {
    if (!ValidValue(v)) return bad(absl::StrCat("invalid label value \"", v, "\""));
  }
  return r;
}

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

std::vector<std::string> SplitTopLevel(absl::string_view text) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      cur += c;
      cur += text[++i];
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  parts.push_back(cur);
  return parts;
}


absl::StatusOr<LabelSelector> LabelSelector::FromProto(const pb::LabelSelector& selector, std::string_view field) {
  LabelSelector out;
  // Map iteration order is unspecified: take matchLabels sorted so everything derived from them is deterministic.
  std::vector<std::pair<std::string, std::string>> labels(selector.match_labels().begin(),
                                                          selector.match_labels().end());
  std::sort(labels.begin(), labels.end());
  for (auto& [key, value] : labels) {
    if (key.empty()) return Invalid(Member(field, "matchLabels"), "keys must not be empty");
    out.requirements_.push_back({std::move(key), LabelOperator::kEquals, {std::move(value)}});
  }
  for (int i = 0; i < selector.match_expressions_size(); ++i) {
    const pb::LabelSelectorRequirement& req = selector.match_expressions(i);
    const std::string where = absl::StrCat(Member(field, "matchExpressions"), "[", i, "]");
    if (req.key().empty()) return Invalid(Member(where, "key"), "must not be empty");
    LabelRequirement r{req.key(), LabelOperator::kIn, {req.values().begin(), req.values().end()}};
    if (req.operator_() == kIn) {
      r.op = LabelOperator::kIn;
    } else if (req.operator_() == kNotIn) {
      r.op = LabelOperator::kNotIn;
    } else if (req.operator_() == kExists) {
      r.op = LabelOperator::kExists;
    } else if (req.operator_() == kDoesNotExist) {
      r.op = LabelOperator::kDoesNotExist;
    } else {
      return Invalid(Member(where, "operator"),
                     absl::StrCat("\"", req.operator_(), "\" is not one of In, NotIn, Exists, DoesNotExist"));
    }
    if (absl::Status s = CheckRequirement(r, where); !s.ok()) return s;
    out.requirements_.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<LabelSelector> LabelSelector::FromJson(const nlohmann::json& selector, std::string_view field) {
  pb::LabelSelector message;
  if (absl::Status s = DecodeLabelSelector(selector, field, &message); !s.ok()) return s;
  return FromProto(message, field);
}

absl::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  LabelSelector out;
  if (absl::StripAsciiWhitespace(text).empty()) return out;
  for (const std::string& raw : SplitTopLevel(text)) {
    const absl::string_view term = absl::StripAsciiWhitespace(raw);
    if (term.empty()) return absl::InvalidArgumentError(absl::StrCat("empty term in label selector \"", text, "\""));
    absl::StatusOr<LabelRequirement> r = ParseTerm(term);
    if (!r.ok()) return r.status();
    out.requirements_.push_back(*std::move(r));
  }
  return out;
}

LabelSelector LabelSelector::ForLabels(const google::protobuf::Map<std::string, std::string>& labels) {
  LabelSelector out;
  for (const auto& [key, value] : labels) out.requirements_.push_back({key, LabelOperator::kEquals, {value}});
  std::sort(out.requirements_.begin(), out.requirements_.end(),
            [](const LabelRequirement& a, const LabelRequirement& b) { return a.key < b.key; });
  return out;
}

absl::Status LabelSelector::Add(LabelRequirement requirement, std::string_view field) {
  if (absl::Status s = CheckRequirement(requirement, field); !s.ok()) return s;
  requirements_.push_back(std::move(requirement));
  return absl::OkStatus();
}

bool LabelSelector::Matches(absl::FunctionRef<const std::string*(const std::string& key)> lookup) const {
  for (const LabelRequirement& r : requirements_) {
    const std::string* v = lookup(r.key);
    switch (r.op) {
      case LabelOperator::kEquals:
        if (v == nullptr || *v != r.values[0]) return false;
        break;
      case LabelOperator::kNotEquals:
        if (v != nullptr && *v == r.values[0]) return false;
        break;
      case LabelOperator::kIn:
        if (v == nullptr || !Contains(r.values, *v)) return false;
        break;
      case LabelOperator::kNotIn:
        if (v != nullptr && Contains(r.values, *v)) return false;
        break;
      case LabelOperator::kExists:
        if (v == nullptr) return false;
        break;
      case LabelOperator::kDoesNotExist:
        if (v != nullptr) return false;
        break;
    }
  }
  return true;
}

bool LabelSelector::Matches(const google::protobuf::Map<std::string, std::string>& labels) const {
  return Matches([&](const std::string& key) -> const std::string* {
    auto it = labels.find(key);
    return it == labels.end() ? nullptr : &it->second;
  });
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  return Matches([&](const std::string& key) -> const std::string* {
    auto it = labels.find(key);
    return it == labels.end() ? nullptr : &it->second;
  });
}

bool LabelSelector::Matches(const std::vector<std::pair<std::string, std::string>>& labels) const {
  return Matches([&](const std::string& key) -> const std::string* {
    for (const auto& [k, v] : labels) {
      if (k == key) return &v;
    }
    return nullptr;
  });
}

std::string LabelSelector::String() const {
  std::vector<const LabelRequirement*> sorted;
  sorted.reserve(requirements_.size());
  for (const LabelRequirement& r : requirements_) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const LabelRequirement* a, const LabelRequirement* b) { return a->key < b->key; });
  std::vector<std::string> parts;
  parts.reserve(sorted.size());
  for (const LabelRequirement* r : sorted) {
    std::vector<std::string> values = r->values;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    switch (r->op) {
      case LabelOperator::kEquals:
        parts.push_back(absl::StrCat(r->key, "=", r->values[0]));
        break;
      case LabelOperator::kNotEquals:
        parts.push_back(absl::StrCat(r->key, "!=", r->values[0]));
        break;
      case LabelOperator::kIn:
        parts.push_back(absl::StrCat(r->key, " in (", absl::StrJoin(values, ","), ")"));
        break;
      case LabelOperator::kNotIn:
        parts.push_back(absl::StrCat(r->key, " notin (", absl::StrJoin(values, ","), ")"));
        break;
      case LabelOperator::kExists:
        parts.push_back(r->key);
        break;
      case LabelOperator::kDoesNotExist:
        parts.push_back(absl::StrCat("!", r->key));
        break;
    }
  }
  return absl::StrJoin(parts, ",");
}

nlohmann::ordered_json LabelSelector::ToJson() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  std::map<std::string, std::string> match_labels;
  nlohmann::ordered_json expressions = nlohmann::ordered_json::array();
  for (const LabelRequirement& r : requirements_) {
    const char* op = nullptr;
    switch (r.op) {
      case LabelOperator::kEquals:
        match_labels[r.key] = r.values[0];
        continue;
      case LabelOperator::kIn:
        op = kIn;
        break;
      case LabelOperator::kNotIn:
      case LabelOperator::kNotEquals:
        op = kNotIn;
        break;
      case LabelOperator::kExists:
        op = kExists;
        break;
      case LabelOperator::kDoesNotExist:
        op = kDoesNotExist;
        break;
    }
    nlohmann::ordered_json e = {{"key", r.key}, {"operator", op}};
    if (!r.values.empty()) e["values"] = r.values;
    expressions.push_back(std::move(e));
  }
  if (!match_labels.empty()) out["matchLabels"] = match_labels;
  if (!expressions.empty()) out["matchExpressions"] = std::move(expressions);
  return out;
}

pb::LabelSelector LabelSelector::ToProto() const {
  pb::LabelSelector out;
  for (const nlohmann::ordered_json& e : ToJson().value("matchExpressions", nlohmann::ordered_json::array())) {
    pb::LabelSelectorRequirement* req = out.add_match_expressions();
    req->set_key(e["key"].get<std::string>());
    req->set_operator_(e["operator"].get<std::string>());
    for (const auto& v : e.value("values", nlohmann::ordered_json::array())) req->add_values(v.get<std::string>());
  }
  for (const LabelRequirement& r : requirements_) {
    if (r.op == LabelOperator::kEquals) (*out.mutable_match_labels())[r.key] = r.values[0];
  }
  return out;
}

absl::Status DecodeLabelSelector(const nlohmann::json& value, std::string_view path, pb::LabelSelector* out) {
  if (!value.is_object()) return TypeError(path, "object", value);
  if (const nlohmann::json* labels = Present(value, "matchLabels")) {
    const std::string p = Member(path, "matchLabels");
    if (!labels->is_object()) return TypeError(p, "object", *labels);
    for (const auto& [key, v] : labels->items()) {
      if (!v.is_string()) return TypeError(Member(p, key), "string", v);
      (*out->mutable_match_labels())[key] = v.get<std::string>();
    }
  }
  if (const nlohmann::json* expressions = Present(value, "matchExpressions")) {
    const std::string p = Member(path, "matchExpressions");
    if (!expressions->is_array()) return TypeError(p, "array", *expressions);
    for (size_t i = 0; i < expressions->size(); ++i) {
      const std::string ep = absl::StrCat(p, "[", i, "]");
      const nlohmann::json& e = (*expressions)[i];
      if (!e.is_object()) return TypeError(ep, "object", e);
      pb::LabelSelectorRequirement* req = out->add_match_expressions();
      for (const auto& [member, target] : {std::pair{"key", req->mutable_key()},
                                           std::pair{"operator", req->mutable_operator_()}}) {
        if (const nlohmann::json* f = Present(e, member)) {
          if (!f->is_string()) return TypeError(Member(ep, member), "string", *f);
          *target = f->get<std::string>();
        }
      }
      if (const nlohmann::json* values = Present(e, "values")) {
        const std::string vp = Member(ep, "values");
        if (!values->is_array()) return TypeError(vp, "array", *values);
        for (size_t j = 0; j < values->size(); ++j) {
          const nlohmann::json& v = (*values)[j];
          if (!v.is_string()) return TypeError(absl::StrCat(vp, "[", j, "]"), "string", v);
          req->add_values(v.get<std::string>());
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cloneset::common
