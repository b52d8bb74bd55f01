#include "planner/inplace.h"

#include <string>

#include "base/time_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/pod_facts.h"
#include "planner/pod_source.h"
#include "planapi/pod_table.h"
#include "planner/predicates.h"
#include "planner/revision.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using ::cloneset::planner::testing::Now;
using ::cloneset::planner::testing::PodBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using Json = nlohmann::json;

Json BaseTemplate() {
  return Json::parse(R"({"metadata":{"labels":{"app":"demo","ver":"v1"},"annotations":{"note":"a"}},
    "spec":{"containers":[{"name":"main","image":"nginx:1.25",
      "env":[{"name":"VER","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['ver']"}}}]},
      {"name":"side","image":"busybox:1"}]}})");
}

struct SpecCase {
  std::string name;
  std::function<void(Json&)> change;
  bool in_place;
  std::string why_not;
};

class InPlaceSpecTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(InPlaceSpecTest, Eligibility) {
  PlanContext ctx;
  Json old_t = BaseTemplate();
  Json new_t = BaseTemplate();
  GetParam().change(new_t);
  std::string why;
  auto spec = CalculateInPlaceUpdateSpec(ctx, old_t.dump(), new_t.dump(), "cs-2", &why);
  EXPECT_EQ(spec.has_value(), GetParam().in_place);
  EXPECT_EQ(why, GetParam().why_not);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InPlaceSpecTest,
    ::testing::Values(
        SpecCase{"ImageOnly", [](Json& t) { t["spec"]["containers"][0]["image"] = "nginx:1.26"; }, true, ""},
        SpecCase{"LabelOnly", [](Json& t) { t["metadata"]["labels"]["x"] = "y"; }, true, ""},
        SpecCase{"AnnotationRemoved", [](Json& t) { t["metadata"].erase("annotations"); }, true, ""},
        SpecCase{"EnvValueAdded",
                 [](Json& t) { t["spec"]["containers"][1]["env"] = Json::array({{{"name", "A"}, {"value", "1"}}}); },
                 false, "template spec.containers[1].env added"},
        SpecCase{"EnvChanged",
                 [](Json& t) { t["spec"]["containers"][0]["env"][0]["name"] = "VERSION"; }, false,
                 "template spec.containers[0].env[0].name changed"},
        SpecCase{"ContainerAdded",
                 [](Json& t) { t["spec"]["containers"].push_back({{"name", "x"}, {"image", "x:1"}}); }, false,
                 "template spec.containers[2] added"},
        SpecCase{"ContainerRenamed", [](Json& t) { t["spec"]["containers"][1]["name"] = "other"; }, false,
                 "template spec.containers[1].name changed"},
        SpecCase{"CommandAdded", [](Json& t) { t["spec"]["containers"][1]["command"] = {"sh"}; }, false,
                 "template spec.containers[1].command added"},
        SpecCase{"VolumesAdded", [](Json& t) { t["spec"]["volumes"] = Json::array({{{"name", "v"}}}); }, false,
                 "template spec.volumes added"},
        SpecCase{"NodeSelectorChanged", [](Json& t) { t["spec"]["nodeSelector"] = {{"a", "b"}}; }, false,
                 "template spec.nodeSelector added"},
        SpecCase{"TopLevelField", [](Json& t) { t["extra"] = 1; }, false, "template extra added"},
        SpecCase{"ImageAndLabel",
                 [](Json& t) {
                   t["spec"]["containers"][1]["image"] = "busybox:2";
                   t["metadata"]["labels"]["app"] = "demo2";
                 },
                 true, ""}),
    [](const auto& info) { return info.param.name; });

TEST(InPlaceSpecTest, RecordsImagesAndMetadata) {
  PlanContext ctx;
  ctx.spec.grace_period_seconds = 30;
  Json old_t = BaseTemplate();
  Json new_t = BaseTemplate();
  new_t["spec"]["containers"][1]["image"] = "busybox:2";
  new_t["metadata"]["labels"]["new"] = "1";
  new_t["metadata"]["labels"].erase("app");
  new_t["metadata"]["annotations"]["note"] = "b";
  new_t["metadata"]["finalizers"] = {"f/1"};
  auto spec = CalculateInPlaceUpdateSpec(ctx, old_t.dump(), new_t.dump(), "cs-2");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->revision, "cs-2");
  EXPECT_EQ(spec->grace_seconds, 30);
  EXPECT_THAT(spec->container_images, ElementsAre(Pair("side", "busybox:2")));
  EXPECT_THAT(spec->set_labels, ElementsAre(Pair("new", "1")));
  EXPECT_THAT(spec->remove_labels, ElementsAre("app"));
  EXPECT_THAT(spec->set_annotations, ElementsAre(Pair("note", "b")));
  EXPECT_THAT(spec->add_finalizers, ElementsAre("f/1"));
  EXPECT_FALSE(spec->update_env_from_metadata);
}

