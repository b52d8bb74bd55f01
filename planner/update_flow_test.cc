// End-to-end checks of the update stage through Plan(): the write budget (in-place update = 3 pod
// writes, ReCreate = DELETE pod + PVC now, the replacement by Scale).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planapi/in_place_batches.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "planner/testing/both_encodings.h"
#include "planner/update_test_util.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::CloneSetBuilder;
using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::cloneset::planner::testing::PvcBuilder;
using ::cloneset::planner::testing::TemplateJson;
using ::cloneset::planner::update_testing::Describe;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::ControllerRevision StoredRevision(const pb::CloneSet& cs, int64_t number) {
  pb::ComputeRevisionRequest request;
  *request.mutable_clone_set() = cs;
  absl::StatusOr<pb::ComputeRevisionResponse> computed = ComputeRevision(request);
  EXPECT_TRUE(computed.ok()) << computed.status();
  pb::ControllerRevision revision;
  revision.mutable_metadata()->set_name(computed->name());
  revision.mutable_metadata()->set_namespace_(testing::kNamespace);
  revision.mutable_metadata()->set_resource_version("1");
  (*revision.mutable_metadata()->mutable_labels())["app"] = "demo";
  (*revision.mutable_metadata()->mutable_labels())[kRevisionHashLabel] = computed->hash();
  (*revision.mutable_metadata()->mutable_annotations())[kVctHashAnnotation] = computed->volume_claim_templates_hash();
  pb::OwnerReference* owner = revision.mutable_metadata()->add_owner_references();
  owner->set_api_version("apps.kruise.io/v1alpha1");
  owner->set_kind("CloneSet");
  owner->set_name(testing::kCloneSetName);
  owner->set_uid(testing::kCloneSetUid);
  owner->set_controller(true);
  *revision.mutable_metadata()->mutable_creation_timestamp() = testing::Ts(Now() - absl::Hours(24) + absl::Seconds(number));
  revision.set_revision(number);
  revision.set_data_json(computed->data_json());
  return revision;
}

pb::Pod RunningPod(const std::string& name, const std::string& revision) {
  return PodBuilder(name)
      .Revision(revision)
      .Label(kPodTemplateHashLabel, std::string(ShortHash(revision)))
      .Label(kInstanceLabel, testing::kCloneSetName)
      .Lifecycle(kStateNormal)
      .Node("n1")
      .Ready(Now() - absl::Hours(1))
      .ReadinessGate(kInPlaceUpdateReadyCondition)
      .Condition(kInPlaceUpdateReadyCondition, "True", Now() - absl::Hours(1));
}

struct Flow {
  pb::PlanRequest request;
  std::string old_revision;
  std::string new_revision;
};

// `new_template` defaults to an image change (in-place-able); maxSurge/maxUnavailable are set when >= 0.
Flow MakeFlow(const std::string& type, int replicas, int max_surge = -1, int max_unavailable = -1,
              const std::string& new_template = TemplateJson("nginx:1.26")) {
  CloneSetBuilder old_cs = CloneSetBuilder().Replicas(replicas).UpdateType(type);
  CloneSetBuilder new_cs = CloneSetBuilder().Replicas(replicas).UpdateType(type).Template(new_template);
  if (max_surge >= 0) new_cs.MaxSurge(testing::Int(max_surge));
  if (max_unavailable >= 0) new_cs.MaxUnavailable(testing::Int(max_unavailable));
  Flow flow;
  pb::ControllerRevision r1 = StoredRevision(old_cs, 1);
  pb::ControllerRevision r2 = StoredRevision(new_cs, 2);
  flow.old_revision = r1.metadata().name();
  flow.new_revision = r2.metadata().name();
  std::vector<pb::Pod> pods;
  for (int i = 0; i < replicas; ++i) pods.push_back(RunningPod("cs-p" + std::to_string(i), flow.old_revision));
  pb::CloneSet cs = new_cs.Status(flow.old_revision, flow.old_revision);
  flow.request = testing::Request(cs, pods, {}, {r1, r2});
  return flow;
}

int PodWrites(const pb::PlanResponse& response, const std::string& pod) {
  int writes = 0;
  for (const pb::Action& a : response.actions()) {
    if ((a.has_patch_pod() && a.patch_pod().name() == pod) ||
        (a.has_patch_pod_status() && a.patch_pod_status().name() == pod) ||
        (a.has_delete_pod() && a.delete_pod().name() == pod)) {
      ++writes;
    }
  }
  return writes;
}

