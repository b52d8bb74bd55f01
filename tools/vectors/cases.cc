// Size: one function per shared vector and the list of them all; the cases share the rollout fixtures above them.
#include "tools/vectors/cases.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "kruise/inplace_state.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planapi/pod_table.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/testing/fixtures.h"

namespace cloneset::vectors {
namespace {

namespace pb = ::cloneset::planner::v1;
namespace t = ::cloneset::planner::testing;
using t::CloneSetBuilder;
using t::Now;
using t::PodBuilder;
using t::PvcBuilder;
using t::TemplateJson;

// The ControllerRevision the planner computes for `cs`, stored as the executor stores it.
pb::ControllerRevision StoredRevision(const pb::CloneSet& cs, int64_t number) {
  pb::ComputeRevisionRequest request;
  *request.mutable_clone_set() = cs;
  absl::StatusOr<pb::ComputeRevisionResponse> computed = planner::ComputeRevision(request);
  pb::ControllerRevision revision;
  if (!computed.ok()) return revision;  // the case's request then shows the problem; check() reports it
  revision.mutable_metadata()->set_name(computed->name());
  revision.mutable_metadata()->set_namespace_(t::kNamespace);
  revision.mutable_metadata()->set_uid(absl::StrCat("rev-uid-", number));
  revision.mutable_metadata()->set_resource_version(absl::StrCat(number));
  (*revision.mutable_metadata()->mutable_labels())["app"] = "demo";
  (*revision.mutable_metadata()->mutable_labels())[planner::kRevisionHashLabel] = computed->hash();
  (*revision.mutable_metadata()->mutable_annotations())[planner::kVctHashAnnotation] =
      computed->volume_claim_templates_hash();
  pb::OwnerReference* owner = revision.mutable_metadata()->add_owner_references();
  owner->set_api_version("apps.kruise.io/v1alpha1");
  owner->set_kind("CloneSet");
  owner->set_name(t::kCloneSetName);
  owner->set_uid(t::kCloneSetUid);
  owner->set_controller(true);
  owner->set_block_owner_deletion(true);
  *revision.mutable_metadata()->mutable_creation_timestamp() =
      t::Ts(Now() - absl::Hours(24) + absl::Seconds(number));
  revision.set_revision(number);
  revision.set_data_json(computed->data_json());
  return revision;
}

// A ready, running pod at `revision` (InPlaceUpdateReady gate True), created an hour ago.
PodBuilder RunningPod(const std::string& id, const std::string& revision, const std::string& image = "nginx:1.25") {
  const std::string name = absl::StrCat(t::kCloneSetName, "-", id);
  PodBuilder pod(name);
  pod.Revision(revision)
      .Label(planner::kPodTemplateHashLabel, std::string(planner::ShortHash(revision)))
      .Label(planner::kInstanceLabel, t::kCloneSetName)
      .Lifecycle(planner::kStateNormal)
      .Node("node-1")
      .Container("main", image)
      .Ready(Now() - absl::Hours(1))
      .ReadinessGate(planner::kInPlaceUpdateReadyCondition)
      .Condition(planner::kInPlaceUpdateReadyCondition, "True", Now() - absl::Hours(1))
      .ResourceVersion("100");
  return pod;
}

// A CloneSet in the middle of an update from nginx:1.25 (revision 1) to nginx:1.26 (revision 2), with `replicas`
// ready pods at revision 1; `edit` shapes the new spec (strategy, partition, ...).
struct Rollout {
  pb::PlanRequest request;
  std::string old_revision;
  std::string new_revision;
};

template <typename Edit>
Rollout MakeRollout(int replicas, Edit edit, const std::string& new_template = TemplateJson("nginx:1.26")) {
  CloneSetBuilder old_cs = CloneSetBuilder().Replicas(replicas);
  CloneSetBuilder new_cs = CloneSetBuilder().Replicas(replicas).Template(new_template);
  edit(old_cs);
  edit(new_cs);
  Rollout r;
  const pb::ControllerRevision r1 = StoredRevision(old_cs, 1);
  const pb::ControllerRevision r2 = StoredRevision(new_cs, 2);
  r.old_revision = r1.metadata().name();
  r.new_revision = r2.metadata().name();
  std::vector<pb::Pod> pods;
  for (int i = 0; i < replicas; ++i) pods.push_back(RunningPod(absl::StrCat("p", i), r.old_revision));
  pb::CloneSet cs = new_cs.Status(r.old_revision, r.old_revision);
  cs.mutable_metadata()->set_generation(2);
  r.request = t::Request(cs, pods, {}, {r1, r2});
  return r;
}

template <typename M>
std::shared_ptr<google::protobuf::Message> Share(M message) {
  return std::make_shared<M>(std::move(message));
}

Case PlanCase(std::string name, std::string description, pb::PlanRequest request) {
  return Case{std::move(name), std::move(description), "Plan", Share(std::move(request)), "", ""};
}

Case PlanError(std::string name, std::string description, pb::PlanRequest request, std::string field) {
  return Case{std::move(name), std::move(description), "Plan", Share(std::move(request)), "", std::move(field)};
}

// ---------------------------------------------------------------------------------------------------------------

Case ScaleOutFromZero() {
  pb::CloneSet cs = CloneSetBuilder().Replicas(3).Vct(t::VctJson("data"));
  return PlanCase("plan_scale_out_from_zero",
                  "A new CloneSet of 3 replicas with a volumeClaimTemplate: the first revision is created, then "
                  "3 pods with their PVCs in slow-start batches 1 and 2, each with a SuccessfulCreate event.",
                  t::Request(cs));
}

pb::PlanRequest InPlaceRolloutRequest() {
  Rollout r = MakeRollout(4, [](CloneSetBuilder& cs) {
    cs.UpdateType("InPlaceIfPossible").MaxUnavailable(t::Int(2));
  });
  return r.request;
}

Case InPlaceUpdate() {
  return PlanCase("plan_in_place_update",
                  "An image change with InPlaceIfPossible and maxUnavailable 2: two pods start their in-place "
                  "update, each as a status write (InPlaceUpdateReady=False) then a patch of image, labels and "
                  "in-place state, with a SuccessfulUpdatePodInPlace event.",
                  InPlaceRolloutRequest());
}

Case InPlaceUpdateBatches() {
  pb::PlanRequest request = InPlaceRolloutRequest();
  request.set_accept_in_place_batches(true);
  return PlanCase("plan_in_place_update_batches",
                  "plan_in_place_update with accept_in_place_batches: the same two in-place updates as one "
                  "StartInPlaceUpdates action (shared templates, one target per pod, events in the batch).",
                  std::move(request));
}

Case PodTableForm() {
  pb::PlanRequest request = InPlaceRolloutRequest();
  absl::StatusOr<pb::PodTable> table = planapi::EncodePodTable(request.pods());
  if (table.ok()) {
    request.clear_pods();
    *request.mutable_pod_table() = *std::move(table);
  }
  return PlanCase("plan_pod_table",
                  "plan_in_place_update with the pods sent as pod_table: the same plan, and podsRead 4.",
                  std::move(request));
}

Case InvalidPartition() {
  Rollout r = MakeRollout(4, [](CloneSetBuilder& cs) { cs.Partition(t::Str("ten")); });
  return PlanError("plan_error_invalid_partition",
                   "A partition that is neither an integer nor a percentage: INVALID_ARGUMENT naming the field.",
                   std::move(r.request), "spec.updateStrategy.partition");
}

Case UnparsableBytes() {
  // Field 1 (clone_set) announced as 5 bytes long with only 3 following: not a PlanRequest.
  return Case{"plan_error_unparsable_bytes",
              "Bytes that are not a PlanRequest message: INVALID_ARGUMENT saying the request could not be parsed.",
              "Plan", nullptr, std::string("\x0a\x05" "abc", 5), "request could not be parsed"};
}


// A settled CloneSet of `replicas` ready pods at revision 1 (nginx:1.25), with PVCs when `vct` is set; the stored
// status matches them.
struct Steady {
  pb::PlanRequest request;
  std::string revision;
};

Steady MakeSteady(CloneSetBuilder cs, int pods, bool vct = false) {
  if (vct) cs.Vct(t::VctJson("data"));
  Steady s;
  const pb::ControllerRevision r1 = StoredRevision(cs, 1);
  s.revision = r1.metadata().name();
  std::vector<pb::Pod> list;
  std::vector<pb::PersistentVolumeClaim> pvcs;
  for (int i = 0; i < pods; ++i) {
    const std::string id = absl::StrCat("p", i);
    list.push_back(RunningPod(id, s.revision));
    if (vct) pvcs.push_back(PvcBuilder(absl::StrCat("data-", t::kCloneSetName, "-", id), id));
  }
  pb::CloneSet c = cs.Status(s.revision, s.revision);
  pb::CloneSetStatus* st = c.mutable_status();
  st->set_observed_generation(1);
  st->set_replicas(pods);
  st->set_ready_replicas(pods);
  st->set_available_replicas(pods);
  st->set_updated_replicas(pods);
  st->set_updated_ready_replicas(pods);
  st->set_updated_available_replicas(pods);
  st->set_expected_updated_replicas(c.spec().has_replicas() ? c.spec().replicas() : 1);
  st->set_label_selector("app=demo");
  s.request = t::Request(c, list, pvcs, {r1});
  return s;
}

Case ScaleIn() {
  Steady s = MakeSteady(CloneSetBuilder().Replicas(2), 4, /*vct=*/true);
  return PlanCase("plan_scale_in",
                  "Replicas 4 -> 2 with a volumeClaimTemplate: two pods are deleted with their PVCs, each with a "
                  "SuccessfulDelete event.",
                  std::move(s.request));
}

Case RecreateUpdate() {
  Rollout r = MakeRollout(3, [](CloneSetBuilder& cs) { cs.UpdateType("ReCreate").MaxUnavailable(t::Int(1)); });
  return PlanCase("plan_recreate_update",
                  "An image change with ReCreate and maxUnavailable 1: one pod is deleted for its replacement "
                  "(SuccessfulUpdatePodReCreate, SuccessfulDelete).",
                  std::move(r.request));
}

// A template whose first container also gets an env var: not an image-only change, so not in place.
std::string EnvTemplate() {
  return R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25",)"
         R"("env":[{"name":"A","value":"1"}]}]}})";
}

Case InPlaceNotPossible() {
  Rollout r = MakeRollout(
      2, [](CloneSetBuilder& cs) { cs.UpdateType("InPlaceIfPossible").MaxUnavailable(t::Int(1)); }, EnvTemplate());
  return PlanCase("plan_in_place_not_possible",
                  "InPlaceIfPossible with an env change: the pod cannot be updated in place "
                  "(InPlaceUpdateNotPossible) and is recreated instead.",
                  std::move(r.request));
}

Case InPlaceOnlyFails() {
  Rollout r = MakeRollout(
      2, [](CloneSetBuilder& cs) { cs.UpdateType("InPlaceOnly").MaxUnavailable(t::Int(1)); }, EnvTemplate());
  return PlanCase("plan_in_place_only_blocked",
                  "InPlaceOnly with an env change: nothing is touched, a FailedUpdatePodInPlace warning and a "
                  "blocked reason say why.",
                  std::move(r.request));
}

Case RollbackAndHistory() {
  // Revisions: 1 (nginx:1.25), 2 (nginx:1.26, the pods), and 3 with data the planner cannot read; the template
  // is back at nginx:1.25.
  CloneSetBuilder v1 = CloneSetBuilder().Replicas(2).UpdateType("InPlaceIfPossible");
  CloneSetBuilder v2 = CloneSetBuilder().Replicas(2).UpdateType("InPlaceIfPossible").Template(TemplateJson("nginx:1.26"));
  const pb::ControllerRevision r1 = StoredRevision(v1, 1);
  const pb::ControllerRevision r2 = StoredRevision(v2, 2);
  pb::ControllerRevision broken = StoredRevision(v1, 3);
  broken.mutable_metadata()->set_name(absl::StrCat(t::kCloneSetName, "-broken"));
  broken.set_data_json("{\"spec\":");
  pb::CloneSet cs = v1.Status(r2.metadata().name(), r2.metadata().name());
  cs.mutable_metadata()->set_generation(3);
  std::vector<pb::Pod> pods = {RunningPod("p0", r2.metadata().name(), "nginx:1.26"),
                               RunningPod("p1", r2.metadata().name(), "nginx:1.26")};
  return PlanCase("plan_rollback_and_history",
                  "The template goes back to an older revision (UpdateRevision renumbers it) while a revision "
                  "with unreadable data is reported (InvalidRevision) and deleted (DeleteRevision).",
                  t::Request(cs, pods, {}, {r1, r2, broken}));
}

Case SelectorDefaulted() {
  pb::CloneSet cs = CloneSetBuilder().Replicas(1);
  cs.mutable_spec()->clear_selector();
  return PlanCase("plan_selector_defaulted",
                  "A CloneSet without a selector: the planner writes the one defaulted from the template labels "
                  "(PatchCloneSet, SelectorDefaulted) and creates the pod.",
                  t::Request(cs));
}

Case PvcCleanup() {
  // PVC reuse off: the claim of the failed pod moves to that pod, the orphan claim is deleted.
  Steady s = MakeSteady(CloneSetBuilder().Replicas(1).PvcReuse(false), 1, /*vct=*/true);
  *s.request.add_pods() = RunningPod("p9", s.revision).Phase("Failed");
  *s.request.add_pvcs() = PvcBuilder(absl::StrCat("data-", t::kCloneSetName, "-p9"), "p9");
  *s.request.add_pvcs() = PvcBuilder(absl::StrCat("data-", t::kCloneSetName, "-orphan"), "orphan");
  return PlanCase("plan_pvc_cleanup",
                  "PVC reuse off: the claim of a failed pod is handed to that pod (UpdatePvcOwner) and a claim "
                  "without a pod is deleted (DeletePvc).",
                  std::move(s.request));
}

Case MissingPvc() {
  Steady s = MakeSteady(CloneSetBuilder().Replicas(2), 2, /*vct=*/true);
  s.request.mutable_pvcs()->RemoveLast();
  return PlanCase("plan_missing_pvc",
                  "A live pod whose claim is gone: the claim is created again from the volumeClaimTemplate "
                  "(CreatePvc) with a MissingPVC warning.",
                  std::move(s.request));
}

Case ClaimStorageGrown() {
  Steady s = MakeSteady(CloneSetBuilder().Replicas(2), 2, /*vct=*/true);
  nlohmann::json vct = nlohmann::json::parse(t::VctJson("data"));
  vct["spec"]["resources"]["requests"]["storage"] = "2Gi";
  *s.request.mutable_clone_set()->mutable_spec()->mutable_volume_claim_templates_json(0) = vct.dump();
  const char* classes[] = {"fast", "slow"};
  for (int i = 0; i < 2; ++i) {
    pb::PersistentVolumeClaim* pvc = s.request.mutable_pvcs(i);
    pvc->set_storage_request("1Gi");
    pvc->set_storage_capacity("1Gi");
    pvc->set_storage_class_name(classes[i]);
    pb::StorageClass* sc = s.request.add_storage_classes();
    sc->set_name(classes[i]);
    sc->set_allow_volume_expansion(i == 0);
  }
  return PlanCase("plan_claim_storage_grown",
                  "The volumeClaimTemplate's storage grew from 1Gi to 2Gi: no pod rolls; the claim whose StorageClass "
                  "allows expansion is expanded in place (ExpandPvc, ExpandingPVC), the other is held "
                  "(VolumeExpansionHeld condition, a VolumeExpansionNotAllowed warning).",
                  std::move(s.request));
}

Case ScaleUpLimited() {
  Steady s = MakeSteady(CloneSetBuilder().Replicas(4).ScaleMaxUnavailable(t::Int(2)), 2);
  *s.request.mutable_pods(0) = PodBuilder(s.request.pods(0).metadata().name())
                                   .Revision(s.revision)
                                   .Label(planner::kPodTemplateHashLabel, std::string(planner::ShortHash(s.revision)))
                                   .Lifecycle(planner::kStateNormal)
                                   .Node("node-1")
                                   .NotReady(Now() - absl::Minutes(5))
                                   .ResourceVersion("100");
  return PlanCase("plan_scale_up_limited",
                  "Replicas 2 -> 4 with scaleStrategy.maxUnavailable 2 while one pod is not ready: only one pod "
                  "is created (ScaleUpLimited, summary.scaleUpLimitedTo).",
                  std::move(s.request));
}

Case ImagePreDownload() {
  // Pre-download on by the v1alpha1 annotation, whose value is not a number.
  Rollout r = MakeRollout(4, [](CloneSetBuilder& cs) {
    cs.UpdateType("InPlaceIfPossible")
        .MaxUnavailable(t::Int(1))
        .Partition(t::Int(2))
        .Annotation("apps.kruise.io/image-predownload-parallelism", "abc");
  });
  return PlanCase("plan_image_predownload",
                  "Image pre-download on (the v1alpha1 annotation), an in-place rollout of 4 pods: an ImagePullJob "
                  "for the new image is created (CreateImagePullJob, CreatedImagePullJob) and the revision labelled; "
                  "the parallelism \"abc\" is not a number (InvalidImagePreDownloadParallelism, 1 is used).",
                  std::move(r.request));
}

Case ImagePullJobCleanup() {
  Steady s = MakeSteady(CloneSetBuilder().Replicas(2).UpdateType("InPlaceIfPossible"), 2);
  s.request.mutable_feature_gates()->set_pre_download_image_for_in_place_update(true);
  s.request.add_image_pull_jobs(absl::StrCat(t::kCloneSetName, "-old-main"));
  return PlanCase("plan_image_pull_job_cleanup",
                  "Every pod at the update revision: the pre-download job left from the rollout is deleted "
                  "(DeleteImagePullJob).",
                  std::move(s.request));
}

Case CancelInPlaceDuringGrace() {
  // The pod waits out the grace period before its in-place update to revision 2 (nginx:1.26) when the template
  // goes back to revision 1.
  CloneSetBuilder v1 = CloneSetBuilder().Replicas(1).UpdateType("InPlaceIfPossible");
  CloneSetBuilder v2 = CloneSetBuilder().Replicas(1).UpdateType("InPlaceIfPossible").Template(TemplateJson("nginx:1.26"));
  const pb::ControllerRevision r1 = StoredRevision(v1, 1);
  const pb::ControllerRevision r2 = StoredRevision(v2, 2);
  const std::string rev1 = r1.metadata().name();
  const std::string rev2 = r2.metadata().name();
  planner::InPlaceUpdateState state;
  state.revision = rev2;
  state.update_timestamp = base::FormatTime(Now() - absl::Seconds(5));
  const std::string grace = absl::StrCat(R"({"revision":")", rev2,
                                         R"(","containerImages":{"main":"nginx:1.26"},"graceSeconds":30,)",
                                         R"("oldRevision":")", rev1, R"("})");
  pb::Pod pod = RunningPod("p0", rev2)
                    .Label(planner::kPodTemplateHashLabel, std::string(planner::ShortHash(rev2)))
                    .Annotation(planner::kInPlaceStateAnnotation, planner::FormatInPlaceState(state))
                    .Annotation(planner::kInPlaceGraceAnnotation, grace);
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == planner::kInPlaceUpdateReadyCondition) c.set_status("False");
  }
  pb::CloneSet cs = v1.Status(rev1, rev2);
  cs.mutable_metadata()->set_generation(3);
  return PlanCase("plan_cancel_in_place_during_grace",
                  "The template goes back while a pod waits out its in-place grace period: the pending update is "
                  "cancelled (CancelledUpdatePodInPlace) and the pod keeps its revision.",
                  t::Request(cs, {pod}, {}, {r1, r2}));
}

