// CloneSetFromJson: both served versions into the planner's (v1alpha1-shaped) vocabulary, semantics §1.2.
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/label_selector.h"
#include "kruise/keys.h"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

using internal::Field;
using internal::Index;
using internal::Json;
using internal::Path;


std::string AnnotationPath(std::string_view key) { return internal::Cat("metadata.annotations[\"", key, "\"]"); }

absl::Status ReadHook(const Json& v, const std::string& path, pb::LifecycleHook* out) {
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, path));
  if (const Json* f = Field(v, "labelsHandler")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadStringMap(*f, Path(path, "labelsHandler"), out->mutable_labels_handler()));
  }
  if (const Json* f = Field(v, "finalizersHandler")) {
    SNAPSHOT_RETURN_IF_ERROR(
        internal::ReadStringList(*f, Path(path, "finalizersHandler"), out->mutable_finalizers_handler()));
  }
  if (const Json* f = Field(v, "markPodNotReady")) {
    bool b = false;
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadBool(*f, Path(path, "markPodNotReady"), &b));
    out->set_mark_pod_not_ready(b);
  }
  return absl::OkStatus();
}

absl::Status ReadLifecycle(const Json& v, const std::string& path, pb::Lifecycle* out) {
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, path));
  if (const Json* f = Field(v, "preDelete")) SNAPSHOT_RETURN_IF_ERROR(ReadHook(*f, Path(path, "preDelete"), out->mutable_pre_delete()));
  if (const Json* f = Field(v, "inPlaceUpdate")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadHook(*f, Path(path, "inPlaceUpdate"), out->mutable_in_place_update()));
  }
  if (const Json* f = Field(v, "preNormal")) SNAPSHOT_RETURN_IF_ERROR(ReadHook(*f, Path(path, "preNormal"), out->mutable_pre_normal()));
  return absl::OkStatus();
}

absl::Status ReadPriority(const Json& v, const std::string& path, pb::UpdatePriorityStrategy* out) {
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, path));
  if (const Json* f = Field(v, "weightPriority")) {
    const std::string p = Path(path, "weightPriority");
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireArray(*f, p));
    for (size_t i = 0; i < f->size(); ++i) {
      const std::string tp = Index(p, i);
      SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject((*f)[i], tp));
      pb::UpdatePriorityWeightTerm* term = out->add_weight_priority();
      int32_t weight = 0;
      if (const Json* w = Field((*f)[i], "weight")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*w, Path(tp, "weight"), &weight));
      term->set_weight(weight);
      if (const Json* s = Field((*f)[i], "matchSelector")) {
        SNAPSHOT_RETURN_IF_ERROR(common::DecodeLabelSelector(*s, Path(tp, "matchSelector"), term->mutable_match_selector()));
      }
    }
  }
  if (const Json* f = Field(v, "orderPriority")) {
    const std::string p = Path(path, "orderPriority");
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireArray(*f, p));
    for (size_t i = 0; i < f->size(); ++i) {
      const std::string tp = Index(p, i);
      SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject((*f)[i], tp));
      pb::UpdatePriorityOrderTerm* term = out->add_order_priority();
      if (const Json* k = Field((*f)[i], "orderedKey")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*k, Path(tp, "orderedKey"), term->mutable_ordered_key()));
      }
    }
  }
  return absl::OkStatus();
}