TEST(UpdateFlowTest, InPlaceUpdateTakesThreeWrites) {
  Flow flow = MakeFlow("InPlaceIfPossible", 1);
  absl::StatusOr<pb::PlanResponse> first = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->update_revision(), flow.new_revision);
  ASSERT_EQ(PodWrites(*first, "cs-p0"), 2) << first->DebugString();

  // The executor applies both writes; the kubelet restarts the container on the new image.
  pb::Pod& pod = *flow.request.mutable_pods(0);
  for (const pb::Action& a : first->actions()) {
    if (!a.has_patch_pod()) continue;
    for (const auto& [k, v] : a.patch_pod().set_labels()) (*pod.mutable_metadata()->mutable_labels())[k] = v;
    for (const auto& [k, v] : a.patch_pod().set_annotations()) (*pod.mutable_metadata()->mutable_annotations())[k] = v;
    for (const auto& [c, image] : a.patch_pod().container_images()) pod.mutable_containers(0)->set_image(image);
  }
  for (pb::Condition& c : *pod.mutable_conditions()) {
    if (c.type() == kInPlaceUpdateReadyCondition) {
      c.set_status("False");
      c.set_reason("StartInPlaceUpdate");
    }
  }
  pod.mutable_container_statuses(0)->set_image("nginx:1.26");
  pod.mutable_container_statuses(0)->set_image_id("docker.io/library/nginx@sha256:26");
  pod.mutable_container_statuses(0)->set_container_id("containerd://new");
  *flow.request.mutable_clone_set()->mutable_status() = first->status();

  absl::StatusOr<pb::PlanResponse> second = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Describe(second->actions(0)), "status cs-p0 in-place-update-ready InPlaceUpdateReady=True");
  EXPECT_EQ(PodWrites(*second, "cs-p0"), 1);
}

