#include "planner/inplace_spec.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "nlohmann/json.hpp"
#include "planner/go_quantity.h"
#include "base/json_read.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;
using base::json_read::ParseJsonObject;
using base::json_read::StringList;
using base::json_read::StringMap;

struct PatchOp {
  std::string op;  // add, remove, replace
  std::vector<std::string> path;
};

// RFC 6902 diff with appscode/jsonpatch's shape: objects per key, equal-length arrays element-wise, arrays of
// different length as add/remove of the tail, anything else as replace.
void Diff(const Json& a, const Json& b, std::vector<std::string>& path, std::vector<PatchOp>& ops) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      path.push_back(it.key());
      if (!b.contains(it.key())) {
        ops.push_back({"remove", path});
      } else {
        Diff(it.value(), b.at(it.key()), path, ops);
      }
      path.pop_back();
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (a.contains(it.key())) continue;
      path.push_back(it.key());
      ops.push_back({"add", path});
      path.pop_back();
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    const size_t common = std::min(a.size(), b.size());
    for (size_t i = 0; i < common; ++i) {
      path.push_back(std::to_string(i));
      Diff(a[i], b[i], path, ops);
      path.pop_back();
    }
    for (size_t i = common; i < std::max(a.size(), b.size()); ++i) {
      path.push_back(std::to_string(i));
      ops.push_back({a.size() > b.size() ? "remove" : "add", path});
      path.pop_back();
    }
    return;
  }
  ops.push_back({"replace", path});
}

bool IsIndex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ["spec","containers","0","env"] -> "spec.containers[0].env"
std::string HumanPath(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& part : path) {
    if (IsIndex(part)) {
      absl::StrAppend(&out, "[", part, "]");
    } else {
      absl::StrAppend(&out, out.empty() ? "" : ".", part);
    }
  }
  return out;
}

std::string HumanOp(const PatchOp& op) {
  const char* verb = op.op == "add" ? "added" : op.op == "remove" ? "removed" : "changed";
  return absl::StrCat("template ", HumanPath(op.path), " ", verb);
}

void DiffStringMaps(const std::map<std::string, std::string>& old_map, const std::map<std::string, std::string>& new_map,
                    std::map<std::string, std::string>& set, std::vector<std::string>& remove) {
  for (const auto& [key, value] : new_map) {
    auto it = old_map.find(key);
    if (it == old_map.end() || it->second != value) set[key] = value;
  }
  for (const auto& [key, value] : old_map) {
    if (!new_map.contains(key)) remove.push_back(key);
  }
}

// env entries reading metadata.labels['k'] / metadata.annotations['k'] through fieldRef, per container.
struct EnvRef {
  std::string container;
  bool label = true;
  std::string key;
};

std::vector<EnvRef> EnvFromMetadataRefs(const Json& template_json) {
  std::vector<EnvRef> refs;
  const Json* containers = nullptr;
  if (template_json.contains("spec") && template_json["spec"].is_object() &&
      template_json["spec"].contains("containers")) {
    containers = &template_json["spec"]["containers"];
  }
  if (containers == nullptr || !containers->is_array()) return refs;
  for (const Json& container : *containers) {
    if (!container.is_object() || !container.contains("env") || !container["env"].is_array()) continue;
    const std::string name = container.value("name", "");
    for (const Json& env : container["env"]) {
      if (!env.is_object()) continue;
      const std::string env_name = env.value("name", "");
      if (env_name == "SIDECARSET_VERSION" || env_name == "SIDECARSET_VERSION_ALT") continue;
      if (env.contains("value") && env["value"].is_string() && !env["value"].get<std::string>().empty()) continue;
      if (!env.contains("valueFrom") || !env["valueFrom"].is_object()) continue;
      const Json& from = env["valueFrom"];
      if (!from.contains("fieldRef") || !from["fieldRef"].is_object()) continue;
      const std::string field_path = from["fieldRef"].value("fieldPath", "");
      for (const auto& [prefix, is_label] : {std::pair<std::string, bool>{"metadata.labels['", true},
                                             std::pair<std::string, bool>{"metadata.annotations['", false}}) {
        if (field_path.size() > prefix.size() + 2 && field_path.compare(0, prefix.size(), prefix) == 0 &&
            field_path.compare(field_path.size() - 2, 2, "']") == 0) {
          refs.push_back({name, is_label, field_path.substr(prefix.size(), field_path.size() - prefix.size() - 2)});
        }
      }
    }
  }
  return refs;
}

