// The labels, annotations, conditions and lifecycle states the planner reads and writes (semantics §1.4). Apart
// from the context so that the pod predicates and the pod facts, which the context is built from, need not include
// it (tests/layout/include_cycles.py keeps the planner's includes free of loops).
#pragma once

#include "planapi/in_place_batches.h"

namespace cloneset::planner {

// Well-known keys (semantics §1.4).
inline constexpr char kRevisionLabel[] = "controller-revision-hash";
inline constexpr char kPodTemplateHashLabel[] = "pod-template-hash";
inline constexpr char kInstanceIdLabel[] = "apps.kruise.io/cloneset-instance-id";
// Not upstream: seed 000 lists PVCs by this label, so every PVC (and pod) also carries it with the CloneSet name.
inline constexpr char kInstanceLabel[] = "app.kruise.io/instance";
inline constexpr char kLifecycleStateLabel[] = "lifecycle.apps.kruise.io/state";
inline constexpr char kLifecycleTimestampAnnotation[] = "lifecycle.apps.kruise.io/timestamp";
inline constexpr char kSpecifiedDeleteLabel[] = "apps.kruise.io/specified-delete";
using planapi::kInPlaceStateAnnotation;  // the in-place batch expansion writes it too
inline constexpr char kInPlaceGraceAnnotation[] = "apps.kruise.io/inplace-update-grace";
inline constexpr char kLegacyInPlaceStateAnnotation[] = "inplace-update-state";
inline constexpr char kLegacyInPlaceGraceAnnotation[] = "inplace-update-grace";
inline constexpr char kDeletionCostAnnotation[] = "controller.kubernetes.io/pod-deletion-cost";
inline constexpr char kInPlaceUpdateReadyCondition[] = "InPlaceUpdateReady";
inline constexpr char kKruisePodReadyCondition[] = "KruisePodReady";
// CloneSet condition (ours): pods whose in-place resize the kubelet holds back (semantics §5.9).
inline constexpr char kResizePendingCondition[] = "ResizePending";
inline constexpr char kRevisionHashLabel[] = "controller.kubernetes.io/hash";
inline constexpr char kVctHashAnnotation[] = "kruise.io/cloneset-volumeclaimtemplate-hash";
inline constexpr char kPreDownloadCreatedLabel[] = "apps.kruise.io/pre-predownload-created";
inline constexpr char kPreDownloadIgnoredLabel[] = "apps.kruise.io/image-predownload-ignored";

// Lifecycle states (label values).
inline constexpr char kStatePreparingNormal[] = "PreparingNormal";
inline constexpr char kStateNormal[] = "Normal";
inline constexpr char kStatePreparingUpdate[] = "PreparingUpdate";
inline constexpr char kStateUpdating[] = "Updating";
inline constexpr char kStateUpdated[] = "Updated";
inline constexpr char kStatePreparingDelete[] = "PreparingDelete";

}  // namespace cloneset::planner
