#include "planner/revision.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/testing/fixtures.h"

namespace cloneset::planner {
namespace {

using ::testing::ElementsAre;
using namespace ::cloneset::planner::testing;  // NOLINT

// Published FNV-1 (not 1a) 32-bit test vectors (Fowler/Noll/Vo reference test suite).
TEST(Fnv1Hash32, KnownVectors) {
  struct Case {
    const char* input;
    uint32_t want;
  };
  const Case cases[] = {
      {"", 0x811c9dc5u},
      {"a", 0x050c5d7eu},
      {"b", 0x050c5d7du},
      {"foobar", 0x31f0b262u},
  };
  for (const auto& c : cases) EXPECT_EQ(Fnv1Hash32(c.input), c.want) << c.input;
}

TEST(Fnv1Hash32, SeedContinuesTheHash) {
  EXPECT_EQ(Fnv1Hash32("bar", Fnv1Hash32("foo")), Fnv1Hash32("foobar"));
}

// The hash is FNV-1 over data then the decimal collision count, written in decimal and mapped digit by digit
// 0->4 1->5 2->6 3->7 4->8 5->9 6->b 7->c 8->d 9->f.
TEST(RevisionHash, SafeEncodesTheDecimalHash) {
  // FNV-1("a" + "0"): compute the decimal by hand through the reference function, then map digits.
  const uint32_t h = Fnv1Hash32("a0");
  std::string decimal = std::to_string(h);
  std::string want;
  const std::string map = "456789bcdf";
  for (char c : decimal) want += map[c - '0'];
  EXPECT_EQ(RevisionHash("a", 0), want);
  EXPECT_EQ(Fnv1Hash32("x12"), Fnv1Hash32("12", Fnv1Hash32("x")));
  EXPECT_NE(RevisionHash("x", 1), RevisionHash("x", 2));
}

TEST(RevisionHash, EmptyDataWithCountZeroIsFnv1OfDigitZero) {
  // FNV-1("0") = (0x811c9dc5 * 16777619 mod 2^32) ^ 0x30 = 0x050c5d2f = 84696367 -> "d8bfb7bc".
  EXPECT_EQ(Fnv1Hash32("0"), 0x050c5d2fu);
  EXPECT_EQ(RevisionHash("", 0), "d8bfb7bc");
}

struct DataCase {
  std::string name;
  std::string template_json;
  std::string want;
};

class RevisionDataTest : public ::testing::TestWithParam<DataCase> {};

TEST_P(RevisionDataTest, CanonicalBytes) {
  absl::StatusOr<std::string> got = RevisionData(GetParam().template_json);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}

// The writing rules (keys sorted, Go's escapes, float64 numbers) and the typed decode and encode kruise-manager
// applies first (unknown fields dropped, empty non-omitempty fields written, quantities canonical). That these are
// upstream's exact bytes is checked by the kruise_revision ctest against upstream's own code.
INSTANTIATE_TEST_SUITE_P(
    Cases, RevisionDataTest,
    ::testing::Values(
        DataCase{"PatchFirstKeysSortedEmptiesWritten",
                 R"({"spec":{"containers":[{"name":"a","image":"x"}]},"metadata":{}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},)"
                 R"("spec":{"containers":[{"image":"x","name":"a","resources":{}}]}}}})"},
        DataCase{"MapKeysSortedBytewise", R"({"metadata":{"labels":{"z":"1","Z":"2","a":"3"}}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,)"
                 R"("labels":{"Z":"2","a":"3","z":"1"}},"spec":{"containers":null}}}})"},
        DataCase{"HtmlEscaping", R"({"metadata":{"annotations":{"a":"<x>&y"}}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"a":"\u003cx\u003e\u0026y"},)"
                 R"("creationTimestamp":null},"spec":{"containers":null}}}})"},
        DataCase{"LineSeparators", "{\"metadata\":{\"annotations\":{\"a\":\"x\u2028y\u2029z\"}}}",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"a":"x\u2028y\u2029z"},)"
                 R"("creationTimestamp":null},"spec":{"containers":null}}}})"},
        DataCase{"ControlCharacters", R"({"metadata":{"annotations":{"a":"\t\n\r\b\f\u0001\u001f\"\\/"}}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"a":"\t\n\r\b\f\u0001\u001f\"\\/"},)"
                 R"("creationTimestamp":null},"spec":{"containers":null}}}})"},
        DataCase{"NonAsciiKeptAsUtf8", "{\"metadata\":{\"annotations\":{\"a\":\"\xc3\xa9\xe4\xb8\xad\"}}}",
                 "{\"spec\":{\"template\":{\"$patch\":\"replace\",\"metadata\":{\"annotations\":{\"a\":"
                 "\"\xc3\xa9\xe4\xb8\xad\"},\"creationTimestamp\":null},\"spec\":{\"containers\":null}}}}"},
        DataCase{"IntegersAsFloat64", R"({"spec":{"activeDeadlineSeconds":9007199254740993,"priority":-5,)"
                                      R"("terminationGracePeriodSeconds":30.0}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":)"
                 R"({"activeDeadlineSeconds":9007199254740992,"containers":null,"priority":-5,)"
                 R"("terminationGracePeriodSeconds":30}}}})"},
        DataCase{"NullsAndOmitEmpty",
                 R"({"metadata":{"annotations":null,"labels":{}},"spec":{"nodeSelector":null,"hostNetwork":false,)"
                 R"("volumes":[],"securityContext":{},"containers":[{"name":"a","env":[],"args":null}]}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":)"
                 R"({"containers":[{"name":"a","resources":{}}],"securityContext":{}}}}})"},
        DataCase{"UnknownFieldsAndOtherCaseDropped",
                 R"({"$patch":"merge","x":1,"metadata":{"Labels":{"a":"b"}},"spec":{"containers":[{"name":"a",)"
                 R"("Image":"y","bogus":[1]}]}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":)"
                 R"({"containers":[{"name":"a","resources":{}}]}}}})"},
        DataCase{"QuantitiesAndIntOrString",
                 R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":0.5,"memory":"1024Mi"},)"
                 R"("requests":{"cpu":"1000m","x":null}},"livenessProbe":{"httpGet":{"port":8080}},)"
                 R"("readinessProbe":{"tcpSocket":{"port":"http"}}}]}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":)"
                 R"({"containers":[{"livenessProbe":{"httpGet":{"port":8080}},"name":"a","readinessProbe":)"
                 R"({"tcpSocket":{"port":"http"}},"resources":{"limits":{"cpu":"500m","memory":"1Gi"},)"
                 R"("requests":{"cpu":"1","x":"0"}}}]}}}})"},
        DataCase{"TimeInUtcSeconds", R"({"metadata":{"creationTimestamp":"2024-05-01T10:00:00.5+02:00"}})",
                 R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":)"
                 R"("2024-05-01T08:00:00Z"},"spec":{"containers":null}}}})"}),
    [](const auto& info) { return info.param.name; });