TEST(InPlaceSpecTest, EnvFromMetadataGoesWithTheContainer) {
  PlanContext ctx;
  Json new_t = BaseTemplate();
  new_t["metadata"]["labels"]["ver"] = "v2";
  auto spec = CalculateInPlaceUpdateSpec(ctx, BaseTemplate().dump(), new_t.dump(), "cs-2");
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(spec->update_env_from_metadata);
  ASSERT_TRUE(spec->container_ref_metadata.contains("main"));
  EXPECT_THAT(spec->container_ref_metadata["main"].labels, ElementsAre(Pair("ver", "v2")));
  EXPECT_THAT(spec->set_labels, IsEmpty());
}

TEST(InPlaceSpecTest, EnvFromMetadataDisabledIsPlainLabelChange) {
  PlanContext ctx;
  ctx.gates.set_disable_in_place_update_env_from_metadata(true);
  Json new_t = BaseTemplate();
  new_t["metadata"]["labels"]["ver"] = "v2";
  auto spec = CalculateInPlaceUpdateSpec(ctx, BaseTemplate().dump(), new_t.dump(), "cs-2");
  ASSERT_TRUE(spec.has_value());
  EXPECT_FALSE(spec->update_env_from_metadata);
  EXPECT_THAT(spec->container_ref_metadata, IsEmpty());
  EXPECT_THAT(spec->set_labels, ElementsAre(Pair("ver", "v2")));
}

TEST(InPlaceSpecTest, SidecarSetVersionEnvIgnored) {
  PlanContext ctx;
  Json old_t = BaseTemplate();
  old_t["spec"]["containers"][0]["env"][0]["name"] = "SIDECARSET_VERSION";
  Json new_t = old_t;
  new_t["metadata"]["labels"]["ver"] = "v2";
  auto spec = CalculateInPlaceUpdateSpec(ctx, old_t.dump(), new_t.dump(), "cs-2");
  ASSERT_TRUE(spec.has_value());
  EXPECT_FALSE(spec->update_env_from_metadata);
  EXPECT_THAT(spec->set_labels, ElementsAre(Pair("ver", "v2")));
}

TEST(InPlaceSpecTest, InvalidJsonIsNotInPlace) {
  PlanContext ctx;
  std::string why;
  EXPECT_FALSE(CalculateInPlaceUpdateSpec(ctx, "{", BaseTemplate().dump(), "cs-2", &why).has_value());
  EXPECT_EQ(why, "the pod's revision template is not valid JSON");
}

// ---- VCT rule through revisions ----
struct VctCase {
  std::string name;
  std::string old_hash;  // "-" = no annotation
  std::string new_hash;
  PodUpdatePolicy policy;
  bool in_place;
};

class VctRuleTest : public ::testing::TestWithParam<VctCase> {};

