#include "planner/validation.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planner/spec.h"
#include "planner/go_typed_json.h"
#include "planner/int_or_percent.h"
#include "planner/predicates.h"
#include "planner/volume_refs.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;
using Errors = std::vector<pb::FieldError>;

// What the immutability check compares: the canonical string of a valid selector; an invalid one (reported
// elsewhere) compares by its whole content.
std::string SelectorText(const pb::LabelSelector& selector) {
  absl::StatusOr<common::LabelSelector> s = common::LabelSelector::FromProto(selector, "spec.selector");
  return s.ok() ? s->String() : absl::StrCat("invalid:", selector.ShortDebugString());
}

void Add(Errors& errors, std::string field, std::string message) {
  pb::FieldError* e = &errors.emplace_back();
  e->set_field(std::move(field));
  e->set_message(std::move(message));
}

std::string Str(absl::string_view v) { return std::string(v.data(), v.size()); }

// Splits "field: message" produced by the resolvers back into a FieldError.
void AddStatus(Errors& errors, const absl::Status& status) {
  const std::string text = Str(status.message());
  const size_t colon = text.find(": ");
  if (colon == std::string::npos) {
    Add(errors, "", text);
  } else {
    Add(errors, text.substr(0, colon), text.substr(colon + 2));
  }
}

// Parses a JSON object; on failure appends an error for `field` and returns a discarded value.
Json ParseObject(std::string_view text, const std::string& field, const std::string& what, Errors& errors) {
  if (absl::Status s = CheckJsonDepth(text, field); !s.ok()) {
    AddStatus(errors, s);
    return Json(Json::value_t::discarded);
  }
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    Add(errors, field, "is not valid JSON");
  } else if (!doc.is_object()) {
    Add(errors, field, absl::StrCat("must be a JSON object (", what, ")"));
    return Json(Json::value_t::discarded);
  }
  return doc;
}

bool IsDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

bool IsDnsLabel(std::string_view name) {
  return name.size() <= 63 && IsDnsSubdomain(name) && name.find('.') == std::string_view::npos;
}

const Json* Member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// §2.2 rules 4 and 5, for the parts of a pod template the planner depends on.
void ValidateTemplate(const std::string& template_json, Errors& errors) {
  const Json doc = ParseObject(template_json, "spec.template", "a PodTemplateSpec", errors);
  if (doc.is_discarded()) return;
  absl::StatusOr<LabelMap> labels = TemplateLabels(template_json);
  if (!labels.ok()) AddStatus(errors, labels.status());
  const Json* spec = Member(doc, "spec");
  if (spec == nullptr || !spec->is_object()) {
    Add(errors, "spec.template.spec", "required (an object)");
    return;
  }
  const Json* containers = Member(*spec, "containers");
  if (containers == nullptr || !containers->is_array() || containers->empty()) {
    Add(errors, "spec.template.spec.containers", "at least one container is required");
  } else {
    std::set<std::string> names;
    for (size_t i = 0; i < containers->size(); ++i) {
      const Json& c = (*containers)[i];
      const std::string where = absl::StrCat("spec.template.spec.containers[", i, "]");
      const Json* name = Member(c, "name");
      if (name == nullptr || !name->is_string() || !IsDnsLabel(name->get<std::string>())) {
        Add(errors, where + ".name", "required: a DNS label (lower-case letters, digits and '-')");
      } else if (!names.insert(name->get<std::string>()).second) {
        Add(errors, where + ".name", absl::StrCat("duplicate container name \"", name->get<std::string>(), "\""));
      }
      const Json* image = Member(c, "image");
      if (image == nullptr || !image->is_string() || image->get<std::string>().empty()) {
        Add(errors, where + ".image", "required");
      }
    }
  }
  const Json* restart = Member(*spec, "restartPolicy");
  if (restart != nullptr && (!restart->is_string() || (restart->get<std::string>() != "Always" &&
                                                       !restart->get<std::string>().empty()))) {
    Add(errors, "spec.template.spec.restartPolicy", "only \"Always\" is supported");
  }
  if (Member(*spec, "activeDeadlineSeconds") != nullptr) {
    Add(errors, "spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in cloneset is not Supported");
  }
  // What kruise-manager's decoder rejects (a string for an int32, "abc" as a quantity...): upstream's webhook and
  // informer cannot read such a CloneSet (docs/compatibility.md "Revisions").
  if (absl::StatusOr<Json> typed = CanonicalPodTemplate(doc); !typed.ok()) AddStatus(errors, typed.status());
}

