#include "planner/predownload.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/update_test_util.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::CloneSetBuilder;
using ::cloneset::planner::testing::RevisionBuilder;
using ::cloneset::planner::testing::TemplateJson;
using ::cloneset::planner::update_testing::Describe;
using ::cloneset::planner::update_testing::Events;
using ::cloneset::planner::update_testing::MakeScenario;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

ResolvedSpec InPlaceSpec(int32_t replicas = 10) {
  ResolvedSpec spec;
  spec.replicas = replicas;
  spec.policy = PodUpdatePolicy::kInPlaceIfPossible;
  spec.max_unavailable = 2;
  return spec;
}

CloneSetBuilder Enabled() {
  return CloneSetBuilder().Template(TemplateJson("nginx:1.26")).Annotation("apps.kruise.io/image-predownload-parallelism", "2");
}

struct SkipCase {
  std::string name;
  std::function<void(CloneSetBuilder&, ResolvedSpec&, std::vector<pb::ControllerRevision>&)> setup;
  std::vector<std::string> want;
};

class PreDownloadSkipTest : public ::testing::TestWithParam<SkipCase> {};

TEST_P(PreDownloadSkipTest, Decides) {
  CloneSetBuilder cs = Enabled();
  ResolvedSpec spec = InPlaceSpec();
  std::vector<pb::ControllerRevision> revisions = {RevisionBuilder("cs-1", 1),
                                                   RevisionBuilder("cs-2", 2).Template(TemplateJson("nginx:1.26"))};
  GetParam().setup(cs, spec, revisions);
  auto s = MakeScenario(cs, {}, spec, {}, revisions);
  PlanImagePreDownload(s->ctx, s->plan);
  EXPECT_THAT(Describe(s->plan), ::testing::ElementsAreArray(GetParam().want));
}

constexpr char kIgnored[] = "label-revision cs-2 apps.kruise.io/image-predownload-ignored=true";
constexpr char kCreated[] = "label-revision cs-2 apps.kruise.io/pre-predownload-created=true";

nlohmann::json EnvTemplate() {
  nlohmann::json t = nlohmann::json::parse(TemplateJson("nginx:1.26"));
  t["spec"]["containers"][0]["env"] = nlohmann::json::array({{{"name", "A"}, {"value", "1"}}});
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PreDownloadSkipTest,
    ::testing::Values(
        SkipCase{"DisabledWithoutGateOrAnnotation",
                 [](CloneSetBuilder& cs, ResolvedSpec&, auto&) {
                   cs.mutable_clone_set()->mutable_metadata()->mutable_annotations()->clear();
                 },
                 {}},
        SkipCase{"Creates", [](CloneSetBuilder&, ResolvedSpec&, auto&) {}, {"create-job", kCreated}},
        // A v1beta1 CloneSet says it with inPlaceUpdateStrategy.imagePreDownloadParallelism, not the annotation
        // (conversion moves the annotation into the field), and is read as such from the storage version.
        SkipCase{"EnabledByTheV1beta1Field",
                 [](CloneSetBuilder& cs, ResolvedSpec&, auto&) {
                   cs.mutable_clone_set()->mutable_metadata()->mutable_annotations()->clear();
                   cs.mutable_clone_set()->mutable_spec()->mutable_update_strategy()
                       ->mutable_image_predownload_parallelism()->set_int_value(2);
                 },
                 {"create-job", kCreated}},
        SkipCase{"MinUpdatedReadyNotReached",
                 [](CloneSetBuilder& cs, ResolvedSpec&, auto&) {
                   cs.mutable_clone_set()->mutable_spec()->mutable_update_strategy()
                       ->set_image_predownload_min_updated_ready_pods(2);
                   cs.mutable_clone_set()->mutable_status()->set_update_revision("cs-2");
                   cs.mutable_clone_set()->mutable_status()->set_updated_ready_replicas(1);
                 },
                 {}},
        SkipCase{"MinUpdatedReadyReached",
                 [](CloneSetBuilder& cs, ResolvedSpec&, auto&) {
                   cs.mutable_clone_set()->mutable_spec()->mutable_update_strategy()
                       ->set_image_predownload_min_updated_ready_pods(2);
                   cs.mutable_clone_set()->mutable_status()->set_update_revision("cs-2");
                   cs.mutable_clone_set()->mutable_status()->set_updated_ready_replicas(2);
                 },
                 {"create-job", kCreated}},
        SkipCase{"StaleStatusCountsZero",
                 [](CloneSetBuilder& cs, ResolvedSpec&, auto&) {
                   (*cs.mutable_clone_set()->mutable_metadata()->mutable_annotations())
                       ["apps.kruise.io/image-predownload-min-updated-ready-pods"] = "1";
                   cs.mutable_clone_set()->mutable_status()->set_update_revision("cs-0");
                   cs.mutable_clone_set()->mutable_status()->set_updated_ready_replicas(5);
                 },
                 {}},
        SkipCase{"UpdateRevisionNotStoredYet",
                 [](CloneSetBuilder&, ResolvedSpec&, auto& revs) { revs.pop_back(); },
                 {}},
        SkipCase{"AlreadyCreated",
                 [](CloneSetBuilder&, ResolvedSpec&, auto& revs) {
                   (*revs[1].mutable_metadata()->mutable_labels())[kPreDownloadCreatedLabel] = "true";
                 },
                 {}},
        SkipCase{"AlreadyIgnored",
                 [](CloneSetBuilder&, ResolvedSpec&, auto& revs) {
                   (*revs[1].mutable_metadata()->mutable_labels())[kPreDownloadIgnoredLabel] = "true";
                 },
                 {}},
        SkipCase{"ReCreateIgnored",
                 [](CloneSetBuilder&, ResolvedSpec& spec, auto&) { spec.policy = PodUpdatePolicy::kReCreate; },
                 {kIgnored}},
        SkipCase{"OnDeleteIgnored", [](CloneSetBuilder&, ResolvedSpec& spec, auto&) { spec.rolling_update = false; },
                 {kIgnored}},
        SkipCase{"ThreeReplicasIgnored", [](CloneSetBuilder&, ResolvedSpec& spec, auto&) { spec.replicas = 3; },
                 {kIgnored}},
        SkipCase{"FourReplicasCreates", [](CloneSetBuilder&, ResolvedSpec& spec, auto&) { spec.replicas = 4; },
                 {"create-job", kCreated}},
        SkipCase{"OneBatchIgnored",
                 [](CloneSetBuilder& cs, ResolvedSpec&, auto&) {
                   cs.MaxUnavailable(testing::Str("100%"));
                 },
                 {kIgnored}},
        SkipCase{"OneBatchButPartitionCreates",
                 [](CloneSetBuilder& cs, ResolvedSpec& spec, auto&) {
                   cs.MaxUnavailable(testing::Str("100%"));
                   spec.partition = 2;
                 },
                 {"create-job", kCreated}},
        SkipCase{"NotInPlaceIgnored",
                 [](CloneSetBuilder&, ResolvedSpec&, auto& revs) {
                   revs[1] = RevisionBuilder("cs-2", 2).Template(EnvTemplate().dump());
                 },
                 {kIgnored}}),
    [](const auto& info) { return info.param.name; });

