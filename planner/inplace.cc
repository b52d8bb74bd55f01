#include "planner/inplace.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

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

bool ParseJsonObject(const std::string& text, Json* out) {
  *out = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return out->is_object();
}

std::map<std::string, std::string> StringMap(const Json& object) {
  std::map<std::string, std::string> out;
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

std::vector<std::string> StringList(const Json& array) {
  std::vector<std::string> out;
  if (!array.is_array()) return out;
  for (const Json& item : array) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
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

OrderedJson RefMetadataJson(const RefMetadata& ref) {
  OrderedJson out = OrderedJson::object();
  if (!ref.labels.empty()) out["labels"] = ref.labels;
  if (!ref.annotations.empty()) out["annotations"] = ref.annotations;
  return out;
}

std::map<std::string, RefMetadata> ParseRefMetadata(const Json& object) {
  std::map<std::string, RefMetadata> out;
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    RefMetadata ref;
    if (it.value().is_object()) {
      ref.labels = StringMap(it.value().value("labels", Json::object()));
      ref.annotations = StringMap(it.value().value("annotations", Json::object()));
    }
    out[it.key()] = std::move(ref);
  }
  return out;
}

const pb::Container* FindContainer(const pb::Pod& pod, const std::string& name) {
  for (const pb::Container& c : pod.containers()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

const pb::ContainerStatus* FindContainerStatus(const pb::Pod& pod, const std::string& name) {
  for (const pb::ContainerStatus& s : pod.container_statuses()) {
    if (s.name() == name) return &s;
  }
  return nullptr;
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
    return fail(HumanOp(op));
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

// ---------------------------------------------------------------------------------------------------------------
// Annotations

namespace {

// JSON string literal the way Go's encoding/json writes it (HTML-sensitive characters escaped), without building
// a DOM: this runs once per updated pod.
// Bytes copied as they are: everything but the characters Go's encoding/json escapes and the first byte of
// U+2028/U+2029.
constexpr bool PlainJsonByteSlow(unsigned char c) {
  return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xe2;
}

// As a table: the scan runs over every byte of the image and container IDs of every updated pod.
struct PlainJsonBytes {
  bool plain[256] = {};
  constexpr PlainJsonBytes() {
    for (int c = 0; c < 256; ++c) plain[c] = PlainJsonByteSlow(static_cast<unsigned char>(c));
  }
};
constexpr PlainJsonBytes kPlainJsonBytes;

bool PlainJsonByte(unsigned char c) { return kPlainJsonBytes.plain[c]; }

void AppendJsonString(std::string& out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < value.size(); ++i) {
    // Runs of plain bytes (nearly every annotation value) are appended at once.
    size_t run = i;
    while (run < value.size() && PlainJsonByte(static_cast<unsigned char>(value[run]))) ++run;
    if (run > i) {
      out.append(value.data() + i, run - i);
      i = run;
      if (i == value.size()) break;
    }
    const unsigned char c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '<': case '>': case '&':
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else if (c == 0xe2 && i + 2 < value.size() && static_cast<unsigned char>(value[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(value[i + 2]) == 0xa8 ||
                    static_cast<unsigned char>(value[i + 2]) == 0xa9)) {
          out += static_cast<unsigned char>(value[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void AppendStringMap(std::string& out, const std::map<std::string, std::string>& map) {
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : map) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(out, k);
    out.push_back(':');
    AppendJsonString(out, v);
  }
  out.push_back('}');
}

// `list`: std::string or std::string_view elements.
template <typename List>
void AppendStringList(std::string& out, const List& list) {
  out.push_back('[');
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(out, list[i]);
  }
  out.push_back(']');
}

}  // namespace

std::string FormatInPlaceState(const InPlaceUpdateState& state) {
  std::string out;
  out.reserve(256);
  out += "{\"revision\":";
  AppendJsonString(out, state.revision);
  out += ",\"updateTimestamp\":";
  AppendJsonString(out, state.update_timestamp);
  out += ",\"lastContainerStatuses\":";
  if (state.last_container_statuses.empty()) {
    out += "null";
  } else {
    out.push_back('{');
    bool first = true;
    for (const auto& [name, status] : state.last_container_statuses) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(out, name);
      out += ":{";
      bool inner = false;
      if (!status.image_id.empty()) {
        out += "\"imageID\":";
        AppendJsonString(out, status.image_id);
        inner = true;
      }
      if (!status.container_id.empty()) {
        out += inner ? ",\"containerID\":" : "\"containerID\":";
        AppendJsonString(out, status.container_id);
      }
      out.push_back('}');
    }
    out.push_back('}');
  }
  if (state.update_env_from_metadata) out += ",\"updateEnvFromMetadata\":true";
  if (state.update_resources) out += ",\"updateResources\":true";
  if (state.update_images) out += ",\"updateImages\":true";
  if (!state.next_container_images.empty()) {
    out += ",\"nextContainerImages\":";
    AppendStringMap(out, state.next_container_images);
  }
  if (!state.next_container_ref_metadata.empty()) {
    out += ",\"nextContainerRefMetadata\":{";
    bool first = true;
    for (const auto& [name, ref] : state.next_container_ref_metadata) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(out, name);
      out += ":{";
      if (!ref.labels.empty()) {
        out += "\"labels\":";
        AppendStringMap(out, ref.labels);
      }
      if (!ref.annotations.empty()) {
        out += ref.labels.empty() ? "\"annotations\":" : ",\"annotations\":";
        AppendStringMap(out, ref.annotations);
      }
      out.push_back('}');
    }
    out.push_back('}');
  }
  if (!state.pre_check_containers_required_ready.empty()) {
    out += ",\"preCheckBeforeNext\":{\"containersRequiredReady\":";
    AppendStringList(out, state.pre_check_containers_required_ready);
    out.push_back('}');
  }
  if (!state.container_batches_record.empty()) {
    out += ",\"containerBatchesRecord\":[";
    for (size_t i = 0; i < state.container_batches_record.size(); ++i) {
      if (i > 0) out.push_back(',');
      out += "{\"timestamp\":";
      AppendJsonString(out, state.container_batches_record[i].timestamp);
      out += ",\"containers\":";
      AppendStringList(out, state.container_batches_record[i].containers);
      out.push_back('}');
    }
    out.push_back(']');
  }
  out.push_back('}');
  return out;
}

absl::StatusOr<InPlaceUpdateState> ParseInPlaceState(const std::string& json) {
  Json doc;
  if (!ParseJsonObject(json, &doc)) {
    return absl::InvalidArgumentError("annotation apps.kruise.io/inplace-update-state: not a JSON object");
  }
  InPlaceUpdateState state;
  state.revision = doc.value("revision", "");
  state.update_timestamp = doc.value("updateTimestamp", "");
  const Json statuses = doc.value("lastContainerStatuses", Json());
  if (statuses.is_object()) {
    for (auto it = statuses.begin(); it != statuses.end(); ++it) {
      if (!it.value().is_object()) continue;
      state.last_container_statuses[it.key()] = {it.value().value("imageID", ""), it.value().value("containerID", "")};
    }
  }
  state.update_env_from_metadata = doc.value("updateEnvFromMetadata", false);
  state.update_resources = doc.value("updateResources", false);
  state.update_images = doc.value("updateImages", false);
  state.next_container_images = StringMap(doc.value("nextContainerImages", Json::object()));
  state.next_container_ref_metadata = ParseRefMetadata(doc.value("nextContainerRefMetadata", Json::object()));
  const Json pre_check = doc.value("preCheckBeforeNext", Json());
  if (pre_check.is_object()) {
    state.pre_check_containers_required_ready = StringList(pre_check.value("containersRequiredReady", Json()));
  }
  const Json batches = doc.value("containerBatchesRecord", Json());
  if (batches.is_array()) {
    for (const Json& batch : batches) {
      if (!batch.is_object()) continue;
      state.container_batches_record.push_back(
          {batch.value("timestamp", ""), StringList(batch.value("containers", Json::array()))});
    }
  }
  return state;
}

std::string FormatGraceSpec(const InPlaceUpdateSpec& spec) {
  OrderedJson doc = OrderedJson::object();
  doc["revision"] = spec.revision;
  if (!spec.container_images.empty()) doc["containerImages"] = spec.container_images;
  if (!spec.container_ref_metadata.empty()) {
    OrderedJson refs = OrderedJson::object();
    for (const auto& [name, ref] : spec.container_ref_metadata) refs[name] = RefMetadataJson(ref);
    doc["containerRefMetadata"] = std::move(refs);
  }
  // metaDataPatch is a []byte upstream, hence base64 of a strategic merge patch.
  OrderedJson meta = OrderedJson::object();
  OrderedJson labels = OrderedJson::object();
  for (const auto& [k, v] : spec.set_labels) labels[k] = v;
  for (const std::string& k : spec.remove_labels) labels[k] = nullptr;
  OrderedJson annotations = OrderedJson::object();
  for (const auto& [k, v] : spec.set_annotations) annotations[k] = v;
  for (const std::string& k : spec.remove_annotations) annotations[k] = nullptr;
  if (!labels.empty()) meta["labels"] = std::move(labels);
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  if (!spec.add_finalizers.empty()) meta["finalizers"] = spec.add_finalizers;
  if (!spec.remove_finalizers.empty()) meta["$deleteFromPrimitiveList/finalizers"] = spec.remove_finalizers;
  if (!meta.empty()) doc["metaDataPatch"] = absl::Base64Escape(OrderedJson{{"metadata", meta}}.dump());
  if (spec.update_env_from_metadata) doc["updateEnvFromMetadata"] = true;
  if (spec.grace_seconds != 0) doc["graceSeconds"] = spec.grace_seconds;
  if (!spec.old_revision.empty()) doc["oldRevision"] = spec.old_revision;
  return doc.dump();
}

absl::StatusOr<InPlaceUpdateSpec> ParseGraceSpec(const std::string& json) {
  Json doc;
  if (!ParseJsonObject(json, &doc)) {
    return absl::InvalidArgumentError("annotation apps.kruise.io/inplace-update-grace: not a JSON object");
  }
  InPlaceUpdateSpec spec;
  spec.revision = doc.value("revision", "");
  spec.old_revision = doc.value("oldRevision", "");
  spec.container_images = StringMap(doc.value("containerImages", Json::object()));
  spec.container_ref_metadata = ParseRefMetadata(doc.value("containerRefMetadata", Json::object()));
  spec.update_env_from_metadata = doc.value("updateEnvFromMetadata", false);
  const Json grace = doc.value("graceSeconds", Json());
  if (grace.is_number_integer()) spec.grace_seconds = grace.get<int32_t>();
  const Json patch_b64 = doc.value("metaDataPatch", Json());
  if (patch_b64.is_string()) {
    std::string decoded;
    Json patch;
    if (!absl::Base64Unescape(patch_b64.get<std::string>(), &decoded) || !ParseJsonObject(decoded, &patch)) {
      return absl::InvalidArgumentError("annotation apps.kruise.io/inplace-update-grace: bad metaDataPatch");
    }
    const Json meta = patch.value("metadata", Json::object());
    for (const auto& [field, set, remove] :
         {std::tuple{"labels", &spec.set_labels, &spec.remove_labels},
          std::tuple{"annotations", &spec.set_annotations, &spec.remove_annotations}}) {
      const Json values = meta.value(field, Json::object());
      if (!values.is_object()) continue;
      for (auto it = values.begin(); it != values.end(); ++it) {
        if (it.value().is_null()) {
          remove->push_back(it.key());
        } else if (it.value().is_string()) {
          (*set)[it.key()] = it.value().get<std::string>();
        }
      }
    }
    spec.add_finalizers = StringList(meta.value("finalizers", Json::array()));
    spec.remove_finalizers = StringList(meta.value("$deleteFromPrimitiveList/finalizers", Json::array()));
  }
  return spec;
}

namespace {
// Looked up for every pod of every plan: static keys avoid building a std::string per lookup.
std::string_view FirstAnnotation(const pb::Pod& pod, const std::string& key, const std::string& legacy) {
  const auto& annotations = pod.metadata().annotations();
  if (annotations.empty()) return {};
  auto it = annotations.find(key);
  if (it != annotations.end() && !it->second.empty()) return it->second;
  it = annotations.find(legacy);
  return it == annotations.end() ? std::string_view() : std::string_view(it->second);
}
}  // namespace

std::string_view InPlaceStateAnnotation(const pb::Pod& pod) {
  static const std::string* const kKey = new std::string(kInPlaceStateAnnotation);
  static const std::string* const kLegacy = new std::string(kLegacyInPlaceStateAnnotation);
  return FirstAnnotation(pod, *kKey, *kLegacy);
}

std::string_view InPlaceGraceAnnotation(const pb::Pod& pod) {
  static const std::string* const kKey = new std::string(kInPlaceGraceAnnotation);
  static const std::string* const kLegacy = new std::string(kLegacyInPlaceGraceAnnotation);
  return FirstAnnotation(pod, *kKey, *kLegacy);
}

// ---------------------------------------------------------------------------------------------------------------
// Batches and completion

const std::string& Rfc3339(absl::Time t) {
  // One plan formats the same `now` for every pod it touches; remember the last one (per thread, so pure).
  thread_local absl::Time last = absl::InfinitePast();
  thread_local std::string text;
  if (t != last) {
    text = FormatRfc3339(t);
    last = t;
  }
  return text;
}

namespace {

// ApplyInPlaceBatch when no container reads changed metadata through env (nearly every update): the changed
// containers are the image keys, already in name order, and only launch priorities split them into batches.
// Same result as the general path, without its sets (this runs once per pod updated in place).
InPlaceBatch ApplyImageBatch(const PodContainers& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                             absl::Time now, InPlaceBatch batch) {
  std::vector<std::optional<int32_t>> priorities;
  priorities.reserve(spec.container_images.size());
  std::optional<int32_t> highest;
  for (const auto& [name, image] : spec.container_images) {
    priorities.push_back(pod.LaunchPriority(name));
    const std::optional<int32_t>& p = priorities.back();
    if (p.has_value() && (!highest || *p > *highest)) highest = p;
  }
  state.next_container_images.clear();
  state.next_container_ref_metadata.clear();
  std::vector<std::string> now_list;
  now_list.reserve(spec.container_images.size());
  size_t i = 0;
  for (const auto& [name, image] : spec.container_images) {
    const std::optional<int32_t>& p = priorities[i++];
    if (p.has_value() && *p != *highest) {
      state.next_container_images[name] = image;
      continue;
    }
    batch.container_images[name] = image;
    if (!state.last_container_statuses.contains(name)) {
      const ContainerLastStatus status = pod.LastStatus(name);
      state.last_container_statuses[name] = {std::string(status.image_id), std::string(status.container_id)};
    }
    now_list.push_back(name);
  }
  state.pre_check_containers_required_ready.clear();
  if (!state.next_container_images.empty()) state.pre_check_containers_required_ready = now_list;
  state.container_batches_record.push_back({Rfc3339(now), std::move(now_list)});
  batch.state = std::move(state);
  return batch;
}

}  // namespace

InPlaceBatch ApplyInPlaceBatch(const pb::Pod& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                               absl::Time now, bool apply_metadata) {
  return ApplyInPlaceBatch(PodContainers(pod), spec, std::move(state), now, apply_metadata);
}

InPlaceBatch ApplyInPlaceBatch(const PodContainers& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                               absl::Time now, bool apply_metadata) {
  InPlaceBatch batch;
  if (apply_metadata) {
    batch.set_labels = spec.set_labels;
    batch.set_annotations = spec.set_annotations;
    batch.remove_labels = spec.remove_labels;
    batch.remove_annotations = spec.remove_annotations;
    batch.add_finalizers = spec.add_finalizers;
    batch.remove_finalizers = spec.remove_finalizers;
  }
  if (spec.container_ref_metadata.empty()) return ApplyImageBatch(pod, spec, std::move(state), now, std::move(batch));
  std::set<std::string> changed;
  for (const auto& [name, image] : spec.container_images) changed.insert(name);
  for (const auto& [name, ref] : spec.container_ref_metadata) changed.insert(name);

  // Containers without a launch priority go now, plus those with the highest priority.
  std::optional<int32_t> highest;
  for (const std::string& name : changed) {
    const std::optional<int32_t> p = pod.LaunchPriority(name);
    if (p.has_value() && (!highest || *p > *highest)) highest = p;
  }
  std::set<std::string> now_set;
  for (const std::string& name : changed) {
    const std::optional<int32_t> p = pod.LaunchPriority(name);
    if (!p.has_value() || *p == *highest) now_set.insert(name);
  }
  // A later container reading the same changed metadata key must restart with the first one.
  for (bool grew = true; grew;) {
    grew = false;
    for (const std::string& name : changed) {
      if (now_set.contains(name)) continue;
      auto ref = spec.container_ref_metadata.find(name);
      if (ref == spec.container_ref_metadata.end()) continue;
      for (const std::string& other : now_set) {
        auto other_ref = spec.container_ref_metadata.find(other);
        if (other_ref == spec.container_ref_metadata.end()) continue;
        const auto shares = [](const auto& a, const auto& b) {
          for (const auto& [k, v] : a) {
            if (b.contains(k)) return true;
          }
          return false;
        };
        if (shares(ref->second.labels, other_ref->second.labels) ||
            shares(ref->second.annotations, other_ref->second.annotations)) {
          now_set.insert(name);
          grew = true;
          break;
        }
      }
    }
  }

  state.next_container_images.clear();
  state.next_container_ref_metadata.clear();
  for (const std::string& name : changed) {
    auto image = spec.container_images.find(name);
    auto ref = spec.container_ref_metadata.find(name);
    if (!now_set.contains(name)) {
      if (image != spec.container_images.end()) state.next_container_images[name] = image->second;
      if (ref != spec.container_ref_metadata.end()) state.next_container_ref_metadata[name] = ref->second;
      continue;
    }
    if (image != spec.container_images.end()) batch.container_images[name] = image->second;
    if (ref != spec.container_ref_metadata.end()) {
      for (const auto& [k, v] : ref->second.labels) batch.set_labels[k] = v;
      for (const auto& [k, v] : ref->second.annotations) batch.set_annotations[k] = v;
    }
    if (!state.last_container_statuses.contains(name)) {
      const ContainerLastStatus status = pod.LastStatus(name);
      state.last_container_statuses[name] = {std::string(status.image_id), std::string(status.container_id)};
    }
  }
  std::vector<std::string> now_list(now_set.begin(), now_set.end());
  state.pre_check_containers_required_ready.clear();
  if (!state.next_container_images.empty() || !state.next_container_ref_metadata.empty()) {
    state.pre_check_containers_required_ready = now_list;
  }
  state.container_batches_record.push_back({Rfc3339(now), now_list});
  batch.state = std::move(state);
  return batch;
}

SingleBatchState::SingleBatchState(const InPlaceUpdateSpec& spec, absl::Time now)
    : has_ref_metadata_(!spec.container_ref_metadata.empty()) {
  const std::string& timestamp = Rfc3339(now);
  prefix_ = "{\"revision\":";
  AppendJsonString(prefix_, spec.revision);
  prefix_ += ",\"updateTimestamp\":";
  AppendJsonString(prefix_, timestamp);
  prefix_ += ",\"lastContainerStatuses\":";
  if (spec.container_images.empty()) prefix_ += "null";
  if (spec.update_env_from_metadata) suffix_ += ",\"updateEnvFromMetadata\":true";
  if (!spec.container_images.empty()) suffix_ += ",\"updateImages\":true";
  suffix_ += ",\"containerBatchesRecord\":[{\"timestamp\":";
  AppendJsonString(suffix_, timestamp);
  suffix_ += ",\"containers\":";
  for (const auto& [name, image] : spec.container_images) {
    names_.push_back(name);
    std::string key;
    AppendJsonString(key, name);
    key.push_back(':');
    name_keys_.push_back(std::move(key));
  }
  AppendStringList(suffix_, names_);
  suffix_ += "}]}";
}

bool SingleBatchState::Covers(const PodContainers& pod) const {
  if (has_ref_metadata_) return false;
  if (names_.size() < 2) return true;  // one container cannot be split from itself
  // The batch splits exactly when two of the containers carry different launch priorities.
  std::optional<int32_t> seen;
  for (std::string_view name : names_) {
    const std::optional<int32_t> p = pod.LaunchPriority(name);
    if (!p.has_value()) continue;
    if (seen.has_value() && *seen != *p) return false;
    seen = p;
  }
  return true;
}

void SingleBatchState::AppendTo(const PodContainers& pod, std::string* out, bool whole) const {
  // One allocation for the whole value: sized from the statuses first (only escaping can still grow it). The
  // statuses of the first few containers are kept for the second pass; more are looked up again.
  constexpr size_t kStatusSyntax = sizeof("{\"imageID\":\"\",\"containerID\":\"\"},") - 1;
  constexpr size_t kKept = 4;
  ContainerLastStatus kept[kKept];
  size_t size = out->size() + (whole ? prefix_.size() + suffix_.size() : 0) + 2;
  for (size_t i = 0; i < names_.size(); ++i) {
    const ContainerLastStatus status = pod.LastStatus(names_[i]);
    if (i < kKept) kept[i] = status;
    size += name_keys_[i].size() + kStatusSyntax + status.image_id.size() + status.container_id.size();
  }
  out->reserve(size);
  if (whole) out->append(prefix_);
  if (!names_.empty()) {
    out->push_back('{');
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i > 0) out->push_back(',');
      out->append(name_keys_[i]);
      const ContainerLastStatus status = i < kKept ? kept[i] : pod.LastStatus(names_[i]);
      out->push_back('{');
      if (!status.image_id.empty()) {
        out->append("\"imageID\":");
        AppendJsonString(*out, status.image_id);
      }
      if (!status.container_id.empty()) {
        out->append(status.image_id.empty() ? "\"containerID\":" : ",\"containerID\":");
        AppendJsonString(*out, status.container_id);
      }
      out->push_back('}');
    }
    out->push_back('}');
  }
  if (whole) out->append(suffix_);
}

std::string NormalizeImage(std::string_view image) {
  std::string ref(image);
  std::string digest;
  if (auto at = ref.find('@'); at != std::string::npos) {
    digest = ref.substr(at);
    ref.resize(at);
  }
  const size_t slash = ref.find('/');
  std::string domain;
  std::string rest = ref;
  if (slash != std::string::npos) {
    const std::string first = ref.substr(0, slash);
    if (first.find('.') != std::string::npos || first.find(':') != std::string::npos || first == "localhost") {
      domain = first;
      rest = ref.substr(slash + 1);
    }
  }
  if (domain.empty()) domain = "docker.io";
  if (domain == "docker.io" && rest.find('/') == std::string::npos) rest = "library/" + rest;
  const size_t last_slash = rest.rfind('/');
  const bool has_tag = rest.find(':', last_slash == std::string::npos ? 0 : last_slash) != std::string::npos;
  if (!has_tag && digest.empty()) rest += ":latest";
  return absl::StrCat(domain, "/", rest, digest);
}

bool ContainersUpdateCompleted(const pb::Pod& pod, const InPlaceUpdateState& state) {
  for (const auto& [name, last] : state.last_container_statuses) {
    const pb::ContainerStatus* status = FindContainerStatus(pod, name);
    if (status == nullptr) return false;
    const bool restarted = !last.container_id.empty() && !status->container_id().empty() &&
                           status->container_id() != last.container_id;
    if (restarted) continue;
    // An env-from-metadata change keeps image and image ID: only a restart shows it was applied.
    if (state.update_env_from_metadata && !last.container_id.empty()) return false;
    if (status->image_id() != last.image_id) continue;
    const pb::Container* spec = FindContainer(pod, name);
    if (spec == nullptr || NormalizeImage(spec->image()) != NormalizeImage(status->image())) return false;
  }
  return true;
}

bool InPlaceUpdateCompleted(const pb::Pod& pod) {
  const std::string_view state_json = InPlaceStateAnnotation(pod);
  if (state_json.empty()) return true;
  if (!InPlaceGraceAnnotation(pod).empty()) return false;
  absl::StatusOr<InPlaceUpdateState> state = ParseInPlaceState(std::string(state_json));
  if (!state.ok()) return true;  // upstream: an unparsable state does not block the pod
  if (!state->next_container_images.empty() || !state->next_container_ref_metadata.empty()) return false;
  return ContainersUpdateCompleted(pod, *state);
}

}  // namespace cloneset::planner
