// Builders for planner unit tests: small, chainable, with defaults that make a "normal" object so each test
// only states what matters, e.g. PodBuilder("cs-abcde").Revision("cs-1").Ready(Now() - absl::Seconds(60)).Node("n1").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "planner/context.h"

namespace cloneset::planner::testing {

namespace pb = ::cloneset::planner::v1;

inline constexpr char kNamespace[] = "default";
inline constexpr char kCloneSetName[] = "cs";
inline constexpr char kCloneSetUid[] = "cs-uid-0001";

// The fixed "now" of every test: 2027-01-14T08:00:00Z.
absl::Time Now();
google::protobuf::Timestamp Ts(absl::Time t);

pb::IntOrString Int(int32_t v);
pb::IntOrString Str(const std::string& v);

// A minimal PodTemplateSpec: labels {app: demo}, one container "main" running `image`.
std::string TemplateJson(const std::string& image = "nginx:1.25");
// A minimal VolumeClaimTemplate named `name` (1Gi, ReadWriteOnce).
std::string VctJson(const std::string& name);

class PodBuilder {
 public:
  // Owned by the test CloneSet, namespace kNamespace, instance id = text after the last '-' of the name,
  // phase Running but not Ready, created at Now() - 1h, label app=demo.
  explicit PodBuilder(const std::string& name);

  PodBuilder& Revision(const std::string& revision);  // controller-revision-hash
  PodBuilder& Label(const std::string& key, const std::string& value);
  PodBuilder& Annotation(const std::string& key, const std::string& value);
  PodBuilder& Finalizer(const std::string& finalizer);
  PodBuilder& InstanceId(const std::string& id);
  PodBuilder& Phase(const std::string& phase);
  // Running with Ready=True since `since`.
  PodBuilder& Ready(absl::Time since);
  // Running with Ready=False since `since`.
  PodBuilder& NotReady(absl::Time since = absl::InfinitePast());
  PodBuilder& Condition(const std::string& type, const std::string& status, absl::Time since);
  PodBuilder& Node(const std::string& node);
  PodBuilder& Lifecycle(const std::string& state);
  PodBuilder& SpecifiedDelete();
  PodBuilder& DeletionCost(const std::string& cost);
  PodBuilder& Created(absl::Time t);
  PodBuilder& Deleting(absl::Time t);
  PodBuilder& Restarts(int32_t restarts);  // on container "main"
  PodBuilder& Container(const std::string& name, const std::string& image);
  // Container `name`'s spec cpu/memory requests and limits, and the same in its status (what the kubelet runs it
  // with); `running` = false leaves the status's resources alone (a resize the kubelet has not carried out).
  PodBuilder& Resources(const std::string& name, const std::map<std::string, std::string>& requests,
                        const std::map<std::string, std::string>& limits, bool running = true);
  // Container `name`'s resizePolicy: `resource` restarts it.
  PodBuilder& RestartOnResize(const std::string& name, const std::string& resource);
  PodBuilder& ReadinessGate(const std::string& condition_type);
  PodBuilder& Owner(const std::string& uid);  // replaces the owner reference
  PodBuilder& ResourceVersion(const std::string& rv);

  pb::Pod Build() const { return pod_; }
  operator pb::Pod() const { return pod_; }  // NOLINT: builders convert implicitly

 private:
  pb::Pod pod_;
};

class PvcBuilder {
 public:
  // PVC `name` owned by the test CloneSet with instance id `instance_id`, phase Bound.
  PvcBuilder(const std::string& name, const std::string& instance_id);
  PvcBuilder& Owner(const std::string& uid);
  PvcBuilder& Deleting(absl::Time t);
  PvcBuilder& Label(const std::string& key, const std::string& value);
  pb::PersistentVolumeClaim Build() const { return pvc_; }
  operator pb::PersistentVolumeClaim() const { return pvc_; }  // NOLINT

 private:
  pb::PersistentVolumeClaim pvc_;
};

class RevisionBuilder {
 public:
  // Revision `name`, number `number`, controller-owned by the test CloneSet, data built from TemplateJson()
  // with the canonical encoder (RevisionData), created at Now() - 1d + number seconds.
  RevisionBuilder(const std::string& name, int64_t number);
  RevisionBuilder& Template(const std::string& template_json);  // canonical data from a template
  RevisionBuilder& Data(const std::string& data_json);          // raw data, as stored
  RevisionBuilder& Created(absl::Time t);
  RevisionBuilder& Annotation(const std::string& key, const std::string& value);
  RevisionBuilder& Label(const std::string& key, const std::string& value);
  pb::ControllerRevision Build() const { return rev_; }
  operator pb::ControllerRevision() const { return rev_; }  // NOLINT

 private:
  pb::ControllerRevision rev_;
};

// A v1alpha1 CloneSet "cs" in kNamespace: replicas 1, selector {app: demo}, template TemplateJson(), generation 1.
class CloneSetBuilder {
 public:
  CloneSetBuilder();
  CloneSetBuilder& Replicas(int32_t replicas);
  CloneSetBuilder& Template(const std::string& template_json);
  CloneSetBuilder& Vct(const std::string& vct_json);
  CloneSetBuilder& Partition(const pb::IntOrString& v);
  CloneSetBuilder& MaxSurge(const pb::IntOrString& v);
  CloneSetBuilder& MaxUnavailable(const pb::IntOrString& v);
  CloneSetBuilder& ScaleMaxUnavailable(const pb::IntOrString& v);
  CloneSetBuilder& UpdateType(const std::string& type);
  CloneSetBuilder& Paused(bool paused = true);
  CloneSetBuilder& PodsToDelete(const std::vector<std::string>& names);
  CloneSetBuilder& MinReadySeconds(int32_t seconds);
  CloneSetBuilder& RevisionHistoryLimit(int32_t limit);
  CloneSetBuilder& PvcReuse(bool enabled);
  CloneSetBuilder& RetainPvcs();
  CloneSetBuilder& Annotation(const std::string& key, const std::string& value);
  CloneSetBuilder& Status(const std::string& current_revision, const std::string& update_revision,
                          int32_t collision_count = 0);
  pb::CloneSet* mutable_clone_set() { return &cs_; }
  pb::CloneSet Build() const { return cs_; }
  operator pb::CloneSet() const { return cs_; }  // NOLINT

 private:
  pb::CloneSet cs_;
};

// A request around `cs` at Now() with random_seed 42.
pb::PlanRequest Request(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods = {},
                        const std::vector<pb::PersistentVolumeClaim>& pvcs = {},
                        const std::vector<pb::ControllerRevision>& revisions = {});

// A PlanContext over `request` built without the production context builder (so stage tests do not depend on
// it): active pods sorted by name (inactive ones split off), PVCs without deletionTimestamp sorted by name,
// the given resolved spec and revision names; templates both TemplateJson() unless set afterwards.
PlanContext MakeContext(const pb::PlanRequest& request, const ResolvedSpec& spec,
                        const std::string& current_revision, const std::string& update_revision);

}  // namespace cloneset::planner::testing
