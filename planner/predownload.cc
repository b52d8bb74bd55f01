#include "planner/predownload.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/label_selector.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planner/inplace.h"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr int32_t kDefaultTimeoutSeconds = 300;

const pb::ControllerRevision* FindRevision(const PlanContext& ctx, const std::string& name) {
  for (const pb::ControllerRevision* revision : ctx.revisions) {
    if (revision->metadata().name() == name) return revision;
  }
  return nullptr;
}

std::optional<int32_t> AnnotationInt(const PlanContext& ctx, const char* key) {
  const auto& annotations = ctx.clone_set->metadata().annotations();
  auto it = annotations.find(key);
  int32_t value = 0;
  if (it == annotations.end() || !absl::SimpleAtoi(it->second, &value)) return std::nullopt;
  return value;
}

int32_t MinUpdatedReadyPods(const PlanContext& ctx) {
  const pb::UpdateStrategy& strategy = ctx.clone_set->spec().update_strategy();
  if (strategy.has_image_predownload_min_updated_ready_pods()) return strategy.image_predownload_min_updated_ready_pods();
  return AnnotationInt(ctx, kruise::kPreDownloadMinUpdatedReadyPodsAnnotation).value_or(0);
}

int32_t TimeoutSeconds(const PlanContext& ctx) {
  const pb::UpdateStrategy& strategy = ctx.clone_set->spec().update_strategy();
  if (strategy.has_image_predownload_timeout_seconds() && strategy.image_predownload_timeout_seconds() > 0) {
    return strategy.image_predownload_timeout_seconds();
  }
  const std::optional<int32_t> annotated = AnnotationInt(ctx, kruise::kPreDownloadTimeoutSecondsAnnotation);
  return annotated.has_value() && *annotated > 0 ? *annotated : kDefaultTimeoutSeconds;
}

// Parallelism from the field or the v1alpha1 annotation; anything but a positive integer becomes 1 with a
// Warning event (upstream silently passes a bad value on to the job, which then never runs).
int32_t Parallelism(const PlanContext& ctx, PlanBuilder& plan) {
  const pb::IntOrString& field = ctx.clone_set->spec().update_strategy().image_predownload_parallelism();
  std::string text;
  if (field.has_int_value()) {
    text = absl::StrCat(field.int_value());
  } else if (field.has_str_value()) {
    text = field.str_value();
  } else {
    const auto& annotations = ctx.clone_set->metadata().annotations();
    auto it = annotations.find(kruise::kPreDownloadParallelismAnnotation);
    if (it == annotations.end()) return 1;
    text = it->second;
  }
  int32_t value = 0;
  if (absl::SimpleAtoi(text, &value) && value > 0) return value;
  plan.AddEvent(pb::WARNING, "InvalidImagePreDownloadParallelism",
                absl::StrCat("image pre-download parallelism \"", text, "\" is not a positive integer; using 1"));
  return 1;
}

std::map<std::string, std::string> ContainerImages(const std::string& template_json) {
  std::map<std::string, std::string> images;
  const Json tmpl = Json::parse(template_json, nullptr, /*allow_exceptions=*/false);
  if (!tmpl.is_object() || !tmpl.contains("spec") || !tmpl["spec"].is_object()) return images;
  const Json containers = tmpl["spec"].value("containers", Json::array());
  if (!containers.is_array()) return images;
  for (const Json& c : containers) {
    if (c.is_object() && c.value("name", Json()).is_string() && c.value("image", Json()).is_string()) {
      images[c["name"].get<std::string>()] = c["image"].get<std::string>();
    }
  }
  return images;
}

void LabelRevision(const PlanContext& ctx, const std::string& key, PlanBuilder& plan) {
  pb::Action* action = plan.AddAction();
  pb::UpdateRevision* update = action->mutable_update_revision();
  update->set_name(ctx.update_revision);
  const pb::ControllerRevision* revision = FindRevision(ctx, ctx.update_revision);
  update->set_resource_version(revision->metadata().resource_version());
  update->set_revision(revision->revision());
  (*update->mutable_set_labels())[key] = "true";
}

// Why pre-downloading this rollout makes no sense, or "" when it does (§8 "mark ignored").
std::string IgnoreReason(const PlanContext& ctx) {
  if (!ctx.spec.rolling_update || ctx.spec.policy == PodUpdatePolicy::kReCreate) return "pods are recreated";
  if (ctx.spec.replicas <= 3) return "replicas <= 3";
  // Upstream uses the legacy maxUnavailable rounded down here, whatever maxSurge says.
  const pb::IntOrString& max_unavailable = ctx.clone_set->spec().update_strategy().max_unavailable();
  int64_t unavailable = ctx.spec.replicas * 20 / 100;
  if (max_unavailable.has_int_value()) {
    unavailable = max_unavailable.int_value();
  } else if (max_unavailable.has_str_value()) {
    double percent = 0;
    std::string text = max_unavailable.str_value();
    if (!text.empty() && text.back() == '%') text.pop_back();
    if (absl::SimpleAtod(text, &percent)) unavailable = static_cast<int64_t>(percent * ctx.spec.replicas / 100);
  }
  if (ctx.spec.partition == 0 && unavailable >= ctx.spec.replicas) return "all pods update in one batch";
  if (!RolloutIsInPlace(ctx)) return "the change cannot be applied in place";
  return "";
}

