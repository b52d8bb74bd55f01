#include "planner/go_typed_json.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/go_json.h"
#include "planner/go_quantity.h"

namespace cloneset::planner {

using base::AppendGoNumber;
using base::AppendGoString;
using base::AppendGoJson;
namespace {

using Json = nlohmann::json;
using go_schema::Kind;
using go_schema::kFields;
using go_schema::kTypes;

// Where a value is, built only when an error names it.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  // a field or map key, unless is_index
  bool is_index = false;
  size_t index = 0;

  std::string Render() const {
    if (parent == nullptr) return std::string(key);
    if (is_index) return absl::StrCat(parent->Render(), "[", index, "]");
    return absl::StrCat(parent->Render(), ".", std::string(key));
  }
};

absl::Status DecodeError(const Path& path, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(path.Render(), ": ", std::string(why),
                   " (kruise-manager decodes the template into its Go types and cannot read this CloneSet)"));
}

std::string_view JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "bool";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    case Json::value_t::null: return "null";
    default: return "number";
  }
}

// The text Go's decoder sees for a number the API server wrote: int64 values exactly, others as float64.
std::string NumberLiteral(const Json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return absl::StrCat(v.get<int64_t>());
  if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    return absl::StrCat(v.get<uint64_t>());
  }
  std::string out;
  AppendGoNumber(out, v.get<double>());
  return out;
}

// strconv.ParseInt(literal, 10, 64) and the field's bit size.
std::optional<int64_t> ParseGoInt(std::string_view literal, int bits) {
  std::string_view digits = literal;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
  if (digits.empty()) return std::nullopt;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(std::string(literal), &v)) return std::nullopt;
  if (bits < 64) {
    const int64_t limit = int64_t{1} << (bits - 1);
    if (v < -limit || v >= limit) return std::nullopt;
  }
  return v;
}

// Go's strings.TrimSpace: Unicode White_Space at both ends.
size_t SpaceLength(std::string_view s, bool at_end) {
  static constexpr std::string_view kSpaces[] = {
      " ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003",
      "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f",
      "\u3000"};
  for (std::string_view sp : kSpaces) {
    if (at_end ? s.ends_with(sp) : s.starts_with(sp)) return sp.size();
  }
  return 0;
}
std::string_view TrimSpace(std::string_view s) {
  while (size_t n = SpaceLength(s, false)) s.remove_prefix(n);
  while (size_t n = SpaceLength(s, true)) s.remove_suffix(n);
  return s;
}

// time.Parse(time.RFC3339, s) then MarshalJSON: RFC 3339 in UTC, whole seconds; null for Go's zero time.
bool IsLeap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }
int DaysIn(int month, int64_t year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeap(year) ? 29 : kDays[month - 1];
}
// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}
void CivilFromDays(int64_t z, int64_t& y, int& m, int& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = yoe + era * 400 + (m <= 2);
}

std::optional<Json> GoTime(std::string_view s) {
  const auto num = [&](size_t at, size_t len, int lo, int hi) -> std::optional<int> {
    if (at + len > s.size()) return std::nullopt;
    int v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return std::nullopt;
    return v;
  };
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const auto year = num(0, 4, 0, 9999), month = num(5, 2, 1, 12), hour = num(11, 2, 0, 23),
             minute = num(14, 2, 0, 59), second = num(17, 2, 0, 59);
  if (!year || !month || !hour || !minute || !second) return std::nullopt;
  const auto day = num(8, 2, 1, DaysIn(*month, *year));
  if (!day) return std::nullopt;
  std::string_view rest = s.substr(19);
  bool nanos = false;
  if (rest.size() >= 2 && rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9') {
    size_t n = 1;
    for (; n < rest.size() && rest[n] >= '0' && rest[n] <= '9'; ++n) {
      if (n <= 9 && rest[n] != '0') nanos = true;  // digits past the ninth are dropped
    }
    rest.remove_prefix(n);
  }
  int64_t offset = 0;
  if (rest != "Z") {
    if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':') return std::nullopt;
    s = rest;
    const auto oh = num(1, 2, 0, 23), om = num(4, 2, 0, 59);
    if (!oh || !om) return std::nullopt;
    offset = (*oh * 60 + *om) * 60 * (rest[0] == '-' ? -1 : 1);
  }
  int64_t secs = DaysFromCivil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second - offset;
  int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
  int64_t sod = secs - days * 86400;
  int64_t y = 0;
  int m = 0, d = 0;
  CivilFromDays(days, y, m, d);
  if (!nanos && y == 1 && m == 1 && d == 1 && sod == 0) return Json(nullptr);  // time.Time{}: IsZero
  const std::string year_text = y < 0 ? absl::StrFormat("-%04d", -y) : absl::StrFormat("%04d", y);
  return Json(absl::StrFormat("%s-%02d-%02dT%02d:%02d:%02dZ", year_text, m, d, sod / 3600, sod / 60 % 60, sod % 60));
}