TEST_P(VctRuleTest, ImagePlusVctChange) {
  const VctCase& c = GetParam();
  testing::RevisionBuilder old_rev("cs-1", 1);
  testing::RevisionBuilder new_rev("cs-2", 2);
  new_rev.Template(testing::TemplateJson("nginx:1.26"));
  if (c.old_hash != "-") old_rev.Annotation(kVctHashAnnotation, c.old_hash);
  if (c.new_hash != "-") new_rev.Annotation(kVctHashAnnotation, c.new_hash);
  pb::ControllerRevision r1 = old_rev;
  pb::ControllerRevision r2 = new_rev;
  PlanContext ctx;
  ctx.revisions = {&r1, &r2};
  ctx.current_revision = "cs-1";
  ctx.update_revision = "cs-2";
  // As ChooseRevisions sets them: read from the revisions' data.
  ctx.current_template_json = *TemplateFromRevisionData(r1.data_json());
  ctx.update_template_json = *TemplateFromRevisionData(r2.data_json());
  ctx.spec.policy = c.policy;
  std::string why;
  auto spec = CalculateInPlaceUpdate(ctx, &r1, "cs-2", &why);
  EXPECT_EQ(spec.has_value(), c.in_place) << why;
  if (spec) {
    EXPECT_EQ(spec->old_revision, "cs-1");
    EXPECT_THAT(spec->container_images, ElementsAre(Pair("main", "nginx:1.26")));
  } else {
    EXPECT_EQ(why, "volumeClaimTemplates changed, so the pod and its PVCs are recreated");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VctRuleTest,
    ::testing::Values(VctCase{"HashesDiffer", "111", "222", PodUpdatePolicy::kInPlaceIfPossible, false},
                      VctCase{"HashesEqual", "111", "111", PodUpdatePolicy::kInPlaceIfPossible, true},
                      VctCase{"OldLacksHash", "-", "222", PodUpdatePolicy::kInPlaceIfPossible, true},
                      VctCase{"NewLacksHash", "111", "-", PodUpdatePolicy::kInPlaceIfPossible, true},
                      VctCase{"InPlaceOnlyIgnoresVct", "111", "222", PodUpdatePolicy::kInPlaceOnly, true}),
    [](const auto& info) { return info.param.name; });

TEST(VctRuleTest, UnknownOldRevision) {
  PlanContext ctx;
  std::string why;
  EXPECT_FALSE(CalculateInPlaceUpdate(ctx, nullptr, "cs-2", &why).has_value());
  EXPECT_EQ(why, "the pod's revision is unknown");
}

// ---- Annotations ----
TEST(InPlaceStateTest, MinimalStateHasNullLastContainerStatuses) {
  InPlaceUpdateState state;
  state.revision = "rev_new";
  state.update_timestamp = "2027-01-15T08:00:00Z";
  state.update_images = true;
  EXPECT_EQ(FormatInPlaceState(state),
            R"({"revision":"rev_new","updateTimestamp":"2027-01-15T08:00:00Z","lastContainerStatuses":null,)"
            R"("updateImages":true})");
}

TEST(InPlaceStateTest, FieldOrderAndRoundTrip) {
  InPlaceUpdateState state;
  state.revision = "r";
  state.update_timestamp = "t";
  state.last_container_statuses["c1"] = {"id-1", "cid-1"};
  state.update_env_from_metadata = true;
  state.update_images = true;
  state.next_container_images["c2"] = "img:2";
  state.next_container_ref_metadata["c2"].labels["k"] = "v";
  state.pre_check_containers_required_ready = {"c1"};
  state.container_batches_record.push_back({"t", {"c1"}});
  const std::string json = FormatInPlaceState(state);
  EXPECT_EQ(json,
            R"({"revision":"r","updateTimestamp":"t","lastContainerStatuses":{"c1":{"imageID":"id-1",)"
            R"("containerID":"cid-1"}},"updateEnvFromMetadata":true,"updateImages":true,)"
            R"("nextContainerImages":{"c2":"img:2"},"nextContainerRefMetadata":{"c2":{"labels":{"k":"v"}}},)"
            R"("preCheckBeforeNext":{"containersRequiredReady":["c1"]},)"
            R"("containerBatchesRecord":[{"timestamp":"t","containers":["c1"]}]})");
  absl::StatusOr<InPlaceUpdateState> parsed = ParseInPlaceState(json);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(FormatInPlaceState(*parsed), json);
}

TEST(InPlaceStateTest, EscapesLikeGo) {
  InPlaceUpdateState state;
  state.revision = "a\"b<c>&d\\e\n\x01";
  state.update_timestamp = "t";
  EXPECT_EQ(FormatInPlaceState(state),
            R"({"revision":"a\"b\u003cc\u003e\u0026d\\e\n\u0001","updateTimestamp":"t","lastContainerStatuses":null})");
  absl::StatusOr<InPlaceUpdateState> parsed = ParseInPlaceState(FormatInPlaceState(state));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->revision, state.revision);
}

TEST(InPlaceStateTest, ParseRejectsNonObject) {
  EXPECT_FALSE(ParseInPlaceState("[]").ok());
  EXPECT_FALSE(ParseInPlaceState("not json").ok());
}

