#include "devcluster/selectors.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cloneset::devcluster {
namespace {

// Splits on commas that are not inside parentheses.
std::vector<std::string> SplitTopLevel(absl::string_view text) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
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

bool ValidKey(absl::string_view key) {
  if (key.empty() || key.size() > 317) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '/';
  });
}

bool ValidValue(absl::string_view v) {
  return v.size() <= 63 && std::all_of(v.begin(), v.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                  c == '.';
         });
}

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

absl::StatusOr<Selector> Selector::ParseLabels(std::string_view text_in) {
  absl::string_view text(text_in.data(), text_in.size());
  std::vector<Requirement> reqs;
  if (absl::StripAsciiWhitespace(text).empty()) return Selector();
  for (const std::string& raw : SplitTopLevel(text)) {
    absl::string_view term = absl::StripAsciiWhitespace(raw);
    if (term.empty()) return absl::InvalidArgumentError(absl::StrCat("empty term in label selector \"", text, "\""));
    Requirement r;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("unable to parse requirement \"", term, "\": ", why));
    };
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    size_t paren = term.find('(');
    if (term[0] == '!') {
      r.op = Requirement::Op::kDoesNotExist;
      r.key = std::string(absl::StripAsciiWhitespace(term.substr(1)));
    } else if (paren != absl::string_view::npos) {
      if (term.back() != ')') return bad("missing ')'");
      absl::string_view head = absl::StripAsciiWhitespace(term.substr(0, paren));
      std::vector<absl::string_view> words = absl::StrSplit(head, absl::ByAnyChar(" \t"), absl::SkipEmpty());
      if (words.size() != 2) return bad("expected '<key> in (...)' or '<key> notin (...)'");
      r.key = std::string(words[0]);
      if (words[1] == "in") r.op = Requirement::Op::kIn;
      else if (words[1] == "notin") r.op = Requirement::Op::kNotIn;
      else return bad(absl::StrCat("unknown operator \"", words[1], "\""));
      absl::string_view inner = term.substr(paren + 1, term.size() - paren - 2);
      for (absl::string_view v : absl::StrSplit(inner, ',')) {
        v = absl::StripAsciiWhitespace(v);
        if (!ValidValue(v)) return bad(absl::StrCat("invalid value \"", v, "\""));
        r.values.emplace_back(v);
      }
    } else if (ne != absl::string_view::npos) {
      r.op = Requirement::Op::kNotEquals;
      r.key = std::string(absl::StripAsciiWhitespace(term.substr(0, ne)));
      r.values.emplace_back(absl::StripAsciiWhitespace(term.substr(ne + 2)));
    } else if (eq != absl::string_view::npos) {
      r.op = Requirement::Op::kEquals;
      r.key = std::string(absl::StripAsciiWhitespace(term.substr(0, eq)));
      absl::string_view v = term.substr(eq + 1);
      if (!v.empty() && v[0] == '=') v.remove_prefix(1);
      r.values.emplace_back(absl::StripAsciiWhitespace(v));
    } else {
      r.op = Requirement::Op::kExists;
      r.key = std::string(term.data(), term.size());
    }
    if (!ValidKey(r.key)) return bad(absl::StrCat("invalid label key \"", r.key, "\""));
    for (const auto& v : r.values)
      if (!ValidValue(v)) return bad(absl::StrCat("invalid label value \"", v, "\""));
    reqs.push_back(std::move(r));
  }
  return Selector(std::move(reqs));
}

absl::StatusOr<Selector> Selector::ParseFields(std::string_view text_in) {
  absl::string_view text(text_in.data(), text_in.size());
  std::vector<Requirement> reqs;
  if (absl::StripAsciiWhitespace(text).empty()) return Selector();
  for (const std::string& raw : SplitTopLevel(text)) {
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
  return Selector(std::move(reqs));
}

bool Selector::Matches(const KeyValues& values) const {
  for (const Requirement& r : reqs_) {
    const std::string* v = Lookup(values, r.key);
    switch (r.op) {
      case Requirement::Op::kEquals:
        if (!v || *v != r.values[0]) return false;
        break;
      case Requirement::Op::kNotEquals:
        if (v && *v == r.values[0]) return false;
        break;
      case Requirement::Op::kIn:
        if (!v || std::find(r.values.begin(), r.values.end(), *v) == r.values.end()) return false;
        break;
      case Requirement::Op::kNotIn:
        if (v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end()) return false;
        break;
      case Requirement::Op::kExists:
        if (!v) return false;
        break;
      case Requirement::Op::kDoesNotExist:
        if (v) return false;
        break;
    }
  }
  return true;
}

}  // namespace cloneset::devcluster