TEST(RevisionData, RejectsNonObjects) {
  EXPECT_EQ(RevisionData("[1]").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RevisionData("{bad").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(RevisionData("").status().message()), ::testing::HasSubstr("spec.template"));
}

// Where Go's decoder fails kruise-manager cannot read the CloneSet; the error names the field.
TEST(RevisionData, RejectsWhatGoCannotDecode) {
  const struct {
    const char* tmpl;
    const char* field;
  } cases[] = {
      {R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":"80"}]}]}})",
       "spec.template.spec.containers[0].ports[0].containerPort"},
      {R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":4294967296}]}]}})", "containerPort"},
      {R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80.5}]}]}})", "containerPort"},
      {R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"abc"}}}]}})",
       "spec.template.spec.containers[0].resources.limits.cpu"},
      {R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"<1>"}}}]}})", "limits.cpu"},
      {R"({"spec":{"containers":{"name":"a"}}})", "spec.template.spec.containers"},
      {R"({"spec":{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":true}}}]}})", "httpGet.port"},
      {R"({"metadata":{"creationTimestamp":"yesterday"}})", "spec.template.metadata.creationTimestamp"},
      {R"({"metadata":{"labels":{"a":1}}})", "spec.template.metadata.labels.a"},
      {R"({"spec":{"hostNetwork":"true"}})", "spec.template.spec.hostNetwork"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::string> got = RevisionData(c.tmpl);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.tmpl;
    EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr(c.field)) << c.tmpl;
  }
}