TEST(GraceSpecTest, UpstreamShapeAndRoundTrip) {
  InPlaceUpdateSpec spec;
  spec.revision = "rev_new";
  spec.container_images["c1"] = "foo2";
  spec.grace_seconds = 3630;
  EXPECT_EQ(FormatGraceSpec(spec), R"({"revision":"rev_new","containerImages":{"c1":"foo2"},"graceSeconds":3630})");
  spec.old_revision = "rev_old";
  spec.set_labels["a"] = "1";
  spec.remove_annotations = {"gone"};
  spec.container_ref_metadata["c1"].annotations["k"] = "v";
  spec.update_env_from_metadata = true;
  absl::StatusOr<InPlaceUpdateSpec> parsed = ParseGraceSpec(FormatGraceSpec(spec));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->revision, "rev_new");
  EXPECT_EQ(parsed->old_revision, "rev_old");
  EXPECT_EQ(parsed->grace_seconds, 3630);
  EXPECT_THAT(parsed->container_images, ElementsAre(Pair("c1", "foo2")));
  EXPECT_THAT(parsed->set_labels, ElementsAre(Pair("a", "1")));
  EXPECT_THAT(parsed->remove_annotations, ElementsAre("gone"));
  EXPECT_THAT(parsed->container_ref_metadata["c1"].annotations, ElementsAre(Pair("k", "v")));
  EXPECT_TRUE(parsed->update_env_from_metadata);
}

TEST(GraceSpecTest, BadMetadataPatchIsAnError) {
  EXPECT_FALSE(ParseGraceSpec(R"({"revision":"r","metaDataPatch":"!!!"})").ok());
}

// ---- Batches ----
pb::Pod ThreeContainerPod() {
  pb::Pod pod = PodBuilder("cs-a").Container("c1", "a:1").Container("c2", "b:1").Container("c3", "c:1");
  for (pb::ContainerStatus& s : *pod.mutable_container_statuses()) {
    s.set_image_id("id-" + s.name());
    s.set_container_id("cid-" + s.name());
  }
  for (pb::Container& c : *pod.mutable_containers()) {
    if (c.name() == "c1") c.set_launch_priority(2);
    if (c.name() == "c2") c.set_launch_priority(1);
  }
  return pod;
}

TEST(InPlaceBatchTest, HighestPriorityAndUnprioritisedFirst) {
  pb::Pod pod = ThreeContainerPod();
  InPlaceUpdateSpec spec;
  spec.revision = "cs-2";
  spec.container_images = {{"c1", "a:2"}, {"c2", "b:2"}, {"c3", "c:2"}};
  spec.set_labels["x"] = "1";
  InPlaceBatch batch = ApplyInPlaceBatch(pod, spec, {}, Now(), true);
  EXPECT_THAT(batch.container_images, ElementsAre(Pair("c1", "a:2"), Pair("c3", "c:2")));
  EXPECT_THAT(batch.set_labels, ElementsAre(Pair("x", "1")));
  EXPECT_THAT(batch.state.next_container_images, ElementsAre(Pair("c2", "b:2")));
  EXPECT_THAT(batch.state.pre_check_containers_required_ready, ElementsAre("c1", "c3"));
  EXPECT_THAT(batch.state.last_container_statuses, UnorderedElementsAre(Pair("c1", ::testing::_),
                                                                         Pair("c3", ::testing::_)));
  EXPECT_EQ(batch.state.last_container_statuses["c1"].image_id, "id-c1");
  EXPECT_EQ(batch.state.last_container_statuses["c1"].container_id, "cid-c1");
  ASSERT_EQ(batch.state.container_batches_record.size(), 1u);
  EXPECT_EQ(batch.state.container_batches_record[0].timestamp, base::FormatTime(Now()));

  // The next batch (from the state's next* maps) takes c2 and clears the pre-check.
  InPlaceUpdateSpec next;
  next.revision = "cs-2";
  next.container_images = batch.state.next_container_images;
  InPlaceBatch second = ApplyInPlaceBatch(pod, next, batch.state, Now() + absl::Seconds(5), false);
  EXPECT_THAT(second.container_images, ElementsAre(Pair("c2", "b:2")));
  EXPECT_THAT(second.set_labels, IsEmpty());
  EXPECT_THAT(second.state.next_container_images, IsEmpty());
  EXPECT_THAT(second.state.pre_check_containers_required_ready, IsEmpty());
  EXPECT_EQ(second.state.container_batches_record.size(), 2u);
  EXPECT_EQ(second.state.last_container_statuses.size(), 3u);
}

