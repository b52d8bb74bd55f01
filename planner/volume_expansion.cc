#include "planner/volume_expansion.h"

#include <optional>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "nlohmann/json.hpp"
#include "planner/context_facts.h"
#include "planner/pod_factory.h"
#include "planner/predicates.h"
#include "planner/revision.h"

namespace cloneset::planner {

namespace {

using Json = nlohmann::json;

struct TemplateStorage {
  std::string name;     // metadata.name
  std::string storage;  // spec.resources.requests.storage as spelled
  __int128 nanos = 0;
};

// The templates that request storage. A template that cannot be read is validation's to report.
std::vector<TemplateStorage> TemplateStorages(const pb::CloneSet& cs) {
  std::vector<TemplateStorage> out;
  for (const std::string& text : cs.spec().volume_claim_templates_json()) {
    const Json vct = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!vct.is_object()) continue;
    const Json* name = vct.contains("metadata") && vct["metadata"].is_object() && vct["metadata"].contains("name")
                           ? &vct["metadata"]["name"]
                           : nullptr;
    const Json::json_pointer storage_path("/spec/resources/requests/storage");
    if (name == nullptr || !name->is_string() || !vct.contains(storage_path)) continue;
    const Json& storage = vct.at(storage_path);
    absl::StatusOr<__int128> nanos = common::JsonQuantityNanos(storage);
    if (!nanos.ok()) continue;
    out.push_back({name->get<std::string>(), storage.is_string() ? storage.get<std::string>() : storage.dump(),
                   *nanos});
  }
  return out;
}

std::string HeldReason(const pb::PersistentVolumeClaim& pvc,
                       const absl::flat_hash_map<std::string_view, bool>& classes) {
  const std::string& cls = pvc.storage_class_name();
  if (cls.empty()) return "the claim names no StorageClass";
  // Kubernetes changes the request of a Bound claim only.
  if (pvc.phase() != "Bound") return absl::StrCat("the claim is ", pvc.phase().empty() ? "not bound" : pvc.phase());
  auto it = classes.find(cls);
  if (it == classes.end()) return absl::StrCat("StorageClass ", cls, " is unknown");
  if (!it->second) return absl::StrCat("StorageClass ", cls, " does not allow volume expansion");
  return "";
}

}  // namespace

std::vector<ClaimGrowth> ClaimGrowths(const PlanContext& ctx) {
  std::vector<ClaimGrowth> out;
  const pb::CloneSet& cs = *ctx.clone_set;
  if (cs.spec().volume_claim_templates_json().empty() || ctx.pvcs.empty()) return out;
  const std::vector<TemplateStorage> templates = TemplateStorages(cs);
  if (templates.empty()) return out;
  absl::flat_hash_map<std::string_view, const pb::PersistentVolumeClaim*> pvcs;
  pvcs.reserve(ctx.pvcs.size());
  for (const pb::PersistentVolumeClaim* pvc : ctx.pvcs) pvcs.emplace(pvc->metadata().name(), pvc);
  absl::flat_hash_map<std::string_view, bool> classes;
  for (const pb::StorageClass& sc : ctx.request->storage_classes()) classes[sc.name()] = sc.allow_volume_expansion();
  // Claims of one template mostly spell the same size: parse each spelling once.
  absl::flat_hash_map<std::string_view, std::optional<__int128>> parsed;
  std::vector<PodHotFacts> hot_scratch;
  std::vector<PodColdFacts> cold_scratch;
  const std::vector<PodHotFacts>& hot = AllFacts(ctx, hot_scratch);
  const std::vector<PodColdFacts>& cold = AllColdFacts(ctx, cold_scratch);
  for (size_t i = 0; i < cold.size(); ++i) {
    if (cold[i].instance_id.empty() || hot[i].lifecycle == Lifecycle::kPreparingDelete) continue;
    for (const TemplateStorage& t : templates) {
      auto found = pvcs.find(ClaimName(t.name, cs.metadata().name(), cold[i].instance_id));
      if (found == pvcs.end()) continue;
      const pb::PersistentVolumeClaim& pvc = *found->second;
      if (pvc.storage_request().empty()) continue;
      auto [it, inserted] = parsed.try_emplace(pvc.storage_request());
      if (inserted) {
        absl::StatusOr<__int128> nanos = common::QuantityNanos(pvc.storage_request());
        if (nanos.ok()) it->second = *nanos;
      }
      if (!it->second.has_value() || *it->second == t.nanos) continue;
      ClaimGrowth g;
      g.pvc = &pvc;
      g.pod = std::string(cold[i].name);
      g.template_name = t.name;
      g.storage = t.storage;
      g.shrink = *it->second > t.nanos;
      if (!g.shrink) g.held = HeldReason(pvc, classes);
      out.push_back(std::move(g));
    }
  }
  return out;
}

