#include "planner/plan.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "planner/context_builder.h"
#include "planner/context_facts.h"
#include "planner/plan_builder.h"
#include "planner/pod_facts.h"
#include "planapi/pod_table.h"
#include "planner/predicates.h"
#include "planner/predownload.h"
#include "planner/refresh.h"
#include "planner/revision.h"
#include "planner/scale.h"
#include "planner/status.h"
#include "planner/update.h"
#include "planner/validation.h"
#include "planner/volume_expansion.h"

// The reconcile skeleton of semantics §0.5 as a pure function.
//
// No expectation gates (§0.5 steps 3 and 8, §9): the executor guarantees that every snapshot it sends reflects all
// writes of its previous plans (it reads with the resourceVersion of its last write, or waits until its watch
// cache has caught up), so the planner never sees its own stale world and never needs to remember in-flight
// creations, deletions or patches.

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;

// Seed 000 omits spec.selector: default it once to the template labels, with a write and an event saying so.
void PlanSelectorDefaulting(const PlanContext& ctx, PlanBuilder& plan) {
  Json match_labels = Json::object();
  for (const auto& [key, value] : ctx.selector.match_labels()) match_labels[key] = value;
  const Json patch = {{"spec", {{"selector", {{"matchLabels", match_labels}}}}}};
  pb::Action* action = plan.AddAction();
  action->set_stop_on_error(true);
  pb::PatchCloneSet* p = action->mutable_patch_clone_set();
  p->set_merge_patch_json(patch.dump());
  p->set_resource_version(ctx.clone_set->metadata().resource_version());
  p->set_purpose("default-selector");
  plan.AddEvent(pb::NORMAL, "SelectorDefaulted",
                absl::StrCat("spec.selector was missing; defaulted to the template labels \"", ctx.selector_string,
                             "\""));
}

absl::Status CheckTemplateMatchesSelector(const PlanContext& ctx) {
  absl::StatusOr<LabelMap> labels = TemplateLabels(ctx.clone_set->spec().template_json());
  if (!labels.ok()) return labels.status();
  if (ctx.label_selector.Matches(*labels)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("spec.template.metadata.labels: {",
                                                 common::LabelSelector::ForLabels(*labels).String(),
                                                 "} no longer match spec.selector \"", ctx.selector_string,
                                                 "\"; the selector is immutable, so keep the template labels it selects"));
}

// §4.10: names in podsToDelete that are not claimed active pods of this snapshot are dropped from the spec.
void PlanPodsToDeleteTruncation(const PlanContext& ctx, PlanBuilder& plan) {
  const auto& names = ctx.clone_set->spec().scale_strategy().pods_to_delete();
  if (names.empty()) return;
  Json keep = Json::array();
  std::vector<PodColdFacts> scratch;
  const std::vector<PodColdFacts>& facts = AllColdFacts(ctx, scratch);
  for (const std::string& name : names) {
    const bool claimed =
        std::any_of(facts.begin(), facts.end(), [&](const PodColdFacts& f) { return f.name == name; });
    if (claimed) keep.push_back(name);
  }
  if (static_cast<int>(keep.size()) == names.size()) return;
  const Json patch = {{"spec", {{"scaleStrategy", {{"podsToDelete", keep}}}}}};
  pb::PatchCloneSet* p = plan.AddAction()->mutable_patch_clone_set();
  p->set_merge_patch_json(patch.dump());
  p->set_resource_version(ctx.clone_set->metadata().resource_version());
  p->set_purpose("truncate-pods-to-delete");
}

// Building JSON throws on strings that are not valid UTF-8. Proto3 requires valid UTF-8 and gRPC rejects such
// requests before they reach us, but in-process callers (the CLI reading a user's manifest) may not: no exception
// leaves the planner, it becomes INVALID_ARGUMENT.
template <typename Fn>
auto WithoutExceptions(Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("request holds text that is not valid UTF-8: ", e.what()));
  }
}

absl::Status Abandoned() {
  return absl::CancelledError("plan abandoned: the call was cancelled, its deadline passed or the planner is stopping");
}

// summary.phase when no stage named one: what the plan does besides the stages (docs/planner-api.md).
std::string_view FallbackPhase(const pb::PlanResponse& response, bool write_status) {
  if (!response.actions().empty()) return "housekeeping";
  if (write_status) return "status";
  if (!response.summary().blocked_reasons().empty()) return "blocked";
  return "idle";
}

