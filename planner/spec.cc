#include "planner/spec.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planner/int_or_percent.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;

absl::Status Invalid(std::string_view field, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": ", std::string(message)));
}

}  // namespace

static int JsonDepth(std::string_view text) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return max_depth;
}

absl::Status CheckJsonDepth(std::string_view text, std::string_view field) {
  if (JsonDepth(text) <= kMaxJsonDepth) return absl::OkStatus();
  return Invalid(field, absl::StrCat("is nested deeper than ", kMaxJsonDepth, " levels"));
}

absl::StatusOr<bool> IsV1beta1(const pb::CloneSet& clone_set) {
  const std::string& v = clone_set.api_version();
  if (v.empty() || v == kruise::kV1alpha1) return false;
  if (v == kruise::kV1beta1) return true;
  return Invalid("apiVersion", absl::StrCat("\"", v, "\" is not supported (want \"", kruise::kV1alpha1, "\" or \"",
                                            kruise::kV1beta1, "\")"));
}

absl::StatusOr<ResolvedSpec> ResolveSpec(const pb::CloneSet& clone_set, const pb::FeatureGates& gates) {
  absl::StatusOr<bool> beta = IsV1beta1(clone_set);
  if (!beta.ok()) return beta.status();
  const pb::CloneSetSpec& spec = clone_set.spec();
  ResolvedSpec r;
  r.replicas = spec.has_replicas() ? spec.replicas() : 1;
  if (r.replicas < 0) return Invalid("spec.replicas", absl::StrCat(r.replicas, " must not be negative"));

  const pb::UpdateStrategy& us = spec.update_strategy();
  const std::string& type = us.type();
  if (type.empty() || type == "ReCreate") {
    r.policy = PodUpdatePolicy::kReCreate;
  } else if (type == "InPlaceIfPossible") {
    r.policy = PodUpdatePolicy::kInPlaceIfPossible;
  } else if (type == "InPlaceOnly") {
    r.policy = PodUpdatePolicy::kInPlaceOnly;
  } else if (type == "OnDelete") {
    r.rolling_update = false;
  } else {
    return Invalid("spec.updateStrategy.type",
                   absl::StrCat("\"", type, "\" is not one of ReCreate, InPlaceIfPossible, InPlaceOnly, OnDelete"));
  }

  if (r.rolling_update) {
    absl::StatusOr<int32_t> partition = ResolvePartition(us.partition(), r.replicas, "spec.updateStrategy.partition");
    if (!partition.ok()) return partition.status();
    r.partition = *partition;
    r.paused = us.paused();
    absl::StatusOr<int32_t> surge = ResolveScaled(us.max_surge(), r.replicas, /*round_up=*/true, 0,
                                                  "spec.updateStrategy.maxSurge");
    if (!surge.ok()) return surge.status();
    // Paused pauses surge too (upstream only zeroes it inside the diff; docs/compatibility.md, Update).
    r.max_surge = r.paused ? 0 : *surge;
    pb::IntOrString default_unavailable;
    default_unavailable.set_str_value("20%");
    absl::StatusOr<int32_t> unavailable =
        ResolveScaled(HasValue(us.max_unavailable()) ? us.max_unavailable() : default_unavailable, r.replicas,
                      /*round_up=*/r.max_surge == 0, 0, "spec.updateStrategy.maxUnavailable");
    if (!unavailable.ok()) return unavailable.status();
    r.max_unavailable = *unavailable;
    r.grace_period_seconds = us.grace_period_seconds();
    if (r.grace_period_seconds < 0) {
      return Invalid("spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds", "must not be negative");
    }
    r.expected_updated_replicas = r.replicas - r.partition;
  } else {
    // rollingUpdate == nil upstream: every rolling field is dropped and the 20 % default rounds *down* (§1.1).
    r.max_unavailable = static_cast<int32_t>(static_cast<int64_t>(r.replicas) * 20 / 100);
    r.expected_updated_replicas = r.replicas;
  }

  const pb::ScaleStrategy& ss = spec.scale_strategy();
  absl::StatusOr<int32_t> scale_unavailable = ResolveScaled(ss.max_unavailable(), r.replicas, /*round_up=*/true,
                                                            INT32_MAX, "spec.scaleStrategy.maxUnavailable");
  if (!scale_unavailable.ok()) return scale_unavailable.status();
  r.scale_max_unavailable = *scale_unavailable;
  r.pvc_reuse = ss.has_enable_pvc_reuse() ? ss.enable_pvc_reuse() : !*beta;
  if (ss.pvc_retention_policy().empty() || ss.pvc_retention_policy() == "Delete") {
    r.retain_pvcs = false;
  } else if (ss.pvc_retention_policy() == "Retain") {
    r.retain_pvcs = true;
  } else {
    return Invalid("spec.scaleStrategy.pvcRetentionPolicy",
                   absl::StrCat("\"", ss.pvc_retention_policy(), "\" is not one of Delete, Retain"));
  }
  r.exclude_preparing_delete = ss.exclude_preparing_delete() || gates.scaling_exclude_preparing_delete();
  r.pods_to_delete.assign(ss.pods_to_delete().begin(), ss.pods_to_delete().end());

  r.min_ready_seconds = spec.min_ready_seconds();
  if (r.min_ready_seconds < 0) return Invalid("spec.minReadySeconds", "must not be negative");
  r.revision_history_limit = spec.has_revision_history_limit() ? spec.revision_history_limit() : 10;
  if (r.revision_history_limit < 0) return Invalid("spec.revisionHistoryLimit", "must not be negative");
  if (spec.has_progress_deadline_seconds()) {
    if (spec.progress_deadline_seconds() < 0) return Invalid("spec.progressDeadlineSeconds", "must not be negative");
    r.has_progress_deadline = spec.progress_deadline_seconds() != INT32_MAX;
    r.progress_deadline_seconds = spec.progress_deadline_seconds();
  }
  return r;
}