TEST(TemplateFromRevisionData, DropsPatchAndRoundTrips) {
  const std::string tmpl =
      R"({"metadata":{"creationTimestamp":null,"labels":{"app":"demo"}},"spec":{"containers":[{"name":"a","resources":{}}]}})";
  absl::StatusOr<std::string> data = RevisionData(tmpl);
  ASSERT_TRUE(data.ok());
  absl::StatusOr<std::string> back = TemplateFromRevisionData(*data);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, tmpl);
  EXPECT_FALSE(TemplateFromRevisionData(R"({"spec":{}})").ok());
}

// Data written by hand or by an earlier planner reads as the template kruise-manager would see.
TEST(TemplateFromRevisionData, ReadsIntoTheGoTypes) {
  absl::StatusOr<std::string> back = TemplateFromRevisionData(
      R"({"spec":{"template":{"$patch":"replace","x":1,"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1000m"}}}]}}}})");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back,
            R"({"metadata":{"creationTimestamp":null},"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1"}}}]}})");
  EXPECT_EQ(CheckRevisionData(R"({"spec":{"template":{"spec":{"containers":7}}}})").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VolumeClaimTemplatesHash, EmptyWithoutVctsAndOrderIndependent) {
  pb::CloneSetSpec none;
  EXPECT_EQ(*VolumeClaimTemplatesHash(none), "");
  pb::CloneSetSpec ab, ba;
  ab.add_volume_claim_templates_json(VctJson("a"));
  ab.add_volume_claim_templates_json(VctJson("b"));
  ba.add_volume_claim_templates_json(VctJson("b"));
  ba.add_volume_claim_templates_json(VctJson("a"));
  EXPECT_EQ(*VolumeClaimTemplatesHash(ab), *VolumeClaimTemplatesHash(ba));
  EXPECT_FALSE(VolumeClaimTemplatesHash(ab)->empty());
  pb::CloneSetSpec only_a;
  only_a.add_volume_claim_templates_json(VctJson("a"));
  EXPECT_NE(*VolumeClaimTemplatesHash(ab), *VolumeClaimTemplatesHash(only_a));
  // Labels of the VCT are not part of the hash (only name and spec).
  pb::CloneSetSpec labelled;
  nlohmann::json v = nlohmann::json::parse(VctJson("a"));
  v["metadata"]["labels"] = {{"x", "y"}};
  labelled.add_volume_claim_templates_json(v.dump());
  EXPECT_EQ(*VolumeClaimTemplatesHash(labelled), *VolumeClaimTemplatesHash(only_a));
  // A spec Go cannot decode fails, as upstream's decode of the CloneSet does.
  pb::CloneSetSpec bad;
  bad.add_volume_claim_templates_json(R"({"metadata":{"name":"a"},"spec":{"accessModes":"ReadWriteOnce"}})");
  EXPECT_EQ(VolumeClaimTemplatesHash(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

std::vector<std::string> Names(const std::vector<const pb::ControllerRevision*>& revs) {
  std::vector<std::string> out;
  for (const auto* r : revs) out.push_back(r->metadata().name());
  return out;
}

TEST(SortRevisions, ByNumberThenCreationThenName) {
  pb::PlanRequest req = Request(CloneSetBuilder(), {}, {},
                                {RevisionBuilder("cs-c", 2).Created(Now()), RevisionBuilder("cs-b", 2).Created(Now()),
                                 RevisionBuilder("cs-a", 2).Created(Now() + absl::Seconds(1)),
                                 RevisionBuilder("cs-z", 1)});
  EXPECT_THAT(Names(SortRevisions(req)), ElementsAre("cs-z", "cs-b", "cs-c", "cs-a"));
}

TEST(SortRevisions, DropsRevisionsControlledByAnotherOwner) {
  pb::ControllerRevision foreign = RevisionBuilder("other-1", 1);
  foreign.mutable_metadata()->mutable_owner_references(0)->set_uid("someone-else");
  pb::PlanRequest req = Request(CloneSetBuilder(), {}, {}, {foreign, RevisionBuilder("cs-2", 2)});
  EXPECT_THAT(Names(SortRevisions(req)), ElementsAre("cs-2"));
}

std::string ExpectedName(const std::string& tmpl, int32_t collisions) {
  return "cs-" + RevisionHash(*RevisionData(tmpl), collisions);
}

TEST(ChooseRevisions, CreatesFirstRevision) {
  pb::PlanRequest req = Request(CloneSetBuilder().Annotation("note", "a<b"));
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  const std::string name = ExpectedName(TemplateJson(), 0);
  EXPECT_EQ(choice->update_revision, name);
  EXPECT_EQ(choice->current_revision, name);
  EXPECT_EQ(choice->collision_count, 0);
  EXPECT_EQ(choice->update_template_json, *TemplateFromRevisionData(*RevisionData(TemplateJson())));
  ASSERT_EQ(plan.response()->actions_size(), 1);
  const auto& action = plan.response()->actions(0);
  EXPECT_TRUE(action.stop_on_error());
  nlohmann::json rev = nlohmann::json::parse(action.create_revision().revision_json());
  EXPECT_EQ(rev["apiVersion"], "apps/v1");
  EXPECT_EQ(rev["kind"], "ControllerRevision");
  EXPECT_EQ(rev["metadata"]["name"], name);
  EXPECT_EQ(rev["metadata"]["namespace"], "default");
  EXPECT_EQ(rev["revision"], 1);
  EXPECT_EQ(rev["metadata"]["labels"]["app"], "demo");
  EXPECT_EQ(rev["metadata"]["labels"]["controller.kubernetes.io/hash"], name.substr(3));
  EXPECT_EQ(rev["metadata"]["annotations"]["note"], "a<b");
  EXPECT_EQ(rev["metadata"]["annotations"]["kruise.io/cloneset-volumeclaimtemplate-hash"], "");
  EXPECT_EQ(rev["metadata"]["ownerReferences"][0]["apiVersion"], "apps.kruise.io/v1alpha1");
  EXPECT_EQ(rev["metadata"]["ownerReferences"][0]["kind"], "CloneSet");
  EXPECT_EQ(rev["metadata"]["ownerReferences"][0]["uid"], kCloneSetUid);
  EXPECT_EQ(rev["metadata"]["ownerReferences"][0]["controller"], true);
  // data is embedded byte for byte.
  EXPECT_NE(action.create_revision().revision_json().find(",\"data\":" + *RevisionData(TemplateJson()) + "}"),
            std::string::npos);
}

TEST(ChooseRevisions, LatestEqualRevisionIsReusedWithoutWrites) {
  pb::PlanRequest req = Request(CloneSetBuilder().Status("cs-1", "cs-2"), {}, {},
                                {RevisionBuilder("cs-1", 1).Template(TemplateJson("old")), RevisionBuilder("cs-2", 2)});
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->update_revision, "cs-2");
  EXPECT_EQ(choice->current_revision, "cs-1");
  EXPECT_EQ(choice->current_template_json, *TemplateFromRevisionData(*RevisionData(TemplateJson("old"))));
  EXPECT_EQ(plan.response()->actions_size(), 0);
}

TEST(ChooseRevisions, RollbackRenumbersOldRevisionAndFixesVctHash) {
  pb::PlanRequest req = Request(CloneSetBuilder().Status("cs-2", "cs-2").Vct(VctJson("data")), {}, {},
                                {RevisionBuilder("cs-1", 1), RevisionBuilder("cs-2", 2).Template(TemplateJson("new"))});
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->update_revision, "cs-1");
  EXPECT_EQ(choice->current_revision, "cs-2");
  ASSERT_EQ(plan.response()->actions_size(), 1);
  const auto& upd = plan.response()->actions(0).update_revision();
  EXPECT_EQ(upd.name(), "cs-1");
  EXPECT_EQ(upd.revision(), 3);
  EXPECT_EQ(upd.resource_version(), "1");
  EXPECT_EQ(upd.set_annotations().at("kruise.io/cloneset-volumeclaimtemplate-hash"),
            *VolumeClaimTemplatesHash(req.clone_set().spec()));
}

TEST(ChooseRevisions, RollbackKeepsMatchingVctAnnotation) {
  pb::PlanRequest req = Request(CloneSetBuilder().Status("cs-2", "cs-2"), {}, {},
                                {RevisionBuilder("cs-1", 1).Annotation("kruise.io/cloneset-volumeclaimtemplate-hash", ""),
                                 RevisionBuilder("cs-2", 2).Template(TemplateJson("new"))});
  PlanBuilder plan;
  ASSERT_TRUE(ChooseRevisions(req, SortRevisions(req), plan).ok());
  ASSERT_EQ(plan.response()->actions_size(), 1);
  EXPECT_TRUE(plan.response()->actions(0).update_revision().set_annotations().empty());
}

TEST(ChooseRevisions, NewTemplateGetsNextNumber) {
  pb::PlanRequest req = Request(CloneSetBuilder().Template(TemplateJson("v3")).Status("cs-1", "cs-1"), {}, {},
                                {RevisionBuilder("cs-1", 4)});
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->update_revision, ExpectedName(TemplateJson("v3"), 0));
  EXPECT_EQ(choice->current_revision, "cs-1");
  nlohmann::json rev = nlohmann::json::parse(plan.response()->actions(0).create_revision().revision_json());
  EXPECT_EQ(rev["revision"], 5);
}

