// The agent reports InPlaceUpdateReady exactly when the planner counts the pod's in-place update completed (and
// its containers are ready, which the agent waits for as well): both decide with kruise/inplace_completion.h.
//
// Two tables: every kind of in-place update state (complete, images pending, restart pending, resize pending,
// next batch pending, unparsable, revision mismatch, gate missing, grace pending, legacy key) run through the
// planner's whole Plan (does it write InPlaceUpdateReady=True for the pod?) and the agent's DecideReadiness; and
// every pairing of image spellings through the decoder both use (snapshot::PodFromJson).
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/readiness_gate.h"
#include "base/time_format.h"
#include "common/resources.h"
#include "gtest/gtest.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planner/inplace.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "snapshot/snapshot.h"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

Json PodJson(const std::string& spec_image, const std::string& status_image, const std::string& status_image_id,
             const std::string& recorded_container_id, const std::string& status_container_id) {
  Json recorded = {{"imageID", "old-id"}};
  if (!recorded_container_id.empty()) recorded["containerID"] = recorded_container_id;
  const Json state = {{"revision", "web-2"},
                      {"updateTimestamp", "2026-01-01T00:00:00Z"},
                      {"lastContainerStatuses", {{"c1", recorded}}},
                      {"updateImages", true}};
  return {{"metadata",
           {{"namespace", "ns"}, {"name", "web-0"}, {"uid", "u"}, {"resourceVersion", "17"},
            {"annotations", {{"apps.kruise.io/inplace-update-state", state.dump()}}}}},
          {"spec",
           {{"readinessGates", {{{"conditionType", "InPlaceUpdateReady"}}}},
            {"containers", {{{"name", "c1"}, {"image", spec_image}}}}}},
          {"status",
           {{"conditions", {{{"type", "InPlaceUpdateReady"}, {"status", "False"}, {"reason", "StartInPlaceUpdate"}}}},
            {"containerStatuses",
             {{{"name", "c1"},
               {"image", status_image},
               {"imageID", status_image_id},
               {"containerID", status_container_id},
               {"ready", true}}}}}}};
}

TEST(CompletionAgreementTest, AgentReportsExactlyWhenThePlannerCountsTheUpdateCompleted) {
  const std::vector<std::string> images = {"nginx",          "nginx:latest", "docker.io/library/nginx:latest",
                                           "nginx:1.24",     "registry:5000/app", "registry:5000/app:latest",
                                           "docker.io/nginx"};
  int reported = 0;
  int cases = 0;
  for (const std::string& spec_image : images) {
    for (const std::string& status_image : images) {
      for (const std::string status_image_id : {"old-id", "new-id"}) {
        for (const std::string recorded_cid : {"", "cid-old"}) {
          for (const std::string status_cid : {"cid-old", "cid-new"}) {
            const std::string json =
                PodJson(spec_image, status_image, status_image_id, recorded_cid, status_cid).dump();
            SCOPED_TRACE(json);
            absl::StatusOr<snapshot::pb::Pod> pod = snapshot::PodFromJson(json);
            ASSERT_TRUE(pod.ok()) << pod.status();
            const ReadinessDecision agent = DecideReadiness(*pod, absl::FromUnixSeconds(1767225700));
            EXPECT_EQ(agent.report, planner::InPlaceUpdateCompleted(*pod)) << agent.why;
            reported += agent.report ? 1 : 0;
            ++cases;
          }
        }
      }
    }
  }
  // Both outcomes occur, so the comparison means something.
  EXPECT_GT(reported, 0);
  EXPECT_LT(reported, cases);
}

// ---- Every kind of state, through the planner's Plan and the agent ----

constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}})";
const absl::Time kNow = absl::FromUnixSeconds(1800000000);
// The update started two minutes ago; the executor turned the condition False just before writing the state.
const absl::Time kStarted = kNow - absl::Minutes(2);