absl::StatusOr<LabelMap> TemplateLabels(std::string_view template_json) {
  Json doc = Json::parse(template_json.begin(), template_json.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Invalid("spec.template", "is not valid JSON");
  if (!doc.is_object()) return Invalid("spec.template", "must be a JSON object (a PodTemplateSpec)");
  LabelMap labels;
  auto meta = doc.find("metadata");
  if (meta == doc.end() || meta->is_null()) return labels;
  if (!meta->is_object()) return Invalid("spec.template.metadata", "must be an object");
  auto found = meta->find("labels");
  if (found == meta->end() || found->is_null()) return labels;
  if (!found->is_object()) return Invalid("spec.template.metadata.labels", "must be an object of strings");
  for (const auto& [key, value] : found->items()) {
    if (!value.is_string()) {
      return Invalid(absl::StrCat("spec.template.metadata.labels[", key, "]"), "must be a string");
    }
    labels[key] = value.get<std::string>();
  }
  return labels;
}

bool SelectorIsEmpty(const pb::LabelSelector& selector) {
  return selector.match_labels().empty() && selector.match_expressions().empty();
}

absl::StatusOr<pb::LabelSelector> EffectiveSelector(const pb::CloneSet& clone_set, bool* defaulted) {
  if (defaulted != nullptr) *defaulted = false;
  if (!SelectorIsEmpty(clone_set.spec().selector())) return clone_set.spec().selector();
  absl::StatusOr<LabelMap> labels = TemplateLabels(clone_set.spec().template_json());
  if (!labels.ok()) return labels.status();
  if (labels->empty()) {
    return Invalid("spec.selector", "is missing and cannot be defaulted: spec.template.metadata.labels is empty");
  }
  pb::LabelSelector selector;
  *selector.mutable_match_labels() = *labels;
  if (defaulted != nullptr) *defaulted = true;
  return selector;
}

}  // namespace cloneset::planner