Case UnparsableInPlaceState() {
  // A pod in its in-place update (lifecycle Updating, InPlaceUpdateReady False) whose state annotation is not JSON.
  CloneSetBuilder v1 = CloneSetBuilder().Replicas(1).UpdateType("InPlaceIfPossible");
  const pb::ControllerRevision r1 = StoredRevision(v1, 1);
  const std::string rev1 = r1.metadata().name();
  pb::Pod pod = RunningPod("p0", rev1)
                    .Label(planner::kPodTemplateHashLabel, std::string(planner::ShortHash(rev1)))
                    .Lifecycle(planner::kStateUpdating)
                    .Annotation(planner::kInPlaceStateAnnotation, "{truncated");
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == planner::kInPlaceUpdateReadyCondition) c.set_status("False");
  }
  pb::CloneSet cs = v1.Status(rev1, rev1);
  return PlanCase("plan_unparsable_in_place_state",
                  "A pod in its in-place update whose apps.kruise.io/inplace-update-state is not JSON: the update "
                  "never completes (InPlaceUpdateReady stays False, the lifecycle stays Updating) and the plan "
                  "says so in a Warning event InvalidInPlaceUpdateState.",
                  t::Request(cs, {pod}, {}, {r1}));
}

Case UnknownUpdateType() {
  Rollout r = MakeRollout(2, [](CloneSetBuilder& cs) { cs.UpdateType("Sideways"); });
  return PlanError("plan_error_unknown_update_type",
                   "An updateStrategy.type the planner does not know: INVALID_ARGUMENT naming the field, never a "
                   "guess.",
                   std::move(r.request), "spec.updateStrategy.type");
}

