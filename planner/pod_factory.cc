#include "planner/pod_factory.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planner/predicates.h"
#include "planner/volume_refs.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;

// Our CRD serves apps.kruise.io/v1alpha1 first, so owner references name that version (upstream: v1beta1).
Json CloneSetControllerRef(const pb::CloneSet& cs) {
  return Json{{"apiVersion", kruise::kV1alpha1}, {"kind", "CloneSet"},       {"name", cs.metadata().name()},
              {"uid", cs.metadata().uid()},              {"controller", true},        {"blockOwnerDeletion", true}};
}

absl::StatusOr<Json> ParseObject(const std::string& text, std::string_view field) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": must be a JSON object"));
  }
  return j;
}

Json ObjectOrEmpty(const Json& parent, const char* key) {
  auto it = parent.find(key);
  return it != parent.end() && it->is_object() ? *it : Json::object();
}

absl::Status MissingClaimTemplateName(int i) {
  return absl::InvalidArgumentError(absl::StrCat("spec.volume_claim_templates_json[", i, "].metadata.name: required"));
}

// The pod and every claim template's PVC for `instance_id`, PVCs in claim template order (existing ones included).
// `claim_template_names`, when given, receives the claim template names.
absl::StatusOr<NewPod> Assemble(const PlanContext& ctx, const std::string& template_json, const std::string& revision,
                                const std::string& instance_id, std::vector<std::string>* claim_template_names = nullptr) {
  const pb::CloneSet& cs = *ctx.clone_set;
  const std::string& cs_name = cs.metadata().name();
  absl::StatusOr<Json> tmpl = ParseObject(template_json, "spec.template_json");
  if (!tmpl.ok()) return tmpl.status();
  const Json tmeta = ObjectOrEmpty(*tmpl, "metadata");
  Json spec = ObjectOrEmpty(*tmpl, "spec");

  Json labels = ObjectOrEmpty(tmeta, "labels");
  labels[kRevisionLabel] = ctx.gates.clone_set_short_hash() ? std::string(ShortHash(revision)) : revision;
  labels[kPodTemplateHashLabel] = std::string(ShortHash(revision));
  labels[kInstanceIdLabel] = instance_id;
  labels[kInstanceLabel] = cs_name;
  // Without a preNormal hook PreparingNormal only waits for scheduling, which an unscheduled pod cannot pass as
  // available anyway, so the pod starts in Normal and saves one write (docs/compatibility.md "Scale").
  const bool pre_normal_hook = cs.spec().has_lifecycle() && cs.spec().lifecycle().has_pre_normal();
  labels[kLifecycleStateLabel] = pre_normal_hook ? kStatePreparingNormal : kStateNormal;
  Json annotations = ObjectOrEmpty(tmeta, "annotations");
  annotations[kLifecycleTimestampAnnotation] = base::FormatTime(ctx.now);

  Json metadata = {
      {"name", absl::StrCat(cs_name, "-", instance_id)},
      {"generateName", absl::StrCat(cs_name, "-")},
      {"namespace", cs.metadata().namespace_()},
      {"labels", labels},
      {"annotations", annotations},
      {"ownerReferences", Json::array({CloneSetControllerRef(cs)})},
  };
  if (auto f = tmeta.find("finalizers"); f != tmeta.end() && f->is_array() && !f->empty()) {
    metadata["finalizers"] = *f;
  }

  // Readiness gate InPlaceUpdateReady, appended once.
  Json gates = spec.contains("readinessGates") && spec["readinessGates"].is_array() ? spec["readinessGates"]
                                                                                   : Json::array();
  bool has_gate = false;
  for (const auto& g : gates) {
    if (g.is_object() && g.value("conditionType", "") == kInPlaceUpdateReadyCondition) has_gate = true;
  }
  if (!has_gate) gates.push_back({{"conditionType", kInPlaceUpdateReadyCondition}});
  spec["readinessGates"] = gates;

  // PVC volumes first (in volumeClaimTemplates order, which upstream leaves to Go map order), then the template's
  // own volumes whose names do not collide with a claim template.
  NewPod out;
  Json volumes = Json::array();
  std::set<std::string> vct_names;
  const auto& vcts = cs.spec().volume_claim_templates_json();
  for (int i = 0; i < vcts.size(); ++i) {
    absl::StatusOr<Json> vct = ParseObject(vcts[i], absl::StrCat("spec.volume_claim_templates_json[", i, "]"));
    if (!vct.ok()) return vct.status();
    Json vmeta = ObjectOrEmpty(*vct, "metadata");
    const std::string vct_name = vmeta.value("name", "");
    if (vct_name.empty()) return MissingClaimTemplateName(i);
    const std::string claim = ClaimName(vct_name, cs_name, instance_id);
    vct_names.insert(vct_name);
    if (claim_template_names != nullptr) claim_template_names->push_back(vct_name);
    volumes.push_back({{"name", vct_name}, {"persistentVolumeClaim", {{"claimName", claim}, {"readOnly", false}}}});

    Json pvc = *vct;
    pvc.erase("status");
    pvc["apiVersion"] = "v1";
    pvc["kind"] = "PersistentVolumeClaim";
    Json pvc_labels = ObjectOrEmpty(vmeta, "labels");
    for (const auto& [k, v] : cs.spec().selector().match_labels()) pvc_labels[k] = v;
    pvc_labels[kInstanceIdLabel] = instance_id;
    pvc_labels[kInstanceLabel] = cs_name;
    Json owners = vmeta.contains("ownerReferences") && vmeta["ownerReferences"].is_array() ? vmeta["ownerReferences"]
                                                                                          : Json::array();
    owners.push_back(CloneSetControllerRef(cs));
    Json pmeta = vmeta;
    pmeta.erase("creationTimestamp");
    pmeta.erase("resourceVersion");
    pmeta.erase("uid");
    pmeta["name"] = claim;
    pmeta["namespace"] = cs.metadata().namespace_();
    pmeta["labels"] = pvc_labels;
    pmeta["ownerReferences"] = owners;
    pvc["metadata"] = pmeta;
    out.pvc_jsons.push_back(pvc.dump());
  }
  if (auto v = spec.find("volumes"); v != spec.end() && v->is_array()) {
    for (const auto& vol : *v) {
      if (vol.is_object() && vct_names.contains(vol.value("name", ""))) continue;
      volumes.push_back(vol);
    }
  }
  // A volume the containers use that nothing defines: the template of an older revision using a claim template
  // that was removed since (admission refuses that for the current template, §2.2 rule 4). The API server would
  // refuse the pod on every attempt and the scale-out would never get past it, so an emptyDir of that name
  // stands in for the removed claim (semantics §1.5).
  std::set<std::string> defined;
  for (const auto& vol : volumes) {
    if (vol.is_object()) defined.insert(vol.value("name", ""));
  }
  for (const VolumeRef& ref : VolumeReferences(spec, "spec")) {
    if (!defined.insert(ref.name).second) continue;
    volumes.push_back({{"name", ref.name}, {"emptyDir", Json::object()}});
    out.stand_in_volumes.push_back(ref.name);
  }
  if (!volumes.empty()) spec["volumes"] = volumes;

  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", spec}};
  out.pod_json = pod.dump();
  return out;
}

