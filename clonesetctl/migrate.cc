#include "clonesetctl/migrate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kruise/keys.h"

namespace cloneset::clonesetctl {

using Json = nlohmann::json;

absl::StatusOr<Json> CloneSetForDeployment(const Json& d) {
  if (!d.is_object() || !d.contains("spec") || !d["spec"].is_object()) {
    return absl::InvalidArgumentError("deployment: spec is missing");
  }
  const Json& spec = d["spec"];
  if (!spec.contains("selector") || !spec["selector"].is_object()) {
    return absl::InvalidArgumentError("deployment: spec.selector is missing");
  }
  if (!spec.contains("template") || !spec["template"].is_object()) {
    return absl::InvalidArgumentError("deployment: spec.template is missing");
  }
  const Json& meta = d.value("metadata", Json::object());
  const std::string name = meta.value("name", "");
  Json cs = {{"apiVersion", kruise::kV1alpha1},
             {"kind", "CloneSet"},
             {"metadata",
              {{"name", name},
               {"namespace", meta.value("namespace", "default")},
               {"annotations", {{kMigratedFromAnnotation, absl::StrCat("deployment/", name)}}}}},
             {"spec", {{"replicas", 0}, {"selector", spec["selector"]}, {"template", spec["template"]}}}};
  if (meta.contains("labels") && meta["labels"].is_object()) cs["metadata"]["labels"] = meta["labels"];
  for (const char* field : {"minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"}) {
    if (spec.contains(field)) cs["spec"][field] = spec[field];
  }
  Json strategy = {{"type", "ReCreate"}};
  const Json& ds = spec.value("strategy", Json::object());
  if (ds.value("type", "RollingUpdate") == "RollingUpdate" && ds.contains("rollingUpdate")) {
    for (const char* field : {"maxUnavailable", "maxSurge"}) {
      if (ds["rollingUpdate"].contains(field)) strategy[field] = ds["rollingUpdate"][field];
    }
  }
  cs["spec"]["updateStrategy"] = strategy;
  return cs;
}

absl::StatusOr<std::vector<MigrationStep>> MigrationSteps(int32_t replicas, int32_t already_moved,
                                                          int32_t max_unavailable) {
  if (max_unavailable < 1) return absl::InvalidArgumentError("--max-unavailable must be at least 1");
  std::vector<MigrationStep> steps;
  for (int32_t moved = std::clamp(already_moved, 0, replicas); moved < replicas;) {
    moved = std::min(replicas, moved + max_unavailable);
    steps.push_back({replicas - moved, moved});
  }
  return steps;
}

std::string RenderMigration(const std::string& ns, const std::string& name, int32_t replicas,
                            int32_t already_moved, bool create, const std::vector<MigrationStep>& steps) {
  std::string out = absl::StrCat("Migrating deployment/", name, " (namespace ", ns, ", ", replicas,
                                 " replicas) to cloneset.apps.kruise.io/", name, ":\n");
  int n = 0;
  if (create) {
    absl::StrAppend(&out, "  ", ++n, ". create cloneset.apps.kruise.io/", name,
                    " with 0 replicas, the Deployment's selector and pod template\n");
  }
  MigrationStep at{replicas - already_moved, already_moved};
  for (const MigrationStep& s : steps) {
    absl::StrAppend(&out, "  ", ++n, ". scale deployment ", at.deployment_replicas, " -> ", s.deployment_replicas,
                    " and cloneset ", at.cloneset_replicas, " -> ", s.cloneset_replicas, ", wait until ",
                    s.cloneset_replicas, " CloneSet pods are available\n");
    at = s;
  }
  absl::StrAppend(&out, "  ", ++n, ". done: deployment/", name, " is left with 0 replicas (delete it with ",
                  "`kubectl delete deployment ", name, " -n ", ns, "`)\n");
  return out;
}

}  // namespace cloneset::clonesetctl