std::string TemplateOfRevision(const pb::ControllerRevision& revision) {
  Json data;
  if (!ParseJsonObject(revision.data_json(), &data)) return "";
  if (!data.contains("spec") || !data["spec"].is_object() || !data["spec"].contains("template")) return "";
  Json tmpl = data["spec"]["template"];
  if (!tmpl.is_object()) return "";
  tmpl.erase("$patch");
  return tmpl.dump();
}

// §5.7 with the InPlaceWorkloadVerticalScaling gate: a replaced spec.containers[i].resources.(requests|limits).r,
// r cpu or memory, is resized in place (upstream UpdateInplaceUpdateMetadata). "" when `op` is one, and it is
// added to `spec`; otherwise why not.
std::string AddResizeOp(const PatchOp& op, const Json& old_containers, const Json& new_tmpl, InPlaceUpdateSpec& spec) {
  // ["spec", "containers", "0", "resources", "limits", "cpu"]
  if (op.path.size() != 6 || (op.path[4] != "limits" && op.path[4] != "requests")) return HumanOp(op);
  const size_t index = std::stoul(op.path[2]);
  if (index >= old_containers.size()) return HumanOp(op);
  const std::string& resource = op.path[5];
  if (!common::ResizableResource(resource)) {
    return absl::StrCat(HumanOp(op), " (only cpu and memory are resized in place)");
  }
  const Json& container_resources = new_tmpl["spec"]["containers"][index]["resources"];
  const Json& value = container_resources[op.path[4]][resource];
  const std::string raw = value.is_string() ? value.get<std::string>() : value.is_number() ? value.dump() : "";
  absl::StatusOr<std::string> quantity = CanonicalQuantity(raw);
  if (!quantity.ok()) return absl::StrCat(HumanOp(op), " (", quantity.status().message(), ")");
  ContainerResources& resources = spec.container_resources[old_containers[index].value("name", "")];
  if (op.path[4] == "limits") {
    // The pod's request of a resource the template only limits is that limit (the API server defaulted it from
    // the limit): it follows the limit, or the resize would change the pod's QoS class.
    const Json requests = container_resources.value("requests", Json::object());
    if (!requests.is_object() || !requests.contains(resource)) resources.requests.emplace(resource, *quantity);
    resources.limits[resource] = *std::move(quantity);
  } else {
    resources.requests[resource] = *std::move(quantity);
  }
  return "";
}

// The QoS class of the pods made from a template (their requests defaulted from limits, as the API server does).
common::QosClass TemplateQosClass(const Json& tmpl) {
  Json spec = tmpl.value("spec", Json::object());
  common::DefaultRequestsFromLimits(spec);
  return common::PodQosClass(spec);
}

bool HasPodLevelResources(const Json& tmpl) {
  const Json spec = tmpl.value("spec", Json::object());
  const Json resources = spec.is_object() ? spec.value("resources", Json::object()) : Json::object();
  if (!resources.is_object()) return false;
  for (const char* list : {"requests", "limits"}) {
    const Json values = resources.value(list, Json::object());
    if (values.is_object() && !values.empty()) return true;
  }
  return false;
}

const pb::ControllerRevision* FindRevision(const PlanContext& ctx, const std::string& name) {
  for (const pb::ControllerRevision* revision : ctx.revisions) {
    if (revision->metadata().name() == name) return revision;
  }
  return nullptr;
}

std::string TemplateOf(const PlanContext& ctx, const std::string& revision_name) {
  if (revision_name == ctx.update_revision) return ctx.update_template_json;
  if (revision_name == ctx.current_revision) return ctx.current_template_json;
  const pb::ControllerRevision* revision = FindRevision(ctx, revision_name);
  return revision == nullptr ? "" : TemplateOfRevision(*revision);
}

}  // namespace