// Splits `doc` at every occurrence of `marker`.
std::vector<std::string> SplitAt(const std::string& doc, std::string_view marker) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at = doc.find(marker); at != std::string::npos; at = doc.find(marker, from)) {
    parts.push_back(doc.substr(from, at - from));
    from = at + marker.size();
  }
  parts.push_back(doc.substr(from));
  return parts;
}

std::string EscapedForJson(const std::string& text) {
  std::string quoted = Json(text).dump();
  return quoted.substr(1, quoted.size() - 2);
}

// Markers tried in turn until one does not occur in the template itself; no proper prefix of a marker is also its
// suffix, so occurrences never overlap.
constexpr int kMarkerAttempts = 8;
std::string Marker(int attempt) { return absl::StrCat("<<instance-id-", attempt, ">>"); }

}  // namespace

std::string PodFactory::Pieces::Join(std::string_view escaped_id) const {
  size_t size = 0;
  for (const std::string& p : parts) size += p.size() + escaped_id.size();
  std::string out;
  out.reserve(size);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(escaped_id);
    out.append(parts[i]);
  }
  return out;
}

absl::StatusOr<PodFactory> PodFactory::Create(const PlanContext& ctx, const std::string& template_json,
                                              const std::string& revision) {
  PodFactory f;
  f.ctx_ = &ctx;
  f.template_json_ = template_json;
  f.revision_ = revision;
  f.cs_name_ = ctx.clone_set->metadata().name();
  for (const auto* pvc : ctx.pvcs) f.existing_pvcs_.insert(pvc->metadata().name());
  for (int attempt = 0; attempt < kMarkerAttempts && !f.cut_; ++attempt) {
    // Cut the documents at the marker, then check the cut: joining around a second marker must give exactly what
    // assembling with that marker gives (it would not if the template contained the marker).
    const std::string marker = Marker(attempt), check = Marker(attempt) + "x";
    absl::StatusOr<NewPod> with_marker = Assemble(ctx, template_json, revision, marker);
    if (!with_marker.ok()) return with_marker.status();
    absl::StatusOr<NewPod> with_check = Assemble(ctx, template_json, revision, check);
    if (!with_check.ok()) return with_check.status();
    f.pod_.parts = SplitAt(with_marker->pod_json, marker);
    bool exact = f.pod_.Join(check) == with_check->pod_json;
    f.pvcs_.clear();
    for (size_t i = 0; i < with_marker->pvc_jsons.size(); ++i) {
      f.pvcs_.push_back(Pieces{SplitAt(with_marker->pvc_jsons[i], marker)});
      exact = exact && f.pvcs_.back().Join(check) == with_check->pvc_jsons[i];
    }
    f.cut_ = exact;
  }
  // Validates the template (for the fallback: Build then assembles every pod from scratch) and names the claims.
  absl::StatusOr<NewPod> probe = Assemble(ctx, template_json, revision, "probe", &f.vct_names_);
  if (!probe.ok()) return probe.status();
  f.stand_in_volumes_ = std::move(probe->stand_in_volumes);
  return f;
}

