// Image pre-download decisions (semantics §8).
#pragma once

#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// On when feature_gates.pre_download_image_for_in_place_update is set, or when the CloneSet asks for a parallelism:
// the v1alpha1 annotation apps.kruise.io/image-predownload-parallelism or, in v1beta1 (which stores it),
// inPlaceUpdateStrategy.imagePreDownloadParallelism (docs/compatibility.md).
bool PreDownloadEnabled(const PlanContext& ctx);

// Creates one ImagePullJob per changed container of an in-place rollout (or marks the revision ignored), and
// deletes the jobs in request.image_pull_jobs once the rollout is complete.
void PlanImagePreDownload(const PlanContext& ctx, PlanBuilder& plan);

}  // namespace cloneset::planner