Case OnDelete() {
  // Three replicas, OnDelete, the image changed; one of the three old pods was deleted by someone.
  Rollout r = MakeRollout(3, [](CloneSetBuilder& cs) { cs.UpdateType("OnDelete"); });
  r.request.mutable_pods()->RemoveLast();
  return PlanCase("plan_on_delete",
                  "updateStrategy.type OnDelete (v1alpha1) after an image change, one of three pods deleted by "
                  "someone: its replacement is created on the new revision, the two old pods stay as they are "
                  "and expectedUpdatedReplicas is 3.",
                  std::move(r.request));
}

Case ProgressDeadlineExceeded() {
  Rollout r = MakeRollout(3, [](CloneSetBuilder& cs) {
    cs.UpdateType("ReCreate").MaxUnavailable(t::Int(1));
    cs.mutable_clone_set()->mutable_spec()->set_progress_deadline_seconds(600);
  });
  pb::CloneSetStatus* status = r.request.mutable_clone_set()->mutable_status();
  status->set_update_revision(r.new_revision);
  pb::Condition* progressing = status->add_conditions();
  progressing->set_type("Progressing");
  progressing->set_status("True");
  progressing->set_reason("CloneSetUpdated");
  progressing->set_message("CloneSet is progressing");
  *progressing->mutable_last_update_time() = t::Ts(Now() - absl::Seconds(601));
  *progressing->mutable_last_transition_time() = t::Ts(Now() - absl::Seconds(601));
  return PlanCase("plan_progress_deadline_exceeded",
                  "progressDeadlineSeconds 600 and a rollout that has been progressing for 601 s without "
                  "finishing: the Progressing condition turns False with reason ProgressDeadlineExceeded (the "
                  "rollout itself goes on).",
                  std::move(r.request));
}