TEST(UpdateFlowTest, ReCreateDeletesPodAndPvcInOnePlan) {
  Flow flow = MakeFlow("ReCreate", 1);
  *flow.request.add_pvcs() = PvcBuilder("data-cs-p0", "p0");
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(PodWrites(*plan, "cs-p0"), 1) << plan->DebugString();
  bool found = false;
  for (const pb::Action& a : plan->actions()) {
    if (a.has_delete_pod()) {
      EXPECT_THAT(Describe(a), "delete cs-p0 pvcs=data-cs-p0");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}


int CountActions(const pb::PlanResponse& response, pb::Action::KindCase kind, const std::string& purpose = "") {
  int n = 0;
  for (const pb::Action& a : response.actions()) {
    if (a.kind_case() != kind) continue;
    if (!purpose.empty() && !(a.has_patch_pod() && a.patch_pod().purpose() == purpose)) continue;
    ++n;
  }
  return n;
}

// kruise#2369: an image change under InPlaceIfPossible with maxSurge 1 / maxUnavailable 0 creates no surge pod
// and updates one pod in place (maxSurge is the batch size).
TEST(UpdateFlowTest, InPlaceRolloutWithMaxSurgeCreatesNoPods) {
  Flow flow = MakeFlow("InPlaceIfPossible", 3, /*max_surge=*/1, /*max_unavailable=*/0);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(CountActions(*plan, pb::Action::kCreatePod), 0) << plan->DebugString();
  EXPECT_EQ(CountActions(*plan, pb::Action::kPatchPod, "in-place-update"), 1);
  EXPECT_EQ(PodWrites(*plan, "cs-p0"), 2);
  EXPECT_EQ(plan->summary().use_surge(), 0);
  EXPECT_EQ(plan->summary().update_num(), 3);
  EXPECT_EQ(plan->summary().update_max_unavailable(), 1);
}

TEST(UpdateFlowTest, InPlaceRolloutKeepsMaxUnavailableAsBudget) {
  Flow flow = MakeFlow("InPlaceIfPossible", 4, /*max_surge=*/3, /*max_unavailable=*/2);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(CountActions(*plan, pb::Action::kCreatePod), 0);
  EXPECT_EQ(CountActions(*plan, pb::Action::kPatchPod, "in-place-update"), 2);
  EXPECT_EQ(plan->summary().update_max_unavailable(), 2);
}

// The same settings surge as upstream when the pods are replaced: ReCreate, and InPlaceIfPossible with a change
// that cannot be applied in place (an env var).
TEST(UpdateFlowTest, ReplacingRolloutStillSurges) {
  const std::string with_env =
      R"({"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25",)"
      R"("env":[{"name":"MODE","value":"b"}]}]}})";
  for (const auto& [type, tmpl] : std::vector<std::pair<std::string, std::string>>{
           {"ReCreate", TemplateJson("nginx:1.26")}, {"InPlaceIfPossible", with_env}}) {
    Flow flow = MakeFlow(type, 3, /*max_surge=*/1, /*max_unavailable=*/0, tmpl);
    absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(CountActions(*plan, pb::Action::kCreatePod), 1) << type;
    EXPECT_EQ(CountActions(*plan, pb::Action::kPatchPod, "in-place-update"), 0) << type;
    EXPECT_EQ(CountActions(*plan, pb::Action::kDeletePod), 0) << type;
  }
}

// A small cluster for Plan()-driven rollouts: it applies every plan as the executor would, restarts containers
// whose image changed (kubelet) and, whenever a plan has nothing left to do, makes exactly one pod ready.
class SimulatedCluster {
 public:
  explicit SimulatedCluster(Flow flow) : flow_(std::move(flow)) {}

  struct Step {
    int created = 0;
    int deleted = 0;
    int in_place = 0;
  };

  // Runs until the rollout is complete and nothing is left to do; returns the steps that changed pods.
  std::vector<Step> Run(int max_plans = 300) {
    std::vector<Step> steps;
    for (int i = 0; i < max_plans; ++i) {
      now_ += absl::Seconds(1);
      *flow_.request.mutable_now() = testing::Ts(now_);
      absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow_.request);
      if (!plan.ok()) {
        ADD_FAILURE() << plan.status();
        return steps;
      }
      Step step;
      for (const pb::Action& a : plan->actions()) Apply(a, step);
      if (plan->write_status()) *flow_.request.mutable_clone_set()->mutable_status() = plan->status();
      if (step.created + step.deleted + step.in_place > 0) steps.push_back(step);
      Kubelet();
      max_pods_ = std::max(max_pods_, flow_.request.pods_size());
      if (!plan->actions().empty()) continue;
      in_flight_.push_back(UpdatingPods());
      if (!MakeOnePodReady()) {
        if (Done()) return steps;
        ADD_FAILURE() << "stuck: " << plan->summary().DebugString();
        return steps;
      }
    }
    ADD_FAILURE() << "no end after " << max_plans << " plans";
    return steps;
  }

  void set_ready_all_at_once(bool v) { all_at_once_ = v; }
  int max_pods() const { return max_pods_; }
  // Pods on the update revision that are not ready, each time the planner waits for the next pod to get ready.
  const std::vector<int>& in_flight() const { return in_flight_; }

 private:
  pb::Pod* Find(const std::string& name) {
    for (pb::Pod& p : *flow_.request.mutable_pods()) {
      if (p.metadata().name() == name) return &p;
    }
    ADD_FAILURE() << "no pod " << name;
    return nullptr;
  }

  static void SetCondition(pb::Pod& pod, const pb::Condition& c) {
    for (pb::Condition& have : *pod.mutable_conditions()) {
      if (have.type() == c.type()) {
        have = c;
        return;
      }
    }
    *pod.add_conditions() = c;
  }

  void Apply(const pb::Action& a, Step& step) {
    if (a.has_create_pod()) {
      const nlohmann::json doc = nlohmann::json::parse(a.create_pod().pod_json());
      PodBuilder b(doc["metadata"]["name"].get<std::string>());
      for (const auto& [k, v] : doc["metadata"]["labels"].items()) b.Label(k, v.get<std::string>());
      b.Container("main", doc["spec"]["containers"][0]["image"].get<std::string>())
          .Node("n1")
          .Created(now_)
          .NotReady(now_)
          .ReadinessGate(kInPlaceUpdateReadyCondition);
      pb::Pod pod = b;
      pod.mutable_container_statuses(0)->set_ready(false);
      *flow_.request.add_pods() = pod;
      ++step.created;
    } else if (a.has_delete_pod()) {
      auto* pods = flow_.request.mutable_pods();
      for (int i = 0; i < pods->size(); ++i) {
        if (pods->Get(i).metadata().name() == a.delete_pod().name()) {
          pods->DeleteSubrange(i, 1);
          break;
        }
      }
      ++step.deleted;
    } else if (a.has_patch_pod()) {
      pb::Pod* pod = Find(a.patch_pod().name());
      if (pod == nullptr) return;
      auto* labels = pod->mutable_metadata()->mutable_labels();
      auto* annotations = pod->mutable_metadata()->mutable_annotations();
      for (const auto& [k, v] : a.patch_pod().set_labels()) (*labels)[k] = v;
      for (const std::string& k : a.patch_pod().remove_labels()) labels->erase(k);
      for (const auto& [k, v] : a.patch_pod().set_annotations()) (*annotations)[k] = v;
      for (const std::string& k : a.patch_pod().remove_annotations()) annotations->erase(k);
      for (const auto& [c, image] : a.patch_pod().container_images()) pod->mutable_containers(0)->set_image(image);
      if (a.patch_pod().purpose() == "in-place-update") ++step.in_place;
    } else if (a.has_patch_pod_status()) {
      pb::Pod* pod = Find(a.patch_pod_status().name());
      if (pod == nullptr) return;
      for (const pb::Condition& c : a.patch_pod_status().set_conditions()) SetCondition(*pod, c);
    }
  }

  // Containers whose spec image changed restart on it (not ready until MakeOnePodReady); Ready follows the
  // containers and the InPlaceUpdateReady gate.
  void Kubelet() {
    for (pb::Pod& pod : *flow_.request.mutable_pods()) {
      pb::ContainerStatus* status = pod.mutable_container_statuses(0);
      if (status->image() != pod.containers(0).image()) {
        status->set_image(pod.containers(0).image());
        status->set_image_id("docker.io/library/" + pod.containers(0).image());
        status->set_container_id(absl::StrCat("containerd://", ++restarts_));
        status->set_ready(false);
      }
      const pb::Condition* gate = FindCondition(pod, kInPlaceUpdateReadyCondition);
      const bool ready = status->ready() && (gate == nullptr || gate->status() == "True");
      const pb::Condition* have = FindCondition(pod, "Ready");
      if (have == nullptr || (have->status() == "True") != ready) {
        pb::Condition c;
        c.set_type("Ready");
        c.set_status(ready ? "True" : "False");
        *c.mutable_last_transition_time() = testing::Ts(now_);
        SetCondition(pod, c);
      }
    }
  }

  // Makes one pod ready (all of them with set_ready_all_at_once); false when all are ready.
  bool MakeOnePodReady() {
    bool any = false;
    for (pb::Pod& pod : *flow_.request.mutable_pods()) {
      if (pod.container_statuses(0).ready()) continue;
      pod.mutable_container_statuses(0)->set_ready(true);
      any = true;
      if (!all_at_once_) break;
    }
    if (any) Kubelet();
    return any;
  }

  int UpdatingPods() const {
    int n = 0;
    for (const pb::Pod& pod : flow_.request.pods()) {
      const pb::Condition* ready = FindCondition(pod, "Ready");
      if (RevisionMatches(pod, flow_.new_revision) && (ready == nullptr || ready->status() != "True")) ++n;
    }
    return n;
  }

  bool Done() const {
    const int replicas = flow_.request.clone_set().spec().replicas();
    if (flow_.request.pods_size() != replicas) return false;
    for (const pb::Pod& pod : flow_.request.pods()) {
      if (!RevisionMatches(pod, flow_.new_revision)) return false;
      const pb::Condition* ready = FindCondition(pod, "Ready");
      if (ready == nullptr || ready->status() != "True") return false;
    }
    return true;
  }

  Flow flow_;
  absl::Time now_ = Now();
  int restarts_ = 0;
  int max_pods_ = 0;
  bool all_at_once_ = false;
  std::vector<int> in_flight_;
};

std::vector<int> Column(const std::vector<SimulatedCluster::Step>& steps, int SimulatedCluster::Step::*field) {
  std::vector<int> out;
  for (const auto& s : steps) {
    if (s.*field > 0) out.push_back(s.*field);
  }
  return out;
}

// kruise#2369 over a whole rollout: 8 pods, maxSurge 3, maxUnavailable 0, an image change in place: never more
// than 8 pods; 3 pods start at once and each pod that comes back frees the slot for the next one.
TEST(RolloutSimulation, InPlaceWithMaxSurgeKeepsThreeUpdatingWithoutExtraPods) {
  SimulatedCluster cluster(MakeFlow("InPlaceIfPossible", 8, /*max_surge=*/3, /*max_unavailable=*/0));
  const std::vector<SimulatedCluster::Step> steps = cluster.Run();
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::created), ElementsAre());
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::deleted), ElementsAre());
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::in_place), ElementsAre(3, 1, 1, 1, 1, 1));
  EXPECT_EQ(cluster.max_pods(), 8);
  EXPECT_THAT(cluster.in_flight(), ElementsAre(3, 3, 3, 3, 3, 3, 2, 1, 0));
}