TEST(PreDownloadTest, LabelKeepsRevisionNumberAndVersion) {
  std::vector<pb::ControllerRevision> revisions = {RevisionBuilder("cs-1", 1),
                                                   RevisionBuilder("cs-2", 7).Template(TemplateJson("nginx:1.26"))};
  revisions[1].mutable_metadata()->set_resource_version("42");
  auto s = MakeScenario(Enabled(), {}, InPlaceSpec(), {}, revisions);
  PlanImagePreDownload(s->ctx, s->plan);
  ASSERT_EQ(s->plan.response()->actions_size(), 2);
  const pb::UpdateRevision& update = s->plan.response()->actions(1).update_revision();
  EXPECT_EQ(update.revision(), 7);
  EXPECT_EQ(update.resource_version(), "42");
}

TEST(PreDownloadTest, RevisionsEqualDeletesJobs) {
  auto s = MakeScenario(Enabled(), {}, InPlaceSpec(), {}, {}, "cs-2", "cs-2");
  s->request.add_image_pull_jobs("cs-1-main");
  s->request.add_image_pull_jobs("cs-1-side");
  PlanImagePreDownload(s->ctx, s->plan);
  EXPECT_THAT(Describe(s->plan), ElementsAre("delete-job cs-1-main", "delete-job cs-1-side"));
}

TEST(PreDownloadTest, GateEnablesWithoutAnnotation) {
  CloneSetBuilder cs = CloneSetBuilder().Template(TemplateJson("nginx:1.26"));
  auto s = MakeScenario(cs, {}, InPlaceSpec());
  s->ctx.gates.set_pre_download_image_for_in_place_update(true);
  EXPECT_TRUE(PreDownloadEnabled(s->ctx));
  PlanImagePreDownload(s->ctx, s->plan);
  EXPECT_THAT(Describe(s->plan), ElementsAre("create-job", kCreated));
}