TEST(ChooseRevisions, NameCollisionBumpsCollisionCount) {
  const std::string taken = ExpectedName(TemplateJson("v2"), 0);
  const std::string taken2 = ExpectedName(TemplateJson("v2"), 1);
  pb::PlanRequest req = Request(CloneSetBuilder().Template(TemplateJson("v2")).Status("cs-1", "cs-1"), {}, {},
                                {RevisionBuilder("cs-1", 1), RevisionBuilder(taken, 2).Template(TemplateJson("x")),
                                 RevisionBuilder(taken2, 3).Template(TemplateJson("y"))});
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->collision_count, 2);
  EXPECT_EQ(choice->update_revision, ExpectedName(TemplateJson("v2"), 2));
  // As upstream's CreateControllerRevision: the name moves on, the hash label keeps the first attempt's hash.
  nlohmann::json rev = nlohmann::json::parse(plan.response()->actions(0).create_revision().revision_json());
  EXPECT_EQ(rev["metadata"]["name"], ExpectedName(TemplateJson("v2"), 2));
  EXPECT_EQ("cs-" + rev["metadata"]["labels"]["controller.kubernetes.io/hash"].get<std::string>(), taken);
}

// A revision an earlier planner wrote (the template as sent, not through the Go types) is still the template's:
// upgrading the planner rolls nothing.
TEST(ChooseRevisions, RevisionInTheEarlierFormIsReused) {
  pb::PlanRequest req = Request(CloneSetBuilder().Status("cs-1", "cs-1"), {}, {},
                                {RevisionBuilder("cs-1", 1).Data(*LegacyRevisionData(TemplateJson()))});
  ASSERT_NE(*LegacyRevisionData(TemplateJson()), *RevisionData(TemplateJson()));
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->update_revision, "cs-1");
  EXPECT_EQ(choice->current_revision, "cs-1");
  EXPECT_EQ(choice->update_template_json, *TemplateFromRevisionData(*RevisionData(TemplateJson())));
  EXPECT_EQ(plan.response()->actions_size(), 0);
}

