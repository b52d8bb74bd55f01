#include "planner/int_or_percent.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cloneset::planner {
namespace {

// A non-negative decimal percentage held exactly as digits / 10^scale, so "12.5%" of 8 is exactly 1 and no
// binary floating-point artefact can move a result across an integer boundary.
struct Percent {
  __int128 digits = 0;
  __int128 scale = 1;
};

constexpr int kMaxIntegerDigits = 9;
constexpr int kMaxFractionDigits = 9;

absl::Status BadPercent(std::string_view field, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), ": \"", std::string(text), "\" is not a valid percentage (", std::string(why), "; want e.g. \"20%\" or \"12.5%\")"));
}

// Accepts exactly [0-9]+(\.[0-9]+)?% ; a bare number in a string is an error (upstream treats "5" as 5 % in the
// controller but rejects it in the webhook: we reject it everywhere).
absl::StatusOr<Percent> ParsePercent(std::string_view text, std::string_view field) {
  if (text.empty()) return BadPercent(field, text, "empty string");
  if (text.back() != '%') return BadPercent(field, text, "a string value must end in %");
  std::string_view number = text.substr(0, text.size() - 1);
  if (!number.empty() && number.front() == '-') return BadPercent(field, text, "must not be negative");
  Percent p;
  int integer_digits = 0;
  int fraction_digits = 0;
  bool seen_dot = false;
  for (char c : number) {
    if (c == '.') {
      if (seen_dot) return BadPercent(field, text, "more than one decimal point");
      seen_dot = true;
      continue;
    }
    if (c < '0' || c > '9') return BadPercent(field, text, "not a number");
    if (seen_dot) {
      if (++fraction_digits > kMaxFractionDigits) return BadPercent(field, text, "too many decimal places");
      p.scale *= 10;
    } else if (++integer_digits > kMaxIntegerDigits) {
      return BadPercent(field, text, "too large");
    }
    p.digits = p.digits * 10 + (c - '0');
  }
  if (integer_digits == 0) return BadPercent(field, text, "no digits before the decimal point");
  if (seen_dot && fraction_digits == 0) return BadPercent(field, text, "no digits after the decimal point");
  return p;
}

int32_t Saturate(__int128 v) {
  if (v > INT32_MAX) return INT32_MAX;
  if (v < 0) return 0;
  return static_cast<int32_t>(v);
}

// percent * total / 100, rounded up or down.
int32_t Scale(const Percent& p, int32_t total, bool round_up) {
  const __int128 numerator = p.digits * static_cast<__int128>(total);
  const __int128 denominator = p.scale * 100;
  __int128 quotient = numerator / denominator;
  if (round_up && numerator % denominator != 0) ++quotient;
  return Saturate(quotient);
}

}  // namespace

bool HasValue(const pb::IntOrString& value) { return value.value_case() != pb::IntOrString::VALUE_NOT_SET; }

absl::StatusOr<int32_t> ResolvePartition(const pb::IntOrString& value, int32_t replicas, std::string_view field) {
  if (replicas < 0) replicas = 0;
  int32_t result = 0;
  switch (value.value_case()) {
    case pb::IntOrString::VALUE_NOT_SET:
      return 0;
    case pb::IntOrString::kIntValue:
      if (value.int_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": ", value.int_value(), " must not be negative"));
      }
      result = value.int_value();
      break;
    case pb::IntOrString::kStrValue: {
      absl::StatusOr<Percent> p = ParsePercent(value.str_value(), field);
      if (!p.ok()) return p.status();
      result = Scale(*p, replicas, /*round_up=*/true);
      // "At least one pod gets updated" unless the user asked for exactly 100 %.
      if (replicas > 1 && result == replicas && value.str_value() != "100%") result = replicas - 1;
      break;
    }
  }
  return std::min(result, replicas);
}

absl::StatusOr<int32_t> ResolveScaled(const pb::IntOrString& value, int32_t total, bool round_up,
                                      int32_t unset_value, std::string_view field) {
  if (total < 0) total = 0;
  switch (value.value_case()) {
    case pb::IntOrString::VALUE_NOT_SET:
      return unset_value;
    case pb::IntOrString::kIntValue:
      if (value.int_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": ", value.int_value(), " must not be negative"));
      }
      return value.int_value();
    case pb::IntOrString::kStrValue: {
      absl::StatusOr<Percent> p = ParsePercent(value.str_value(), field);
      if (!p.ok()) return p.status();
      return Scale(*p, total, round_up);
    }
  }
  return unset_value;
}

}  // namespace cloneset::planner
