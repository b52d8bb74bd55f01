// The mapping rule by rule (semantics §1.2): each case converts one object and checks the result exactly, then
// converts the result back and checks that the original comes back.
#include "conversion/cloneset.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kruise/keys.h"

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

Json Alpha(Json spec, Json metadata = Json::object()) {
  metadata["name"] = "web";
  return Json{{"apiVersion", kruise::kV1alpha1}, {"kind", "CloneSet"}, {"metadata", metadata}, {"spec", spec}};
}
Json Beta(Json spec, Json metadata = Json::object()) {
  metadata["name"] = "web";
  return Json{{"apiVersion", kruise::kV1beta1}, {"kind", "CloneSet"}, {"metadata", metadata}, {"spec", spec}};
}

struct Case {
  std::string name;
  Json in;
  Json want;  // ConvertCloneSet(in, the other version)
};

std::string Other(const Json& o) { return o["apiVersion"] == kruise::kV1alpha1 ? kruise::kV1beta1 : kruise::kV1alpha1; }

class MappingTest : public ::testing::TestWithParam<Case> {};

TEST_P(MappingTest, ConvertsAndComesBack) {
  const Case& c = GetParam();
  absl::StatusOr<Json> out = ConvertCloneSet(c.in, Other(c.in));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, c.want) << "got  " << out->dump() << "\nwant " << c.want.dump();
  absl::StatusOr<Json> back = ConvertCloneSet(*out, c.in["apiVersion"].get<std::string>());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, c.in) << "got  " << back->dump() << "\nwant " << c.in.dump();
}