TEST(InPlaceBatchTest, SharedMetadataKeyPullsLowerPriorityContainer) {
  pb::Pod pod = ThreeContainerPod();
  InPlaceUpdateSpec spec;
  spec.container_ref_metadata["c1"].labels["ver"] = "2";
  spec.container_ref_metadata["c2"].labels["ver"] = "2";
  spec.update_env_from_metadata = true;
  InPlaceBatch batch = ApplyInPlaceBatch(pod, spec, {}, Now(), true);
  EXPECT_THAT(batch.set_labels, ElementsAre(Pair("ver", "2")));
  EXPECT_THAT(batch.state.next_container_ref_metadata, IsEmpty());
  EXPECT_THAT(batch.state.container_batches_record[0].containers, ElementsAre("c1", "c2"));
}

// A pod's containers read from a one-pod table, the way a plan of a pod-table request reads them.
class TableContainers {
 public:
  explicit TableContainers(const pb::Pod& pod) {
    pods_.Add()->CopyFrom(pod);
    table_ = *planapi::EncodePodTable(pods_);
    view_ = *PodTableView::Open(table_);
  }
  PodContainers containers() const { return PodContainers(*view_, 0); }

 private:
  google::protobuf::RepeatedPtrField<pb::Pod> pods_;
  pb::PodTable table_;
  std::unique_ptr<PodTableView> view_;
};

TEST(InPlaceBatchTest, TableAndObjectGiveTheSameBatch) {
  const pb::Pod pod = ThreeContainerPod();
  const TableContainers table(pod);
  InPlaceUpdateSpec spec;
  spec.revision = "cs-2";
  spec.container_images = {{"c1", "a:2"}, {"c2", "b:2"}, {"c3", "c:2"}};
  spec.container_ref_metadata["c3"].labels["ver"] = "2";
  // With the reference metadata first (the general path), then without it (ApplyImageBatch).
  for (bool refs : {true, false}) {
    if (!refs) spec.container_ref_metadata.clear();
    const InPlaceBatch from_pod = ApplyInPlaceBatch(pod, spec, {}, Now(), true);
    const InPlaceBatch from_table = ApplyInPlaceBatch(table.containers(), spec, {}, Now(), true);
    EXPECT_EQ(from_table.container_images, from_pod.container_images);
    EXPECT_EQ(from_table.set_labels, from_pod.set_labels);
    EXPECT_EQ(FormatInPlaceState(from_table.state), FormatInPlaceState(from_pod.state));
  }
}

// SingleBatchState must write exactly what the general path formats, whenever it says it covers the pod.
struct SingleBatchCase {
  std::string name;
  std::map<std::string, std::string> images;
  std::map<std::string, int32_t> priorities;  // container -> launch priority
  bool ref_metadata = false;
  bool env_from_metadata = false;
  bool statuses = true;     // the pod reports container statuses
  std::string image_id;     // for every status ("" = omitted)
  std::string container_id;
  bool covers;
  std::string want;         // the annotation ("" when not covered)
};

class SingleBatchStateTest : public ::testing::TestWithParam<SingleBatchCase> {};

