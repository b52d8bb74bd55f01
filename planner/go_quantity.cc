#include "planner/go_quantity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cloneset::planner {
namespace {

// A natural number of any size, base 10^9 limbs, least significant first: the slow path of ParseQuantity works
// on inf.Dec / big.Int values past int64.
class BigNat {
 public:
  static constexpr uint32_t kBase = 1000000000u;

  static BigNat FromDigits(std::string_view digits) {
    BigNat n;
    for (size_t end = digits.size(); end > 0;) {
      const size_t start = end >= 9 ? end - 9 : 0;
      uint32_t limb = 0;
      for (size_t i = start; i < end; ++i) limb = limb * 10 + static_cast<uint32_t>(digits[i] - '0');
      n.limbs_.push_back(limb);
      end = start;
    }
    n.Trim();
    return n;
  }
  static BigNat FromUint64(uint64_t v) {
    BigNat n;
    while (v > 0) {
      n.limbs_.push_back(static_cast<uint32_t>(v % kBase));
      v /= kBase;
    }
    return n;
  }

  bool IsZero() const { return limbs_.empty(); }

  void Mul(uint32_t m) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs_) {
      const uint64_t v = static_cast<uint64_t>(limb) * m + carry;
      limb = static_cast<uint32_t>(v % kBase);
      carry = v / kBase;
    }
    if (carry > 0) limbs_.push_back(static_cast<uint32_t>(carry));
    Trim();
  }
  void MulPow2(int64_t exponent) {
    for (; exponent >= 16; exponent -= 16) Mul(1u << 16);
    if (exponent > 0) Mul(1u << exponent);
  }
  // Divides in place; returns the remainder.
  uint32_t Div(uint32_t d) {
    uint64_t rem = 0;
    for (size_t i = limbs_.size(); i-- > 0;) {
      const uint64_t cur = rem * kBase + limbs_[i];
      limbs_[i] = static_cast<uint32_t>(cur / d);
      rem = cur % d;
    }
    Trim();
    return static_cast<uint32_t>(rem);
  }
  bool DivisibleBy(uint32_t d) const {
    uint64_t rem = 0;
    for (size_t i = limbs_.size(); i-- > 0;) rem = (rem * kBase + limbs_[i]) % d;
    return rem == 0;
  }
  void AddOne() {
    for (uint32_t& limb : limbs_) {
      if (++limb < kBase) return;
      limb = 0;
    }
    limbs_.push_back(1);
  }
  size_t DigitCount() const {
    if (limbs_.empty()) return 0;
    return (limbs_.size() - 1) * 9 + absl::StrCat(limbs_.back()).size();
  }
  int Compare(const BigNat& o) const {
    if (limbs_.size() != o.limbs_.size()) return limbs_.size() < o.limbs_.size() ? -1 : 1;
    for (size_t i = limbs_.size(); i-- > 0;) {
      if (limbs_[i] != o.limbs_[i]) return limbs_[i] < o.limbs_[i] ? -1 : 1;
    }
    return 0;
  }
  std::string ToString() const {
    if (limbs_.empty()) return "0";
    std::string out = absl::StrCat(limbs_.back());
    for (size_t i = limbs_.size() - 1; i-- > 0;) {
      const std::string part = absl::StrCat(limbs_[i]);
      out.append(9 - part.size(), '0');
      out += part;
    }
    return out;
  }

 private:
  void Trim() {
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  }
  std::vector<uint32_t> limbs_;
};

enum class Format { kDecimalExponent, kBinarySI, kDecimalSI };

struct Suffix {
  int32_t base;
  int32_t exponent;
  Format format;
};