std::string JobJson(const PlanContext& ctx, const common::LabelSelector& own_selector, const std::string& container,
                    const std::string& image, int32_t parallelism, int32_t timeout_seconds, int32_t min_updated_ready) {
  const pb::CloneSet& cs = *ctx.clone_set;
  const Json tmpl = Json::parse(ctx.update_template_json, nullptr, /*allow_exceptions=*/false);
  const Json meta = tmpl.is_object() ? tmpl.value("metadata", Json::object()) : Json::object();
  const pb::ControllerRevision* revision = FindRevision(ctx, ctx.update_revision);
  std::string hash(ShortHash(ctx.update_revision));
  if (revision != nullptr) {
    auto it = revision->metadata().labels().find(kRevisionHashLabel);
    if (it != revision->metadata().labels().end()) hash = it->second;
  }

  OrderedJson labels = OrderedJson::object();
  if (meta.value("labels", Json()).is_object()) {
    for (auto it = meta["labels"].begin(); it != meta["labels"].end(); ++it) labels[it.key()] = it.value();
  }
  labels[kRevisionHashLabel] = hash;

  // The CloneSet's own spec.selector and pods not yet on the update revision. The requirement is well-formed (a key
  // and two values), so Add cannot fail.
  common::LabelSelector pod_selector = own_selector;
  pod_selector.Add({kRevisionLabel, common::LabelOperator::kNotIn, {ctx.update_revision, hash}}, "spec.podSelector")
      .IgnoreError();
  const OrderedJson selector = pod_selector.ToJson();

  OrderedJson pull_secrets = OrderedJson::array();
  if (tmpl.is_object() && tmpl.contains("spec") && tmpl["spec"].is_object() &&
      tmpl["spec"].value("imagePullSecrets", Json()).is_array()) {
    for (const Json& secret : tmpl["spec"]["imagePullSecrets"]) {
      if (secret.is_object() && secret.value("name", Json()).is_string()) pull_secrets.push_back(secret["name"].get<std::string>());
    }
  }

  const std::string api_version = cs.api_version().empty() ? kruise::kV1alpha1 : cs.api_version();
  OrderedJson job = {
      {"apiVersion", kruise::kV1alpha1},
      {"kind", "ImagePullJob"},
      {"metadata",
       {{"name", absl::StrCat(ctx.update_revision, "-", container)},
        {"namespace", cs.metadata().namespace_()},
        {"labels", labels},
        {"ownerReferences",
         {{{"apiVersion", api_version},
           {"kind", "CloneSet"},
           {"name", cs.metadata().name()},
           {"uid", cs.metadata().uid()},
           {"controller", true},
           {"blockOwnerDeletion", true}}}}}},
      {"spec",
       {{"image", image},
        {"parallelism", parallelism},
        {"timeoutSeconds", timeout_seconds},
        {"podSelector", selector},
        {"pullSecrets", pull_secrets},
        {"minUpdatedReadyPods", min_updated_ready}}}};
  return job.dump();
}

}  // namespace

bool PreDownloadEnabled(const PlanContext& ctx) {
  return ctx.gates.pre_download_image_for_in_place_update() ||
         ctx.clone_set->spec().update_strategy().has_image_predownload_parallelism() ||
         ctx.clone_set->metadata().annotations().contains(kruise::kPreDownloadParallelismAnnotation);
}

void PlanImagePreDownload(const PlanContext& ctx, PlanBuilder& plan) {
  if (!PreDownloadEnabled(ctx)) return;
  if (ctx.current_revision == ctx.update_revision) {
    for (const std::string& job : ctx.request->image_pull_jobs()) {
      plan.AddAction()->mutable_delete_image_pull_job()->set_name(job);
    }
    return;
  }
  const int32_t min_ready = MinUpdatedReadyPods(ctx);
  const pb::CloneSetStatus& status = ctx.clone_set->status();
  const int32_t updated_ready = status.update_revision() == ctx.update_revision ? status.updated_ready_replicas() : 0;
  if (min_ready > updated_ready) return;
  const pb::ControllerRevision* revision = FindRevision(ctx, ctx.update_revision);
  // A revision this plan creates cannot be labelled in the same plan (UpdateRevision needs its number and
  // resource version); the next plan sees it and decides.
  if (revision == nullptr) return;
  if (revision->metadata().labels().contains(kPreDownloadCreatedLabel) ||
      revision->metadata().labels().contains(kPreDownloadIgnoredLabel)) {
    return;
  }
  if (!IgnoreReason(ctx).empty()) {
    LabelRevision(ctx, kPreDownloadIgnoredLabel, plan);
    return;
  }
  // The job selects with spec.selector as written (none when it was defaulted from the template labels). A plan
  // never gets here with an invalid one (the validation rules reject it first); if it did, no job is created.
  absl::StatusOr<common::LabelSelector> own_selector =
      common::LabelSelector::FromProto(ctx.clone_set->spec().selector(), "spec.selector");
  if (!own_selector.ok()) return;
  const int32_t parallelism = Parallelism(ctx, plan);
  const int32_t timeout = TimeoutSeconds(ctx);
  const std::map<std::string, std::string> old_images = ContainerImages(ctx.current_template_json);
  for (const auto& [container, image] : ContainerImages(ctx.update_template_json)) {
    auto old = old_images.find(container);
    if (old != old_images.end() && old->second == image) continue;
    const std::string name = absl::StrCat(ctx.update_revision, "-", container);
    const auto& existing = ctx.request->image_pull_jobs();
    if (std::find(existing.begin(), existing.end(), name) != existing.end()) continue;
    plan.AddAction()->mutable_create_image_pull_job()->set_job_json(
        JobJson(ctx, *own_selector, container, image, parallelism, timeout, min_ready));
    plan.AddEvent(pb::NORMAL, "CreatedImagePullJob", absl::StrCat("created ImagePullJob ", name, " for image: ", image));
  }
  LabelRevision(ctx, kPreDownloadCreatedLabel, plan);
}

}  // namespace cloneset::planner