// A CloneSet "demo" with one pod on its (only) revision, ready, with the InPlaceUpdateReady gate and the condition
// False as an in-place update leaves it while it runs; its container "main" runs nginx:1.26 with imageID
// "sha256:new" and containerID "containerd://new". The caller adds the state.
planner::v1::PlanRequest UpdatingPodRequest() {
  namespace v1 = ::cloneset::planner::v1;
  v1::PlanRequest req;
  v1::CloneSet* cs = req.mutable_clone_set();
  cs->mutable_metadata()->set_name("demo");
  cs->mutable_metadata()->set_namespace_("default");
  cs->mutable_metadata()->set_uid("uid-1");
  cs->mutable_metadata()->set_generation(1);
  cs->mutable_spec()->set_replicas(1);
  (*cs->mutable_spec()->mutable_selector()->mutable_match_labels())["app"] = "demo";
  cs->mutable_spec()->set_template_json(kTemplate);
  planner::SetTimestamp(kNow, req.mutable_now());
  req.set_random_seed(42);
  v1::ComputeRevisionRequest cr;
  *cr.mutable_clone_set() = *cs;
  absl::StatusOr<v1::ComputeRevisionResponse> rev = planner::ComputeRevision(cr);
  EXPECT_TRUE(rev.ok()) << rev.status();
  v1::ControllerRevision* r = req.add_revisions();
  r->mutable_metadata()->set_name(rev->name());
  r->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  r->mutable_metadata()->mutable_owner_references(0)->set_controller(true);
  (*r->mutable_metadata()->mutable_labels())["app"] = "demo";
  (*r->mutable_metadata()->mutable_annotations())[kruise::kVctHashAnnotation] = rev->volume_claim_templates_hash();
  r->set_revision(1);
  r->set_data_json(rev->data_json());
  v1::Pod* pod = req.add_pods();
  pod->mutable_metadata()->set_name("demo-id00a");
  pod->mutable_metadata()->set_namespace_("default");
  pod->mutable_metadata()->set_uid("pod-uid");
  pod->mutable_metadata()->set_resource_version("5");
  auto& labels = *pod->mutable_metadata()->mutable_labels();
  labels["app"] = "demo";
  labels[kruise::kRevisionLabel] = rev->name();
  labels[kruise::kPodTemplateHashLabel] = rev->hash();
  labels[kruise::kInstanceIdLabel] = "id00a";
  labels[kruise::kLifecycleStateLabel] = kruise::kStateNormal;
  pod->mutable_metadata()->add_owner_references()->set_uid("uid-1");
  pod->mutable_metadata()->mutable_owner_references(0)->set_controller(true);
  pod->set_node_name("node-1");
  pod->add_readiness_gates(kruise::kInPlaceUpdateReadyCondition);
  v1::Container* c = pod->add_containers();
  c->set_name("main");
  c->set_image("nginx:1.26");
  pod->set_phase("Running");
  for (const char* type : {"Ready", kruise::kInPlaceUpdateReadyCondition}) {
    v1::Condition* cond = pod->add_conditions();
    cond->set_type(type);
    cond->set_status(type == std::string("Ready") ? "True" : "False");
    planner::SetTimestamp(kStarted - absl::Seconds(1), cond->mutable_last_transition_time());
  }
  v1::ContainerStatus* status = pod->add_container_statuses();
  status->set_name("main");
  status->set_image("docker.io/library/nginx:1.26");
  status->set_image_id("sha256:new");
  status->set_container_id("containerd://new");
  status->set_ready(true);
  v1::CloneSetStatus* st = cs->mutable_status();
  st->set_observed_generation(1);
  st->set_replicas(1);
  st->set_update_revision(rev->name());
  st->set_current_revision(rev->name());
  st->set_label_selector("app=demo");
  return req;
}

// An in-place update state as the planner writes it, for revision `revision` ("" = the pod's), recording
// container "main" with imageID `image_id` and containerID `container_id`; `extra` members are merged in.
std::string State(const std::string& revision, const std::string& image_id, const std::string& container_id,
                  const Json& extra = Json::object()) {
  Json recorded = {{"imageID", image_id}};
  if (!container_id.empty()) recorded["containerID"] = container_id;
  Json state = {{"revision", revision},
                {"updateTimestamp", base::FormatTime(kStarted)},
                {"lastContainerStatuses", {{"main", recorded}}},
                {"updateImages", true}};
  state.update(extra);
  return state.dump();
}

// Does the plan write InPlaceUpdateReady=True for the pod (the executor's write the agent must match)?
bool PlannerMarksReady(const planner::v1::PlanRequest& req) {
  absl::StatusOr<planner::v1::PlanResponse> plan = planner::Plan(req);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return false;
  for (const planner::v1::Action& a : plan->actions()) {
    if (!a.has_patch_pod_status() || a.patch_pod_status().name() != "demo-id00a") continue;
    for (const planner::v1::Condition& c : a.patch_pod_status().set_conditions()) {
      if (c.type() == kruise::kInPlaceUpdateReadyCondition && c.status() == "True") return true;
    }
  }
  return false;
}

