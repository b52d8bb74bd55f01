// Upstream OpenKruise's feature gates, as kruise-manager takes them (`--feature-gates=Name=true,Other=false`), turned
// into the PlanRequest.feature_gates every caller of the planner sends: the executor on every reconcile and
// clonesetctl for its plans and simulations, so that both behave as a cluster configured so.
//
// The string is read as Kubernetes' component-base reads it: comma-separated `Name=bool` pairs (empty pairs skipped,
// whitespace around name and value ignored, the value as Go's strconv.ParseBool takes it: 1 t T TRUE true True, 0 f
// F FALSE false False), the last of a repeated name wins, `AllAlpha` and `AllBeta` set every gate of that stage that
// is not named itself, and an unknown name or a bad value is an error naming it. Every gate of OpenKruise v1.9.0 is
// known, with its upstream default and stage; after parsing, kruise-manager's own rule applies: `KruiseDaemon=false`
// turns PreDownloadImageForInPlaceUpdate and InPlaceUpdateEnvFromMetadata off (what they need is the daemon's).
//
// The gates that change what the planner decides for a CloneSet are honoured (kHonouredGates); the others concern
// other Kruise workloads or components (PodWebhook, SidecarSet, ...) and are accepted with a warning naming each.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

// One gate the planner honours and whether it is on.
struct GateState {
  std::string name;   // upstream's name, e.g. "CloneSetShortHash"
  std::string stage;  // upstream's pre-release stage as Kubernetes names it: "ALPHA", "BETA" ("" would be GA)
  bool enabled = false;
};

struct FeatureGateSettings {
  // What the planner gets: the honoured gates and the --cloneset-scaling-exclude-preparing-delete flag.
  pb::FeatureGates gates;
  // Every honoured gate in upstream's order, with its value in force (defaults included).
  std::vector<GateState> honoured;
  bool scaling_exclude_preparing_delete = false;
  // One per gate named in the string that the planner does not honour, naming it: "<Name> concerns <what>, not
  // CloneSets: accepted, no effect" (KruiseDaemon=false: what it turns off).
  std::vector<std::string> warnings;
};

// The names of the gates whose value reaches the planner, in upstream's order.
const std::vector<absl::string_view>& HonouredGateNames();

// `feature_gates` as kruise-manager's --feature-gates takes it ("" = upstream's defaults), and upstream's global
// flag --cloneset-scaling-exclude-preparing-delete. INVALID_ARGUMENT naming the pair for an unknown gate, a pair
// without `=` or a value that is not a bool.
absl::StatusOr<FeatureGateSettings> ParseFeatureGates(absl::string_view feature_gates,
                                                      bool scaling_exclude_preparing_delete = false);

// One line for logs: the honoured gates as `Name=true,...` in upstream's order, then the flag:
// "CloneSetShortHash=false,...,InPlaceWorkloadVerticalScaling=false; cloneset-scaling-exclude-preparing-delete=false".
std::string DescribeGates(const FeatureGateSettings& settings);

}  // namespace cloneset::planapi