absl::Status PlanChecked(const v1::PlanRequest& request, v1::PlanResponse* out, const CancelCheck* cancelled) {
  out->Clear();
  // The per-pod checks are made by BuildContext in its single pass over the pods.
  if (absl::Status s = ValidatePlanRequestExceptPods(request); !s.ok()) return s;
  PlanBuilder plan(out);
  plan.set_in_place_batches(request.accept_in_place_batches());
  absl::StatusOr<PlanContext> ctx_or = BuildContext(request, plan);
  if (!ctx_or.ok()) return ctx_or.status();
  ctx_or->cancelled = cancelled;
  const PlanContext& ctx = *ctx_or;
  if (Cancelled(ctx)) return Abandoned();
  const pb::CloneSet& cs = request.clone_set();

  if (ctx.selector_defaulted) {
    PlanSelectorDefaulting(ctx, plan);
  } else if (absl::Status s = CheckTemplateMatchesSelector(ctx); !s.ok()) {
    return s;
  }
  // Never act on a CloneSet that the Validate call rejects: the same rules decide both. (After the selector check,
  // whose message says more than the admission rule's.)
  if (absl::Status s = CheckCloneSetForPlan(request.clone_set()); !s.ok()) return s;

  PlanUnusableRevisionEvents(ctx, plan);
  PlanPvcCleanupAndRelease(ctx, plan);
  PlanMissingClaims(ctx, plan);
  PlanVolumeExpansion(ctx, plan);
  PlanImagePreDownload(ctx, plan);

  absl::Status scale_error;
  absl::Status update_error;
  bool scaling = false;
  // A CloneSet being deleted is neither scaled nor updated (§0.5 step 11); garbage collection removes its pods.
  if (!IsSet(cs.metadata().deletion_timestamp())) {
    const int before_refresh = plan.response()->actions_size();
    const bool modified = PlanRefresh(ctx, plan, &update_error);
    if (plan.response()->actions_size() > before_refresh) plan.summary()->set_phase("refresh");
    ScaleOutcome scale = PlanScale(ctx, plan);
    if (Cancelled(ctx)) return Abandoned();
    scaling = scale.scaling;
    scale_error = scale.error;
    // A reconcile never both scales and updates, and a refresh write means the pod changed under us.
    if (!scaling && !modified && update_error.ok()) {
      const int before_update = plan.response()->actions_size();
      update_error = PlanUpdate(ctx, plan);
      if (plan.response()->actions_size() > before_update) plan.summary()->set_phase("update");
      if (Cancelled(ctx)) return Abandoned();
    }
    DropUnneededInPlaceReadyWrites(scaling, plan);
  }

  pb::CloneSetStatus status = ComputeStatus(ctx, scale_error, update_error, plan);
  const bool write = StatusNeedsWrite(cs.status(), status);
  PlanPodsToDeleteTruncation(ctx, plan);
  PlanHistoryTruncation(ctx, plan);

  pb::PlanSummary* summary = plan.summary();
  summary->set_scaling(scaling);
  if (summary->phase().empty()) summary->set_phase(std::string(FallbackPhase(*plan.response(), write)));
  pb::PlanResponse* response = plan.response();
  response->set_pods_read(planapi::PodsInRequest(request));
  response->set_current_revision(status.current_revision());
  response->set_update_revision(status.update_revision());
  if (write) {
    *response->mutable_status() = std::move(status);
    response->set_write_status(true);
  }
  plan.FinishInPlace();
  return absl::OkStatus();
}

absl::StatusOr<v1::ValidateResponse> ValidateChecked(const v1::ValidateRequest& request) {
  pb::ValidateResponse response;
  pb::CloneSet cs = request.clone_set();
  ApplyDefaults(&cs);
  std::optional<pb::CloneSet> old;
  if (request.has_old()) {
    old = request.old();
    ApplyDefaults(&*old);
  }
  std::vector<const pb::Pod*> pods;
  pods.reserve(request.pods_size());
  for (const pb::Pod& pod : request.pods()) pods.push_back(&pod);
  for (pb::FieldError& e : ValidateCloneSet(cs, old ? &*old : nullptr, pods)) *response.add_errors() = std::move(e);
  *response.mutable_defaulted() = std::move(cs);
  return response;
}

absl::StatusOr<v1::ComputeRevisionResponse> ComputeRevisionChecked(const v1::ComputeRevisionRequest& request) {
  const pb::CloneSet& cs = request.clone_set();
  if (cs.metadata().name().empty()) return absl::InvalidArgumentError("metadata.name: required");
  // Same choice as a Plan would make, so the name always agrees with the revision Plan creates.
  pb::PlanRequest as_plan;
  *as_plan.mutable_clone_set() = cs;
  *as_plan.mutable_revisions() = request.revisions();
  for (int i = 0; i < as_plan.revisions_size(); ++i) {
    if (as_plan.revisions(i).metadata().name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("revisions[", i, "].metadata.name: required"));
    }
  }
  if (absl::Status s = CheckJsonDepth(cs.spec().template_json(), "spec.template"); !s.ok()) return s;
  for (int i = 0; i < as_plan.revisions_size(); ++i) {
    const std::string field = absl::StrCat("revisions[", i, "].data");
    if (absl::Status s = CheckJsonDepth(as_plan.revisions(i).data_json(), field); !s.ok()) return s;
  }
  absl::StatusOr<std::string> data = RevisionData(cs.spec().template_json());
  if (!data.ok()) return data.status();  // already "spec.template: ..."
  PlanBuilder scratch;
  absl::StatusOr<RevisionChoice> choice = ChooseRevisions(as_plan, SortRevisions(as_plan), scratch);
  if (!choice.ok()) return choice.status();
  bool created = false;
  for (const pb::Action& a : scratch.response()->actions()) created = created || a.has_create_revision();
  pb::ComputeRevisionResponse response;
  response.set_name(choice->update_revision);
  response.set_hash(std::string(ShortHash(choice->update_revision)));
  response.set_data_json(*data);
  response.set_volume_claim_templates_hash(choice->vct_hash);
  response.set_exists(!created);
  return response;
}

}  // namespace

absl::Status PlanInto(const v1::PlanRequest& request, v1::PlanResponse* response, const CancelCheck& cancelled) {
  absl::Status status = WithoutExceptions([&] { return PlanChecked(request, response, &cancelled); });
  if (!status.ok()) response->Clear();
  return status;
}

absl::Status PlanInto(const v1::PlanRequest& request, v1::PlanResponse* response) {
  return PlanInto(request, response, CancelCheck());
}

absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request) {
  v1::PlanResponse response;
  if (absl::Status s = PlanInto(request, &response); !s.ok()) return s;
  return response;
}

absl::StatusOr<v1::ValidateResponse> Validate(const v1::ValidateRequest& request) {
  return WithoutExceptions([&] { return ValidateChecked(request); });
}

absl::StatusOr<v1::ComputeRevisionResponse> ComputeRevision(const v1::ComputeRevisionRequest& request) {
  return WithoutExceptions([&] { return ComputeRevisionChecked(request); });
}

}  // namespace cloneset::planner