// kruise#1741: ReCreate, 8 pods, maxSurge 3, maxUnavailable 0, pods becoming ready one at a time. Each ready
// pod lets one old pod go and one surge pod come, so 3 pods stay in flight until fewer than 3 are left (upstream's
// surge shrinks early: 3, 3, 3, 3, 2, 2, 1, 1 in flight, the "3,3,1,1" batches of the issue).
TEST(RolloutSimulation, RecreateWithMaxSurgeKeepsThreeInFlightToTheEnd) {
  SimulatedCluster cluster(MakeFlow("ReCreate", 8, /*max_surge=*/3, /*max_unavailable=*/0));
  const std::vector<SimulatedCluster::Step> steps = cluster.Run();
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::created), ElementsAre(3, 1, 1, 1, 1, 1));
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::deleted), ElementsAre(1, 1, 1, 1, 1, 1, 1, 1));
  EXPECT_EQ(cluster.max_pods(), 11);
  EXPECT_THAT(cluster.in_flight(), ElementsAre(3, 3, 3, 3, 3, 3, 2, 1, 0));
}

// Everything ready at once (the batch view of kruise#1741): new pods come in batches of 3, 3, 2 (upstream's
// surge gives 3, 1, 2, 2). Old pods go as availability allows: 3; 2 (only 2 more new pods are needed); 1 while the
// last 2 start (9 available, 8 required); the last 2 once those are ready.
TEST(RolloutSimulation, RecreateWithMaxSurgeBatchesWhenAllGetReadyTogether) {
  SimulatedCluster cluster(MakeFlow("ReCreate", 8, /*max_surge=*/3, /*max_unavailable=*/0));
  cluster.set_ready_all_at_once(true);
  const std::vector<SimulatedCluster::Step> steps = cluster.Run();
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::created), ElementsAre(3, 3, 2));
  EXPECT_THAT(Column(steps, &SimulatedCluster::Step::deleted), ElementsAre(3, 2, 1, 2));
  EXPECT_EQ(cluster.max_pods(), 11);
}