// The rolling-update fields shared by v1alpha1's updateStrategy and v1beta1's updateStrategy.rollingUpdate.
absl::Status ReadRollingFields(const Json& v, const std::string& path, bool v1beta1, pb::UpdateStrategy* out) {
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, path));
  if (const Json* f = Field(v, "partition")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadIntOrString(*f, Path(path, "partition"), out->mutable_partition()));
  }
  if (const Json* f = Field(v, "maxUnavailable")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadIntOrString(*f, Path(path, "maxUnavailable"), out->mutable_max_unavailable()));
  }
  if (const Json* f = Field(v, "maxSurge")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadIntOrString(*f, Path(path, "maxSurge"), out->mutable_max_surge()));
  }
  if (const Json* f = Field(v, "paused")) {
    bool b = false;
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadBool(*f, Path(path, "paused"), &b));
    out->set_paused(b);
  }
  if (const Json* f = Field(v, "priorityStrategy")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadPriority(*f, Path(path, "priorityStrategy"), out->mutable_priority_strategy()));
  }
  if (const Json* f = Field(v, "scatterStrategy")) {
    const std::string p = Path(path, "scatterStrategy");
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireArray(*f, p));
    for (size_t i = 0; i < f->size(); ++i) {
      const std::string tp = Index(p, i);
      SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject((*f)[i], tp));
      pb::UpdateScatterTerm* term = out->add_scatter_strategy();
      if (const Json* k = Field((*f)[i], "key")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*k, Path(tp, "key"), term->mutable_key()));
      if (const Json* k = Field((*f)[i], "value")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*k, Path(tp, "value"), term->mutable_value()));
      }
    }
  }
  if (const Json* f = Field(v, "inPlaceUpdateStrategy")) {
    const std::string p = Path(path, "inPlaceUpdateStrategy");
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*f, p));
    int32_t n = 0;
    if (const Json* g = Field(*f, "gracePeriodSeconds")) {
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*g, Path(p, "gracePeriodSeconds"), &n));
      out->set_grace_period_seconds(n);
    }
    if (v1beta1) {
      if (const Json* g = Field(*f, "imagePreDownloadParallelism")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::ReadIntOrString(*g, Path(p, "imagePreDownloadParallelism"),
                                                           out->mutable_image_predownload_parallelism()));
      }
      if (const Json* g = Field(*f, "imagePreDownloadTimeoutSeconds")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*g, Path(p, "imagePreDownloadTimeoutSeconds"), &n));
        out->set_image_predownload_timeout_seconds(n);
      }
      if (const Json* g = Field(*f, "imagePreDownloadMinUpdatedReadyPods")) {
        SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*g, Path(p, "imagePreDownloadMinUpdatedReadyPods"), &n));
        out->set_image_predownload_min_updated_ready_pods(n);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ReadUpdateStrategy(const Json& v, bool v1beta1, pb::UpdateStrategy* out) {
  const std::string path = "spec.updateStrategy";
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, path));
  std::string type;
  if (const Json* f = Field(v, "type")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, Path(path, "type"), &type));
  // OnDelete has no rolling update (upstream's v1beta1 rollingUpdate is nil, and its conversion of a v1alpha1
  // OnDelete CloneSet drops the v1alpha1 rolling fields): partition, maxSurge, maxUnavailable, paused, the update
  // order and the in-place settings are not read (semantics §1.2).
  if (type == "OnDelete") {
    out->set_type("OnDelete");
    return absl::OkStatus();
  }
  if (!v1beta1) {
    out->set_type(type);
    return ReadRollingFields(v, path, false, out);
  }
  if (!type.empty() && type != "RollingUpdate") {
    return absl::InvalidArgumentError(internal::Cat(path, ".type: \"", type, "\" is not RollingUpdate or OnDelete"));
  }
  const Json* rolling = Field(v, "rollingUpdate");
  if (rolling == nullptr) return absl::OkStatus();
  const std::string rpath = Path(path, "rollingUpdate");
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*rolling, rpath));
  if (const Json* f = Field(*rolling, "podUpdatePolicy")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, Path(rpath, "podUpdatePolicy"), out->mutable_type()));
  }
  return ReadRollingFields(*rolling, rpath, true, out);
}

absl::Status ReadScaleStrategy(const Json& v, bool v1beta1, pb::ScaleStrategy* out) {
  const std::string path = "spec.scaleStrategy";
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, path));
  if (const Json* f = Field(v, "podsToDelete")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadStringList(*f, Path(path, "podsToDelete"), out->mutable_pods_to_delete()));
  }
  if (const Json* f = Field(v, "maxUnavailable")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadIntOrString(*f, Path(path, "maxUnavailable"), out->mutable_max_unavailable()));
  }
  bool b = false;
  if (const Json* f = Field(v, "disablePVCReuse"); f != nullptr && !v1beta1) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadBool(*f, Path(path, "disablePVCReuse"), &b));
    out->set_enable_pvc_reuse(!b);
  }
  if (const Json* f = Field(v, "enablePVCReuse"); f != nullptr && v1beta1) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadBool(*f, Path(path, "enablePVCReuse"), &b));
    out->set_enable_pvc_reuse(b);
  }
  if (const Json* f = Field(v, "excludePreparingDelete")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadBool(*f, Path(path, "excludePreparingDelete"), &b));
    out->set_exclude_preparing_delete(b);
  }
  if (const Json* f = Field(v, "pvcRetentionPolicy")) {
    SNAPSHOT_RETURN_IF_ERROR(
        internal::ReadString(*f, Path(path, "pvcRetentionPolicy"), out->mutable_pvc_retention_policy()));
  }
  return absl::OkStatus();
}