// Whether Go's encoder escapes a character of `s` (then the raw JSON text holds a backslash).
bool GoEscapes(std::string_view s) {
  std::string quoted;
  AppendGoString(quoted, s);
  return quoted.size() != s.size() + 2;
}

template <typename Out>
struct Decoded {
  Out value;
  bool empty = false;  // encoding/json's isEmptyValue, for omitempty
};

template <typename Out>
Decoded<Out> Zero(uint16_t type) {
  const go_schema::Type& t = kTypes[type];
  switch (t.kind) {
    case Kind::kString: return {Out(""), true};
    case Kind::kBool: return {Out(false), true};
    case Kind::kInt: return {Out(0), true};
    case Kind::kPointer:
    case Kind::kSlice:
    case Kind::kMap: return {Out(nullptr), true};
    case Kind::kQuantity: return {Out("0"), false};
    case Kind::kIntOrString: return {Out(0), false};
    case Kind::kTime:
    case Kind::kRawJson: return {Out(nullptr), false};
    case Kind::kStruct: {
      Out obj = Out::object();
      for (uint16_t i = 0; i < t.field_count; ++i) {
        const go_schema::Field& f = kFields[t.first_field + i];
        Decoded<Out> z = Zero<Out>(f.type);
        if (!(f.omitempty && z.empty)) obj[std::string(f.json)] = std::move(z.value);
      }
      return {std::move(obj), false};
    }
  }
  return {Out(nullptr), true};
}

