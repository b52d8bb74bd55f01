// Builds the PlanContext of one reconcile (semantics §0.5 steps 4-7): the spec with every default resolved, the
// effective selector, the owned pods split into claimed / inactive / released, the owned PVCs, and the chosen
// revisions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "google/protobuf/map.h"
#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

inline constexpr char kApiV1alpha1[] = "apps.kruise.io/v1alpha1";
inline constexpr char kApiV1beta1[] = "apps.kruise.io/v1beta1";

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
// OK, or INVALID_ARGUMENT naming `field` for an unknown operator or values that do not fit it.
absl::Status CheckSelector(const pb::LabelSelector& selector, std::string_view field);
// Kubernetes labels.Selector.String(): requirements sorted by key, "k=v", "k in (a,b)", "k notin (a,b)", "k", "!k".
std::string SelectorString(const pb::LabelSelector& selector);
bool SelectorMatches(const pb::LabelSelector& selector, const LabelMap& labels);

// Splits request.pods (checking each: PodLooksValid, unique names) into ctx.pods with their facts,
// ctx.inactive_pods and ctx.released_pods, all in name order, in one pass. Needs ctx.clone_set, ctx.selector and
// the chosen revisions. INVALID_ARGUMENT for the first bad pod in request order.
absl::Status ClassifyPods(const pb::PlanRequest& request, PlanContext& ctx);

// The whole context. May append revision actions (CreateRevision/UpdateRevision) to `plan`.
absl::StatusOr<PlanContext> BuildContext(const pb::PlanRequest& request, PlanBuilder& plan);

}  // namespace cloneset::planner
