// The int-or-percent resolvers (semantics §0.4). Unlike upstream, one parser is used everywhere: percentages may
// be fractional ("12.5%") and a bare number in a string ("5") is an error, so validation and the controller
// always agree (docs/compatibility.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "planner/context.h"

namespace cloneset::planner {

// R-partition: unset -> 0; int -> value; "p%" -> ceil(p * replicas / 100), and when replicas > 1 and the result
// equals replicas for a string other than exactly "100%", replicas - 1. Clamped to [0, replicas].
// `field` names the field in the error ("spec.updateStrategy.partition").
absl::StatusOr<int32_t> ResolvePartition(const pb::IntOrString& value, int32_t replicas, std::string_view field);

// maxUnavailable / maxSurge / scaleStrategy.maxUnavailable: int -> value; "p%" -> p * total / 100 rounded up or
// down. Unset -> `unset_value`. Negative values are errors.
absl::StatusOr<int32_t> ResolveScaled(const pb::IntOrString& value, int32_t total, bool round_up,
                                      int32_t unset_value, std::string_view field);

// True when the IntOrString has a value.
bool HasValue(const pb::IntOrString& value);

}  // namespace cloneset::planner
