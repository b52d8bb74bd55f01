#include "planapi/feature_gates.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace cloneset::planapi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

pb::FeatureGates Gates(const std::string& text) {
  pb::FeatureGates g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

struct Case {
  std::string name;
  std::string flag;
  bool exclude_preparing_delete = false;
  std::string want_gates;  // text format of the FeatureGates the planner gets
  std::vector<std::string> want_warned;  // gate names the warnings start with, in order
};

class ParseFeatureGatesTest : public ::testing::TestWithParam<Case> {};

TEST_P(ParseFeatureGatesTest, Gates) {
  const Case& c = GetParam();
  absl::StatusOr<FeatureGateSettings> got = ParseFeatureGates(c.flag, c.exclude_preparing_delete);
  ASSERT_TRUE(got.ok()) << got.status();
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(Gates(c.want_gates), got->gates)) << diff;
  std::vector<std::string> warned;
  for (const std::string& w : got->warnings) warned.push_back(w.substr(0, w.find_first_of(" =")));
  EXPECT_EQ(warned, c.want_warned) << absl::StrJoin(got->warnings, "\n");
  EXPECT_EQ(got->scaling_exclude_preparing_delete, c.exclude_preparing_delete);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ParseFeatureGatesTest,
    ::testing::Values(
        // Upstream's defaults: every CloneSet gate off but InPlaceUpdateEnvFromMetadata (the proto's zero value).
        Case{"Empty", "", false, ""},
        Case{"OnlyCommas", ",,", false, ""},
        Case{"ShortHash", "CloneSetShortHash=true", false, "clone_set_short_hash: true"},
        Case{"EachHonouredGate",
             "CloneSetShortHash=true,CloneSetPartitionRollback=true,PreparingUpdateAsUpdate=true,"
             "InPlaceUpdateEnvFromMetadata=false,RecreatePodWhenChangeVCTInCloneSetGate=true,"
             "PreDownloadImageForInPlaceUpdate=true,InPlaceWorkloadVerticalScaling=true",
             false,
             "clone_set_short_hash: true clone_set_partition_rollback: true preparing_update_as_update: true "
             "disable_in_place_update_env_from_metadata: true recreate_pod_when_change_vct: true "
             "pre_download_image_for_in_place_update: true in_place_workload_vertical_scaling: true"},
        // component-base trims names and values and skips empty pairs.
        Case{"Whitespace", " CloneSetShortHash = true ,\tCloneSetPartitionRollback=\ttrue ,,", false,
             "clone_set_short_hash: true clone_set_partition_rollback: true"},
        // strconv.ParseBool's spellings.
        Case{"BoolSpellings", "CloneSetShortHash=1,CloneSetPartitionRollback=t,PreparingUpdateAsUpdate=T", false,
             "clone_set_short_hash: true clone_set_partition_rollback: true preparing_update_as_update: true"},
        Case{"BoolSpellingsUpper", "CloneSetShortHash=TRUE,CloneSetPartitionRollback=True", false,
             "clone_set_short_hash: true clone_set_partition_rollback: true"},
        Case{"FalseSpellings",
             "InPlaceUpdateEnvFromMetadata=0,CloneSetShortHash=f,CloneSetPartitionRollback=F,"
             "PreparingUpdateAsUpdate=FALSE,PreDownloadImageForInPlaceUpdate=False",
             false, "disable_in_place_update_env_from_metadata: true"},
        // The last of a repeated name wins.
        Case{"RepeatedLastWins", "CloneSetShortHash=true,CloneSetShortHash=false", false, ""},
        Case{"EnvFromMetadataOnExplicitly", "InPlaceUpdateEnvFromMetadata=true", false, ""},
        // AllAlpha/AllBeta set the gates of their stage that are not named themselves, in any order.
        Case{"AllAlpha", "AllAlpha=true", false,
             "clone_set_short_hash: true clone_set_partition_rollback: true preparing_update_as_update: true "
             "recreate_pod_when_change_vct: true pre_download_image_for_in_place_update: true "
             "in_place_workload_vertical_scaling: true"},
        Case{"AllAlphaNamedWinsAfter", "AllAlpha=true,CloneSetShortHash=false,InPlaceWorkloadVerticalScaling=false",
             false,
             "clone_set_partition_rollback: true preparing_update_as_update: true "
             "recreate_pod_when_change_vct: true pre_download_image_for_in_place_update: true"},
        Case{"AllAlphaNamedWinsBefore", "CloneSetShortHash=false,AllAlpha=true,InPlaceWorkloadVerticalScaling=false",
             false,
             "clone_set_partition_rollback: true preparing_update_as_update: true "
             "recreate_pod_when_change_vct: true pre_download_image_for_in_place_update: true"},
        // AllBeta=false turns the beta InPlaceUpdateEnvFromMetadata off, and KruiseDaemon (beta) too, which turns
        // pre-download off although it was asked for.
        Case{"AllBetaOff", "AllBeta=false,PreDownloadImageForInPlaceUpdate=true", false,
             "disable_in_place_update_env_from_metadata: true"},
        Case{"AllBetaOffDaemonNamedOn", "AllBeta=false,KruiseDaemon=true,PreDownloadImageForInPlaceUpdate=true",
             false,
             "disable_in_place_update_env_from_metadata: true pre_download_image_for_in_place_update: true",
             {"KruiseDaemon"}},
        // kruise-manager without kruise-daemon: what needs it is off, whatever was asked.
        Case{"NoDaemon",
             "KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true,InPlaceUpdateEnvFromMetadata=true,"
             "CloneSetShortHash=true",
             false, "disable_in_place_update_env_from_metadata: true clone_set_short_hash: true", {"KruiseDaemon"}},
        // Gates of other workloads and components: accepted, each named in a warning, in the order given.
        Case{"OtherComponents", "PodWebhook=false,SidecarTerminator=true,CloneSetShortHash=true,PodWebhook=true",
             false, "clone_set_short_hash: true", {"PodWebhook", "SidecarTerminator"}},
        Case{"ScalingExcludePreparingDelete", "", true, "scaling_exclude_preparing_delete: true"},
        // What the benchmarks' kruise-manager runs with.
        Case{"NoWebhookNoDaemon", "PodWebhook=false,KruiseDaemon=false", false,
             "disable_in_place_update_env_from_metadata: true", {"PodWebhook", "KruiseDaemon"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

struct BadCase {
  std::string name;
  std::string flag;
  std::string want;  // in the error message
};

class ParseFeatureGatesBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseFeatureGatesBadTest, RefusedNamingThePair) {
  const BadCase& c = GetParam();
  absl::StatusOr<FeatureGateSettings> got = ParseFeatureGates(c.flag);
  ASSERT_FALSE(got.ok()) << c.flag;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr(c.want));
  EXPECT_THAT(got.status().message(), HasSubstr("--feature-gates"));
}

INSTANTIATE_TEST_SUITE_P(
    Table, ParseFeatureGatesBadTest,
    ::testing::Values(BadCase{"Unknown", "CloneSetShortHash=true,NoSuchGate=true", "unrecognized feature gate: NoSuchGate"},
                      // Names are case-sensitive, as upstream's.
                      BadCase{"NameCase", "cloneSetShortHash=true", "unrecognized feature gate: cloneSetShortHash"},
                      BadCase{"EmptyName", "=true", "unrecognized feature gate: "},
                      BadCase{"NoValue", "CloneSetShortHash", "missing bool value for \"CloneSetShortHash\""},
                      BadCase{"EmptyValue", "CloneSetShortHash=", "invalid value of CloneSetShortHash="},
                      BadCase{"Yes", "CloneSetShortHash=yes", "invalid value of CloneSetShortHash=yes"},
                      // ParseBool takes three spellings of each word, not any case.
                      BadCase{"MixedCase", "CloneSetShortHash=tRUE", "invalid value of CloneSetShortHash=tRUE"},
                      BadCase{"DoubleEquals", "CloneSetShortHash==true", "invalid value of CloneSetShortHash==true"},
                      BadCase{"WhitespacePair", "CloneSetShortHash=true, ", "missing bool value for \"\""},
                      BadCase{"SemicolonSeparated", "CloneSetShortHash=true;CloneSetPartitionRollback=true",
                              "invalid value of CloneSetShortHash=true;CloneSetPartitionRollback=true"},
                      // A bad value is refused even for a gate that would be ignored.
                      BadCase{"BadValueOfIgnoredGate", "PodWebhook=off", "invalid value of PodWebhook=off"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// Upstream's CI turns every gate on: each is accepted, the CloneSet ones reach the planner, every other is named.
TEST(ParseFeatureGates, EveryUpstreamGateOn) {
  const std::vector<std::string> all = {
      "PodWebhook", "KruiseDaemon", "DaemonWatchingPod", "CloneSetShortHash", "KruisePodReadinessGate",
      "PreDownloadImageForInPlaceUpdate", "CloneSetPartitionRollback", "ResourcesDeletionProtection",
      "WorkloadSpread", "PodUnavailableBudgetDeleteGate", "PodUnavailableBudgetUpdateGate", "TemplateNoDefaults",
      "InPlaceUpdateEnvFromMetadata", "StatefulSetAutoDeletePVC", "SidecarSetPatchPodMetadataDefaultsAllowed",
      "SidecarTerminator", "PodProbeMarkerGate", "PreDownloadImageForDaemonSetUpdate",
      "CloneSetEventHandlerOptimization", "PreparingUpdateAsUpdate", "ImagePullJobGate", "ResourceDistributionGate",
      "DeletionProtectionForCRDCascadingGate", "EnhancedLivenessProbe", "RecreatePodWhenChangeVCTInCloneSetGate",
      "StatefulSetStartOrdinal", "PodIndexLabel", "EnableExternalCerts", "StatefulSetAutoResizePVCGate",
      "ForceDeleteTimeoutExpectationGate", "InPlaceWorkloadVerticalScaling", "EnablePodProbeMarkerOnServerless",
      "EnableSortSidecarContainerByName", "InPlacePodVerticalScaling", "DefaultHostNetworkHostPortsInPodTemplates",
      "DaemonSetPruneIneligibleNodes"};
  std::vector<std::string> pairs;
  for (const std::string& g : all) pairs.push_back(g + "=true");
  absl::StatusOr<FeatureGateSettings> got = ParseFeatureGates(absl::StrJoin(pairs, ","));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      got->gates, Gates("clone_set_short_hash: true clone_set_partition_rollback: true "
                        "preparing_update_as_update: true recreate_pod_when_change_vct: true "
                        "pre_download_image_for_in_place_update: true in_place_workload_vertical_scaling: true")));
  std::set<std::string> warned;
  for (const std::string& w : got->warnings) warned.insert(w.substr(0, w.find(' ')));
  std::set<std::string> want(all.begin(), all.end());
  for (absl::string_view h : HonouredGateNames()) want.erase(std::string(h));
  EXPECT_EQ(warned, want);
  EXPECT_EQ(got->warnings.size(), all.size() - HonouredGateNames().size());
}

// Each honoured gate set to the opposite of its default changes its own field and no other.
TEST(ParseFeatureGates, EachHonouredGateHasItsOwnField) {
  const FeatureGateSettings defaults = *ParseFeatureGates("");
  std::set<std::string> changed_fields;
  for (absl::string_view name : HonouredGateNames()) {
    bool default_on = false;
    for (const GateState& g : defaults.honoured) {
      if (g.name == name) default_on = g.enabled;
    }
    absl::StatusOr<FeatureGateSettings> got =
        ParseFeatureGates(std::string(name) + (default_on ? "=false" : "=true"));
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    got->gates.GetReflection()->ListFields(got->gates, &fields);
    ASSERT_EQ(fields.size(), 1u) << name;
    changed_fields.insert(fields[0]->name());
  }
  EXPECT_EQ(changed_fields.size(), HonouredGateNames().size());
}

TEST(ParseFeatureGates, HonouredInUpstreamOrderWithStages) {
  const FeatureGateSettings s = *ParseFeatureGates("CloneSetShortHash=true");
  std::vector<std::string> rows;
  for (const GateState& g : s.honoured) rows.push_back(g.name + "/" + g.stage + "/" + (g.enabled ? "1" : "0"));
  EXPECT_THAT(rows, ElementsAre("CloneSetShortHash/ALPHA/1", "PreDownloadImageForInPlaceUpdate/ALPHA/0",
                                "CloneSetPartitionRollback/ALPHA/0", "InPlaceUpdateEnvFromMetadata/BETA/1",
                                "PreparingUpdateAsUpdate/ALPHA/0", "RecreatePodWhenChangeVCTInCloneSetGate/ALPHA/0",
                                "InPlaceWorkloadVerticalScaling/ALPHA/0"));
  EXPECT_THAT(s.warnings, IsEmpty());
}

TEST(DescribeGates, OneLine) {
  EXPECT_EQ(DescribeGates(*ParseFeatureGates("PreparingUpdateAsUpdate=true", true)),
            "CloneSetShortHash=false,PreDownloadImageForInPlaceUpdate=false,CloneSetPartitionRollback=false,"
            "InPlaceUpdateEnvFromMetadata=true,PreparingUpdateAsUpdate=true,"
            "RecreatePodWhenChangeVCTInCloneSetGate=false,InPlaceWorkloadVerticalScaling=false; "
            "cloneset-scaling-exclude-preparing-delete=true");
}

TEST(ParseFeatureGates, WarningNamesWhatTheGateConcerns) {
  const FeatureGateSettings s = *ParseFeatureGates("PodWebhook=false,KruiseDaemon=false");
  EXPECT_THAT(s.warnings, ElementsAre("PodWebhook concerns Kruise's pod webhook, not CloneSets: accepted, no effect",
                                      HasSubstr("KruiseDaemon=false turns PreDownloadImageForInPlaceUpdate and "
                                                "InPlaceUpdateEnvFromMetadata off")));
}

}  // namespace
}  // namespace cloneset::planapi