// ================================================================================================
// In-place batches (PlanRequest.accept_in_place_batches). PlanBothEncodings checks every plan of this file
// expanded against the per-pod form; these check that batches form where they should.

std::vector<const pb::StartInPlaceUpdates*> Batches(const pb::PlanResponse& plan) {
  std::vector<const pb::StartInPlaceUpdates*> out;
  for (const pb::Action& a : plan.actions()) {
    if (a.has_start_in_place_updates()) out.push_back(&a.start_in_place_updates());
  }
  return out;
}

std::vector<std::string> TargetNames(const pb::StartInPlaceUpdates& batch) {
  std::vector<std::string> names;
  for (const auto& t : batch.targets()) names.push_back(t.name());
  return names;
}

// Renders the pod actions of a plan: "batch(gated) cs-p0,cs-p1", "status cs-p3", "patch cs-p3".
std::vector<std::string> PodActionShapes(const pb::PlanResponse& plan) {
  std::vector<std::string> out;
  for (const pb::Action& a : plan.actions()) {
    if (a.has_start_in_place_updates()) {
      const pb::StartInPlaceUpdates& b = a.start_in_place_updates();
      std::vector<std::string> names = TargetNames(b);
      out.push_back(absl::StrCat("batch", b.has_status_patch() ? "(gated) " : " ", absl::StrJoin(names, ",")));
    } else if (a.has_patch_pod_status()) {
      out.push_back("status " + a.patch_pod_status().name());
    } else if (a.has_patch_pod()) {
      out.push_back("patch " + a.patch_pod().name());
    }
  }
  return out;
}

int EventsWithReason(const pb::PlanResponse& plan, const std::string& reason) {
  int n = 0;
  for (const pb::Event& e : plan.events()) n += e.reason() == reason;
  return n;
}