// Each alpha spec below is written with a scaleStrategy ({} at least), as the CRD's defaults leave every stored
// object, so that the cases show one rule each.
const Json kAlphaScale = Json::object();
const Json kBetaScale = {{"enablePVCReuse", true}};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const char* policy : {"ReCreate", "InPlaceIfPossible", "InPlaceOnly"}) {
    cases.push_back({std::string("policy_") + policy,
                     Alpha({{"scaleStrategy", kAlphaScale},
                            {"updateStrategy", {{"type", policy}, {"partition", 2}, {"maxUnavailable", "20%"},
                                                {"maxSurge", 0}, {"paused", true}}}}),
                     Beta({{"scaleStrategy", kBetaScale},
                           {"updateStrategy",
                            {{"type", "RollingUpdate"},
                             {"rollingUpdate", {{"podUpdatePolicy", policy}, {"partition", 2},
                                                {"maxUnavailable", "20%"}, {"maxSurge", 0}, {"paused", true}}}}}})});
  }
  cases.push_back({"on_delete_keeps_its_rolling_fields_under_rollingUpdate",
                   Alpha({{"scaleStrategy", kAlphaScale},
                          {"updateStrategy", {{"type", "OnDelete"}, {"partition", 0}, {"maxSurge", 0}}}}),
                   Beta({{"scaleStrategy", kBetaScale},
                         {"updateStrategy",
                          {{"type", "OnDelete"}, {"rollingUpdate", {{"partition", 0}, {"maxSurge", 0}}}}}})});
  cases.push_back({"on_delete_alone",
                   Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"type", "OnDelete"}}}}),
                   Beta({{"scaleStrategy", kBetaScale}, {"updateStrategy", {{"type", "OnDelete"}}}})});
  cases.push_back({"no_type_is_rolling_update_without_a_policy",
                   Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"partition", 1}}}}),
                   Beta({{"scaleStrategy", kBetaScale},
                         {"updateStrategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 1}}}}}})});
  cases.push_back({"strategies_and_unknown_rolling_fields_move_under_rollingUpdate",
                   Alpha({{"scaleStrategy", kAlphaScale},
                          {"updateStrategy",
                           {{"type", "InPlaceIfPossible"},
                            {"priorityStrategy", {{"orderPriority", {{{"orderedKey", "rank"}}}}}},
                            {"scatterStrategy", {{{"key", "zone"}, {"value", "a"}}}},
                            {"inPlaceUpdateStrategy", {{"gracePeriodSeconds", 10}}},
                            {"futureRollingField", {{"x", 1}}}}}}),
                   Beta({{"scaleStrategy", kBetaScale},
                         {"updateStrategy",
                          {{"type", "RollingUpdate"},
                           {"rollingUpdate",
                            {{"podUpdatePolicy", "InPlaceIfPossible"},
                             {"priorityStrategy", {{"orderPriority", {{{"orderedKey", "rank"}}}}}},
                             {"scatterStrategy", {{{"key", "zone"}, {"value", "a"}}}},
                             {"inPlaceUpdateStrategy", {{"gracePeriodSeconds", 10}}},
                             {"futureRollingField", {{"x", 1}}}}}}}})});
  cases.push_back({"pvc_reuse_disabled",
                   Alpha({{"scaleStrategy", {{"disablePVCReuse", true}, {"podsToDelete", {"web-a"}}}}}),
                   Beta({{"scaleStrategy", {{"enablePVCReuse", false}, {"podsToDelete", {"web-a"}}}}})});
  cases.push_back({"pvc_reuse_by_default_in_v1alpha1_is_said_in_v1beta1",
                   Alpha({{"scaleStrategy", {{"maxUnavailable", "10%"}, {"pvcRetentionPolicy", "Retain"}}}}),
                   Beta({{"scaleStrategy",
                          {{"enablePVCReuse", true}, {"maxUnavailable", "10%"}, {"pvcRetentionPolicy", "Retain"}}}})});
  cases.push_back({"no_pvc_reuse_by_default_in_v1beta1_is_said_in_v1alpha1",
                   Beta({{"scaleStrategy", {{"enablePVCReuse", false}}}}),
                   Alpha({{"scaleStrategy", {{"disablePVCReuse", true}}}})});
  cases.push_back({"exclude_label_moves_to_the_field",
                   Alpha({{"scaleStrategy", kAlphaScale}},
                         {{"labels", {{kruise::kExcludePreparingDeleteLabel, "true"}, {"app", "web"}}}}),
                   Beta({{"scaleStrategy", {{"enablePVCReuse", true}, {"excludePreparingDelete", true}}}},
                        {{"labels", {{"app", "web"}}}})});
  cases.push_back({"exclude_label_alone_leaves_no_empty_labels",
                   Alpha({{"scaleStrategy", kAlphaScale}}, {{"labels", {{kruise::kExcludePreparingDeleteLabel, "true"}}}}),
                   Beta({{"scaleStrategy", {{"enablePVCReuse", true}, {"excludePreparingDelete", true}}}})});
  cases.push_back({"exclude_label_other_than_true_means_nothing_and_stays",
                   Alpha({{"scaleStrategy", kAlphaScale}}, {{"labels", {{kruise::kExcludePreparingDeleteLabel, "yes"}}}}),
                   Beta({{"scaleStrategy", kBetaScale}}, {{"labels", {{kruise::kExcludePreparingDeleteLabel, "yes"}}}})});
  cases.push_back(
      {"predownload_annotations_move_to_the_fields",
       Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"type", "InPlaceIfPossible"}}}},
             {{"annotations",
               {{kruise::kPreDownloadParallelismAnnotation, "50%"}, {kruise::kPreDownloadTimeoutSecondsAnnotation, "600"},
                {kruise::kPreDownloadMinUpdatedReadyPodsAnnotation, "2"}, {"team", "video"}}}}),
       Beta({{"scaleStrategy", kBetaScale},
             {"updateStrategy",
              {{"type", "RollingUpdate"},
               {"rollingUpdate",
                {{"podUpdatePolicy", "InPlaceIfPossible"},
                 {"inPlaceUpdateStrategy",
                  {{"imagePreDownloadParallelism", "50%"}, {"imagePreDownloadTimeoutSeconds", 600},
                   {"imagePreDownloadMinUpdatedReadyPods", 2}}}}}}}},
            {{"annotations", {{"team", "video"}}}})});
  cases.push_back({"predownload_parallelism_as_a_number",
                   Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"type", "ReCreate"}}}},
                         {{"annotations", {{kruise::kPreDownloadParallelismAnnotation, "4"}}}}),
                   Beta({{"scaleStrategy", kBetaScale},
                         {"updateStrategy",
                          {{"type", "RollingUpdate"},
                           {"rollingUpdate",
                            {{"podUpdatePolicy", "ReCreate"},
                             {"inPlaceUpdateStrategy", {{"imagePreDownloadParallelism", 4}}}}}}}})});
  cases.push_back({"predownload_annotation_that_means_nothing_stays_an_annotation",
                   Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"type", "ReCreate"}}}},
                         {{"annotations", {{kruise::kPreDownloadTimeoutSecondsAnnotation, "soon"}}}}),
                   Beta({{"scaleStrategy", kBetaScale},
                         {"updateStrategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"podUpdatePolicy", "ReCreate"}}}}}},
                        {{"annotations",
                          {{kruise::kPreDownloadTimeoutSecondsAnnotation, "soon"},
                           {kV1alpha1StashAnnotation,
                            R"([{"path":"/metadata/annotations","value":{"apps.kruise.io/image-predownload-timeout-seconds":"soon"}}])"}}}})});
  cases.push_back({"status_metadata_and_unknown_spec_fields_are_copied",
                   [] {
                     Json a = Alpha({{"scaleStrategy", kAlphaScale},
                                     {"replicas", 3},
                                     {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}}},
                                     {"futureSpecField", {1, 2}}},
                                    {{"namespace", "ns"}, {"uid", "u-1"}, {"resourceVersion", "7"}});
                     a["status"] = {{"replicas", 3}, {"conditions", {{{"type", "Progressing"}, {"status", "True"}}}}};
                     return a;
                   }(),
                   [] {
                     Json b = Beta({{"scaleStrategy", kBetaScale},
                                    {"replicas", 3},
                                    {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}}},
                                    {"futureSpecField", {1, 2}}},
                                   {{"namespace", "ns"}, {"uid", "u-1"}, {"resourceVersion", "7"}});
                     b["status"] = {{"replicas", 3}, {"conditions", {{{"type", "Progressing"}, {"status", "True"}}}}};
                     return b;
                   }()});
  // What v1alpha1 cannot say goes into the stash annotation and comes back from it.
  cases.push_back({"explicit_default_false_is_kept_in_the_stash",
                   Alpha({{"scaleStrategy", {{"disablePVCReuse", false}}}}),
                   Beta({{"scaleStrategy", {{"enablePVCReuse", true}}}},
                        {{"annotations",
                          {{kV1alpha1StashAnnotation,
                            R"([{"path":"/spec/scaleStrategy/disablePVCReuse","value":false}])"}}}})});
  cases.push_back({"policy_under_on_delete_is_kept_in_the_stash",
                   Beta({{"scaleStrategy", kBetaScale},
                         {"updateStrategy",
                          {{"type", "OnDelete"}, {"rollingUpdate", {{"podUpdatePolicy", "InPlaceOnly"}}}}}}),
                   Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"type", "OnDelete"}}}},
                         {{"annotations",
                           {{kV1beta1StashAnnotation,
                             R"([{"path":"/spec/updateStrategy/rollingUpdate","value":{"podUpdatePolicy":"InPlaceOnly"}}])"}}}})});
  cases.push_back({"exclude_label_beside_a_false_field_is_kept_in_the_stash",
                   Beta({{"scaleStrategy", {{"enablePVCReuse", true}, {"excludePreparingDelete", false}}}},
                        {{"labels", {{kruise::kExcludePreparingDeleteLabel, "true"}}}}),
                   Alpha({{"scaleStrategy", kAlphaScale}},
                         {{"annotations",
                           {{kV1beta1StashAnnotation,
                             R"([{"path":"/metadata/labels","value":{"apps.kruise.io/cloneset-scaling-exclude-preparing-delete":"true"}},)"
                             R"({"path":"/spec/scaleStrategy/excludePreparingDelete","value":false}])"}}}})});
  cases.push_back({"kruise_stored_copies_of_the_moved_metadata_are_kept_in_the_stash",
                   Beta({{"scaleStrategy", {{"enablePVCReuse", true}, {"excludePreparingDelete", true}}},
                         {"updateStrategy",
                          {{"type", "RollingUpdate"},
                           {"rollingUpdate",
                            {{"podUpdatePolicy", "ReCreate"},
                             {"inPlaceUpdateStrategy", {{"imagePreDownloadParallelism", 5}}}}}}}},
                        {{"labels", {{kruise::kExcludePreparingDeleteLabel, "true"}}},
                         {"annotations", {{kruise::kPreDownloadParallelismAnnotation, "5"}}}}),
                   Alpha({{"scaleStrategy", kAlphaScale}, {"updateStrategy", {{"type", "ReCreate"}}}},
                         {{"labels", {{kruise::kExcludePreparingDeleteLabel, "true"}}},
                          {"annotations",
                           {{kruise::kPreDownloadParallelismAnnotation, "5"},
                            {kV1beta1StashAnnotation,
                             R"([{"path":"/metadata/annotations","value":{"apps.kruise.io/image-predownload-parallelism":"5"}},)"
                             R"({"path":"/metadata/labels","value":{"apps.kruise.io/cloneset-scaling-exclude-preparing-delete":"true"}}])"}}}})});
  // Without a spec the versions' defaults still differ (PVC reuse), so the other version says it.
  cases.push_back({"no_spec_still_says_what_the_default_means",
                   Json{{"apiVersion", kruise::kV1alpha1}, {"kind", "CloneSet"}, {"metadata", {{"name", "x"}}}},
                   Json{{"apiVersion", kruise::kV1beta1},
                        {"kind", "CloneSet"},
                        {"metadata",
                         {{"name", "x"},
                          {"annotations",
                           {{kV1alpha1StashAnnotation, R"([{"path":"/spec","was":{"scaleStrategy":{}}}])"}}}}},
                        {"spec", {{"scaleStrategy", {{"enablePVCReuse", true}}}}}}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Rules, MappingTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(ConvertCloneSet, SameVersionComesBackAsIs) {
  const Json a = Alpha({{"updateStrategy", {{"type", "ReCreate"}}}});
  absl::StatusOr<Json> out = ConvertCloneSet(a, kruise::kV1alpha1);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, a);
}

TEST(ConvertCloneSet, AClientsChangeInTheOtherVersionWinsOverTheStash) {
  // v1beta1 spells the policy under OnDelete, which v1alpha1 cannot hold; a v1alpha1 client then switches to
  // InPlaceIfPossible: the stashed policy must not come back over the client's choice.
  const Json beta = Beta({{"scaleStrategy", kBetaScale},
                          {"updateStrategy", {{"type", "OnDelete"}, {"rollingUpdate", {{"podUpdatePolicy", "InPlaceOnly"}}}}}});
  absl::StatusOr<Json> alpha = ConvertCloneSet(beta, kruise::kV1alpha1);
  ASSERT_TRUE(alpha.ok());
  Json edited = *alpha;
  edited["spec"]["updateStrategy"]["type"] = "InPlaceIfPossible";
  absl::StatusOr<Json> back = ConvertCloneSet(edited, kruise::kV1beta1);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)["spec"]["updateStrategy"],
            Json({{"type", "RollingUpdate"}, {"rollingUpdate", {{"podUpdatePolicy", "InPlaceIfPossible"}}}}));
  EXPECT_FALSE((*back)["metadata"].contains("annotations")) << back->dump();
}