NewPod PodFactory::Build(const std::string& instance_id) const {
  NewPod out;
  std::vector<std::string> all_pvcs;
  if (cut_) {
    const std::string escaped = EscapedForJson(instance_id);
    out.pod_json = pod_.Join(escaped);
    for (const Pieces& pvc : pvcs_) all_pvcs.push_back(pvc.Join(escaped));
  } else {
    absl::StatusOr<NewPod> assembled = Assemble(*ctx_, template_json_, revision_, instance_id);
    out.pod_json = std::move(assembled->pod_json);
    all_pvcs = std::move(assembled->pvc_jsons);
  }
  out.stand_in_volumes = stand_in_volumes_;
  for (size_t i = 0; i < all_pvcs.size(); ++i) {
    std::string claim = ClaimName(vct_names_[i], cs_name_, instance_id);
    const bool exists = existing_pvcs_.contains(claim);
    out.claim_names.push_back(std::move(claim));
    if (!exists) out.pvc_jsons.push_back(std::move(all_pvcs[i]));
  }
  return out;
}

std::string ClaimName(std::string_view vct, std::string_view cs_name, std::string_view instance_id) {
  std::string name;
  name.reserve(vct.size() + cs_name.size() + instance_id.size() + 2);
  name.append(vct).append("-").append(cs_name).append("-").append(instance_id);
  return name;
}

absl::StatusOr<std::vector<std::string>> ClaimTemplateNames(const pb::CloneSet& cs) {
  std::vector<std::string> names;
  const auto& vcts = cs.spec().volume_claim_templates_json();
  for (int i = 0; i < vcts.size(); ++i) {
    absl::StatusOr<Json> vct = ParseObject(vcts[i], absl::StrCat("spec.volume_claim_templates_json[", i, "]"));
    if (!vct.ok()) return vct.status();
    std::string name = ObjectOrEmpty(*vct, "metadata").value("name", "");
    if (name.empty()) return MissingClaimTemplateName(i);
    names.push_back(std::move(name));
  }
  return names;
}

absl::StatusOr<NewPod> BuildPod(const PlanContext& ctx, const std::string& template_json,
                                const std::string& revision, const std::string& instance_id) {
  absl::StatusOr<PodFactory> factory = PodFactory::Create(ctx, template_json, revision);
  if (!factory.ok()) return factory.status();
  return factory->Build(instance_id);
}

}  // namespace cloneset::planner