TEST(InPlaceBatchFlowTest, ReadyAndNotReadyPodsInterleavedFormOneBatch) {
  Flow flow = MakeFlow("InPlaceIfPossible", 10, -1, 10);
  // Even pods are ready with ready containers: their status write also sets Ready=False; odd ones are not.
  for (int i = 0; i < 10; i += 2) {
    pb::Condition* c = flow.request.mutable_pods(i)->add_conditions();
    c->set_type("ContainersReady");
    c->set_status("True");
    *c->mutable_last_transition_time() = testing::Ts(Now() - absl::Hours(1));
  }
  flow.request.set_accept_in_place_batches(true);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(Batches(*plan).size(), 1u) << plan->DebugString();
  const pb::StartInPlaceUpdates& batch = *Batches(*plan)[0];
  EXPECT_THAT(TargetNames(batch), ElementsAre("cs-p0", "cs-p1", "cs-p2", "cs-p3", "cs-p4", "cs-p5", "cs-p6",
                                              "cs-p7", "cs-p8", "cs-p9"));
  for (const auto& target : batch.targets()) {
    const bool even = (target.name().back() - '0') % 2 == 0;
    EXPECT_EQ(target.set_not_ready(), even) << target.name();
    EXPECT_EQ(target.resource_version(), flow.request.pods(target.name().back() - '0').metadata().resource_version());
    EXPECT_THAT(target.in_place_update_state(), ::testing::StartsWith(R"({"main":{)"));  // its container statuses
  }
  EXPECT_THAT(batch.in_place_update_state_prefix(),
              HasSubstr(absl::StrCat("{\"revision\":\"", flow.new_revision, "\"")));
  EXPECT_THAT(batch.in_place_update_state_suffix(), HasSubstr("\"containerBatchesRecord\""));
  EXPECT_TRUE(batch.has_status_patch());
  EXPECT_EQ(batch.not_ready_condition().type(), "Ready");
  EXPECT_EQ(batch.patch().container_images().at("main"), "nginx:1.26");
  EXPECT_EQ(batch.patch().set_labels().at(kRevisionLabel), flow.new_revision);
  EXPECT_EQ(batch.events_before(), EventsWithReason(*plan, "SuccessfulUpdatePodInPlace"));
  EXPECT_EQ(EventsWithReason(*plan, "SuccessfulUpdatePodInPlace"), 0);
  EXPECT_EQ(plan->summary().updated_now(), 10);

  // Expanded, the batch is the per-pod plan: 20 pod writes and 10 events.
  pb::PlanResponse expanded = *plan;
  planapi::ExpandInPlaceBatches(&expanded);
  EXPECT_EQ(Batches(expanded).size(), 0u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(PodWrites(expanded, "cs-p" + std::to_string(i)), 2);
  EXPECT_EQ(EventsWithReason(expanded, "SuccessfulUpdatePodInPlace"), 10);
}

TEST(InPlaceBatchFlowTest, PodsThatDoNotFitTheTemplateSplitTheBatches) {
  Flow flow = MakeFlow("InPlaceIfPossible", 10, -1, 10);
  // cs-p3 carries the legacy state annotation (its patch removes it): per pod. cs-p6 has no InPlaceUpdateReady
  // gate (no status write): a batch of its own without a status template.
  (*flow.request.mutable_pods(3)->mutable_metadata()->mutable_annotations())[kLegacyInPlaceStateAnnotation] = "{}";
  flow.request.mutable_pods(6)->clear_readiness_gates();
  flow.request.set_accept_in_place_batches(true);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(PodActionShapes(*plan),
              ElementsAre("batch(gated) cs-p0,cs-p1,cs-p2", "status cs-p3", "patch cs-p3", "batch(gated) cs-p4,cs-p5",
                          "batch cs-p6", "batch(gated) cs-p7,cs-p8,cs-p9"));
  // cs-p3's event sits between the first batch's and the second's.
  const std::vector<const pb::StartInPlaceUpdates*> batches = Batches(*plan);
  ASSERT_EQ(batches.size(), 4u);
  const int first = batches[0]->events_before();
  EXPECT_EQ(batches[1]->events_before(), first + 1);
  EXPECT_EQ(batches[2]->events_before(), first + 1);
  EXPECT_EQ(batches[3]->events_before(), first + 1);
  EXPECT_EQ(plan->events(first).involved_pod(), "cs-p3");
}

TEST(InPlaceBatchFlowTest, GracePeriodStartsStayPerPod) {
  Flow flow = MakeFlow("InPlaceIfPossible", 3, -1, 3);
  flow.request.mutable_clone_set()->mutable_spec()->mutable_update_strategy()->set_grace_period_seconds(30);
  flow.request.set_accept_in_place_batches(true);
  absl::StatusOr<pb::PlanResponse> plan = testing::PlanBothEncodings(flow.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(PodActionShapes(*plan), ElementsAre("status cs-p0", "patch cs-p0", "status cs-p1", "patch cs-p1",
                                                  "status cs-p2", "patch cs-p2"));
}

}  // namespace
}  // namespace cloneset::planner