// A real API server serves revision data re-encoded, and the executor's decoder writes it back without Go's HTML
// escapes: `&&` in a container command arrives as raw `&`, not `\u0026`. It is still this template's revision
// (before, every reconcile created a new one and updated the pods in place again).
TEST(ChooseRevisions, RevisionDataSpelledOtherwiseIsTheSameRevision) {
  const std::string tmpl = TemplateJson("app:v1 && <x>");
  const std::string go_data = *RevisionData(tmpl);
  ASSERT_NE(go_data.find("\\u0026"), std::string::npos);
  const std::string served = nlohmann::json::parse(go_data).dump();  // raw & < >
  ASSERT_NE(served, go_data);
  pb::PlanRequest req = Request(CloneSetBuilder().Template(tmpl).Status("cs-1", "cs-1"), {}, {},
                                {RevisionBuilder("cs-1", 1).Data(served)});
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->update_revision, "cs-1");
  EXPECT_EQ(choice->current_revision, "cs-1");
  EXPECT_EQ(plan.response()->actions_size(), 0);
}

TEST(ChooseRevisions, StatusCollisionCountIsUsed) {
  pb::PlanRequest req = Request(CloneSetBuilder().Status("", "", 3));
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->update_revision, ExpectedName(TemplateJson(), 3));
  EXPECT_EQ(choice->collision_count, 3);
}

