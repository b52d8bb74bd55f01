// The CloneSet spec as the planner reads it (semantics §1.1, §1.2, §0.4): the API version, the spec with every
// default resolved, the template's labels and the selector. Used by the context builder and by validation, which
// must not depend on each other.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/label_selector.h"
#include "google/protobuf/map.h"
#include "kruise/keys.h"
#include "planner/context.h"

namespace cloneset::planner {


using LabelMap = google::protobuf::Map<std::string, std::string>;

// Deeper JSON documents are rejected before any recursive JSON code (diff, canonicalisation) sees them.
inline constexpr int kMaxJsonDepth = 64;
absl::Status CheckJsonDepth(std::string_view text, std::string_view field);

// True for v1beta1; false for v1alpha1 or an empty apiVersion; INVALID_ARGUMENT ("apiVersion: ...") otherwise.
absl::StatusOr<bool> IsV1beta1(const pb::CloneSet& clone_set);

// §1.1/§1.2 defaults and the §0.4 resolvers applied to spec.replicas. Errors name the field.
absl::StatusOr<ResolvedSpec> ResolveSpec(const pb::CloneSet& clone_set, const pb::FeatureGates& gates);

// metadata.labels of a PodTemplateSpec JSON document; INVALID_ARGUMENT ("spec.template...") when malformed.
absl::StatusOr<LabelMap> TemplateLabels(std::string_view template_json);

bool SelectorIsEmpty(const pb::LabelSelector& selector);
// spec.selector, or (when it is missing or empty) matchLabels = the template's labels; `defaulted` tells which.
absl::StatusOr<pb::LabelSelector> EffectiveSelector(const pb::CloneSet& clone_set, bool* defaulted);
// Checking, matching and printing a selector: common::LabelSelector (common/label_selector.h).

}  // namespace cloneset::planner
