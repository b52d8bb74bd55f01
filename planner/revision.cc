#include "planner/revision.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planner/context_facts.h"
#include "planner/spec.h"
#include "base/go_json.h"
#include "planner/go_typed_json.h"
#include "planner/pod_facts.h"

namespace cloneset::planner {

using base::AppendGoJson;
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxRevisionPrefix = 223;  // 253 - len("-") - 29 (room for the hash), as upstream
constexpr int kMaxCollisionRetries = 64;

absl::StatusOr<Json> ParseObject(std::string_view text, std::string_view field) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": not valid JSON"));
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": must be a JSON object"));
  return j;
}

std::string SafeEncode(std::string_view decimal) {
  static constexpr char kAlphanums[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  out.reserve(decimal.size());
  for (char c : decimal) out += kAlphanums[static_cast<unsigned char>(c) % 27];
  return out;
}

const std::string* MapValue(const google::protobuf::Map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

absl::StatusOr<std::string> RevisionData(std::string_view template_json) {
  absl::StatusOr<Json> tmpl = ParseObject(template_json, "spec.template");
  if (!tmpl.ok()) return tmpl.status();
  absl::StatusOr<Json> canonical = CanonicalPodTemplate(*tmpl);
  if (!canonical.ok()) return canonical.status();
  (*canonical)["$patch"] = "replace";
  Json data = Json::object();
  data["spec"]["template"] = *std::move(canonical);
  std::string out;
  AppendGoJson(out, data);
  return out;
}

absl::StatusOr<std::string> LegacyRevisionData(std::string_view template_json) {
  absl::StatusOr<Json> tmpl = ParseObject(template_json, "spec.template");
  if (!tmpl.ok()) return tmpl.status();
  (*tmpl)["$patch"] = "replace";
  Json data = Json::object();
  data["spec"]["template"] = std::move(*tmpl);
  std::string out;
  AppendGoJson(out, data);
  return out;
}

namespace {

// The spec.template object of a revision's data, read into the template's Go types as upstream's ApplyRevision
// does (which is what CheckRevisionData and TemplateFromRevisionData share): data written by another version of
// this planner, or by hand, reads as the same template kruise-manager would see.
absl::StatusOr<Json> RevisionTemplate(std::string_view data_json) {
  if (absl::Status s = CheckJsonDepth(data_json, "revision data"); !s.ok()) return s;
  absl::StatusOr<Json> data = ParseObject(data_json, "revision data");
  if (!data.ok()) return data.status();
  auto spec = data->find("spec");
  if (spec == data->end() || !spec->is_object()) return absl::InvalidArgumentError("revision data: no spec");
  auto tmpl = spec->find("template");
  if (tmpl == spec->end() || !tmpl->is_object()) {
    return absl::InvalidArgumentError("revision data: no spec.template");
  }
  absl::StatusOr<Json> typed = CanonicalPodTemplate(*tmpl);
  if (!typed.ok()) return absl::InvalidArgumentError(absl::StrCat("revision data: ", typed.status().message()));
  return typed;
}

}  // namespace

absl::Status CheckRevisionData(std::string_view data_json) { return RevisionTemplate(data_json).status(); }

absl::StatusOr<std::string> TemplateFromRevisionData(std::string_view data_json) {
  absl::StatusOr<Json> tmpl = RevisionTemplate(data_json);
  if (!tmpl.ok()) return tmpl.status();
  std::string out;
  AppendGoJson(out, *tmpl);
  return out;
}

uint32_t Fnv1Hash32(std::string_view data, uint32_t seed) {
  uint32_t h = seed;
  for (char c : data) {
    h *= 16777619u;
    h ^= static_cast<unsigned char>(c);
  }
  return h;
}

std::string RevisionHash(std::string_view data_json, int32_t collision_count) {
  uint32_t h = Fnv1Hash32(data_json);
  h = Fnv1Hash32(absl::StrCat(collision_count), h);
  return SafeEncode(absl::StrCat(h));
}

// Upstream (volumeclaimtemplate.getExpectHash): each template reduced to {metadata:{name}, spec} in its Go types,
// stably sorted by name, json.Marshal'd as a list, and that byte slice written by go-spew ("([]uint8)[91 123 ...]",
// k8s.io/apimachinery's dump.ForHash) into FNV-1a 32; the decimal sum. "" without templates.
absl::StatusOr<std::string> VolumeClaimTemplatesHash(const pb::CloneSetSpec& spec) {
  if (spec.volume_claim_templates_json().empty()) return "";
  std::vector<std::pair<std::string, nlohmann::ordered_json>> vcts;
  for (int i = 0; i < spec.volume_claim_templates_json_size(); ++i) {
    const std::string field = absl::StrCat("spec.volumeClaimTemplates[", i, "]");
    absl::StatusOr<Json> j = ParseObject(spec.volume_claim_templates_json(i), field);
    if (!j.ok()) return j.status();
    // The name as decoded (a wrong type fails the whole decode, as it fails upstream's).
    absl::StatusOr<nlohmann::ordered_json> typed = GoTypedRoundTrip(*j, go_schema::kPersistentVolumeClaim, field);
    if (!typed.ok()) return typed.status();
    const std::string name = (*typed)["metadata"].value("name", "");
    Json reduced = Json::object();
    reduced["metadata"]["name"] = name;
    if (auto s = j->find("spec"); s != j->end()) reduced["spec"] = *s;
    absl::StatusOr<nlohmann::ordered_json> pvc = GoTypedRoundTrip(reduced, go_schema::kPersistentVolumeClaim, field);
    if (!pvc.ok()) return pvc.status();
    vcts.emplace_back(name, *std::move(pvc));
  }
  std::stable_sort(vcts.begin(), vcts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string list = "[";
  for (size_t i = 0; i < vcts.size(); ++i) {
    if (i > 0) list += ',';
    list += GoTypedJson(vcts[i].second);
  }
  list += ']';
  std::string spew = "([]uint8)[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) spew += ' ';
    absl::StrAppend(&spew, static_cast<unsigned char>(list[i]));
  }
  spew += ']';
  uint32_t h = 2166136261u;
  for (char c : spew) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return absl::StrCat(h);
}

std::vector<const pb::ControllerRevision*> SortRevisions(const pb::PlanRequest& request) {
  const std::string& uid = request.clone_set().metadata().uid();
  std::vector<const pb::ControllerRevision*> out;
  for (const auto& rev : request.revisions()) {
    bool foreign = false;
    for (const auto& ref : rev.metadata().owner_references()) {
      if (ref.controller() && ref.uid() != uid) foreign = true;
    }
    if (!foreign) out.push_back(&rev);
  }
  std::stable_sort(out.begin(), out.end(), [](const pb::ControllerRevision* a, const pb::ControllerRevision* b) {
    const auto& ta = a->metadata().creation_timestamp();
    const auto& tb = b->metadata().creation_timestamp();
    return std::make_tuple(a->revision(), ta.seconds(), ta.nanos(), std::cref(a->metadata().name())) <
           std::make_tuple(b->revision(), tb.seconds(), tb.nanos(), std::cref(b->metadata().name()));
  });
  return out;
}

namespace {

std::string RevisionName(std::string_view clone_set_name, std::string_view hash) {
  return absl::StrCat(std::string(clone_set_name.substr(0, kMaxRevisionPrefix)), "-", std::string(hash));
}

// `label_hash` is the hash at the collision count the attempt started from: upstream names the revision by the
// count that found a free name but keeps the first hash in its controller.kubernetes.io/hash label.
std::string ControllerRevisionJson(const pb::CloneSet& cs, const std::string& name, const std::string& label_hash,
                                   const std::string& data_json, int64_t revision, const std::string& vct_hash) {
  Json labels = Json::object();
  if (absl::StatusOr<std::string> tmpl = TemplateFromRevisionData(data_json); tmpl.ok()) {
    Json t = Json::parse(*tmpl, nullptr, false);
    if (auto m = t.find("metadata"); m != t.end() && m->is_object()) {
      if (auto l = m->find("labels"); l != m->end() && l->is_object()) labels = *l;
    }
  }
  labels[kRevisionHashLabel] = label_hash;
  Json annotations = Json::object();
  for (const auto& [k, v] : cs.metadata().annotations()) annotations[k] = v;
  annotations[kVctHashAnnotation] = vct_hash;
  Json rev = {
      {"apiVersion", "apps/v1"},
      {"kind", "ControllerRevision"},
      {"metadata",
       {{"name", name},
        {"namespace", cs.metadata().namespace_()},
        {"labels", labels},
        {"annotations", annotations},
        {"ownerReferences", Json::array({{{"apiVersion", kruise::kV1alpha1},
                                          {"kind", "CloneSet"},
                                          {"name", cs.metadata().name()},
                                          {"uid", cs.metadata().uid()},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})}}},
      {"revision", revision},
  };
  std::string out;
  AppendGoJson(out, rev);
  // The data goes in verbatim: the API server keeps a RawExtension's bytes, and revisions compare by bytes.
  out.pop_back();
  absl::StrAppend(&out, ",\"data\":", data_json, "}");
  return out;
}

}  // namespace

absl::StatusOr<RevisionChoice> ChooseRevisions(const pb::PlanRequest& request,
                                               const std::vector<const pb::ControllerRevision*>& sorted,
                                               PlanBuilder& plan) {
  const pb::CloneSet& cs = request.clone_set();
  absl::StatusOr<std::string> data = RevisionData(cs.spec().template_json());
  if (!data.ok()) {
    // A field inside the template that Go cannot decode is named as Validate names it.
    if (absl::StartsWith(data.status().message(), "spec.template.")) return data.status();
    return absl::InvalidArgumentError(absl::StrCat("clone_set.spec.template_json: ", data.status().message()));
  }
  // A revision written by this planner before it decoded templates into their Go types holds the template as sent;
  // it is still this template's revision (no rollout on upgrade).
  absl::StatusOr<std::string> legacy_data = LegacyRevisionData(cs.spec().template_json());
  RevisionChoice choice;
  choice.collision_count = cs.status().collision_count();
  absl::StatusOr<std::string> vct_hash_or = VolumeClaimTemplatesHash(cs.spec());
  if (!vct_hash_or.ok()) return vct_hash_or.status();
  const std::string& vct_hash = *vct_hash_or;
  choice.vct_hash = vct_hash;
  const int64_t next_number = sorted.empty() ? 1 : sorted.back()->revision() + 1;

  // The latest revision holding this template. The bytes are compared first; when they differ, the stored data in
  // Go's encoding: a real API server serves what it stores, and the decoders re-serialize it, with `&`, `<`, `>`
  // and numbers spelled otherwise than the planner wrote them (same content). Newest first, so a steady CloneSet
  // costs no parse.
  const auto same = [&](const std::string& stored) {
    return stored == *data || (legacy_data.ok() && stored == *legacy_data);
  };
  const pb::ControllerRevision* last_equal = nullptr;
  for (auto it = sorted.rbegin(); it != sorted.rend() && last_equal == nullptr; ++it) {
    const pb::ControllerRevision* rev = *it;
    if (same(rev->data_json())) {
      last_equal = rev;
      break;
    }
    Json stored = Json::parse(rev->data_json(), nullptr, /*allow_exceptions=*/false);
    if (stored.is_discarded()) continue;
    std::string go;
    AppendGoJson(go, stored);
    if (same(go)) last_equal = rev;
  }
  std::string update_data;
  if (last_equal != nullptr && last_equal == sorted.back()) {
    choice.update_revision = last_equal->metadata().name();
    update_data = last_equal->data_json();
  } else if (last_equal != nullptr) {
    // Rolling back to an older template: renumber that revision so it becomes the latest again.
    pb::UpdateRevision* upd = plan.AddAction()->mutable_update_revision();
    plan.response()->mutable_actions()->rbegin()->set_stop_on_error(true);
    upd->set_name(last_equal->metadata().name());
    upd->set_resource_version(last_equal->metadata().resource_version());
    upd->set_revision(next_number);
    const std::string* have = MapValue(last_equal->metadata().annotations(), kVctHashAnnotation);
    if (have == nullptr || *have != vct_hash) (*upd->mutable_set_annotations())[kVctHashAnnotation] = vct_hash;
    choice.update_revision = last_equal->metadata().name();
    update_data = last_equal->data_json();
  } else {
    // A new revision. A name taken by a revision with other data (in the snapshot) is a hash collision.
    std::string hash, name;
    for (int attempt = 0;; ++attempt) {
      hash = RevisionHash(*data, choice.collision_count);
      name = RevisionName(cs.metadata().name(), hash);
      bool taken = false;
      for (const auto& rev : request.revisions()) {
        if (rev.metadata().name() == name) taken = true;
      }
      if (!taken) break;
      if (attempt >= kMaxCollisionRetries) {
        return absl::FailedPreconditionError(absl::StrCat("too many revision hash collisions for ", name));
      }
      ++choice.collision_count;
    }
    pb::Action* action = plan.AddAction();
    action->set_stop_on_error(true);
    action->mutable_create_revision()->set_revision_json(ControllerRevisionJson(
        cs, name, RevisionHash(*data, cs.status().collision_count()), *data, next_number, vct_hash));
    choice.update_revision = name;
    update_data = *data;
  }

  std::string current_data = update_data;
  choice.current_revision = choice.update_revision;
  for (const auto* rev : sorted) {
    if (!cs.status().current_revision().empty() && rev->metadata().name() == cs.status().current_revision()) {
      choice.current_revision = rev->metadata().name();
      current_data = rev->data_json();
    }
  }
  absl::StatusOr<std::string> update_template = TemplateFromRevisionData(update_data);
  if (!update_template.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("revisions[", choice.update_revision, "].data_json: ", update_template.status().message()));
  }
  absl::StatusOr<std::string> current_template = TemplateFromRevisionData(current_data);
  if (!current_template.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("revisions[", choice.current_revision,
                                                   "].data_json: ", current_template.status().message()));
  }
  choice.update_template_json = *std::move(update_template);
  choice.current_template_json = *std::move(current_template);
  return choice;
}

std::vector<const pb::ControllerRevision*> UnusableRevisions(const PlanContext& ctx) {
  std::vector<const pb::ControllerRevision*> out;
  for (const auto* rev : ctx.revisions) {
    const std::string& name = rev->metadata().name();
    if (name == ctx.current_revision || name == ctx.update_revision) continue;
    if (!CheckRevisionData(rev->data_json()).ok()) out.push_back(rev);
  }
  return out;
}

void PlanUnusableRevisionEvents(const PlanContext& ctx, PlanBuilder& plan) {
  for (const auto* rev : UnusableRevisions(ctx)) {
    plan.AddEvent(pb::WARNING, "InvalidRevision",
                  absl::StrCat("controller revision ", rev->metadata().name(), " is skipped: ",
                               CheckRevisionData(rev->data_json()).message(),
                               "; it is deleted unless a pod still carries its label"));
  }
}

void PlanHistoryTruncation(const PlanContext& ctx, PlanBuilder& plan) {
  const int64_t limit = std::max<int64_t>(ctx.spec.revision_history_limit, 0);
  const std::vector<const pb::ControllerRevision*> unusable = UnusableRevisions(ctx);
  // Only revisions other than current and update can go; with no more of them than the limit and none unusable,
  // none does, and the scan of every pod's label below is not needed.
  const int64_t others = std::count_if(ctx.revisions.begin(), ctx.revisions.end(), [&](const auto* rev) {
    return rev->metadata().name() != ctx.current_revision && rev->metadata().name() != ctx.update_revision;
  });
  if (others <= limit && unusable.empty()) return;
  const auto short_of = [](std::string_view s) {
    const size_t dash = s.rfind('-');
    return dash == std::string_view::npos ? s : s.substr(dash + 1);
  };
  // Revision labels of the pods (full and short form), collected once: revMatch(pod, rev) for every revision.
  absl::flat_hash_set<std::string_view> pod_labels, pod_short_hashes;
  std::vector<PodHotFacts> scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& facts = AllFacts(ctx, scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  for (size_t i = 0; i < facts.size(); ++i) {
    if (!facts[i].has_revision_label) continue;
    pod_labels.insert(cold[i].revision);
    pod_short_hashes.insert(short_of(cold[i].revision));
  }
  std::vector<const pb::ControllerRevision*> dead;
  for (const auto* rev : ctx.revisions) {
    const std::string& name = rev->metadata().name();
    if (name == ctx.current_revision || name == ctx.update_revision) continue;
    if (pod_labels.contains(name) || pod_short_hashes.contains(short_of(name))) continue;
    dead.push_back(rev);
  }
  // Unusable revisions go first and always; then the oldest beyond the limit.
  const auto is_unusable = [&](const pb::ControllerRevision* rev) {
    return std::find(unusable.begin(), unusable.end(), rev) != unusable.end();
  };
  std::stable_partition(dead.begin(), dead.end(), is_unusable);
  const int64_t unusable_dead = std::count_if(dead.begin(), dead.end(), is_unusable);
  const int64_t excess = std::max(static_cast<int64_t>(dead.size()) - limit, unusable_dead);
  for (int64_t i = 0; i < excess; ++i) {
    plan.AddAction()->mutable_delete_revision()->set_name(dead[i]->metadata().name());
  }
}

}  // namespace cloneset::planner
