#include "planner/pod_factory.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;

// Our CRD serves apps.kruise.io/v1alpha1 first, so owner references name that version (upstream: v1beta1).
Json CloneSetControllerRef(const pb::CloneSet& cs) {
  return Json{{"apiVersion", "apps.kruise.io/v1alpha1"}, {"kind", "CloneSet"},       {"name", cs.metadata().name()},
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

}  // namespace

absl::StatusOr<NewPod> BuildPod(const PlanContext& ctx, const std::string& template_json,
                                const std::string& revision, const std::string& instance_id) {
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
  annotations[kLifecycleTimestampAnnotation] = FormatRfc3339(ctx.now);

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
  std::set<std::string> existing_pvcs;
  for (const auto* pvc : ctx.pvcs) existing_pvcs.insert(pvc->metadata().name());
  NewPod out;
  Json volumes = Json::array();
  std::set<std::string> vct_names;
  const auto& vcts = cs.spec().volume_claim_templates_json();
  for (int i = 0; i < vcts.size(); ++i) {
    absl::StatusOr<Json> vct = ParseObject(vcts[i], absl::StrCat("spec.volume_claim_templates_json[", i, "]"));
    if (!vct.ok()) return vct.status();
    Json vmeta = ObjectOrEmpty(*vct, "metadata");
    const std::string vct_name = vmeta.value("name", "");
    if (vct_name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("spec.volume_claim_templates_json[", i, "].metadata.name: required"));
    }
    const std::string claim = absl::StrCat(vct_name, "-", cs_name, "-", instance_id);
    vct_names.insert(vct_name);
    volumes.push_back({{"name", vct_name}, {"persistentVolumeClaim", {{"claimName", claim}, {"readOnly", false}}}});
    if (existing_pvcs.contains(claim)) continue;

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
  if (!volumes.empty()) spec["volumes"] = volumes;

  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", spec}};
  out.pod_json = pod.dump();
  return out;
}

}  // namespace cloneset::planner