TEST(ConvertCloneSet, ADamagedStashIsIgnored) {
  Json a = Alpha({{"scaleStrategy", kAlphaScale}}, {{"annotations", {{kV1beta1StashAnnotation, "{not json"}}}});
  absl::StatusOr<Json> out = ConvertCloneSet(a, kruise::kV1beta1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Beta({{"scaleStrategy", kBetaScale}}));
}

struct BadCase {
  std::string name;
  Json in;
  std::string to;
  std::string message;
};

class BadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, NamesTheField) {
  absl::StatusOr<Json> out = ConvertCloneSet(GetParam().in, GetParam().to);
  ASSERT_FALSE(out.ok()) << out->dump();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, BadInputTest,
    ::testing::Values(
        BadCase{"not_an_object", Json::array(), kruise::kV1beta1, "must be an object, got array"},
        BadCase{"other_kind", Json{{"apiVersion", kruise::kV1alpha1}, {"kind", "Deployment"}}, kruise::kV1beta1,
                "kind: \"Deployment\" is not \"CloneSet\""},
        BadCase{"other_version", Json{{"apiVersion", "apps/v1"}, {"kind", "CloneSet"}}, kruise::kV1beta1,
                "apiVersion: \"apps/v1\" is not"},
        BadCase{"no_version", Json{{"kind", "CloneSet"}}, kruise::kV1beta1, "apiVersion: missing"},
        BadCase{"other_target", Alpha(Json::object()), "apps.kruise.io/v2", "desiredAPIVersion: \"apps.kruise.io/v2\""},
        BadCase{"spec_not_an_object", Alpha(Json::array()), kruise::kV1beta1, "spec: must be an object, got array"},
        BadCase{"type_not_a_string", Alpha({{"updateStrategy", {{"type", 3}}}}), kruise::kV1beta1,
                "spec.updateStrategy.type: must be a string, got number"},
        BadCase{"update_strategy_not_an_object", Beta({{"updateStrategy", "RollingUpdate"}}), kruise::kV1alpha1,
                "spec.updateStrategy: must be an object, got string"},
        BadCase{"rolling_update_not_an_object", Beta({{"updateStrategy", {{"rollingUpdate", 1}}}}), kruise::kV1alpha1,
                "spec.updateStrategy.rollingUpdate: must be an object, got number"},
        BadCase{"policy_not_a_string",
                Beta({{"updateStrategy", {{"rollingUpdate", {{"podUpdatePolicy", true}}}}}}), kruise::kV1alpha1,
                "spec.updateStrategy.rollingUpdate.podUpdatePolicy: must be a string, got boolean"},
        BadCase{"disable_not_a_bool", Alpha({{"scaleStrategy", {{"disablePVCReuse", "yes"}}}}), kruise::kV1beta1,
                "spec.scaleStrategy.disablePVCReuse: must be a boolean, got string"},
        BadCase{"enable_not_a_bool", Beta({{"scaleStrategy", {{"enablePVCReuse", 1}}}}), kruise::kV1alpha1,
                "spec.scaleStrategy.enablePVCReuse: must be a boolean, got number"},
        BadCase{"timeout_not_a_number",
                Beta({{"updateStrategy",
                       {{"rollingUpdate", {{"inPlaceUpdateStrategy", {{"imagePreDownloadTimeoutSeconds", "5"}}}}}}}}),
                kruise::kV1alpha1,
                "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds: must be an "
                "integer, got string"},
        BadCase{"annotations_not_an_object", Alpha(Json::object(), {{"annotations", {1, 2}}}), kruise::kV1beta1,
                "metadata.annotations: must be an object, got array"},
        BadCase{"label_not_a_string", Alpha(Json::object(), {{"labels", {{kruise::kExcludePreparingDeleteLabel, true}}}}),
                kruise::kV1beta1, "metadata.labels[\"apps.kruise.io/cloneset-scaling-exclude-preparing-delete\"]: must be a "
                          "string, got boolean"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return i.param.name; });

}  // namespace
}  // namespace cloneset::conversion