template <typename Out>
absl::Status Decode(const Json& in, uint16_t type, const Path& path, Decoded<Out>& out) {
  const go_schema::Type& t = kTypes[type];
  if (in.is_null()) {
    // Go sets a nil pointer, slice or map; leaves any other zero value as it is, except that the JSON methods of
    // Quantity, IntOrString and Time see the null (and give their zero).
    out = Zero<Out>(type);
    return absl::OkStatus();
  }
  const auto want = [&](std::string_view go_type) {
    return DecodeError(path, absl::StrCat("cannot decode a JSON ", std::string(JsonTypeName(in)), " into Go ",
                                          std::string(go_type)));
  };
  switch (t.kind) {
    case Kind::kString:
      if (!in.is_string()) return want(t.go_name);
      out = {Out(in.get<std::string>()), in.get_ref<const std::string&>().empty()};
      return absl::OkStatus();
    case Kind::kBool:
      if (!in.is_boolean()) return want(t.go_name);
      out = {Out(in.get<bool>()), !in.get<bool>()};
      return absl::OkStatus();
    case Kind::kInt: {
      if (!in.is_number()) return want(t.go_name);
      const std::string literal = NumberLiteral(in);
      std::optional<int64_t> v = ParseGoInt(literal, t.bits);
      if (!v) return DecodeError(path, absl::StrCat("the number ", literal, " is not a Go ", std::string(t.go_name)));
      out = {Out(*v), *v == 0};
      return absl::OkStatus();
    }
    case Kind::kPointer: {
      if (absl::Status s = Decode<Out>(in, t.elem, path, out); !s.ok()) return s;
      out.empty = false;
      return absl::OkStatus();
    }
    case Kind::kSlice: {
      if (!in.is_array()) return want(t.go_name);
      Out arr = Out::array();
      for (size_t i = 0; i < in.size(); ++i) {
        Decoded<Out> e;
        if (absl::Status s = Decode<Out>(in[i], t.elem, Path{&path, "", true, i}, e); !s.ok()) return s;
        arr.push_back(std::move(e.value));
      }
      out = {std::move(arr), in.empty()};
      return absl::OkStatus();
    }
    case Kind::kMap: {
      if (!in.is_object()) return want(t.go_name);
      Out obj = Out::object();
      for (const auto& [k, v] : in.items()) {  // sorted, as json.Marshal writes a map
        Decoded<Out> e;
        if (absl::Status s = Decode<Out>(v, t.elem, Path{&path, k}, e); !s.ok()) return s;
        obj[k] = std::move(e.value);
      }
      out = {std::move(obj), in.empty()};
      return absl::OkStatus();
    }
    case Kind::kStruct: {
      if (!in.is_object()) return want(t.go_name);
      Out obj = Out::object();
      for (uint16_t i = 0; i < t.field_count; ++i) {
        const go_schema::Field& f = kFields[t.first_field + i];
        Decoded<Out> e;
        if (auto it = in.find(std::string(f.json)); it != in.end()) {
          if (absl::Status s = Decode<Out>(*it, f.type, Path{&path, f.json}, e); !s.ok()) return s;
        } else {
          e = Zero<Out>(f.type);
        }
        if (!(f.omitempty && e.empty)) obj[std::string(f.json)] = std::move(e.value);
      }
      out = {std::move(obj), false};
      return absl::OkStatus();
    }
    case Kind::kQuantity: {
      // UnmarshalJSON parses the raw text: a string's between its quotes (escapes included), a number's literal.
      std::string raw;
      if (in.is_string()) {
        raw = in.get<std::string>();
        if (GoEscapes(raw)) return DecodeError(path, absl::StrCat("\"", raw, "\" is not a quantity"));
      } else if (in.is_number()) {
        raw = NumberLiteral(in);
      } else {
        return DecodeError(path, absl::StrCat("a JSON ", std::string(JsonTypeName(in)), " is not a quantity"));
      }
      absl::StatusOr<std::string> q = CanonicalQuantity(TrimSpace(raw));
      if (!q.ok()) return DecodeError(path, absl::StrCat("\"", raw, "\": ", q.status().message()));
      out = {Out(*std::move(q)), false};
      return absl::OkStatus();
    }
    case Kind::kIntOrString: {
      if (in.is_string()) {
        out = {Out(in.get<std::string>()), false};
        return absl::OkStatus();
      }
      if (!in.is_number()) return want("int32 (of an IntOrString)");
      const std::string literal = NumberLiteral(in);
      std::optional<int64_t> v = ParseGoInt(literal, 32);
      if (!v) return DecodeError(path, absl::StrCat("the number ", literal, " is not an int32 (of an IntOrString)"));
      out = {Out(*v), false};
      return absl::OkStatus();
    }
    case Kind::kTime: {
      if (!in.is_string()) return want("string (of a metav1.Time)");
      std::optional<Json> time = GoTime(in.get_ref<const std::string&>());
      if (!time) return DecodeError(path, absl::StrCat("\"", in.get<std::string>(), "\" is not an RFC 3339 time"));
      out = {Out(*std::move(time)), false};
      return absl::OkStatus();
    }
    case Kind::kRawJson:
      out = {Out(in), false};
      return absl::OkStatus();
  }
  return DecodeError(path, "unknown type in the schema table");
}

void AppendTyped(std::string& out, const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::number_integer: absl::StrAppend(&out, j.get<int64_t>()); return;
    case nlohmann::ordered_json::value_t::number_unsigned: absl::StrAppend(&out, j.get<uint64_t>()); return;
    case nlohmann::ordered_json::value_t::array: {
      out += '[';
      for (size_t i = 0; i < j.size(); ++i) {
        if (i > 0) out += ',';
        AppendTyped(out, j[i]);
      }
      out += ']';
      return;
    }
    case nlohmann::ordered_json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        if (!first) out += ',';
        first = false;
        AppendGoString(out, k);
        out += ':';
        AppendTyped(out, v);
      }
      out += '}';
      return;
    }
    default: AppendGoJson(out, j); return;
  }
}

}  // namespace

absl::StatusOr<nlohmann::ordered_json> GoTypedRoundTrip(const nlohmann::json& value, uint16_t type,
                                                        std::string_view path) {
  Decoded<nlohmann::ordered_json> out;
  if (absl::Status s = Decode(value, type, Path{nullptr, path}, out); !s.ok()) return s;
  return std::move(out.value);
}

std::string GoTypedJson(const nlohmann::ordered_json& value) {
  std::string out;
  AppendTyped(out, value);
  return out;
}

absl::StatusOr<nlohmann::json> CanonicalPodTemplate(const nlohmann::json& tmpl) {
  Decoded<Json> out;
  if (absl::Status s = Decode(tmpl, go_schema::kPodTemplateSpec, Path{nullptr, "spec.template"}, out); !s.ok()) {
    return s;
  }
  return std::move(out.value);
}

}  // namespace cloneset::planner