TEST_P(SingleBatchStateTest, MatchesTheGeneralPath) {
  const SingleBatchCase& c = GetParam();
  PodBuilder builder("cs-a");
  for (const char* name : {"c1", "c2", "c3", "c4", "c5"}) builder.Container(name, "x:1");
  pb::Pod pod = builder;
  if (!c.statuses) pod.clear_container_statuses();
  for (pb::ContainerStatus& s : *pod.mutable_container_statuses()) {
    s.set_image_id(c.image_id);
    s.set_container_id(c.container_id);
  }
  for (pb::Container& container : *pod.mutable_containers()) {
    if (auto it = c.priorities.find(container.name()); it != c.priorities.end()) {
      container.set_launch_priority(it->second);
    }
  }
  InPlaceUpdateSpec spec;
  spec.revision = "cs-<2>";
  spec.container_images = c.images;
  spec.update_env_from_metadata = c.env_from_metadata;
  if (c.ref_metadata) spec.container_ref_metadata["c1"].labels["ver"] = "2";
  const SingleBatchState single(spec, Now());
  const TableContainers table(pod);
  for (const PodContainers& containers : {PodContainers(pod), table.containers()}) {
    ASSERT_EQ(single.Covers(containers), c.covers);
    if (!c.covers) continue;
    InPlaceUpdateState fresh;
    fresh.revision = spec.revision;
    fresh.update_timestamp = Rfc3339(Now());
    fresh.update_env_from_metadata = spec.update_env_from_metadata;
    fresh.update_images = !spec.container_images.empty();
    const std::string general =
        FormatInPlaceState(ApplyInPlaceBatch(containers, spec, fresh, Now(), true).state);
    std::string out = "kept:";
    single.AppendTo(containers, &out);
    EXPECT_EQ(out, "kept:" + general);
    EXPECT_EQ(general, c.want);
  }
}

const std::string kTs = base::FormatTime(Now());
const std::string kHead = R"({"revision":"cs-\u003c2\u003e","updateTimestamp":")" + kTs + R"(","lastContainerStatuses":)";
const std::string kRecord = R"(,"containerBatchesRecord":[{"timestamp":")" + kTs + R"(","containers":)";

INSTANTIATE_TEST_SUITE_P(
    Cases, SingleBatchStateTest,
    ::testing::Values(
        SingleBatchCase{"OneImage", {{"c1", "a:2"}}, {}, false, false, true, "sha256:1", "docker://1", true,
                        kHead + R"({"c1":{"imageID":"sha256:1","containerID":"docker://1"}},"updateImages":true)" +
                            kRecord + R"(["c1"]}]})"},
        SingleBatchCase{"TwoImagesEqualPriority", {{"c1", "a:2"}, {"c2", "b:2"}}, {{"c1", 3}, {"c2", 3}}, false,
                        false, true, "id\"<&>", "", true,
                        kHead + R"({"c1":{"imageID":"id\"\u003c\u0026\u003e"},"c2":{"imageID":"id\"\u003c\u0026\u003e"}},"updateImages":true)" +
                            kRecord + R"(["c1","c2"]}]})"},
        SingleBatchCase{"OnePrioritised", {{"c1", "a:2"}, {"c2", "b:2"}}, {{"c2", 1}}, false, false, true, "",
                        "cid", true,
                        kHead + R"({"c1":{"containerID":"cid"},"c2":{"containerID":"cid"}},"updateImages":true)" +
                            kRecord + R"(["c1","c2"]}]})"},
        SingleBatchCase{"NoStatuses", {{"c2", "b:2"}}, {}, false, true, false, "", "", true,
                        kHead + R"({"c2":{}},"updateEnvFromMetadata":true,"updateImages":true)" + kRecord +
                            R"(["c2"]}]})"},
        SingleBatchCase{"MetadataOnly", {}, {}, false, false, true, "i", "c", true,
                        kHead + "null" + kRecord + "[]}]}"},
        SingleBatchCase{"FiveImages", {{"c1", "a:2"}, {"c2", "b:2"}, {"c3", "c:2"}, {"c4", "d:2"}, {"c5", "e:2"}},
                        {{"c5", 7}}, false, false, true, "i", "c", true,
                        kHead + R"({"c1":{"imageID":"i","containerID":"c"},"c2":{"imageID":"i","containerID":"c"},)" +
                            R"("c3":{"imageID":"i","containerID":"c"},"c4":{"imageID":"i","containerID":"c"},)" +
                            R"("c5":{"imageID":"i","containerID":"c"}},"updateImages":true)" + kRecord +
                            R"(["c1","c2","c3","c4","c5"]}]})"},
        SingleBatchCase{"PrioritiesSplit", {{"c1", "a:2"}, {"c2", "b:2"}}, {{"c1", 1}, {"c2", 2}}, false, false,
                        true, "i", "c", false, ""},
        SingleBatchCase{"RefMetadata", {{"c1", "a:2"}}, {}, true, true, true, "i", "c", false, ""}),
    [](const ::testing::TestParamInfo<SingleBatchCase>& info) { return info.param.name; });