// quantitySuffixer.interpret: the SI and binary tables, then "e<int>"/"E<int>" (the exponent truncated to int32).
std::optional<Suffix> InterpretSuffix(std::string_view s) {
  static constexpr struct {
    std::string_view name;
    Suffix suffix;
  } kTable[] = {
      {"", {10, 0, Format::kDecimalSI}},    {"n", {10, -9, Format::kDecimalSI}},  {"u", {10, -6, Format::kDecimalSI}},
      {"m", {10, -3, Format::kDecimalSI}},  {"k", {10, 3, Format::kDecimalSI}},   {"M", {10, 6, Format::kDecimalSI}},
      {"G", {10, 9, Format::kDecimalSI}},   {"T", {10, 12, Format::kDecimalSI}},  {"P", {10, 15, Format::kDecimalSI}},
      {"E", {10, 18, Format::kDecimalSI}},  {"Ki", {2, 10, Format::kBinarySI}},   {"Mi", {2, 20, Format::kBinarySI}},
      {"Gi", {2, 30, Format::kBinarySI}},   {"Ti", {2, 40, Format::kBinarySI}},   {"Pi", {2, 50, Format::kBinarySI}},
      {"Ei", {2, 60, Format::kBinarySI}},
  };
  for (const auto& e : kTable) {
    if (e.name == s) return e.suffix;
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    // strconv.ParseInt(s[1:], 10, 64): an optional sign, then decimal digits only.
    std::string_view digits = s.substr(1);
    if (digits[0] == '+' || digits[0] == '-') digits.remove_prefix(1);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    int64_t parsed = 0;
    if (!absl::SimpleAtoi(std::string(s.substr(1)), &parsed)) return std::nullopt;  // past int64
    return Suffix{10, static_cast<int32_t>(parsed), Format::kDecimalExponent};
  }
  return std::nullopt;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Split {
  bool positive = true;
  std::string_view value, num, denom, suffix;
};

// parseQuantityString: sign, numerator (leading zeros dropped), optional ".denominator", suffix.
std::optional<Split> SplitQuantity(std::string_view str) {
  Split out;
  size_t pos = 0;
  const size_t end = str.size();
  if (pos < end && (str[0] == '-' || str[0] == '+')) {
    out.positive = str[0] != '-';
    ++pos;
  }
  while (pos < end && str[pos] == '0') ++pos;
  if (pos >= end) {
    out.num = out.value = "0";
    return out;
  }
  size_t i = pos;
  while (i < end && IsDigit(str[i])) ++i;
  if (i >= end) {
    out.num = str.substr(pos);
    out.value = str;
    return out;
  }
  out.num = str.substr(pos, i - pos);
  pos = i;
  if (out.num.empty()) out.num = "0";
  if (pos < end && str[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && IsDigit(str[i])) ++i;
    out.denom = str.substr(pos, i - pos);
    if (i >= end) {
      out.value = str;
      return out;
    }
    pos = i;
  }
  out.value = str.substr(0, pos);
  const size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < end && kSuffixChars.find(str[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  if (pos < end) return std::nullopt;
  out.suffix = str.substr(suffix_start);
  return out;
}

// Go's int32 arithmetic, which wraps.
int32_t Wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

// A parsed quantity: (-1)^negative * mag * 10^exp10, or the input itself when ParseQuantity keeps it.
struct Parsed {
  std::string verbatim;
  bool negative = false;
  BigNat mag;
  int64_t exp10 = 0;
  Format format = Format::kDecimalSI;
};

const BigNat& MaxInt64() {
  static const BigNat* const kMax = new BigNat(BigNat::FromUint64(static_cast<uint64_t>(INT64_MAX)));
  return *kMax;
}

// Rounds mag * 10^exp10 up (away from zero) to a multiple of 10^-9.
void RoundUpToNano(Parsed& q) {
  if (q.exp10 >= -9 || q.mag.IsZero()) return;
  const int64_t drop = -9 - q.exp10;
  if (drop > static_cast<int64_t>(q.mag.DigitCount())) {
    q.mag = BigNat::FromUint64(1);
  } else {
    bool inexact = false;
    for (int64_t left = drop; left > 0; left -= 9) {
      uint32_t d = 1;
      for (int64_t k = 0; k < std::min<int64_t>(left, 9); ++k) d *= 10;
      inexact = q.mag.Div(d) != 0 || inexact;
    }
    if (inexact) q.mag.AddOne();
  }
  q.exp10 = -9;
}

absl::StatusOr<Parsed> ParseQuantity(std::string_view str) {
  static constexpr char kFormatWrong[] =
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  if (str.empty()) return absl::InvalidArgumentError(kFormatWrong);
  Parsed q;
  if (str == "0") {
    q.verbatim = "0";
    return q;
  }
  std::optional<Split> split = SplitQuantity(str);
  if (!split) return absl::InvalidArgumentError(kFormatWrong);
  std::optional<Suffix> suffix = InterpretSuffix(split->suffix);
  if (!suffix) return absl::InvalidArgumentError("unable to parse quantity's suffix");
  q.format = suffix->format;
  q.negative = !split->positive;
  const std::string_view num = split->num, denom = split->denom;

  // The int64 fast path, which keeps the input string when it is already canonical.
  int32_t precision = 0, scale = 0;
  int64_t mantissa = 1;
  if (q.format == Format::kBinarySI) {
    if (suffix->exponent >= 0 && denom.empty()) {
      mantissa = int64_t{1} << suffix->exponent;
      precision = 15 - static_cast<int32_t>(num.size()) - suffix->exponent * 3 / 10 - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = suffix->exponent;
    precision = Wrap32(18 - static_cast<int64_t>(num.size() + denom.size()));
  }
  if (precision >= 0) {
    scale = Wrap32(static_cast<int64_t>(scale) - static_cast<int64_t>(denom.size()));
    if (scale >= -9) {
      const std::string shifted = std::string(num) + std::string(denom);
      int64_t value = 0;
      if (!absl::SimpleAtoi(shifted, &value)) return absl::InvalidArgumentError("unable to parse numeric part of quantity");
      const bool fits = value == 0 || mantissa == 1 || value <= INT64_MAX / mantissa;
      if (fits) {
        bool keep;
        if (q.format == Format::kBinarySI) {
          keep = suffix->exponent % 10 == 0 && (value & 0x07) != 0;
        } else {
          keep = scale % 3 == 0 && !(shifted.size() >= 3 && shifted.ends_with("000")) && shifted[0] != '0';
        }
        if (keep) {
          q.verbatim = std::string(str);
          return q;
        }
        q.mag = BigNat::FromUint64(static_cast<uint64_t>(value) * static_cast<uint64_t>(mantissa));
        q.exp10 = scale;
        return q;
      }
    }
  }

  // The inf.Dec path: exact, then rounded up to 1n, BinarySI capped at int64.
  std::string_view digits = split->value;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
  const size_t dot = digits.find('.');
  const std::string all_digits =
      dot == std::string_view::npos ? std::string(digits)
                                     : std::string(digits.substr(0, dot)) + std::string(digits.substr(dot + 1));
  if (all_digits.empty()) return absl::InvalidArgumentError("unable to parse numeric part of quantity");
  q.mag = BigNat::FromDigits(all_digits);
  q.exp10 = -static_cast<int64_t>(dot == std::string_view::npos ? 0 : digits.size() - dot - 1);
  if (suffix->base == 10) {
    q.exp10 += suffix->exponent;
  } else {
    q.mag.MulPow2(suffix->exponent);
  }
  RoundUpToNano(q);
  if (q.format == Format::kBinarySI) {
    // Compare mag * 10^exp10 (exp10 <= 0 here) with 2^63-1 and with 1.
    BigNat scaled_max = MaxInt64();
    for (int64_t k = 0; k < -q.exp10; ++k) scaled_max.Mul(10);
    if (q.mag.Compare(scaled_max) > 0) {
      q.mag = MaxInt64();
      q.exp10 = 0;
    } else {
      BigNat one = BigNat::FromUint64(1);
      for (int64_t k = 0; k < -q.exp10; ++k) one.Mul(10);
      if (!q.mag.IsZero() && q.mag.Compare(one) < 0) q.format = Format::kDecimalSI;
    }
  }
  return q;
}

// CanonicalizeBytes and the suffix tables of quantitySuffixer.constructBytes.
std::string Canonical(const Parsed& q) {
  if (q.mag.IsZero()) return "0";
  const std::string_view sign = q.negative ? "-" : "";
  Format format = q.format;
  if (format == Format::kBinarySI) {
    // Written in powers of 1024 only when it is a whole number of at least 1024 in absolute value; otherwise
    // (|q| < 1024, or a fraction AsScale(0) would round) in DecimalSI.
    BigNat n = q.mag;
    bool integral = true;
    for (int64_t k = 0; k < -q.exp10 && integral; ++k) integral = n.Div(10) == 0;
    for (int64_t k = 0; k < q.exp10 && integral; ++k) n.Mul(10);
    if (integral && n.Compare(BigNat::FromUint64(1024)) >= 0) {
      int times = 0;
      while (n.DivisibleBy(1024)) {
        n.Div(1024);
        ++times;
      }
      static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      return std::string(sign) + n.ToString() + std::string(times < 7 ? kBinary[times] : "");
    }
    format = Format::kDecimalSI;
  }
  // Factors of ten move into the exponent, which is then lowered to a multiple of 3.
  BigNat m = q.mag;
  int64_t e = q.exp10;
  while (m.DivisibleBy(10)) {
    m.Div(10);
    ++e;
  }
  while (e % 3 != 0) {
    m.Mul(10);
    --e;
  }
  const int32_t exponent = Wrap32(e);
  std::string suffix;
  if (format == Format::kDecimalExponent) {
    if (exponent != 0) suffix = absl::StrCat("e", exponent);
  } else {
    // Only n..E exist: past them the suffix is missing from the table and upstream writes none.
    static constexpr std::string_view kDecimal[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    if (exponent >= -9 && exponent <= 18) suffix = std::string(kDecimal[(exponent + 9) / 3]);
  }
  return std::string(sign) + m.ToString() + suffix;
}

}  // namespace

absl::StatusOr<std::string> CanonicalQuantity(std::string_view raw) {
  absl::StatusOr<Parsed> parsed = ParseQuantity(raw);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->verbatim.empty()) return parsed->verbatim;
  return Canonical(*parsed);
}

}  // namespace cloneset::planner
