// Kubernetes timestamps, formatted and parsed in one place.
//
// metav1.Time serializes as RFC 3339 in UTC with whole seconds ("2026-11-26T07:40:00Z"); metav1.MicroTime (Event
// series, Lease acquireTime/renewTime) as RFC 3339 in UTC with six fractional digits ("2026-11-26T07:40:00.123456Z").
// A real API server and other clients may send either form, a fraction of any length, and an offset instead of "Z";
// ParseTime accepts all of them, so every reader of a timestamp calls it instead of its own absl::ParseTime.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cloneset::base {

// RFC 3339, UTC, whole seconds (the sub-second part is dropped, rounding toward the past), as metav1.Time
// serializes. Call it qualified (base::FormatTime): absl::FormatTime(absl::Time) is found by argument lookup too.
std::string FormatTime(absl::Time t);

// RFC 3339, UTC, exactly six fractional digits, as metav1.MicroTime serializes.
std::string FormatMicroTime(absl::Time t);

// RFC 3339 with "Z" or a numeric offset ("+02:00"), an optional fraction of any length, "T" or "t" between date and
// time. Anything else (an empty string, a missing zone, a date that does not exist, trailing text) is an
// InvalidArgument error whose message quotes the text.
absl::StatusOr<absl::Time> ParseTime(std::string_view text);

}  // namespace cloneset::base
