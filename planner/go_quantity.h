// A Kubernetes resource quantity ("500m", "1Gi", 0.5) as kruise-manager's typed decode and encode leave it:
// k8s.io/apimachinery's resource.Quantity UnmarshalJSON (ParseQuantity of the raw JSON text, spaces trimmed) then
// MarshalJSON (the canonical form: "1000m" -> "1", "1024Mi" -> "1Gi", "0.5" -> "500m", or the input itself where
// ParseQuantity keeps it, e.g. "+1" and "1E3"), including its quirks: values below 1n round up to 1n, BinarySI
// values cap at 2^63-1, and a DecimalSI exponent past E (10^18) loses its suffix ("1000E" -> "1").
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace cloneset::planner {

// `raw` is what UnmarshalJSON sees: the JSON text between the quotes of a string, or a number's literal.
// INVALID_ARGUMENT (saying why, as ParseQuantity would) when it is not a quantity.
absl::StatusOr<std::string> CanonicalQuantity(std::string_view raw);

}  // namespace cloneset::planner