Case NumericStringMaxSurge() {
  Rollout r = MakeRollout(2, [](CloneSetBuilder& cs) { cs.MaxSurge(t::Str("5")); });
  return PlanError("plan_error_numeric_string_max_surge",
                   "maxSurge \"5\": a string must be a percentage; INVALID_ARGUMENT naming the field, never 5 pods "
                   "or 5 %.",
                   std::move(r.request), "spec.updateStrategy.maxSurge");
}

// A template using the claim templates "data" and "logs" (revision 1); the CloneSet now has only "data".
std::string TemplateMounting(const std::string& image, bool logs) {
  return absl::StrCat(R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":")",
                      image, R"(","volumeMounts":[{"name":"data","mountPath":"/data"})",
                      logs ? R"(,{"name":"logs","mountPath":"/logs"})" : "", "]}]}}");
}

Case ClaimTemplateRemoved() {
  CloneSetBuilder v1 = CloneSetBuilder().Replicas(2).Vct(t::VctJson("data")).Vct(t::VctJson("logs"))
                           .Template(TemplateMounting("nginx:1.25", true));
  CloneSetBuilder v2 = CloneSetBuilder().Replicas(3).Partition(t::Int(3)).Vct(t::VctJson("data"))
                           .Template(TemplateMounting("nginx:1.26", false));
  const pb::ControllerRevision r1 = StoredRevision(v1, 1);
  const pb::ControllerRevision r2 = StoredRevision(v2, 2);
  std::vector<pb::Pod> pods;
  std::vector<pb::PersistentVolumeClaim> pvcs;
  for (const char* id : {"p0", "p1"}) {
    pods.push_back(RunningPod(id, r1.metadata().name()));
    for (const char* vct : {"data", "logs"}) {
      pvcs.push_back(PvcBuilder(absl::StrCat(vct, "-", t::kCloneSetName, "-", id), id));
    }
  }
  pb::CloneSet cs = v2.Status(r1.metadata().name(), r2.metadata().name());
  cs.mutable_metadata()->set_generation(3);
  return PlanCase("plan_claim_template_removed",
                  "The volumeClaimTemplate \"logs\" was removed while the partition keeps every pod on revision 1, "
                  "whose template still mounts it; replicas 2 -> 3: the new revision-1 pod gets its \"data\" claim "
                  "and an emptyDir for \"logs\" (VolumeClaimTemplateRemoved) instead of a pod the API server "
                  "would refuse.",
                  t::Request(cs, pods, pvcs, {r1, r2}));
}

