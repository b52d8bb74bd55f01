// CloneSet apps.kruise.io/v1alpha1 <-> apps.kruise.io/v1beta1, as the CRD's conversion webhook answers it
// (docs/semantics.md §1.2). Pure functions over the objects' JSON: the planner's webhook and the embedded cluster
// both call ConvertCloneSet, so the two API servers convert alike.
//
// The mapping follows upstream's (OpenKruise 1.9): v1alpha1's updateStrategy.type is v1beta1's
// rollingUpdate.podUpdatePolicy under type RollingUpdate (OnDelete stays OnDelete), the other rolling fields move
// under rollingUpdate, disablePVCReuse is the negation of enablePVCReuse, the label
// apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true" is scaleStrategy.excludePreparingDelete and the
// three image pre-download annotations are rollingUpdate.inPlaceUpdateStrategy.imagePreDownload*. Unlike
// upstream's, the label and the annotations move (they are not left behind in v1beta1, where nothing reads them),
// and what one version cannot say is kept in an annotation of the other (stash.h), so that converting to the other
// version and back gives every object back exactly. Everything else, known or not, is copied as is.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"

namespace cloneset::conversion {


// On a v1alpha1 object: the v1beta1 fields and spellings it cannot hold. On a v1beta1 object: the v1alpha1 ones.
inline constexpr char kV1beta1StashAnnotation[] = "conversion.cloneset.apps.kruise.io/v1beta1";
inline constexpr char kV1alpha1StashAnnotation[] = "conversion.cloneset.apps.kruise.io/v1alpha1";

// The v1alpha1 metadata that v1beta1 keeps in its spec.

// `object` (a CloneSet of either version) in `to_api_version`; an object already in that version comes back as is.
// InvalidArgument names the field when the object is not a CloneSet of a version converted here or a field this
// conversion reads has the wrong JSON type ("spec.updateStrategy.type: must be a string, got number").
absl::StatusOr<nlohmann::json> ConvertCloneSet(const nlohmann::json& object, std::string_view to_api_version);

// The mapping alone, without the stash annotations (the round-trip tests compare against it).
absl::StatusOr<nlohmann::json> ConvertCloneSetPlain(const nlohmann::json& object, std::string_view to_api_version);

}  // namespace cloneset::conversion
