// JSON the way Go's encoding/json writes it, for what Go readers compare byte for byte or what must match
// upstream's bytes: revision data (planner/revision.h, keys sorted) and the in-place state and grace annotations
// (kruise/inplace_state.h, Go struct field order). Strings escape `<`, `>`, `&`, U+2028 and U+2029 as Go's
// json.Marshal does; numbers use Go's float64 rendering.
#pragma once

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace cloneset::base {

// A JSON string literal (quotes included). Runs once per byte of every annotation a plan writes, so it is a table
// scan, not a DOM.
void AppendGoString(std::string& out, std::string_view value);

// A JSON number as Go prints a float64: shortest round-trip digits, 'f' format for 1e-6 <= |v| < 1e21, else 'e'
// with a one-digit negative exponent written without its leading zero ("1e-7", but "1e+21").
void AppendGoNumber(std::string& out, double v);

// ["a","b"] from std::string or std::string_view elements.
template <typename List>
void AppendGoStringList(std::string& out, const List& list) {
  out.push_back('[');
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendGoString(out, list[i]);
  }
  out.push_back(']');
}

// A whole document: nlohmann::json (objects are std::maps, so keys come out sorted as Go sorts map keys) or
// nlohmann::ordered_json (keys in insertion order, as Go writes struct fields).
template <typename Json>
void AppendGoJson(std::string& out, const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::boolean: out += j.template get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer: AppendGoNumber(out, static_cast<double>(j.template get<int64_t>())); return;
    case Json::value_t::number_unsigned: AppendGoNumber(out, static_cast<double>(j.template get<uint64_t>())); return;
    case Json::value_t::number_float: AppendGoNumber(out, j.template get<double>()); return;
    case Json::value_t::string: AppendGoString(out, j.template get_ref<const std::string&>()); return;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : j) {
        if (!first) out += ',';
        first = false;
        AppendGoJson(out, e);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        if (!first) out += ',';
        first = false;
        AppendGoString(out, k);
        out += ':';
        AppendGoJson(out, v);
      }
      out += '}';
      return;
    }
    default: out += "null"; return;  // binary/discarded never come out of the parser
  }
}

}  // namespace cloneset::base