absl::Status ReadSpec(const Json& v, bool v1beta1, pb::CloneSetSpec* out) {
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, "spec"));
  int32_t n = 0;
  if (const Json* f = Field(v, "replicas")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*f, "spec.replicas", &n));
    out->set_replicas(n);
  }
  if (const Json* f = Field(v, "selector")) {
    SNAPSHOT_RETURN_IF_ERROR(common::DecodeLabelSelector(*f, "spec.selector", out->mutable_selector()));
  }
  if (const Json* f = Field(v, "template")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(*f, "spec.template"));
    out->set_template_json(f->dump());
  }
  if (const Json* f = Field(v, "volumeClaimTemplates")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireArray(*f, "spec.volumeClaimTemplates"));
    for (size_t i = 0; i < f->size(); ++i) {
      SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject((*f)[i], Index("spec.volumeClaimTemplates", i)));
      out->add_volume_claim_templates_json((*f)[i].dump());
    }
  }
  if (const Json* f = Field(v, "scaleStrategy")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadScaleStrategy(*f, v1beta1, out->mutable_scale_strategy()));
  }
  if (const Json* f = Field(v, "updateStrategy")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadUpdateStrategy(*f, v1beta1, out->mutable_update_strategy()));
  }
  if (const Json* f = Field(v, "revisionHistoryLimit")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*f, "spec.revisionHistoryLimit", &n));
    out->set_revision_history_limit(n);
  }
  if (const Json* f = Field(v, "minReadySeconds")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*f, "spec.minReadySeconds", &n));
    out->set_min_ready_seconds(n);
  }
  if (const Json* f = Field(v, "lifecycle")) {
    SNAPSHOT_RETURN_IF_ERROR(ReadLifecycle(*f, "spec.lifecycle", out->mutable_lifecycle()));
  }
  if (const Json* f = Field(v, "progressDeadlineSeconds")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*f, "spec.progressDeadlineSeconds", &n));
    out->set_progress_deadline_seconds(n);
  }
  return absl::OkStatus();
}