TEST(ChooseRevisions, LongNamesAreTruncatedTo223) {
  CloneSetBuilder cs;
  cs.mutable_clone_set()->mutable_metadata()->set_name(std::string(250, 'n'));
  pb::PlanRequest req = Request(cs);
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->update_revision, std::string(223, 'n') + "-" + RevisionHash(*RevisionData(TemplateJson()), 0));
}

TEST(ChooseRevisions, BadTemplateNamesTheField) {
  pb::PlanRequest req = Request(CloneSetBuilder().Template("[]"));
  PlanBuilder plan;
  auto choice = ChooseRevisions(req, SortRevisions(req), plan);
  EXPECT_EQ(choice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(choice.status().message()), ::testing::HasSubstr("spec.template_json"));
}

struct TruncCase {
  std::string name;
  int32_t limit;
  std::vector<std::string> pod_revisions;
  std::vector<std::string> want_deleted;
};

class HistoryTruncationTest : public ::testing::TestWithParam<TruncCase> {};

TEST_P(HistoryTruncationTest, DeletesOldestNonLive) {
  std::vector<pb::Pod> pods;
  int i = 0;
  for (const auto& r : GetParam().pod_revisions) pods.push_back(PodBuilder("cs-p" + std::to_string(i++)).Revision(r));
  pb::PlanRequest req = Request(CloneSetBuilder(), pods, {},
                                {RevisionBuilder("cs-1", 1), RevisionBuilder("cs-2", 2), RevisionBuilder("cs-3", 3),
                                 RevisionBuilder("cs-4", 4), RevisionBuilder("cs-5", 5), RevisionBuilder("cs-6", 6)});
  ResolvedSpec spec;
  spec.revision_history_limit = GetParam().limit;
  PlanContext ctx = MakeContext(req, spec, "cs-5", "cs-6");
  ctx.revisions = SortRevisions(req);
  PlanBuilder plan;
  PlanHistoryTruncation(ctx, plan);
  std::vector<std::string> deleted;
  for (const auto& a : plan.response()->actions()) deleted.push_back(a.delete_revision().name());
  EXPECT_EQ(deleted, GetParam().want_deleted);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HistoryTruncationTest,
    ::testing::Values(TruncCase{"UnderLimit", 10, {}, {}}, TruncCase{"AtLimit", 4, {}, {}},
                      TruncCase{"OverLimitOldestFirst", 2, {}, {"cs-1", "cs-2"}},
                      TruncCase{"ZeroLimit", 0, {}, {"cs-1", "cs-2", "cs-3", "cs-4"}},
                      TruncCase{"PodsKeepRevisionsLive", 0, {"cs-2", "cs-3"}, {"cs-1", "cs-4"}},
                      TruncCase{"ShortHashLabelMatches", 1, {"3"}, {"cs-1", "cs-2"}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace cloneset::planner
