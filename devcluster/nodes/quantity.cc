#include "devcluster/nodes/quantity.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace cloneset::devcluster::nodes {
namespace {

// Returns the quantity's value scaled by `scale` (1 or 1000), rounded up.
absl::StatusOr<int64_t> Parse(const nlohmann::json& value, std::string_view field_view, long double scale) {
  const std::string field(field_view);
  if (value.is_number()) return static_cast<int64_t>(std::ceil(value.get<long double>() * scale));
  if (!value.is_string()) return absl::InvalidArgumentError(absl::StrCat(field, ": quantity must be a string"));
  const std::string s = value.get<std::string>();
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  std::string number = s.substr(0, i);
  std::string suffix = s.substr(i);
  if (number.empty() || number == "." || number == "+" || number == "-") {
    return absl::InvalidArgumentError(absl::StrCat(field, ": \"", s, "\" is not a quantity"));
  }
  long double v = std::strtold(number.c_str(), nullptr);
  long double mult = 1;
  if (suffix.empty()) {
  } else if (suffix == "n") {
    mult = 1e-9L;
  } else if (suffix == "u") {
    mult = 1e-6L;
  } else if (suffix == "m") {
    mult = 1e-3L;
  } else if (suffix == "k") {
    mult = 1e3L;
  } else if (suffix == "M") {
    mult = 1e6L;
  } else if (suffix == "G") {
    mult = 1e9L;
  } else if (suffix == "T") {
    mult = 1e12L;
  } else if (suffix == "P") {
    mult = 1e15L;
  } else if (suffix == "E") {
    mult = 1e18L;
  } else if (suffix == "Ki") {
    mult = 1024.0L;
  } else if (suffix == "Mi") {
    mult = 1048576.0L;
  } else if (suffix == "Gi") {
    mult = 1073741824.0L;
  } else if (suffix == "Ti") {
    mult = 1099511627776.0L;
  } else if (suffix == "Pi") {
    mult = 1125899906842624.0L;
  } else if (suffix == "Ei") {
    mult = 1152921504606846976.0L;
  } else if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    char* end = nullptr;
    long exp = std::strtol(suffix.c_str() + 1, &end, 10);
    if (*end != '\0' || exp > 18 || exp < -9) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": \"", s, "\" has a bad exponent"));
    }
    mult = std::pow(10.0L, static_cast<long double>(exp));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(field, ": \"", s, "\" has an unknown suffix \"", suffix, "\""));
  }
  long double scaled = v * mult * scale;
  if (scaled > 9.2e18L || scaled < -9.2e18L) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": \"", s, "\" is out of range"));
  }
  // Tolerate binary floating error ("0.1" * 1000 = 100.0000001) before rounding up.
  return static_cast<int64_t>(std::ceil(scaled - 1e-6L));
}

}  // namespace

absl::StatusOr<int64_t> ParseMilliQuantity(const nlohmann::json& value, std::string_view field) {
  return Parse(value, field, 1000);
}

absl::StatusOr<int64_t> ParseQuantity(const nlohmann::json& value, std::string_view field) {
  return Parse(value, field, 1);
}

}  // namespace cloneset::devcluster::nodes