Case BadPodTable() {
  pb::PlanRequest request = InPlaceRolloutRequest();
  absl::StatusOr<pb::PodTable> table = planapi::EncodePodTable(request.pods());
  if (table.ok()) {
    request.clear_pods();
    *request.mutable_pod_table() = *std::move(table);
    // Label counts that claim more labels than the column holds.
    request.mutable_pod_table()->set_label_counts(0, 1000);
  }
  return PlanError("plan_error_pod_table",
                   "A pod table whose label_counts claim more labels than its labels column holds: INVALID_ARGUMENT "
                   "naming the column.",
                   std::move(request), "pod_table.label");
}

Case ValidateValid() {
  pb::ValidateRequest request;
  *request.mutable_clone_set() = CloneSetBuilder().Replicas(3).UpdateType("InPlaceIfPossible").Build();
  return Case{"validate_valid",
              "A valid CloneSet: no errors, and the CloneSet with every default applied.",
              "Validate", Share(std::move(request)), "", ""};
}

Case ValidateErrors() {
  pb::ValidateRequest request;
  pb::CloneSet cs = CloneSetBuilder().Replicas(3).Partition(t::Str("150%")).MaxUnavailable(t::Int(-1));
  cs.mutable_spec()->mutable_selector()->mutable_match_labels()->clear();
  (*cs.mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "other";
  *request.mutable_clone_set() = cs;
  return Case{"validate_errors",
              "A CloneSet with several problems: Validate answers OK with one FieldError per problem (errors are "
              "data, not a failed call).",
              "Validate", Share(std::move(request)), "", ""};
}

Case ComputeRevisionCase() {
  pb::ComputeRevisionRequest request;
  CloneSetBuilder cs = CloneSetBuilder().Replicas(3).Vct(t::VctJson("data"));
  *request.mutable_clone_set() = cs.Build();
  *request.add_revisions() = StoredRevision(cs, 1);
  return Case{"compute_revision",
              "The revision a CloneSet's template maps to (name, hash, canonical data, the claim templates' hash); "
              "an equal revision is among those sent, so exists is true.",
              "ComputeRevision", Share(std::move(request)), "", ""};
}

Case ComputeRevisionError() {
  pb::ComputeRevisionRequest request;
  pb::CloneSet cs = CloneSetBuilder().Replicas(1).Template("{\"spec\":");
  *request.mutable_clone_set() = cs;
  return Case{"compute_revision_error_template",
              "A template that is not JSON: INVALID_ARGUMENT naming the field.",
              "ComputeRevision", Share(std::move(request)), "", "spec.template"};
}


// A template whose container "main" asks for `cpu_limit` (requests 100m cpu / 128Mi, memory limit 256Mi): burstable.
std::string ResourcesTemplate(const std::string& cpu_limit) {
  return absl::StrCat(
      R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25",)",
      R"("resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":")", cpu_limit,
      R"(","memory":"256Mi"}}}]}})");
}