TEST(CompletionAgreementTest, EveryKindOfStateGetsTheSameAnswerFromPlannerAndAgent) {
  namespace v1 = ::cloneset::planner::v1;
  struct Case {
    std::string name;
    std::function<void(v1::Pod&)> edit;  // on the pod of UpdatingPodRequest
    bool want;                           // both report / mark InPlaceUpdateReady
  };
  const auto annotate = [](const std::string& key, const std::string& value) {
    return [key, value](v1::Pod& pod) { (*pod.mutable_metadata()->mutable_annotations())[key] = value; };
  };
  const std::vector<Case> cases = {
      {"complete: new image ID", annotate(kruise::kInPlaceStateAnnotation, State("r", "sha256:old", "")), true},
      {"complete: same image ID, restarted",
       annotate(kruise::kInPlaceStateAnnotation, State("r", "sha256:new", "containerd://old")), true},
      {"complete: legacy key", annotate(kruise::kLegacyInPlaceStateAnnotation, State("r", "sha256:old", "")), true},
      {"images pending: old image still runs",
       [](v1::Pod& pod) {
         (*pod.mutable_metadata()->mutable_annotations())[kruise::kInPlaceStateAnnotation] =
             State("r", "sha256:new", "");
         pod.mutable_container_statuses(0)->set_image("nginx:1.25");
       },
       false},
      {"images pending: no container status",
       [](v1::Pod& pod) {
         (*pod.mutable_metadata()->mutable_annotations())[kruise::kInPlaceStateAnnotation] =
             State("r", "sha256:old", "");
         pod.clear_container_statuses();
       },
       false},
      {"restart pending: env from metadata, same container",
       annotate(kruise::kInPlaceStateAnnotation,
                State("r", "sha256:new", "containerd://new", {{"updateEnvFromMetadata", true}})),
       false},
      {"restart done: env from metadata, new container",
       annotate(kruise::kInPlaceStateAnnotation,
                State("r", "sha256:new", "containerd://old", {{"updateEnvFromMetadata", true}})),
       true},
      {"resize pending: the kubelet defers it",
       [](v1::Pod& pod) {
         (*pod.mutable_metadata()->mutable_annotations())[kruise::kInPlaceStateAnnotation] =
             State("r", "sha256:old", "", {{"updateResources", true}});
         v1::Condition* c = pod.add_conditions();
         c->set_type(common::kPodResizePending);
         c->set_status("True");
         c->set_reason(common::kResizeDeferred);
       },
       false},
      {"resize done", annotate(kruise::kInPlaceStateAnnotation, State("r", "sha256:old", "", {{"updateResources", true}})),
       true},
      {"resize pending: nextContainerResources",
       annotate(kruise::kInPlaceStateAnnotation,
                State("r", "sha256:old", "",
                      {{"nextContainerResources", {{"main", {{"requests", {{"cpu", "500m"}}}}}}}})),
       false},
      {"images pending: nextContainerImages",
       annotate(kruise::kInPlaceStateAnnotation,
                State("r", "sha256:old", "", {{"nextContainerImages", {{"side", "busybox:1.36"}}}})),
       false},
      {"unparsable state", annotate(kruise::kInPlaceStateAnnotation, "{not json"), false},
      {"state not an object", annotate(kruise::kInPlaceStateAnnotation, "[]"), false},
      {"revision mismatch: state of another revision, containers updated",
       annotate(kruise::kInPlaceStateAnnotation, State("demo-other", "sha256:old", "")), true},
      {"gate missing", [](v1::Pod& pod) {
         (*pod.mutable_metadata()->mutable_annotations())[kruise::kInPlaceStateAnnotation] =
             State("r", "sha256:old", "");
         pod.clear_readiness_gates();
       },
       false},
      {"grace pending",
       [](v1::Pod& pod) {
         auto& annotations = *pod.mutable_metadata()->mutable_annotations();
         annotations[kruise::kInPlaceStateAnnotation] = State("r", "sha256:old", "");
         annotations[kruise::kInPlaceGraceAnnotation] = R"({"revision":"r","graceSeconds":3600})";
       },
       false},
  };
  int both_yes = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::PlanRequest req = UpdatingPodRequest();
    v1::Pod& pod = *req.mutable_pods(0);
    c.edit(pod);
    // "r" stands for the pod's own revision.
    for (auto& [key, value] : *pod.mutable_metadata()->mutable_annotations()) {
      const std::string own_revision = pod.metadata().labels().at(kruise::kRevisionLabel);
      for (size_t at = value.find(R"("revision":"r")"); at != std::string::npos;
           at = value.find(R"("revision":"r")", at)) {
        value.replace(at, 14, absl::StrCat(R"("revision":")", own_revision, "\""));
      }
    }
    const ReadinessDecision agent = DecideReadiness(pod, kNow);
    const bool planner = PlannerMarksReady(req);
    EXPECT_EQ(agent.report, c.want) << "agent: " << agent.why;
    EXPECT_EQ(planner, c.want) << "planner";
    both_yes += agent.report && planner ? 1 : 0;
  }
  EXPECT_GT(both_yes, 0);
}

}  // namespace
}  // namespace cloneset::agent
