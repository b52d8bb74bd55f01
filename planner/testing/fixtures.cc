#include "planner/testing/fixtures.h"

#include <algorithm>

#include "nlohmann/json.hpp"
#include "planner/context_facts.h"
#include "planner/pod_facts.h"
#include "planner/revision.h"

namespace cloneset::planner::testing {
namespace {

pb::OwnerReference ControllerRef(const std::string& uid) {
  pb::OwnerReference ref;
  ref.set_api_version("apps.kruise.io/v1alpha1");
  ref.set_kind("CloneSet");
  ref.set_name(kCloneSetName);
  ref.set_uid(uid);
  ref.set_controller(true);
  ref.set_block_owner_deletion(true);
  return ref;
}

pb::Condition* UpsertCondition(pb::Pod& pod, const std::string& type) {
  for (auto& c : *pod.mutable_conditions()) {
    if (c.type() == type) return &c;
  }
  pb::Condition* c = pod.add_conditions();
  c->set_type(type);
  return c;
}

}  // namespace

absl::Time Now() { return absl::FromUnixSeconds(1799913600); }  // 2027-01-14T08:00:00Z

google::protobuf::Timestamp Ts(absl::Time t) {
  google::protobuf::Timestamp ts;
  const int64_t nanos = absl::ToUnixNanos(t);
  ts.set_seconds(nanos / 1000000000);
  ts.set_nanos(static_cast<int32_t>(nanos % 1000000000));
  return ts;
}

pb::IntOrString Int(int32_t v) {
  pb::IntOrString r;
  r.set_int_value(v);
  return r;
}

pb::IntOrString Str(const std::string& v) {
  pb::IntOrString r;
  r.set_str_value(v);
  return r;
}

std::string TemplateJson(const std::string& image) {
  nlohmann::json t = {
      {"metadata", {{"labels", {{"app", "demo"}}}}},
      {"spec", {{"containers", nlohmann::json::array({{{"name", "main"}, {"image", image}}})}}},
  };
  return t.dump();
}

std::string VctJson(const std::string& name) {
  nlohmann::json v = {
      {"metadata", {{"name", name}}},
      {"spec",
       {{"accessModes", nlohmann::json::array({"ReadWriteOnce"})},
        {"resources", {{"requests", {{"storage", "1Gi"}}}}}}},
  };
  return v.dump();
}

// ---------------------------------------------------------------------------------------------------------------

PodBuilder::PodBuilder(const std::string& name) {
  auto* meta = pod_.mutable_metadata();
  meta->set_name(name);
  meta->set_namespace_(kNamespace);
  meta->set_uid("uid-" + name);
  meta->set_resource_version("1");
  (*meta->mutable_labels())["app"] = "demo";
  const size_t dash = name.rfind('-');
  (*meta->mutable_labels())[kInstanceIdLabel] = dash == std::string::npos ? name : name.substr(dash + 1);
  *meta->mutable_creation_timestamp() = Ts(Now() - absl::Hours(1));
  *meta->add_owner_references() = ControllerRef(kCloneSetUid);
  pod_.set_phase("Running");
  pb::Container* c = pod_.add_containers();
  c->set_name("main");
  c->set_image("nginx:1.25");
  pb::ContainerStatus* s = pod_.add_container_statuses();
  s->set_name("main");
  s->set_image("nginx:1.25");
}

PodBuilder& PodBuilder::Revision(const std::string& revision) {
  (*pod_.mutable_metadata()->mutable_labels())[kRevisionLabel] = revision;
  return *this;
}
PodBuilder& PodBuilder::Label(const std::string& key, const std::string& value) {
  (*pod_.mutable_metadata()->mutable_labels())[key] = value;
  return *this;
}
PodBuilder& PodBuilder::Annotation(const std::string& key, const std::string& value) {
  (*pod_.mutable_metadata()->mutable_annotations())[key] = value;
  return *this;
}
PodBuilder& PodBuilder::Finalizer(const std::string& finalizer) {
  pod_.mutable_metadata()->add_finalizers(finalizer);
  return *this;
}
PodBuilder& PodBuilder::InstanceId(const std::string& id) { return Label(kInstanceIdLabel, id); }
PodBuilder& PodBuilder::Phase(const std::string& phase) {
  pod_.set_phase(phase);
  return *this;
}
PodBuilder& PodBuilder::Condition(const std::string& type, const std::string& status, absl::Time since) {
  pb::Condition* c = UpsertCondition(pod_, type);
  c->set_status(status);
  if (since != absl::InfinitePast()) *c->mutable_last_transition_time() = Ts(since);
  return *this;
}
PodBuilder& PodBuilder::Ready(absl::Time since) {
  pod_.set_phase("Running");
  for (auto& s : *pod_.mutable_container_statuses()) s.set_ready(true);
  return Condition("Ready", "True", since);
}
PodBuilder& PodBuilder::NotReady(absl::Time since) {
  pod_.set_phase("Running");
  return Condition("Ready", "False", since);
}
PodBuilder& PodBuilder::Node(const std::string& node) {
  pod_.set_node_name(node);
  return *this;
}
PodBuilder& PodBuilder::Lifecycle(const std::string& state) { return Label(kLifecycleStateLabel, state); }
PodBuilder& PodBuilder::SpecifiedDelete() { return Label(kSpecifiedDeleteLabel, "true"); }
PodBuilder& PodBuilder::DeletionCost(const std::string& cost) { return Annotation(kDeletionCostAnnotation, cost); }
PodBuilder& PodBuilder::Created(absl::Time t) {
  *pod_.mutable_metadata()->mutable_creation_timestamp() = Ts(t);
  return *this;
}
PodBuilder& PodBuilder::Deleting(absl::Time t) {
  *pod_.mutable_metadata()->mutable_deletion_timestamp() = Ts(t);
  return *this;
}
PodBuilder& PodBuilder::Restarts(int32_t restarts) {
  for (auto& s : *pod_.mutable_container_statuses()) {
    if (s.name() == "main") s.set_restart_count(restarts);
  }
  return *this;
}
PodBuilder& PodBuilder::Resources(const std::string& name, const std::map<std::string, std::string>& requests,
                                  const std::map<std::string, std::string>& limits, bool running) {
  for (auto& c : *pod_.mutable_containers()) {
    if (c.name() != name) continue;
    c.mutable_resource_requests()->clear();
    c.mutable_resource_limits()->clear();
    for (const auto& [k, v] : requests) (*c.mutable_resource_requests())[k] = v;
    for (const auto& [k, v] : limits) (*c.mutable_resource_limits())[k] = v;
    if (!running) continue;
    for (auto& s : *pod_.mutable_container_statuses()) {
      if (s.name() != name) continue;
      *s.mutable_resource_requests() = c.resource_requests();
      *s.mutable_resource_limits() = c.resource_limits();
    }
  }
  return *this;
}
PodBuilder& PodBuilder::RestartOnResize(const std::string& name, const std::string& resource) {
  for (auto& c : *pod_.mutable_containers()) {
    if (c.name() == name) c.add_restart_on_resize(resource);
  }
  return *this;
}
PodBuilder& PodBuilder::Container(const std::string& name, const std::string& image) {
  for (auto& c : *pod_.mutable_containers()) {
    if (c.name() == name) {
      c.set_image(image);
      for (auto& s : *pod_.mutable_container_statuses()) {
        if (s.name() == name) s.set_image(image);
      }
      return *this;
    }
  }
  pb::Container* c = pod_.add_containers();
  c->set_name(name);
  c->set_image(image);
  pb::ContainerStatus* s = pod_.add_container_statuses();
  s->set_name(name);
  s->set_image(image);
  return *this;
}
PodBuilder& PodBuilder::ReadinessGate(const std::string& condition_type) {
  pod_.add_readiness_gates(condition_type);
  return *this;
}
PodBuilder& PodBuilder::Owner(const std::string& uid) {
  pod_.mutable_metadata()->clear_owner_references();
  *pod_.mutable_metadata()->add_owner_references() = ControllerRef(uid);
  return *this;
}
PodBuilder& PodBuilder::ResourceVersion(const std::string& rv) {
  pod_.mutable_metadata()->set_resource_version(rv);
  return *this;
}

// ---------------------------------------------------------------------------------------------------------------

PvcBuilder::PvcBuilder(const std::string& name, const std::string& instance_id) {
  auto* meta = pvc_.mutable_metadata();
  meta->set_name(name);
  meta->set_namespace_(kNamespace);
  meta->set_uid("uid-" + name);
  meta->set_resource_version("1");
  (*meta->mutable_labels())[kInstanceIdLabel] = instance_id;
  (*meta->mutable_labels())["app"] = "demo";
  *meta->add_owner_references() = ControllerRef(kCloneSetUid);
  pvc_.set_phase("Bound");
}
PvcBuilder& PvcBuilder::Owner(const std::string& uid) {
  pvc_.mutable_metadata()->clear_owner_references();
  *pvc_.mutable_metadata()->add_owner_references() = ControllerRef(uid);
  return *this;
}
PvcBuilder& PvcBuilder::Deleting(absl::Time t) {
  *pvc_.mutable_metadata()->mutable_deletion_timestamp() = Ts(t);
  return *this;
}
PvcBuilder& PvcBuilder::Label(const std::string& key, const std::string& value) {
  (*pvc_.mutable_metadata()->mutable_labels())[key] = value;
  return *this;
}

// ---------------------------------------------------------------------------------------------------------------

RevisionBuilder::RevisionBuilder(const std::string& name, int64_t number) {
  auto* meta = rev_.mutable_metadata();
  meta->set_name(name);
  meta->set_namespace_(kNamespace);
  meta->set_uid("uid-" + name);
  meta->set_resource_version("1");
  *meta->mutable_creation_timestamp() = Ts(Now() - absl::Hours(24) + absl::Seconds(number));
  *meta->add_owner_references() = ControllerRef(kCloneSetUid);
  rev_.set_revision(number);
  Template(TemplateJson());
}
RevisionBuilder& RevisionBuilder::Template(const std::string& template_json) {
  absl::StatusOr<std::string> data = RevisionData(template_json);
  rev_.set_data_json(data.ok() ? *data : std::string("invalid template: ") + template_json);
  return *this;
}
RevisionBuilder& RevisionBuilder::Data(const std::string& data_json) {
  rev_.set_data_json(data_json);
  return *this;
}
RevisionBuilder& RevisionBuilder::Created(absl::Time t) {
  *rev_.mutable_metadata()->mutable_creation_timestamp() = Ts(t);
  return *this;
}
RevisionBuilder& RevisionBuilder::Annotation(const std::string& key, const std::string& value) {
  (*rev_.mutable_metadata()->mutable_annotations())[key] = value;
  return *this;
}
RevisionBuilder& RevisionBuilder::Label(const std::string& key, const std::string& value) {
  (*rev_.mutable_metadata()->mutable_labels())[key] = value;
  return *this;
}

// ---------------------------------------------------------------------------------------------------------------

CloneSetBuilder::CloneSetBuilder() {
  cs_.set_api_version("apps.kruise.io/v1alpha1");
  auto* meta = cs_.mutable_metadata();
  meta->set_name(kCloneSetName);
  meta->set_namespace_(kNamespace);
  meta->set_uid(kCloneSetUid);
  meta->set_resource_version("100");
  meta->set_generation(1);
  *meta->mutable_creation_timestamp() = Ts(Now() - absl::Hours(48));
  auto* spec = cs_.mutable_spec();
  spec->set_replicas(1);
  (*spec->mutable_selector()->mutable_match_labels())["app"] = "demo";
  spec->set_template_json(TemplateJson());
}
CloneSetBuilder& CloneSetBuilder::Replicas(int32_t replicas) {
  cs_.mutable_spec()->set_replicas(replicas);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::Template(const std::string& template_json) {
  cs_.mutable_spec()->set_template_json(template_json);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::Vct(const std::string& vct_json) {
  cs_.mutable_spec()->add_volume_claim_templates_json(vct_json);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::Partition(const pb::IntOrString& v) {
  *cs_.mutable_spec()->mutable_update_strategy()->mutable_partition() = v;
  return *this;
}
CloneSetBuilder& CloneSetBuilder::MaxSurge(const pb::IntOrString& v) {
  *cs_.mutable_spec()->mutable_update_strategy()->mutable_max_surge() = v;
  return *this;
}
CloneSetBuilder& CloneSetBuilder::MaxUnavailable(const pb::IntOrString& v) {
  *cs_.mutable_spec()->mutable_update_strategy()->mutable_max_unavailable() = v;
  return *this;
}
CloneSetBuilder& CloneSetBuilder::ScaleMaxUnavailable(const pb::IntOrString& v) {
  *cs_.mutable_spec()->mutable_scale_strategy()->mutable_max_unavailable() = v;
  return *this;
}
CloneSetBuilder& CloneSetBuilder::UpdateType(const std::string& type) {
  cs_.mutable_spec()->mutable_update_strategy()->set_type(type);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::Paused(bool paused) {
  cs_.mutable_spec()->mutable_update_strategy()->set_paused(paused);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::PodsToDelete(const std::vector<std::string>& names) {
  auto* list = cs_.mutable_spec()->mutable_scale_strategy()->mutable_pods_to_delete();
  list->Clear();
  for (const auto& n : names) list->Add(std::string(n));
  return *this;
}
CloneSetBuilder& CloneSetBuilder::MinReadySeconds(int32_t seconds) {
  cs_.mutable_spec()->set_min_ready_seconds(seconds);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::RevisionHistoryLimit(int32_t limit) {
  cs_.mutable_spec()->set_revision_history_limit(limit);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::PvcReuse(bool enabled) {
  cs_.mutable_spec()->mutable_scale_strategy()->set_enable_pvc_reuse(enabled);
  return *this;
}
CloneSetBuilder& CloneSetBuilder::RetainPvcs() {
  cs_.mutable_spec()->mutable_scale_strategy()->set_pvc_retention_policy("Retain");
  return *this;
}
CloneSetBuilder& CloneSetBuilder::Annotation(const std::string& key, const std::string& value) {
  (*cs_.mutable_metadata()->mutable_annotations())[key] = value;
  return *this;
}
CloneSetBuilder& CloneSetBuilder::Status(const std::string& current_revision, const std::string& update_revision,
                                         int32_t collision_count) {
  auto* st = cs_.mutable_status();
  st->set_current_revision(current_revision);
  st->set_update_revision(update_revision);
  st->set_collision_count(collision_count);
  return *this;
}

// ---------------------------------------------------------------------------------------------------------------

pb::PlanRequest Request(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods,
                        const std::vector<pb::PersistentVolumeClaim>& pvcs,
                        const std::vector<pb::ControllerRevision>& revisions) {
  pb::PlanRequest req;
  *req.mutable_clone_set() = cs;
  for (const auto& p : pods) *req.add_pods() = p;
  for (const auto& p : pvcs) *req.add_pvcs() = p;
  for (const auto& r : revisions) *req.add_revisions() = r;
  *req.mutable_now() = Ts(Now());
  req.set_random_seed(42);
  return req;
}

PlanContext MakeContext(const pb::PlanRequest& request, const ResolvedSpec& spec,
                        const std::string& current_revision, const std::string& update_revision) {
  PlanContext ctx;
  ctx.request = &request;
  ctx.clone_set = &request.clone_set();
  ctx.now = absl::FromUnixSeconds(request.now().seconds()) + absl::Nanoseconds(request.now().nanos());
  ctx.spec = spec;
  ctx.selector_string = "app=demo";
  for (const auto& pod : request.pods()) {
    const bool finished = pod.phase() == "Succeeded" || pod.phase() == "Failed";
    const bool deleting = pod.metadata().has_deletion_timestamp();
    (finished || deleting ? ctx.inactive_pods : ctx.pods).push_back(&pod);
  }
  auto by_name = [](const auto* a, const auto* b) { return a->metadata().name() < b->metadata().name(); };
  std::stable_sort(ctx.pods.begin(), ctx.pods.end(), by_name);
  std::stable_sort(ctx.inactive_pods.begin(), ctx.inactive_pods.end(), by_name);
  for (const auto& pvc : request.pvcs()) {
    if (!pvc.metadata().has_deletion_timestamp()) ctx.pvcs.push_back(&pvc);
  }
  std::stable_sort(ctx.pvcs.begin(), ctx.pvcs.end(), by_name);
  for (const auto& rev : request.revisions()) ctx.revisions.push_back(&rev);
  ctx.current_revision = current_revision;
  ctx.update_revision = update_revision;
  ctx.current_template_json = request.clone_set().spec().template_json();
  ctx.update_template_json = request.clone_set().spec().template_json();
  ctx.gates = request.feature_gates();
  ComputePodFacts(ctx);  // after the revisions: the facts say which of the two each pod is on
  return ctx;
}

}  // namespace cloneset::planner::testing