Case InPlaceResize() {
  CloneSetBuilder old_cs = CloneSetBuilder().Replicas(2).UpdateType("InPlaceIfPossible").Template(
      ResourcesTemplate("200m"));
  CloneSetBuilder new_cs = CloneSetBuilder()
                               .Replicas(2)
                               .UpdateType("InPlaceIfPossible")
                               .MaxUnavailable(t::Int(1))
                               .Template(ResourcesTemplate("300m"));
  const pb::ControllerRevision r1 = StoredRevision(old_cs, 1);
  const pb::ControllerRevision r2 = StoredRevision(new_cs, 2);
  std::vector<pb::Pod> pods;
  for (int i = 0; i < 2; ++i) {
    pods.push_back(RunningPod(absl::StrCat("p", i), r1.metadata().name())
                       .Resources("main", {{"cpu", "100m"}, {"memory", "128Mi"}},
                                  {{"cpu", "200m"}, {"memory", "256Mi"}}));
  }
  pb::CloneSet cs = new_cs.Status(r1.metadata().name(), r1.metadata().name());
  cs.mutable_metadata()->set_generation(2);
  pb::PlanRequest request = t::Request(cs, pods, {}, {r1, r2});
  request.mutable_feature_gates()->set_in_place_workload_vertical_scaling(true);
  return PlanCase("plan_in_place_resize",
                  "A cpu limit change (200m -> 300m) with InPlaceIfPossible and the InPlaceWorkloadVerticalScaling "
                  "gate on: one pod is resized in place through pods/resize (ResizePod, only the changed value) "
                  "then patched to the new revision; it stays ready.",
                  std::move(request));
}

