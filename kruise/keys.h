// The names of the Kruise API as data: API versions, the well-known labels and annotations a CloneSet's pods,
// PVCs and revisions carry, the pod condition types, the lifecycle states (semantics §1.4). Every process reads
// them from here; tests/layout/kruise_literals.py refuses an "apps.kruise.io/..." string literal anywhere else.
#pragma once

namespace cloneset::kruise {

// ---- API versions ----
inline constexpr char kGroup[] = "apps.kruise.io";
inline constexpr char kV1alpha1[] = "apps.kruise.io/v1alpha1";
inline constexpr char kV1beta1[] = "apps.kruise.io/v1beta1";

// ---- Pod and PVC labels ----
inline constexpr char kRevisionLabel[] = "controller-revision-hash";
inline constexpr char kPodTemplateHashLabel[] = "pod-template-hash";
inline constexpr char kInstanceIdLabel[] = "apps.kruise.io/cloneset-instance-id";
// Not upstream: seed 000 lists PVCs by this label, so every PVC (and pod) also carries it with the CloneSet name.
inline constexpr char kInstanceLabel[] = "app.kruise.io/instance";
inline constexpr char kLifecycleStateLabel[] = "lifecycle.apps.kruise.io/state";
inline constexpr char kSpecifiedDeleteLabel[] = "apps.kruise.io/specified-delete";
inline constexpr char kPreDownloadCreatedLabel[] = "apps.kruise.io/pre-predownload-created";
inline constexpr char kPreDownloadIgnoredLabel[] = "apps.kruise.io/image-predownload-ignored";
// ControllerRevision label: the template hash.
inline constexpr char kRevisionHashLabel[] = "controller.kubernetes.io/hash";

// ---- Pod annotations ----
inline constexpr char kLifecycleTimestampAnnotation[] = "lifecycle.apps.kruise.io/timestamp";
// The in-place update's state and the spec waiting for its grace period (kruise/inplace_state.h); the legacy keys
// are read (and removed when the current key is written) as upstream does.
inline constexpr char kInPlaceStateAnnotation[] = "apps.kruise.io/inplace-update-state";
inline constexpr char kInPlaceGraceAnnotation[] = "apps.kruise.io/inplace-update-grace";
inline constexpr char kLegacyInPlaceStateAnnotation[] = "inplace-update-state";
inline constexpr char kLegacyInPlaceGraceAnnotation[] = "inplace-update-grace";
inline constexpr char kDeletionCostAnnotation[] = "controller.kubernetes.io/pod-deletion-cost";
// ControllerRevision annotation: the volumeClaimTemplates hash.
inline constexpr char kVctHashAnnotation[] = "kruise.io/cloneset-volumeclaimtemplate-hash";

// ---- CloneSet labels and annotations (v1alpha1; v1beta1 has spec fields for them) ----
inline constexpr char kExcludePreparingDeleteLabel[] = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";
inline constexpr char kPreDownloadParallelismAnnotation[] = "apps.kruise.io/image-predownload-parallelism";
inline constexpr char kPreDownloadTimeoutSecondsAnnotation[] = "apps.kruise.io/image-predownload-timeout-seconds";
inline constexpr char kPreDownloadMinUpdatedReadyPodsAnnotation[] =
    "apps.kruise.io/image-predownload-min-updated-ready-pods";

// ---- Condition types ----
// The pod readiness gate an in-place update holds False while it runs (semantics §5.9).
inline constexpr char kInPlaceUpdateReadyCondition[] = "InPlaceUpdateReady";
inline constexpr char kKruisePodReadyCondition[] = "KruisePodReady";
// CloneSet condition (ours): pods whose in-place resize the kubelet holds back (semantics §5.9).
inline constexpr char kResizePendingCondition[] = "ResizePending";
// CloneSet condition (ours): claims below their volumeClaimTemplate's storage that cannot be expanded (semantics
// §4.11).
inline constexpr char kVolumeExpansionHeldCondition[] = "VolumeExpansionHeld";

// ---- Lifecycle states (values of kLifecycleStateLabel) ----
inline constexpr char kStatePreparingNormal[] = "PreparingNormal";
inline constexpr char kStateNormal[] = "Normal";
inline constexpr char kStatePreparingUpdate[] = "PreparingUpdate";
inline constexpr char kStateUpdating[] = "Updating";
inline constexpr char kStateUpdated[] = "Updated";
inline constexpr char kStatePreparingDelete[] = "PreparingDelete";

}  // namespace cloneset::kruise
