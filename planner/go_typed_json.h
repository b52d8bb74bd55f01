// JSON through Go's typed decode and encode, as kruise-manager does to a CloneSet's template before it hashes it:
// its informer decodes the CloneSet into k8s.io/api structs (case-sensitive field names, unknown fields dropped,
// no defaulting) and the revision code encodes it again (omitempty applied, other empty fields written:
// "resources":{} on every container, "creationTimestamp":null; quantities canonical; int-or-string ports as int
// or string). The structs come from planner/go_pod_template_schema.h, generated from the Go types themselves.
//
// The input is taken to be JSON as the API server serves it (Go's encoder wrote it): a number is read as the text
// Go writes for it, which is what the Go decoder sees. Where that decoder fails (a string where an int32 belongs,
// an int32 out of range, "abc" as a quantity, an object for a list...) kruise-manager cannot read the CloneSet at
// all, so no revision exists upstream; these functions then fail with INVALID_ARGUMENT naming the field, and the
// plan fails with it. Two inputs the API server never serves are read differently: a key given twice (nlohmann
// keeps the last; Go decodes both into the same value) and a time that only Go's slower, laxer RFC 3339 parser
// accepts ("2024-05-01T10:00:00,5Z", a one-digit hour).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "planner/go_pod_template_schema.h"

namespace cloneset::planner {

// `value` decoded into go_schema::kTypes[type] and encoded again by encoding/json: objects keep struct field
// order, map keys sorted, integers exact. `path` names `value` in errors ("spec.template").
absl::StatusOr<nlohmann::ordered_json> GoTypedRoundTrip(const nlohmann::json& value, uint16_t type,
                                                        std::string_view path);

// The same value as json.Marshal writes it: compact, Go's escapes, integers exact.
std::string GoTypedJson(const nlohmann::ordered_json& value);

// A CloneSet's spec.template after kruise-manager's decode and encode, then (as its revision code does) through a
// map[string]interface{}: keys sorted at every level; AppendGoJson then writes the numbers as float64.
absl::StatusOr<nlohmann::json> CanonicalPodTemplate(const nlohmann::json& tmpl);

}  // namespace cloneset::planner