// The UpdateRevision that sets the update revision's claim-template hash to the templates' own, when the claims are
// all about to grow to the templates and that is the templates' only change (volume_expansion.h); nullopt otherwise.
std::optional<pb::UpdateRevision> VctHashRefresh(const PlanContext& ctx, const std::vector<ClaimGrowth>& growths) {
  if (growths.empty() || ctx.current_revision != ctx.update_revision) return std::nullopt;
  const pb::ControllerRevision* update = nullptr;
  for (const pb::ControllerRevision* rev : ctx.revisions) {
    if (rev->metadata().name() == ctx.update_revision) update = rev;
  }
  if (update == nullptr) return std::nullopt;
  auto annotation = update->metadata().annotations().find(kVctHashAnnotation);
  if (annotation == update->metadata().annotations().end() || annotation->second == ctx.update_vct_hash) {
    return std::nullopt;
  }
  std::vector<PodHotFacts> scratch;
  for (const PodHotFacts& f : AllFacts(ctx, scratch)) {
    if (!f.on_update_revision) return std::nullopt;
  }
  // The storage each template's differing claims hold now: one value per template, or the templates cannot be
  // told apart from their earlier form.
  absl::flat_hash_map<std::string, std::pair<std::string, __int128>> held_before;
  for (const ClaimGrowth& g : growths) {
    if (g.shrink || !g.held.empty()) return std::nullopt;
    absl::StatusOr<__int128> nanos = common::QuantityNanos(g.pvc->storage_request());
    if (!nanos.ok()) return std::nullopt;
    auto [it, inserted] = held_before.try_emplace(g.template_name, g.pvc->storage_request(), *nanos);
    if (!inserted && it->second.second != *nanos) return std::nullopt;
  }
  pb::CloneSetSpec before = ctx.clone_set->spec();
  for (std::string& text : *before.mutable_volume_claim_templates_json()) {
    Json vct = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!vct.is_object()) return std::nullopt;
    auto it = held_before.find(vct["metadata"].value("name", ""));
    if (it == held_before.end()) continue;
    vct["spec"]["resources"]["requests"]["storage"] = it->second.first;
    text = vct.dump();
  }
  absl::StatusOr<std::string> hash = VolumeClaimTemplatesHash(before);
  if (!hash.ok() || *hash != annotation->second) return std::nullopt;
  pb::UpdateRevision refresh;
  refresh.set_name(update->metadata().name());
  refresh.set_resource_version(update->metadata().resource_version());
  (*refresh.mutable_set_annotations())[kVctHashAnnotation] = ctx.update_vct_hash;
  return refresh;
}