absl::Status ReadStatus(const Json& v, pb::CloneSetStatus* out) {
  SNAPSHOT_RETURN_IF_ERROR(internal::RequireObject(v, "status"));
  int64_t g = 0;
  if (const Json* f = Field(v, "observedGeneration")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt64(*f, "status.observedGeneration", &g));
    out->set_observed_generation(g);
  }
  struct Counter {
    const char* key;
    void (pb::CloneSetStatus::*set)(int32_t);
  };
  static constexpr Counter kCounters[] = {
      {"replicas", &pb::CloneSetStatus::set_replicas},
      {"readyReplicas", &pb::CloneSetStatus::set_ready_replicas},
      {"availableReplicas", &pb::CloneSetStatus::set_available_replicas},
      {"updatedReplicas", &pb::CloneSetStatus::set_updated_replicas},
      {"updatedReadyReplicas", &pb::CloneSetStatus::set_updated_ready_replicas},
      {"updatedAvailableReplicas", &pb::CloneSetStatus::set_updated_available_replicas},
      {"expectedUpdatedReplicas", &pb::CloneSetStatus::set_expected_updated_replicas},
      {"collisionCount", &pb::CloneSetStatus::set_collision_count},
  };
  for (const Counter& c : kCounters) {
    if (const Json* f = Field(v, c.key)) {
      int32_t n = 0;
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadInt32(*f, Path("status", c.key), &n));
      (out->*c.set)(n);
    }
  }
  if (const Json* f = Field(v, "updateRevision")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "status.updateRevision", out->mutable_update_revision()));
  }
  if (const Json* f = Field(v, "currentRevision")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "status.currentRevision", out->mutable_current_revision()));
  }
  if (const Json* f = Field(v, "labelSelector")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "status.labelSelector", out->mutable_label_selector()));
  }
  if (const Json* f = Field(v, "conditions")) {
    SNAPSHOT_RETURN_IF_ERROR(internal::RequireArray(*f, "status.conditions"));
    for (size_t i = 0; i < f->size(); ++i) {
      SNAPSHOT_RETURN_IF_ERROR(internal::ReadCondition((*f)[i], Index("status.conditions", i), out->add_conditions()));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadInt32Annotation(const pb::ObjectMeta& meta, const char* key, std::optional<int32_t>* out) {
  auto it = meta.annotations().find(key);
  if (it == meta.annotations().end()) return absl::OkStatus();
  int32_t n = 0;
  if (!absl::SimpleAtoi(it->second, &n)) {
    return absl::InvalidArgumentError(
        internal::Cat(AnnotationPath(key), ": \"", it->second, "\" is not an integer"));
  }
  *out = n;
  return absl::OkStatus();
}

// v1alpha1 keeps the pre-download settings and excludePreparingDelete in metadata (semantics §1.2). The
// pre-download settings belong to the rolling update, so OnDelete drops them as it drops the rolling fields.
absl::Status ApplyV1alpha1Metadata(pb::CloneSet* cs) {
  const pb::ObjectMeta& meta = cs->metadata();
  if (auto it = meta.labels().find(kruise::kExcludePreparingDeleteLabel);
      it != meta.labels().end() && it->second == "true") {
    cs->mutable_spec()->mutable_scale_strategy()->set_exclude_preparing_delete(true);
  }
  pb::UpdateStrategy* update = cs->mutable_spec()->mutable_update_strategy();
  if (update->type() == "OnDelete") return absl::OkStatus();
  if (auto it = meta.annotations().find(kruise::kPreDownloadParallelismAnnotation); it != meta.annotations().end()) {
    int32_t n = 0;
    if (absl::SimpleAtoi(it->second, &n)) {
      update->mutable_image_predownload_parallelism()->set_int_value(n);
    } else if (!it->second.empty() && it->second.back() == '%') {
      update->mutable_image_predownload_parallelism()->set_str_value(it->second);
    } else {
      return absl::InvalidArgumentError(internal::Cat(AnnotationPath(kruise::kPreDownloadParallelismAnnotation), ": \"", it->second,
                                                     "\" is not an integer or a percentage"));
    }
  }
  std::optional<int32_t> n;
  SNAPSHOT_RETURN_IF_ERROR(ReadInt32Annotation(meta, kruise::kPreDownloadTimeoutSecondsAnnotation, &n));
  if (n) update->set_image_predownload_timeout_seconds(*n);
  n.reset();
  SNAPSHOT_RETURN_IF_ERROR(ReadInt32Annotation(meta, kruise::kPreDownloadMinUpdatedReadyPodsAnnotation, &n));
  if (n) update->set_image_predownload_min_updated_ready_pods(*n);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<pb::CloneSet> CloneSetFromJson(std::string_view json) {
  Json doc;
  SNAPSHOT_RETURN_IF_ERROR(internal::ParseDocument(json, "CloneSet", &doc));
  pb::CloneSet cs;
  std::string api_version = kruise::kV1alpha1;
  if (const Json* f = Field(doc, "apiVersion")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadString(*f, "apiVersion", &api_version));
  if (api_version != kruise::kV1alpha1 && api_version != kruise::kV1beta1) {
    return absl::InvalidArgumentError(internal::Cat("apiVersion: \"", api_version, "\" is not ", kruise::kV1alpha1, " or ", kruise::kV1beta1));
  }
  if (const Json* f = Field(doc, "kind"); f != nullptr && *f != "CloneSet") {
    return absl::InvalidArgumentError(internal::Cat("kind: ", f->dump(), " is not \"CloneSet\""));
  }
  const bool v1beta1 = api_version == kruise::kV1beta1;
  cs.set_api_version(api_version);
  if (const Json* f = Field(doc, "metadata")) SNAPSHOT_RETURN_IF_ERROR(internal::ReadObjectMeta(*f, "metadata", cs.mutable_metadata()));
  if (const Json* f = Field(doc, "spec")) SNAPSHOT_RETURN_IF_ERROR(ReadSpec(*f, v1beta1, cs.mutable_spec()));
  if (const Json* f = Field(doc, "status")) SNAPSHOT_RETURN_IF_ERROR(ReadStatus(*f, cs.mutable_status()));
  if (!v1beta1) SNAPSHOT_RETURN_IF_ERROR(ApplyV1alpha1Metadata(&cs));
  return cs;
}

}  // namespace cloneset::snapshot