void ValidateVolumeClaimTemplates(const pb::CloneSetSpec& spec, Errors& errors) {
  std::set<std::string> names;
  for (int i = 0; i < spec.volume_claim_templates_json_size(); ++i) {
    const std::string field = absl::StrCat("spec.volumeClaimTemplates[", i, "]");
    const Json doc = ParseObject(spec.volume_claim_templates_json(i), field, "a PersistentVolumeClaim", errors);
    if (doc.is_discarded()) continue;
    if (absl::StatusOr<nlohmann::ordered_json> typed = GoTypedRoundTrip(doc, go_schema::kPersistentVolumeClaim, field);
        !typed.ok()) {
      AddStatus(errors, typed.status());
    }
    const Json* meta = Member(doc, "metadata");
    const Json* name = meta == nullptr ? nullptr : Member(*meta, "name");
    if (name == nullptr || !name->is_string() || !IsDnsLabel(name->get<std::string>())) {
      Add(errors, field + ".metadata.name", "required: a DNS label");
    } else if (!names.insert(name->get<std::string>()).second) {
      Add(errors, field + ".metadata.name", absl::StrCat("duplicate name \"", name->get<std::string>(), "\""));
    }
  }
}

// §2.2 rule 4: every volume the containers use is a volume of the template or a volumeClaimTemplate (upstream
// validates the template with the claim templates added as volumes). A template that is not JSON is reported by
// ValidateTemplate.
void ValidateVolumeReferences(const pb::CloneSetSpec& spec, Errors& errors) {
  const Json doc = Json::parse(spec.template_json(), nullptr, /*allow_exceptions=*/false);
  const Json* pod_spec = doc.is_object() ? Member(doc, "spec") : nullptr;
  if (pod_spec == nullptr || !pod_spec->is_object()) return;
  std::set<std::string> defined;
  if (const Json* volumes = Member(*pod_spec, "volumes"); volumes != nullptr && volumes->is_array()) {
    for (const Json& v : *volumes) {
      if (const Json* name = Member(v, "name"); name != nullptr && name->is_string()) {
        defined.insert(name->get<std::string>());
      }
    }
  }
  for (const std::string& vct : spec.volume_claim_templates_json()) {
    const Json v = Json::parse(vct, nullptr, /*allow_exceptions=*/false);
    const Json* meta = v.is_object() ? Member(v, "metadata") : nullptr;
    if (const Json* name = meta == nullptr ? nullptr : Member(*meta, "name"); name != nullptr && name->is_string()) {
      defined.insert(name->get<std::string>());
    }
  }
  for (const VolumeRef& ref : VolumeReferences(*pod_spec, "spec.template.spec")) {
    if (!defined.contains(ref.name)) {
      Add(errors, ref.field,
          absl::StrCat("Not found: \"", ref.name, "\" (no volume or volumeClaimTemplate of that name)"));
    }
  }
}

void ValidatePriority(const pb::UpdatePriorityStrategy& p, Errors& errors) {
  const std::string base = "spec.updateStrategy.priorityStrategy";
  if (!p.weight_priority().empty() && !p.order_priority().empty()) {
    Add(errors, base, "only one of weightPriority and orderPriority can be used");
  }
  for (int i = 0; i < p.weight_priority_size(); ++i) {
    const pb::UpdatePriorityWeightTerm& term = p.weight_priority(i);
    const std::string where = absl::StrCat(base, ".weightPriority[", i, "]");
    if (term.weight() < 0 || term.weight() > 100) Add(errors, where + ".weight", "weight must be in range [0, 100]");
    if (SelectorIsEmpty(term.match_selector())) {
      Add(errors, where + ".matchSelector", "selector can not be empty");
    } else if (absl::StatusOr<common::LabelSelector> s =
                   common::LabelSelector::FromProto(term.match_selector(), where + ".matchSelector");
               !s.ok()) {
      AddStatus(errors, s.status());
    }
  }
  for (int i = 0; i < p.order_priority_size(); ++i) {
    if (p.order_priority(i).ordered_key().empty()) {
      Add(errors, absl::StrCat(base, ".orderPriority[", i, "].orderedKey"), "key can not be empty");
    }
  }
}