TEST(PodRevisionTest, FactsAndPodAgree) {
  PlanContext ctx;
  pb::ControllerRevision r1 = ::cloneset::planner::testing::RevisionBuilder("cs-1111", 1);
  pb::ControllerRevision r2 = ::cloneset::planner::testing::RevisionBuilder("cs-2222", 2);
  ctx.revisions = {&r1, &r2};
  for (const std::string label : {"cs-2222", "2222", "other-1111", "cs-3333", ""}) {
    PodBuilder builder("cs-a");
    if (!label.empty()) builder.Label(kRevisionLabel, label);
    const pb::Pod pod = builder;
    EXPECT_EQ(PodRevision(ctx, ComputePodFacts(pod)), PodRevision(ctx, pod)) << label;
  }
  pb::Pod pod = PodBuilder("cs-a").Label(kRevisionLabel, "x-2222");
  EXPECT_EQ(PodRevision(ctx, ComputePodFacts(pod)), &r2);
}

// ---- Completion ----
struct CompletionCase {
  std::string name;
  std::string spec_image;
  std::string status_image;
  std::string status_image_id;
  std::string status_container_id;
  bool env_from_metadata;
  bool want;
};

class CompletionTest : public ::testing::TestWithParam<CompletionCase> {};

TEST_P(CompletionTest, Containers) {
  const CompletionCase& c = GetParam();
  pb::Pod pod = PodBuilder("cs-a");
  pod.mutable_containers(0)->set_image(c.spec_image);
  pod.mutable_container_statuses(0)->set_image(c.status_image);
  pod.mutable_container_statuses(0)->set_image_id(c.status_image_id);
  pod.mutable_container_statuses(0)->set_container_id(c.status_container_id);
  InPlaceUpdateState state;
  state.last_container_statuses["main"] = {"id-old", "cid-old"};
  state.update_env_from_metadata = c.env_from_metadata;
  EXPECT_EQ(ContainersUpdateCompleted(pod, state), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CompletionTest,
    ::testing::Values(
        CompletionCase{"NotRestartedYet", "nginx:1.26", "nginx:1.25", "id-old", "cid-old", false, false},
        CompletionCase{"ImageIdChanged", "nginx:1.26", "nginx:1.26", "id-new", "cid-new", false, true},
        CompletionCase{"SameImageIdRestarted", "nginx:1.26", "nginx:1.25", "id-old", "cid-new", false, true},
        CompletionCase{"SameImageIdNormalizedNameEqual", "nginx:1.26", "docker.io/library/nginx:1.26", "id-old",
                       "cid-old", false, true},
        CompletionCase{"EnvOnlyNotRestarted", "nginx:1.25", "nginx:1.25", "id-old", "cid-old", true, false},
        CompletionCase{"EnvOnlyRestarted", "nginx:1.25", "nginx:1.25", "id-old", "cid-new", true, true}),
    [](const auto& info) { return info.param.name; });

TEST(CompletionTest, MissingContainerStatusIsNotComplete) {
  pb::Pod pod = PodBuilder("cs-a");
  pod.clear_container_statuses();
  InPlaceUpdateState state;
  state.last_container_statuses["main"] = {"id-old", ""};
  EXPECT_FALSE(ContainersUpdateCompleted(pod, state));
}

TEST(CompletionTest, PodLevel) {
  EXPECT_TRUE(InPlaceUpdateCompleted(PodBuilder("cs-a")));  // no state
  InPlaceUpdateState state;
  state.revision = "cs-2";
  EXPECT_FALSE(InPlaceUpdateCompleted(PodBuilder("cs-a")
                                          .Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state))
                                          .Annotation(kInPlaceGraceAnnotation, R"({"revision":"cs-2"})")));
  EXPECT_TRUE(InPlaceUpdateCompleted(PodBuilder("cs-a").Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state))));
  state.next_container_images["main"] = "x";
  EXPECT_FALSE(InPlaceUpdateCompleted(PodBuilder("cs-a").Annotation(kInPlaceStateAnnotation, FormatInPlaceState(state))));
  // The legacy key is honoured.
  EXPECT_FALSE(InPlaceUpdateCompleted(
      PodBuilder("cs-a").Annotation(kLegacyInPlaceStateAnnotation, FormatInPlaceState(state))));
}

}  // namespace
}  // namespace cloneset::planner
