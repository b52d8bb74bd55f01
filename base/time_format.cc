#include "base/time_format.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"

namespace cloneset::base {

std::string FormatTime(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()); }

std::string FormatMicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

namespace {

// The form metav1.Time serializes ("2026-11-26T07:40:00Z", exactly), read directly: nearly every timestamp a pod
// carries is in it, the executor decodes ~6 per pod event, and absl::ParseTime's general parser costs ~0.15 us
// each. Anything else, or a field out of its range, is left to absl::ParseTime (nullopt), which also words the
// error, so the answers are absl's: TimeFormatTest.TheCommonFormReadsAsAbslReadsIt.
std::optional<absl::Time> ParseWholeSecondsUtc(std::string_view t) {
  if (t.size() != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != 'Z') {
    return std::nullopt;
  }
  bool digits = true;
  const auto number = [&](size_t at, size_t n) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') digits = false;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  const int year = number(0, 4), month = number(5, 2), day = number(8, 2);
  const int hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (!digits || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  const absl::CivilSecond civil(year, month, day, hour, minute, second);
  if (civil.day() != day) return std::nullopt;  // a day the month does not have (normalized into the next)
  return absl::FromCivil(civil, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<absl::Time> ParseTime(std::string_view text) {
  if (const std::optional<absl::Time> t = ParseWholeSecondsUtc(text)) return *t;
  absl::Time t;
  std::string err;
  // absl::RFC3339_full is "%Y-%m-%d%ET%H:%M:%E*S%Ez": any fraction, "Z" or an offset.
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", std::string(text), "\" is not an RFC 3339 time: ", err));
  }
  return t;
}

}  // namespace cloneset::base