TEST(PreDownloadTest, JobDocument) {
  auto s = MakeScenario(Enabled().Annotation("apps.kruise.io/image-predownload-timeout-seconds", "120"), {},
                        InPlaceSpec());
  PlanImagePreDownload(s->ctx, s->plan);
  ASSERT_EQ(s->plan.response()->actions_size(), 2);
  const nlohmann::json job = nlohmann::json::parse(s->plan.response()->actions(0).create_image_pull_job().job_json());
  EXPECT_EQ(job["apiVersion"], "apps.kruise.io/v1alpha1");
  EXPECT_EQ(job["kind"], "ImagePullJob");
  EXPECT_EQ(job["metadata"]["name"], "cs-2-main");
  EXPECT_EQ(job["metadata"]["namespace"], "default");
  EXPECT_EQ(job["metadata"]["labels"]["app"], "demo");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["kind"], "CloneSet");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["uid"], testing::kCloneSetUid);
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(job["spec"]["image"], "nginx:1.26");
  EXPECT_EQ(job["spec"]["parallelism"], 2);
  EXPECT_EQ(job["spec"]["timeoutSeconds"], 120);
  EXPECT_EQ(job["spec"]["minUpdatedReadyPods"], 0);
  EXPECT_EQ(job["spec"]["pullSecrets"], nlohmann::json::array());
  EXPECT_EQ(job["spec"]["podSelector"]["matchLabels"]["app"], "demo");
  const nlohmann::json& last = job["spec"]["podSelector"]["matchExpressions"].back();
  EXPECT_EQ(last["key"], kRevisionLabel);
  EXPECT_EQ(last["operator"], "NotIn");
  EXPECT_EQ(last["values"][0], "cs-2");
  EXPECT_THAT(Events(s->plan), ElementsAre("Normal CreatedImagePullJob: created ImagePullJob cs-2-main for image: "
                                           "nginx:1.26"));
}

struct ParallelismCase {
  std::string name;
  std::string annotation;
  int want;
  bool warning;
};
class ParallelismTest : public ::testing::TestWithParam<ParallelismCase> {};
TEST_P(ParallelismTest, Resolves) {
  auto s = MakeScenario(CloneSetBuilder().Template(TemplateJson("nginx:1.26"))
                            .Annotation("apps.kruise.io/image-predownload-parallelism", GetParam().annotation),
                        {}, InPlaceSpec());
  PlanImagePreDownload(s->ctx, s->plan);
  ASSERT_GE(s->plan.response()->actions_size(), 1);
  const nlohmann::json job = nlohmann::json::parse(s->plan.response()->actions(0).create_image_pull_job().job_json());
  EXPECT_EQ(job["spec"]["parallelism"], GetParam().want);
  const std::vector<std::string> events = Events(s->plan);
  EXPECT_EQ(events.size(), GetParam().warning ? 2u : 1u);
  if (GetParam().warning) {
    EXPECT_EQ(events[0], "Warning InvalidImagePreDownloadParallelism: image pre-download parallelism \"" +
                             GetParam().annotation + "\" is not a positive integer; using 1");
  }
}
INSTANTIATE_TEST_SUITE_P(Cases, ParallelismTest,
                         ::testing::Values(ParallelismCase{"Five", "5", 5, false},
                                           ParallelismCase{"Word", "abc", 1, true},
                                           ParallelismCase{"Fraction", "1.5", 1, true},
                                           ParallelismCase{"Zero", "0", 1, true}),
                         [](const auto& info) { return info.param.name; });

TEST(PreDownloadTest, OnlyChangedContainersAndExistingJobsSkipped) {
  nlohmann::json old_t = nlohmann::json::parse(TemplateJson("nginx:1.25"));
  old_t["spec"]["containers"].push_back({{"name", "side"}, {"image", "busybox:1"}});
  nlohmann::json new_t = old_t;
  new_t["spec"]["containers"][0]["image"] = "nginx:1.26";
  new_t["spec"]["containers"].push_back({{"name", "extra"}, {"image", "redis:7"}});
  auto s = MakeScenario(Enabled().Template(new_t.dump()), {}, InPlaceSpec(), {},
                        {RevisionBuilder("cs-1", 1).Template(old_t.dump()), RevisionBuilder("cs-2", 2).Template(new_t.dump())});
  s->request.add_image_pull_jobs("cs-2-main");
  PlanImagePreDownload(s->ctx, s->plan);
  // "extra" is new, but adding a container cannot be done in place: the revision is marked ignored.
  EXPECT_THAT(Describe(s->plan), ElementsAre(kIgnored));

  new_t["spec"]["containers"].erase(2);
  auto t = MakeScenario(Enabled().Template(new_t.dump()), {}, InPlaceSpec(), {},
                        {RevisionBuilder("cs-1", 1).Template(old_t.dump()), RevisionBuilder("cs-2", 2).Template(new_t.dump())});
  t->request.add_image_pull_jobs("cs-2-main");
  PlanImagePreDownload(t->ctx, t->plan);
  EXPECT_THAT(Describe(t->plan), ElementsAre(kCreated));
  EXPECT_THAT(Events(t->plan), IsEmpty());
}

}  // namespace
}  // namespace cloneset::planner