std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdateSpec(const PlanContext& ctx,
                                                            const std::string& old_template_json,
                                                            const std::string& new_template_json,
                                                            const std::string& target_revision,
                                                            std::string* why_not) {
  const auto fail = [&](std::string reason) -> std::optional<InPlaceUpdateSpec> {
    if (why_not != nullptr) *why_not = std::move(reason);
    return std::nullopt;
  };
  Json old_tmpl;
  Json new_tmpl;
  if (!ParseJsonObject(old_template_json, &old_tmpl)) return fail("the pod's revision template is not valid JSON");
  if (!ParseJsonObject(new_template_json, &new_tmpl)) return fail("the target revision template is not valid JSON");

  InPlaceUpdateSpec spec;
  spec.revision = target_revision;
  spec.grace_seconds = ctx.spec.grace_period_seconds;

  std::vector<PatchOp> ops;
  std::vector<std::string> path;
  Diff(old_tmpl, new_tmpl, path, ops);
  const Json old_containers = old_tmpl.contains("spec") && old_tmpl["spec"].is_object()
                                  ? old_tmpl["spec"].value("containers", Json::array())
                                  : Json::array();
  for (const PatchOp& op : ops) {
    if (!op.path.empty() && op.path[0] == "metadata") continue;  // handled below from the two metadata objects
    if (op.path.empty() || op.path[0] != "spec") return fail(HumanOp(op));
    if (op.op != "replace") return fail(HumanOp(op));
    if (op.path.size() == 4 && op.path[1] == "containers" && op.path[3] == "image" && IsIndex(op.path[2])) {
      const size_t index = std::stoul(op.path[2]);
      if (index >= old_containers.size() || !new_tmpl["spec"]["containers"][index]["image"].is_string()) {
        return fail(HumanOp(op));
      }
      spec.container_images[old_containers[index].value("name", "")] =
          new_tmpl["spec"]["containers"][index]["image"].get<std::string>();
      continue;
    }
    if (ctx.gates.in_place_workload_vertical_scaling() && op.path.size() >= 4 && op.path[1] == "containers" &&
        IsIndex(op.path[2]) && op.path[3] == "resources") {
      if (std::string why = AddResizeOp(op, old_containers, new_tmpl, spec); !why.empty()) return fail(why);
      continue;
    }
    return fail(HumanOp(op));
  }
  if (!spec.container_resources.empty()) {
    // The API server refuses a resize that changes the pod's QoS class, and any resize of a pod with pod-level
    // resources (upstream checks only the former, on the templates as written, and leaves the latter to fail at
    // the API server).
    const common::QosClass old_qos = TemplateQosClass(old_tmpl);
    const common::QosClass new_qos = TemplateQosClass(new_tmpl);
    if (old_qos != new_qos) {
      return fail(absl::StrCat("template resources change the pod's QoS class from ", common::QosClassName(old_qos),
                               " to ", common::QosClassName(new_qos)));
    }
    if (HasPodLevelResources(old_tmpl) || HasPodLevelResources(new_tmpl)) {
      return fail("template has pod-level resources (spec.resources): such pods cannot be resized");
    }
  }

  const Json old_meta = old_tmpl.value("metadata", Json::object());
  const Json new_meta = new_tmpl.value("metadata", Json::object());
  for (const char* field : {"name", "generateName", "namespace", "ownerReferences"}) {
    if (old_meta.value(field, Json()) != new_meta.value(field, Json())) {
      return fail(absl::StrCat("template metadata.", field, " changed"));
    }
  }
  std::map<std::string, std::string> old_labels = StringMap(old_meta.value("labels", Json::object()));
  std::map<std::string, std::string> new_labels = StringMap(new_meta.value("labels", Json::object()));
  std::map<std::string, std::string> old_annotations = StringMap(old_meta.value("annotations", Json::object()));
  std::map<std::string, std::string> new_annotations = StringMap(new_meta.value("annotations", Json::object()));

  if (!ctx.gates.disable_in_place_update_env_from_metadata()) {
    // Changed keys read by a container's env go with that container's restart, not with the generic patch.
    std::set<std::pair<bool, std::string>> moved;
    for (const EnvRef& ref : EnvFromMetadataRefs(new_tmpl)) {
      const auto& olds = ref.label ? old_labels : old_annotations;
      const auto& news = ref.label ? new_labels : new_annotations;
      auto it = news.find(ref.key);
      if (it == news.end()) continue;  // a removal is not an add/replace
      auto old_it = olds.find(ref.key);
      if (old_it != olds.end() && old_it->second == it->second) continue;
      RefMetadata& meta = spec.container_ref_metadata[ref.container];
      (ref.label ? meta.labels : meta.annotations)[ref.key] = it->second;
      spec.update_env_from_metadata = true;
      moved.insert({ref.label, ref.key});
    }
    for (const auto& [is_label, key] : moved) {
      (is_label ? old_labels : old_annotations).erase(key);
      (is_label ? new_labels : new_annotations).erase(key);
    }
  }
  DiffStringMaps(old_labels, new_labels, spec.set_labels, spec.remove_labels);
  DiffStringMaps(old_annotations, new_annotations, spec.set_annotations, spec.remove_annotations);
  const std::vector<std::string> old_finalizers = StringList(old_meta.value("finalizers", Json::array()));
  const std::vector<std::string> new_finalizers = StringList(new_meta.value("finalizers", Json::array()));
  for (const std::string& f : new_finalizers) {
    if (std::find(old_finalizers.begin(), old_finalizers.end(), f) == old_finalizers.end()) {
      spec.add_finalizers.push_back(f);
    }
  }
  for (const std::string& f : old_finalizers) {
    if (std::find(new_finalizers.begin(), new_finalizers.end(), f) == new_finalizers.end()) {
      spec.remove_finalizers.push_back(f);
    }
  }
  return spec;
}