Case Idle() {
  Steady s = MakeSteady(CloneSetBuilder().Replicas(3), 3);
  return PlanCase("plan_idle",
                  "A settled CloneSet whose stored status is right: no actions, no status write, phase idle.",
                  std::move(s.request));
}

Case MinReadyRequeue() {
  // One pod turned ready 10 s ago; with minReadySeconds 30 it is available only 20 s from now.
  Steady s = MakeSteady(CloneSetBuilder().Replicas(2).MinReadySeconds(30), 2);
  for (pb::Condition& c : *s.request.mutable_pods(1)->mutable_conditions()) {
    if (c.type() == "Ready") *c.mutable_last_transition_time() = t::Ts(Now() - absl::Seconds(10));
  }
  return PlanCase("plan_min_ready_requeue",
                  "minReadySeconds 30 and a pod ready for 10 s: the status counts it ready but not available, and "
                  "the plan asks to be requeued when it becomes available (requeueAfter, a Duration).",
                  std::move(s.request));
}

Case ValidateUpdate() {
  pb::ValidateRequest request;
  *request.mutable_old() = CloneSetBuilder().Replicas(3).UpdateType("InPlaceOnly").Build();
  *request.mutable_clone_set() = CloneSetBuilder().Replicas(3).UpdateType("InPlaceOnly").Template(EnvTemplate()).Build();
  return Case{"validate_update_in_place_only",
              "An update (old set) of an InPlaceOnly CloneSet that changes more than images: a FieldError on "
              "spec.template.spec.",
              "Validate", Share(std::move(request)), "", ""};
}
}  // namespace

std::vector<Case> AllCases() {
  return {
      ScaleOutFromZero(),
      InPlaceUpdate(),
      InPlaceUpdateBatches(),
      PodTableForm(),
      ScaleIn(),
      RecreateUpdate(),
      InPlaceNotPossible(),
      InPlaceOnlyFails(),
      RollbackAndHistory(),
      SelectorDefaulted(),
      PvcCleanup(),
      MissingPvc(),
      ScaleUpLimited(),
      ImagePreDownload(),
      ImagePullJobCleanup(),
      CancelInPlaceDuringGrace(),
      UnparsableInPlaceState(),
      OnDelete(),
      ProgressDeadlineExceeded(),
      ClaimTemplateRemoved(),
      InPlaceResize(),
      ClaimStorageGrown(),
      InvalidPartition(),
      NumericStringMaxSurge(),
      UnknownUpdateType(),
      BadPodTable(),
      UnparsableBytes(),
      Idle(),
      MinReadyRequeue(),
      ValidateValid(),
      ValidateErrors(),
      ValidateUpdate(),
      ComputeRevisionCase(),
      ComputeRevisionError(),
  };
}

}  // namespace cloneset::vectors
