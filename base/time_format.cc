#include "base/time_format.h"

#include "absl/strings/str_cat.h"

namespace cloneset::base {

std::string FormatTime(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()); }

std::string FormatMicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseTime(std::string_view text) {
  absl::Time t;
  std::string err;
  // absl::RFC3339_full is "%Y-%m-%d%ET%H:%M:%E*S%Ez": any fraction, "Z" or an offset.
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", std::string(text), "\" is not an RFC 3339 time: ", err));
  }
  return t;
}

}  // namespace cloneset::base