void ValidateScatter(const pb::UpdateStrategy& us, Errors& errors) {
  std::set<std::pair<std::string, std::string>> seen;
  for (int i = 0; i < us.scatter_strategy_size(); ++i) {
    const pb::UpdateScatterTerm& term = us.scatter_strategy(i);
    const std::string where = absl::StrCat("spec.updateStrategy.scatterStrategy[", i, "]");
    if (term.key().empty()) Add(errors, where + ".key", "key should not be empty");
    if (!seen.insert({term.key(), term.value()}).second) {
      Add(errors, where, absl::StrCat("duplicated term ", term.key(), ":", term.value()));
    }
  }
}

void ValidatePreDownload(const pb::UpdateStrategy& us, Errors& errors) {
  const pb::IntOrString& par = us.image_predownload_parallelism();
  const std::string field = "spec.updateStrategy.imagePreDownloadParallelism";
  if (par.value_case() == pb::IntOrString::kIntValue && par.int_value() < 0) {
    Add(errors, field, "must not be negative");
  } else if (par.value_case() == pb::IntOrString::kStrValue) {
    const std::string& s = par.str_value();
    const bool digits = !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    if (!digits) Add(errors, field, absl::StrCat("\"", s, "\" must be a non-negative integer (no percentage)"));
  }
  if (us.has_image_predownload_timeout_seconds() && us.image_predownload_timeout_seconds() < 0) {
    Add(errors, "spec.updateStrategy.imagePreDownloadTimeoutSeconds", "must not be negative");
  }
  if (us.has_image_predownload_min_updated_ready_pods() && us.image_predownload_min_updated_ready_pods() < 0) {
    Add(errors, "spec.updateStrategy.imagePreDownloadMinUpdatedReadyPods", "must not be negative");
  }
}

void ValidateRollingUpdate(const pb::CloneSet& cs, Errors& errors) {
  const pb::CloneSetSpec& spec = cs.spec();
  const pb::UpdateStrategy& us = spec.update_strategy();
  const int32_t replicas = spec.has_replicas() ? std::max(spec.replicas(), 0) : 1;
  absl::StatusOr<int32_t> partition = ResolvePartition(us.partition(), replicas, "spec.updateStrategy.partition");
  if (!partition.ok()) AddStatus(errors, partition.status());
  ValidatePriority(us.priority_strategy(), errors);
  ValidateScatter(us, errors);
  absl::StatusOr<int32_t> unavailable =
      ResolveScaled(us.max_unavailable(), replicas, true, 0, "spec.updateStrategy.maxUnavailable");
  if (!unavailable.ok()) AddStatus(errors, unavailable.status());
  absl::StatusOr<int32_t> surge = ResolveScaled(us.max_surge(), replicas, true, 0, "spec.updateStrategy.maxSurge");
  if (!surge.ok()) AddStatus(errors, surge.status());
  if (surge.ok() && *surge > 0 && us.type() == "InPlaceOnly") {
    Add(errors, "spec.updateStrategy.maxSurge", "can not use maxSurge with strategy type InPlaceOnly");
  }
  if (unavailable.ok() && surge.ok() && replicas > 0 && *unavailable < 1 && *surge < 1) {
    Add(errors, "spec.updateStrategy.maxUnavailable", "maxUnavailable and maxSurge should not both be less than 1");
  }
  if (us.grace_period_seconds() < 0) {
    Add(errors, "spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds", "must not be negative");
  }
  ValidatePreDownload(us, errors);
}