void PlanVolumeExpansion(const PlanContext& ctx, PlanBuilder& plan) {
  if (IsSet(ctx.clone_set->metadata().deletion_timestamp())) return;
  const std::vector<ClaimGrowth> growths = ClaimGrowths(ctx);
  if (std::optional<pb::UpdateRevision> refresh = VctHashRefresh(ctx, growths)) {
    pb::Action* action = plan.AddAction();
    action->set_stop_on_error(true);
    *action->mutable_update_revision() = *std::move(refresh);
  }
  for (const ClaimGrowth& g : growths) {
    const std::string& name = g.pvc->metadata().name();
    if (g.shrink) {
      plan.summary()->add_blocked_reasons(absl::StrCat("PVC ", name, " holds ", g.pvc->storage_request(),
                                                       ", more than its template's ", g.storage,
                                                       ": claims are never shrunk"));
      continue;
    }
    if (!g.held.empty()) {
      plan.summary()->add_blocked_reasons(
          absl::StrCat("PVC ", name, " is not expanded to ", g.storage, ": ", g.held));
      continue;
    }
    // A refused expansion (a driver or an admission plugin that says no) must not hold back scale and update: the
    // failure is reported (ApplyFailed) and retried with back-off.
    pb::Action* action = plan.AddAction();
    action->set_stop_on_error(false);
    pb::ExpandPvc* expand = action->mutable_expand_pvc();
    expand->set_name(name);
    expand->set_uid(g.pvc->metadata().uid());
    expand->set_resource_version(g.pvc->metadata().resource_version());
    expand->set_storage(g.storage);
    expand->set_pod_name(g.pod);
    plan.AddEvent(pb::NORMAL, "ExpandingPVC",
                  absl::StrCat("expanding PVC ", name, " of pod ", g.pod, " from ", g.pvc->storage_request(), " to ",
                               g.storage),
                  g.pod);
  }
}

void SetVolumeExpansionHeld(const PlanContext& ctx, pb::CloneSetStatus& status, PlanBuilder& plan) {
  std::vector<ClaimGrowth> held;
  if (!IsSet(ctx.clone_set->metadata().deletion_timestamp())) {
    for (ClaimGrowth& g : ClaimGrowths(ctx)) {
      if (!g.shrink && !g.held.empty()) held.push_back(std::move(g));
    }
  }
  const pb::Condition* old = nullptr;
  for (const pb::Condition& c : ctx.clone_set->status().conditions()) {
    if (c.type() == kVolumeExpansionHeldCondition) old = &c;
  }
  auto* conditions = status.mutable_conditions();
  int at = -1;
  for (int i = 0; i < conditions->size(); ++i) {
    if (conditions->Get(i).type() == kVolumeExpansionHeldCondition) at = i;
  }
  if (held.empty()) {
    if (at >= 0) conditions->DeleteSubrange(at, 1);
    return;
  }
  constexpr size_t kNamed = 5;
  std::string message = absl::StrCat(held.size(), held.size() == 1 ? " PVC is" : " PVCs are",
                                     " below the volumeClaimTemplate's storage and not expanded: ");
  for (size_t i = 0; i < held.size() && i < kNamed; ++i) {
    absl::StrAppend(&message, i == 0 ? "" : "; ", held[i].pvc->metadata().name(), " (",
                    held[i].pvc->storage_request(), " < ", held[i].storage, ": ", held[i].held, ")");
  }
  if (held.size() > kNamed) absl::StrAppend(&message, "; and ", held.size() - kNamed, " more");
  absl::StrAppend(&message, "; they keep their size until their pods are recreated");
  constexpr char kReason[] = "ExpansionNotAllowed";
  if (old == nullptr || old->status() != "True" || old->message() != message) {
    plan.AddEvent(pb::WARNING, "VolumeExpansionNotAllowed", message);
  }
  pb::Condition* c = at >= 0 ? conditions->Mutable(at) : status.add_conditions();  // conditions keep their order
  c->Clear();
  c->set_type(kVolumeExpansionHeldCondition);
  c->set_status("True");
  c->set_reason(kReason);
  c->set_message(std::move(message));
  if (old != nullptr && old->status() == "True" && old->message() == c->message()) {
    *c->mutable_last_transition_time() = old->last_transition_time();
    *c->mutable_last_update_time() = old->last_update_time();
    return;
  }
  SetTimestamp(ctx.now, c->mutable_last_update_time());
  if (old != nullptr && old->status() == "True") {
    *c->mutable_last_transition_time() = old->last_transition_time();
  } else {
    SetTimestamp(ctx.now, c->mutable_last_transition_time());
  }
}

}  // namespace cloneset::planner
