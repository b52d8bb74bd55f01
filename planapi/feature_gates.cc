#include "planapi/feature_gates.h"

#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cloneset::planapi {
namespace {

enum class Stage { kAlpha, kBeta };

// Which PlanRequest.feature_gates field a honoured gate sets.
enum class Field {
  kNone,  // not honoured: `concerns` says what it is about
  kShortHash,
  kPartitionRollback,
  kPreparingUpdateAsUpdate,
  kEnvFromMetadata,  // the proto field says "disable": it is inverted
  kRecreateWhenChangeVct,
  kPreDownload,
  kVerticalScaling,
};

struct Gate {
  absl::string_view name;
  bool default_on;
  Stage stage;
  Field field;
  absl::string_view concerns;  // for kNone
};

// OpenKruise v1.9.0 pkg/features/kruise_features.go: every gate, its default and stage, in upstream's order.
constexpr Gate kGates[] = {
    {"PodWebhook", true, Stage::kBeta, Field::kNone, "Kruise's pod webhook"},
    {"KruiseDaemon", true, Stage::kBeta, Field::kNone, "kruise-daemon"},
    {"DaemonWatchingPod", true, Stage::kBeta, Field::kNone, "kruise-daemon"},
    {"CloneSetShortHash", false, Stage::kAlpha, Field::kShortHash, ""},
    {"KruisePodReadinessGate", false, Stage::kAlpha, Field::kNone, "Kruise's pod webhook for pods of other controllers"},
    {"PreDownloadImageForInPlaceUpdate", false, Stage::kAlpha, Field::kPreDownload, ""},
    {"CloneSetPartitionRollback", false, Stage::kAlpha, Field::kPartitionRollback, ""},
    {"ResourcesDeletionProtection", false, Stage::kBeta, Field::kNone, "Kruise's deletion protection webhook"},
    {"WorkloadSpread", true, Stage::kBeta, Field::kNone, "WorkloadSpread"},
    {"PodUnavailableBudgetDeleteGate", true, Stage::kBeta, Field::kNone, "PodUnavailableBudget"},
    {"PodUnavailableBudgetUpdateGate", false, Stage::kAlpha, Field::kNone, "PodUnavailableBudget"},
    {"TemplateNoDefaults", false, Stage::kAlpha, Field::kNone, "Kruise's workload webhooks (template defaults)"},
    {"InPlaceUpdateEnvFromMetadata", true, Stage::kBeta, Field::kEnvFromMetadata, ""},
    {"StatefulSetAutoDeletePVC", true, Stage::kBeta, Field::kNone, "Advanced StatefulSet"},
    {"SidecarSetPatchPodMetadataDefaultsAllowed", false, Stage::kAlpha, Field::kNone, "SidecarSet"},
    {"SidecarTerminator", false, Stage::kAlpha, Field::kNone, "SidecarSet"},
    {"PodProbeMarkerGate", true, Stage::kBeta, Field::kNone, "PodProbeMarker"},
    {"PreDownloadImageForDaemonSetUpdate", false, Stage::kAlpha, Field::kNone, "Advanced DaemonSet"},
    {"CloneSetEventHandlerOptimization", false, Stage::kAlpha, Field::kNone,
     "upstream's CloneSet event handler (the executor queues a CloneSet on every change of what it owns)"},
    {"PreparingUpdateAsUpdate", false, Stage::kAlpha, Field::kPreparingUpdateAsUpdate, ""},
    {"ImagePullJobGate", false, Stage::kAlpha, Field::kNone,
     "Kruise's ImagePullJob controller (the executor's pre-download coordinator runs whenever pre-download does)"},
    {"ResourceDistributionGate", false, Stage::kBeta, Field::kNone, "ResourceDistribution"},
    {"DeletionProtectionForCRDCascadingGate", false, Stage::kAlpha, Field::kNone,
     "Kruise's deletion protection webhook"},
    {"EnhancedLivenessProbe", false, Stage::kAlpha, Field::kNone, "kruise-daemon's liveness probes"},
    {"RecreatePodWhenChangeVCTInCloneSetGate", false, Stage::kAlpha, Field::kRecreateWhenChangeVct, ""},
    {"StatefulSetStartOrdinal", false, Stage::kAlpha, Field::kNone, "Advanced StatefulSet"},
    {"PodIndexLabel", true, Stage::kBeta, Field::kNone, "Kruise's Jobs"},
    {"EnableExternalCerts", false, Stage::kAlpha, Field::kNone, "kruise-manager's webhook certificates"},
    {"StatefulSetAutoResizePVCGate", false, Stage::kAlpha, Field::kNone, "Advanced StatefulSet"},
    {"ForceDeleteTimeoutExpectationGate", false, Stage::kAlpha, Field::kNone,
     "upstream's scale expectations (the executor lists again after --expectation_timeout)"},
    {"InPlaceWorkloadVerticalScaling", false, Stage::kAlpha, Field::kVerticalScaling, ""},
    {"EnablePodProbeMarkerOnServerless", false, Stage::kAlpha, Field::kNone, "PodProbeMarker"},
    {"EnableSortSidecarContainerByName", false, Stage::kAlpha, Field::kNone, "SidecarSet"},
    {"InPlacePodVerticalScaling", false, Stage::kAlpha, Field::kNone, "PodUnavailableBudget's handling of resizes"},
    {"DefaultHostNetworkHostPortsInPodTemplates", false, Stage::kAlpha, Field::kNone,
     "Kruise's workload webhooks (template defaults)"},
    {"DaemonSetPruneIneligibleNodes", false, Stage::kAlpha, Field::kNone, "Advanced DaemonSet"},
};

// component-base's switches for every gate of a stage that is not named itself.
constexpr absl::string_view kAllAlpha = "AllAlpha";
constexpr absl::string_view kAllBeta = "AllBeta";
constexpr absl::string_view kKruiseDaemon = "KruiseDaemon";

absl::string_view StageName(Stage s) { return s == Stage::kAlpha ? "ALPHA" : "BETA"; }

const Gate* FindGate(absl::string_view name) {
  for (const Gate& g : kGates) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

// Go's strconv.ParseBool.
std::optional<bool> ParseGoBool(absl::string_view v) {
  for (absl::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (v == t) return true;
  }
  for (absl::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (v == f) return false;
  }
  return std::nullopt;
}

void SetField(pb::FeatureGates& gates, Field field, bool on) {
  switch (field) {
    case Field::kNone:
      break;
    case Field::kShortHash:
      gates.set_clone_set_short_hash(on);
      break;
    case Field::kPartitionRollback:
      gates.set_clone_set_partition_rollback(on);
      break;
    case Field::kPreparingUpdateAsUpdate:
      gates.set_preparing_update_as_update(on);
      break;
    case Field::kEnvFromMetadata:
      gates.set_disable_in_place_update_env_from_metadata(!on);
      break;
    case Field::kRecreateWhenChangeVct:
      gates.set_recreate_pod_when_change_vct(on);
      break;
    case Field::kPreDownload:
      gates.set_pre_download_image_for_in_place_update(on);
      break;
    case Field::kVerticalScaling:
      gates.set_in_place_workload_vertical_scaling(on);
      break;
  }
}

}  // namespace

const std::vector<absl::string_view>& HonouredGateNames() {
  static const auto* names = [] {
    auto* out = new std::vector<absl::string_view>();
    for (const Gate& g : kGates) {
      if (g.field != Field::kNone) out->push_back(g.name);
    }
    return out;
  }();
  return *names;
}

absl::StatusOr<FeatureGateSettings> ParseFeatureGates(absl::string_view feature_gates,
                                                      bool scaling_exclude_preparing_delete) {
  // Named values, in the order first named (a repeated name keeps its place, takes the last value).
  std::map<std::string, bool, std::less<>> named;
  std::vector<std::string> order;
  for (absl::string_view pair : absl::StrSplit(feature_gates, ',')) {
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const absl::string_view name = absl::StripAsciiWhitespace(pair.substr(0, eq));
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--feature-gates: missing bool value for \"", name, "\" (want Name=true or Name=false)"));
    }
    const absl::string_view value = absl::StripAsciiWhitespace(pair.substr(eq + 1));
    const std::optional<bool> on = ParseGoBool(value);
    if (!on.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("--feature-gates: invalid value of ", name, "=", value,
                                                     " (want true or false)"));
    }
    if (name != kAllAlpha && name != kAllBeta && FindGate(name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--feature-gates: unrecognized feature gate: ", name, " (not a gate of OpenKruise v1.9.0)"));
    }
    if (named.find(name) == named.end()) order.emplace_back(name);
    named[std::string(name)] = *on;
  }

  const auto lookup = [&](absl::string_view name) -> std::optional<bool> {
    auto it = named.find(name);
    return it == named.end() ? std::nullopt : std::optional<bool>(it->second);
  };
  const std::optional<bool> all_alpha = lookup(kAllAlpha);
  const std::optional<bool> all_beta = lookup(kAllBeta);
  const auto enabled = [&](const Gate& g) {
    if (std::optional<bool> v = lookup(g.name)) return *v;
    const std::optional<bool>& all = g.stage == Stage::kAlpha ? all_alpha : all_beta;
    return all.value_or(g.default_on);
  };
  // kruise-manager's SetDefaultFeatureGates: without the daemon, what needs it is off whatever was asked.
  const bool daemon = enabled(*FindGate(kKruiseDaemon));

  FeatureGateSettings out;
  for (const Gate& g : kGates) {
    if (g.field == Field::kNone) continue;
    bool on = enabled(g);
    if (!daemon && (g.field == Field::kPreDownload || g.field == Field::kEnvFromMetadata)) on = false;
    SetField(out.gates, g.field, on);
    out.honoured.push_back(GateState{std::string(g.name), std::string(StageName(g.stage)), on});
  }
  out.scaling_exclude_preparing_delete = scaling_exclude_preparing_delete;
  out.gates.set_scaling_exclude_preparing_delete(scaling_exclude_preparing_delete);
  for (const std::string& name : order) {
    const Gate* g = FindGate(name);
    if (g == nullptr || g->field != Field::kNone) continue;  // AllAlpha, AllBeta and honoured gates
    if (name == kKruiseDaemon && !daemon) {
      out.warnings.push_back(
          "KruiseDaemon=false turns PreDownloadImageForInPlaceUpdate and InPlaceUpdateEnvFromMetadata off, as "
          "kruise-manager does without kruise-daemon");
      continue;
    }
    out.warnings.push_back(absl::StrCat(name, " concerns ", g->concerns, ", not CloneSets: accepted, no effect"));
  }
  return out;
}

std::string DescribeGates(const FeatureGateSettings& settings) {
  std::string out;
  for (const GateState& g : settings.honoured) {
    absl::StrAppend(&out, out.empty() ? "" : ",", g.name, "=", g.enabled ? "true" : "false");
  }
  absl::StrAppend(&out, "; cloneset-scaling-exclude-preparing-delete=",
                  settings.scaling_exclude_preparing_delete ? "true" : "false");
  return out;
}

}  // namespace cloneset::planapi