// §2.2 rule 6: duplicates always; for v1alpha1 every newly added name must be an existing, live pod of this set.
void ValidatePodsToDelete(const pb::CloneSet& cs, const pb::CloneSet* old, bool beta,
                          const std::vector<const pb::Pod*>& pods, Errors& errors) {
  const auto& names = cs.spec().scale_strategy().pods_to_delete();
  const std::string field = "spec.scaleStrategy.podsToDelete";
  std::set<std::string> seen;
  std::vector<std::string> duplicates;
  for (const std::string& n : names) {
    if (!seen.insert(n).second) duplicates.push_back(n);
  }
  if (!duplicates.empty()) {
    Add(errors, field, absl::StrCat("duplicated items: [", absl::StrJoin(duplicates, " "), "]"));
    return;
  }
  if (beta) return;
  std::set<std::string> before;
  if (old != nullptr) before.insert(old->spec().scale_strategy().pods_to_delete().begin(),
                                    old->spec().scale_strategy().pods_to_delete().end());
  // By name, so many names against many pods stay linear (the first pod of a name, as a scan would find).
  absl::flat_hash_map<std::string_view, const pb::Pod*> by_name;
  by_name.reserve(pods.size());
  for (const pb::Pod* p : pods) by_name.emplace(p->metadata().name(), p);
  for (const std::string& n : names) {
    if (before.contains(n)) continue;
    auto it = by_name.find(n);
    if (it == by_name.end()) {
      Add(errors, field, absl::StrCat("find pod ", n, " failed"));
      continue;
    }
    const pb::Pod& pod = *it->second;
    if (IsSet(pod.metadata().deletion_timestamp())) {
      Add(errors, field, absl::StrCat("pod ", n, " already terminating"));
      continue;
    }
    const bool ours = !cs.metadata().uid().empty() &&
                      std::any_of(pod.metadata().owner_references().begin(), pod.metadata().owner_references().end(),
                                  [&](const pb::OwnerReference& r) {
                                    return r.controller() && r.uid() == cs.metadata().uid();
                                  });
    if (!ours) Add(errors, field, absl::StrCat("pod ", n, " owner is not this CloneSet"));
  }
}

// §2.2 rule 16: with InPlaceOnly the template spec may only change container images.
void ValidateInPlaceOnlyChange(const pb::CloneSet& cs, const pb::CloneSet& old, Errors& errors) {
  Errors ignored;
  const Json now_doc = ParseObject(cs.spec().template_json(), "spec.template", "", ignored);
  const Json old_doc = ParseObject(old.spec().template_json(), "spec.template", "", ignored);
  if (now_doc.is_discarded() || old_doc.is_discarded()) return;
  const Json* now_spec = Member(now_doc, "spec");
  const Json* old_spec = Member(old_doc, "spec");
  const Json diff = Json::diff(old_spec == nullptr ? Json::object() : *old_spec,
                               now_spec == nullptr ? Json::object() : *now_spec);
  for (const Json& op : diff) {
    const std::string kind = op.value("op", "");
    const std::string path = op.value("path", "");
    const std::vector<std::string> parts = absl::StrSplit(path, '/');
    const bool image_replace = kind == "replace" && parts.size() == 4 && parts[0].empty() &&
                               parts[1] == "containers" && !parts[2].empty() &&
                               std::all_of(parts[2].begin(), parts[2].end(), [](char c) {
                                 return c >= '0' && c <= '9';
                               }) &&
                               parts[3] == "image";
    if (!image_replace) {
      Add(errors, "spec.template.spec",
          absl::StrCat("only allowed to update images in spec for InPlaceOnly, but found ", kind, " ", path));
      return;
    }
  }
}

bool ValidTimestamp(const google::protobuf::Timestamp& ts) {
  // The range google.protobuf.Timestamp allows: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
  return ts.seconds() >= -62135596800LL && ts.seconds() <= 253402300799LL && ts.nanos() >= 0 && ts.nanos() <= 999999999;
}

