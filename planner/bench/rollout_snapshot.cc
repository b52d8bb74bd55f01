#include "planner/bench/rollout_snapshot.h"

#include <string>

#include "planner/plan.h"

namespace cloneset::planner::bench {
namespace {

constexpr int64_t kNow = 1800000000;  // 2027-01-15T08:00:00Z
constexpr char kUid[] = "6f1c2d3e-0000-4000-8000-000000000001";

std::string Template(const std::string& image) {
  return R"({"metadata":{"labels":{"app":"bench"}},"spec":{"containers":[{"name":"main","image":")" + image +
         R"("}]}})";
}

// Five lowercase alphanumerics, like upstream instance ids, unique per index.
std::string InstanceId(int32_t i) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string id(5, 'b');
  for (int k = 4; k >= 0; --k) {
    id[k] = kAlphabet[i % 27];
    i /= 27;
  }
  return id;
}

void SetOwner(v1::ObjectMeta* meta) {
  v1::OwnerReference* ref = meta->add_owner_references();
  ref->set_api_version("apps.kruise.io/v1alpha1");
  ref->set_kind("CloneSet");
  ref->set_name("bench");
  ref->set_uid(kUid);
  ref->set_controller(true);
  ref->set_block_owner_deletion(true);
}

absl::StatusOr<v1::ControllerRevision> Revision(const v1::CloneSet& cs, int64_t number) {
  v1::ComputeRevisionRequest req;
  *req.mutable_clone_set() = cs;
  auto computed = ComputeRevision(req);
  if (!computed.ok()) return computed.status();
  v1::ControllerRevision rev;
  rev.mutable_metadata()->set_name(computed->name());
  rev.mutable_metadata()->set_namespace_("default");
  rev.mutable_metadata()->set_uid("rev-" + std::to_string(number));
  rev.mutable_metadata()->set_resource_version(std::to_string(number));
  (*rev.mutable_metadata()->mutable_labels())["app"] = "bench";
  (*rev.mutable_metadata()->mutable_labels())["controller.kubernetes.io/hash"] = computed->hash();
  (*rev.mutable_metadata()->mutable_annotations())["kruise.io/cloneset-volumeclaimtemplate-hash"] =
      computed->volume_claim_templates_hash();
  rev.mutable_metadata()->mutable_creation_timestamp()->set_seconds(kNow - 86400 + number);
  SetOwner(rev.mutable_metadata());
  rev.set_revision(number);
  rev.set_data_json(computed->data_json());
  return rev;
}

}  // namespace

absl::StatusOr<v1::PlanRequest> MidRolloutRequest(int32_t pods) {
  v1::PlanRequest request;
  v1::CloneSet* cs = request.mutable_clone_set();
  cs->set_api_version("apps.kruise.io/v1alpha1");
  v1::ObjectMeta* meta = cs->mutable_metadata();
  meta->set_name("bench");
  meta->set_namespace_("default");
  meta->set_uid(kUid);
  meta->set_resource_version("1000");
  meta->set_generation(2);
  meta->mutable_creation_timestamp()->set_seconds(kNow - 86400);
  v1::CloneSetSpec* spec = cs->mutable_spec();
  spec->set_replicas(pods);
  (*spec->mutable_selector()->mutable_match_labels())["app"] = "bench";
  spec->set_template_json(Template("registry.local/app:v1"));
  auto old_rev = Revision(*cs, 1);
  if (!old_rev.ok()) return old_rev.status();
  spec->set_template_json(Template("registry.local/app:v2"));
  auto new_rev = Revision(*cs, 2);
  if (!new_rev.ok()) return new_rev.status();
  v1::UpdateStrategy* update = spec->mutable_update_strategy();
  update->set_type("InPlaceIfPossible");
  update->mutable_partition()->set_str_value("25%");
  update->mutable_max_surge()->set_str_value("10%");
  update->mutable_max_unavailable()->set_str_value("20%");
  v1::CloneSetStatus* status = cs->mutable_status();
  status->set_observed_generation(1);
  status->set_replicas(pods);
  status->set_current_revision(old_rev->metadata().name());
  status->set_update_revision(new_rev->metadata().name());
  *request.add_revisions() = *old_rev;
  *request.add_revisions() = *new_rev;

  for (int32_t i = 0; i < pods; ++i) {
    const bool updated = i < pods / 2;
    const bool ready = i % 10 != 9;
    const std::string id = InstanceId(i);
    v1::Pod* pod = request.add_pods();
    v1::ObjectMeta* pm = pod->mutable_metadata();
    pm->set_name("bench-" + id);
    pm->set_namespace_("default");
    pm->set_uid("pod-" + std::to_string(i));
    pm->set_resource_version(std::to_string(2000 + i));
    const std::string& rev = (updated ? new_rev : old_rev)->metadata().name();
    auto& labels = *pm->mutable_labels();
    labels["app"] = "bench";
    labels["controller-revision-hash"] = rev;
    labels["pod-template-hash"] = (updated ? new_rev : old_rev)->metadata().labels().at("controller.kubernetes.io/hash");
    labels["apps.kruise.io/cloneset-instance-id"] = id;
    labels["lifecycle.apps.kruise.io/state"] = "Normal";
    pm->mutable_creation_timestamp()->set_seconds(kNow - 3600 - i);
    SetOwner(pm);
    pod->set_node_name("node-" + std::to_string(i % 100));
    pod->add_readiness_gates("InPlaceUpdateReady");
    v1::Container* c = pod->add_containers();
    c->set_name("main");
    c->set_image(updated ? "registry.local/app:v2" : "registry.local/app:v1");
    pod->set_phase("Running");
    v1::Condition* rc = pod->add_conditions();
    rc->set_type("Ready");
    rc->set_status(ready ? "True" : "False");
    rc->mutable_last_transition_time()->set_seconds(kNow - 600);
    v1::Condition* ipc = pod->add_conditions();
    ipc->set_type("InPlaceUpdateReady");
    ipc->set_status("True");
    ipc->mutable_last_transition_time()->set_seconds(kNow - 3000);
    v1::ContainerStatus* cst = pod->add_container_statuses();
    cst->set_name("main");
    cst->set_image(c->image());
    cst->set_image_id(updated ? "sha256:2222" : "sha256:1111");
    cst->set_container_id("containerd://" + id);
    cst->set_ready(ready);
  }
  request.mutable_now()->set_seconds(kNow);
  request.set_random_seed(1);
  return request;
}

}  // namespace cloneset::planner::bench