namespace {

// PodRevision for a pod object or its facts: RevisionMatches reads the same revision label from either.
template <typename Pod>
const pb::ControllerRevision* FirstMatchingRevision(const PlanContext& ctx, const Pod& pod) {
  for (const pb::ControllerRevision* revision : ctx.revisions) {
    if (RevisionMatches(pod, revision->metadata().name())) return revision;
  }
  return nullptr;
}

}  // namespace

const pb::ControllerRevision* PodRevision(const PlanContext& ctx, const pb::Pod& pod) {
  return FirstMatchingRevision(ctx, pod);
}

const pb::ControllerRevision* PodRevision(const PlanContext& ctx, const PodFacts& pod) {
  return FirstMatchingRevision(ctx, pod);
}

std::string RevisionVctHash(const PlanContext& ctx, const std::string& revision) {
  const pb::ControllerRevision* found = FindRevision(ctx, revision);
  if (found == nullptr) return revision == ctx.update_revision ? ctx.update_vct_hash : "";
  auto it = found->metadata().annotations().find(kVctHashAnnotation);
  if (it != found->metadata().annotations().end()) return it->second;
  return revision == ctx.update_revision ? ctx.update_vct_hash : "";
}

std::optional<InPlaceUpdateSpec> CalculateInPlaceUpdate(const PlanContext& ctx,
                                                        const pb::ControllerRevision* old_revision,
                                                        const std::string& target_revision, std::string* why_not) {
  if (old_revision == nullptr) {
    if (why_not != nullptr) *why_not = "the pod's revision is unknown";
    return std::nullopt;
  }
  const std::string& old_name = old_revision->metadata().name();
  if (ctx.spec.policy != PodUpdatePolicy::kInPlaceOnly) {
    auto it = old_revision->metadata().annotations().find(kVctHashAnnotation);
    const bool old_has = it != old_revision->metadata().annotations().end();
    const pb::ControllerRevision* target = FindRevision(ctx, target_revision);
    bool target_has = false;
    std::string target_hash;
    if (target != nullptr) {
      auto t = target->metadata().annotations().find(kVctHashAnnotation);
      target_has = t != target->metadata().annotations().end();
      if (target_has) target_hash = t->second;
    } else if (target_revision == ctx.update_revision) {
      target_has = true;  // created by this plan with the CloneSet's current volumeClaimTemplates
      target_hash = ctx.update_vct_hash;
    }
    if (old_has && target_has && it->second != target_hash) {
      if (why_not != nullptr) *why_not = "volumeClaimTemplates changed, so the pod and its PVCs are recreated";
      return std::nullopt;
    }
  }
  std::string old_template = TemplateOfRevision(*old_revision);
  if (old_name == ctx.update_revision && !ctx.update_template_json.empty()) old_template = ctx.update_template_json;
  const std::string new_template = TemplateOf(ctx, target_revision);
  if (new_template.empty()) {
    if (why_not != nullptr) *why_not = absl::StrCat("revision ", target_revision, " has no template");
    return std::nullopt;
  }
  auto spec = CalculateInPlaceUpdateSpec(ctx, old_template, new_template, target_revision, why_not);
  if (spec.has_value()) spec->old_revision = old_name;
  return spec;
}

bool RolloutIsInPlace(const PlanContext& ctx) {
  if (ctx.spec.policy == PodUpdatePolicy::kReCreate || ctx.current_revision == ctx.update_revision) return false;
  const pb::ControllerRevision* current = FindRevision(ctx, ctx.current_revision);
  return CalculateInPlaceUpdate(ctx, current, ctx.update_revision, nullptr).has_value();
}

}  // namespace cloneset::planner