// Fast checks for the per-object loops: field paths are only formatted for an error (a snapshot has 10^5 pods).
bool ValidMeta(const pb::ObjectMeta& meta, bool need_name) {
  return !(need_name && meta.name().empty()) && ValidTimestamp(meta.creation_timestamp()) &&
         ValidTimestamp(meta.deletion_timestamp());
}

bool ValidConditions(const google::protobuf::RepeatedPtrField<pb::Condition>& conditions) {
  for (const pb::Condition& c : conditions) {
    if (!ValidTimestamp(c.last_transition_time()) || !ValidTimestamp(c.last_update_time())) return false;
  }
  return true;
}

absl::Status CheckTimestamp(const google::protobuf::Timestamp& ts, std::string_view field) {
  if (!ValidTimestamp(ts)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), ": not a valid timestamp (seconds ", ts.seconds(), ", nanos ", ts.nanos(), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckMeta(const pb::ObjectMeta& meta, const std::string& base, bool need_name) {
  if (need_name && meta.name().empty()) return absl::InvalidArgumentError(base + ".name: required");
  if (absl::Status s = CheckTimestamp(meta.creation_timestamp(), base + ".creationTimestamp"); !s.ok()) return s;
  return CheckTimestamp(meta.deletion_timestamp(), base + ".deletionTimestamp");
}

absl::Status CheckConditions(const google::protobuf::RepeatedPtrField<pb::Condition>& conditions,
                             const std::string& base) {
  for (int i = 0; i < conditions.size(); ++i) {
    const std::string where = absl::StrCat(base, "[", i, "]");
    if (absl::Status s = CheckTimestamp(conditions[i].last_transition_time(), where + ".lastTransitionTime");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckTimestamp(conditions[i].last_update_time(), where + ".lastUpdateTime"); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

void ApplyDefaults(pb::CloneSet* cs) {
  const bool beta = cs->api_version() == kruise::kV1beta1;
  if (cs->api_version().empty()) cs->set_api_version(kruise::kV1alpha1);
  pb::CloneSetSpec* spec = cs->mutable_spec();
  if (!spec->has_replicas()) spec->set_replicas(1);
  if (SelectorIsEmpty(spec->selector())) {
    absl::StatusOr<LabelMap> labels = TemplateLabels(spec->template_json());
    if (labels.ok() && !labels->empty()) *spec->mutable_selector()->mutable_match_labels() = *labels;
  }
  pb::UpdateStrategy* us = spec->mutable_update_strategy();
  if (us->type().empty()) us->set_type("ReCreate");
  if (us->type() != "OnDelete") {
    if (!HasValue(us->partition())) us->mutable_partition()->set_int_value(0);
    if (!HasValue(us->max_unavailable())) us->mutable_max_unavailable()->set_str_value("20%");
    if (!HasValue(us->max_surge())) us->mutable_max_surge()->set_int_value(0);
  }
  if (!spec->has_revision_history_limit()) spec->set_revision_history_limit(10);
  pb::ScaleStrategy* ss = spec->mutable_scale_strategy();
  if (!ss->has_enable_pvc_reuse()) ss->set_enable_pvc_reuse(!beta);
  if (ss->pvc_retention_policy().empty()) ss->set_pvc_retention_policy("Delete");
}

std::vector<pb::FieldError> ValidateCloneSet(const pb::CloneSet& cs, const pb::CloneSet* old,
                                             const std::vector<const pb::Pod*>& pods) {
  Errors errors;
  absl::StatusOr<bool> beta_or = IsV1beta1(cs);
  if (!beta_or.ok()) AddStatus(errors, beta_or.status());
  const bool beta = beta_or.value_or(false);
  const pb::CloneSetSpec& spec = cs.spec();

  if (!IsDnsSubdomain(cs.metadata().name())) {
    Add(errors, "metadata.name", absl::StrCat("\"", cs.metadata().name(),
                                              "\" must be a DNS subdomain (lower-case letters, digits, '-' and '.')"));
  }
  if (spec.has_replicas() && spec.replicas() < 0) Add(errors, "spec.replicas", "must be greater than or equal to 0");

  if (SelectorIsEmpty(spec.selector())) {
    Add(errors, "spec.selector", "empty selector is invalid for cloneset");
  } else if (absl::StatusOr<common::LabelSelector> selector =
                 common::LabelSelector::FromProto(spec.selector(), "spec.selector");
             !selector.ok()) {
    AddStatus(errors, selector.status());
  } else if (absl::StatusOr<LabelMap> labels = TemplateLabels(spec.template_json());
             labels.ok() && !selector->Matches(*labels)) {
    Add(errors, "spec.template.metadata.labels", "`selector` does not match template `labels`");
  }
  ValidateTemplate(spec.template_json(), errors);
  ValidateVolumeClaimTemplates(spec, errors);
  ValidateVolumeReferences(spec, errors);

  ValidatePodsToDelete(cs, old, beta, pods, errors);
  const pb::ScaleStrategy& ss = spec.scale_strategy();
  if (absl::StatusOr<int32_t> v = ResolveScaled(ss.max_unavailable(), 1, true, 0, "spec.scaleStrategy.maxUnavailable");
      !v.ok()) {
    AddStatus(errors, v.status());
  }
  if (!ss.pvc_retention_policy().empty() && ss.pvc_retention_policy() != "Delete" &&
      ss.pvc_retention_policy() != "Retain") {
    Add(errors, "spec.scaleStrategy.pvcRetentionPolicy",
        absl::StrCat("\"", ss.pvc_retention_policy(), "\" is not one of Delete, Retain"));
  }

  // OnDelete is accepted in both versions (upstream's v1alpha1 webhook refuses it: docs/compatibility.md); it has
  // no rolling update, so none of the rolling fields is checked (the decoder drops them, semantics §1.2).
  const std::string& type = spec.update_strategy().type();
  const bool known =
      type == "ReCreate" || type == "InPlaceIfPossible" || type == "InPlaceOnly" || type == "OnDelete";
  if (!known && !(beta && type.empty())) {
    Add(errors, "spec.updateStrategy.type",
        absl::StrCat("\"", type, "\" is not one of ReCreate, InPlaceIfPossible, InPlaceOnly, OnDelete"));
  }
  if (type != "OnDelete") ValidateRollingUpdate(cs, errors);

  if (spec.min_ready_seconds() < 0) Add(errors, "spec.minReadySeconds", "must be greater than or equal to 0");
  if (spec.has_revision_history_limit() && spec.revision_history_limit() < 0) {
    Add(errors, "spec.revisionHistoryLimit", "must be greater than or equal to 0");
  }
  if (spec.has_progress_deadline_seconds()) {
    const int32_t d = spec.progress_deadline_seconds();
    if (d < 0) {
      Add(errors, "spec.progressDeadlineSeconds", "must be greater than or equal to 0");
    } else if (!beta && d != INT32_MAX && d <= spec.min_ready_seconds()) {
      Add(errors, "spec.progressDeadlineSeconds", "must be greater than minReadySeconds");
    }
  }

  if (old != nullptr) {
    if (old->metadata().name() != cs.metadata().name()) Add(errors, "metadata.name", "field is immutable");
    if (old->metadata().namespace_() != cs.metadata().namespace_()) {
      Add(errors, "metadata.namespace", "field is immutable");
    }
    if (!old->metadata().uid().empty() && old->metadata().uid() != cs.metadata().uid()) {
      Add(errors, "metadata.uid", "field is immutable");
    }
    absl::StatusOr<pb::LabelSelector> before = EffectiveSelector(*old, nullptr);
    absl::StatusOr<pb::LabelSelector> after = EffectiveSelector(cs, nullptr);
    if (before.ok() && after.ok() && SelectorText(*before) != SelectorText(*after)) {
      Add(errors, "spec.selector",
          "field is immutable: updates to cloneset spec for fields other than 'replicas', 'template', "
          "'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'volumeClaimTemplates', "
          "'progressDeadlineSeconds' and 'revisionHistoryLimit' are forbidden");
    }
    if (!beta && type == "InPlaceOnly") ValidateInPlaceOnlyChange(cs, *old, errors);
  }
  return errors;
}

absl::Status CheckCloneSetForPlan(const pb::CloneSet& clone_set) {
  pb::CloneSet defaulted = clone_set;
  ApplyDefaults(&defaulted);
  const Errors errors = ValidateCloneSet(defaulted, &defaulted, {});
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(errors[0].field().empty() ? errors[0].message()
                                                              : errors[0].field() + ": " + errors[0].message());
}

absl::Status ValidatePlanRequestExceptPods(const pb::PlanRequest& request) {
  const pb::CloneSet& cs = request.clone_set();
  if (cs.metadata().name().empty()) return absl::InvalidArgumentError("metadata.name: required");
  if (cs.metadata().uid().empty()) return absl::InvalidArgumentError("metadata.uid: required");
  if (absl::Status s = CheckMeta(cs.metadata(), "metadata", true); !s.ok()) return s;
  if (absl::StatusOr<bool> beta = IsV1beta1(cs); !beta.ok()) return beta.status();

  Errors errors;
  const Json doc = ParseObject(cs.spec().template_json(), "spec.template", "a PodTemplateSpec", errors);
  if (!errors.empty()) return absl::InvalidArgumentError(errors[0].field() + ": " + errors[0].message());
  if (absl::StatusOr<LabelMap> labels = TemplateLabels(cs.spec().template_json()); !labels.ok()) {
    return labels.status();
  }
  ValidateVolumeClaimTemplates(cs.spec(), errors);
  if (!errors.empty()) return absl::InvalidArgumentError(errors[0].field() + ": " + errors[0].message());
  if (absl::StatusOr<ResolvedSpec> spec = ResolveSpec(cs, request.feature_gates()); !spec.ok()) return spec.status();
  absl::StatusOr<pb::LabelSelector> selector = EffectiveSelector(cs, nullptr);
  if (!selector.ok()) return selector.status();
  if (absl::StatusOr<common::LabelSelector> s = common::LabelSelector::FromProto(*selector, "spec.selector"); !s.ok()) {
    return s.status();
  }
  if (absl::Status s = CheckConditions(cs.status().conditions(), "status.conditions"); !s.ok()) return s;

  if (!IsSet(request.now())) return absl::InvalidArgumentError("now: required");
  if (absl::Status s = CheckTimestamp(request.now(), "now"); !s.ok()) return s;

  for (int i = 0; i < request.pvcs_size(); ++i) {
    if (ValidMeta(request.pvcs(i).metadata(), true)) continue;
    if (absl::Status s = CheckMeta(request.pvcs(i).metadata(), absl::StrCat("pvcs[", i, "].metadata"), true);
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < request.revisions_size(); ++i) {
    const pb::ControllerRevision& rev = request.revisions(i);
    const std::string base = absl::StrCat("revisions[", i, "]");
    if (absl::Status s = CheckMeta(rev.metadata(), base + ".metadata", true); !s.ok()) return s;
    // The data is read only where a revision is used: an unusable old revision is skipped (revision.h).
  }
  return absl::OkStatus();
}

bool PodLooksValid(const pb::Pod& pod) { return ValidMeta(pod.metadata(), true) && ValidConditions(pod.conditions()); }

absl::Status PodError(const pb::Pod& pod, int index, bool duplicate) {
  const std::string base = absl::StrCat("pods[", index, "]");
  if (absl::Status s = CheckMeta(pod.metadata(), base + ".metadata", true); !s.ok()) return s;
  if (duplicate) {
    return absl::InvalidArgumentError(
        absl::StrCat(base, ".metadata.name: duplicate pod \"", pod.metadata().name(), "\""));
  }
  if (absl::Status s = CheckConditions(pod.conditions(), base + ".status.conditions"); !s.ok()) return s;
  return absl::InternalError(absl::StrCat(base, ": rejected without a reason"));
}

}  // namespace cloneset::planner
