#include "imagepull/types.h"

#include "common/update_order.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::imagepull {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The shape planner/predownload.cc emits.
constexpr char kPlannerJob[] = R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"ImagePullJob",
 "metadata":{"name":"web-7f9-app","namespace":"ns","uid":"u1","resourceVersion":"42",
  "labels":{"app":"web","controller-revision-hash":"7f9"},
  "ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"web","uid":"cs-uid",
   "controller":true,"blockOwnerDeletion":true}]},
 "spec":{"image":"nginx:1.25","parallelism":2,"timeoutSeconds":120,
  "podSelector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"controller-revision-hash","operator":"NotIn",
   "values":["web-7f9","7f9"]}]},"pullSecrets":["regcred"],"minUpdatedReadyPods":1}})";

TEST(ParsePullJobTest, ReadsThePlannersJob) {
  auto job = ParsePullJob(kPlannerJob);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->Key(), "ns/web-7f9-app");
  EXPECT_EQ(job->image, "nginx:1.25");
  EXPECT_EQ(job->parallelism, 2);
  EXPECT_EQ(job->timeout_seconds, 120);
  EXPECT_EQ(job->min_updated_ready_pods, 1);
  EXPECT_THAT(job->pull_secrets, ElementsAre("regcred"));
  EXPECT_EQ(job->owner_name, "web");
  EXPECT_EQ(job->owner_uid, "cs-uid");
  EXPECT_EQ(job->revision_hash, "7f9");
  EXPECT_EQ(job->pod_selector.String(), "app=web,controller-revision-hash notin (7f9,web-7f9)");
  const auto matches = [&](std::map<std::string, std::string> labels) {
    return job->pod_selector.Matches(labels);
  };
  EXPECT_TRUE(matches({{"app", "web"}, {"controller-revision-hash", "old"}}));
  EXPECT_FALSE(matches({{"app", "web"}, {"controller-revision-hash", "7f9"}}));
  EXPECT_FALSE(matches({{"app", "db"}}));
}

TEST(ParsePullJobTest, ErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"[]", "ImagePullJob: not a JSON object"},
           {R"({"metadata":{}})", "metadata.name: required"},
           {R"({"metadata":{"name":"j"},"spec":{}})", "ImagePullJob j spec.image: required"},
           {R"({"metadata":{"name":"j"},"spec":{"image":"i","parallelism":"two"}})",
            "ImagePullJob j spec.parallelism: expected an integer"},
           {R"({"metadata":{"name":"j"},"spec":{"image":"i","podSelector":{"matchExpressions":[{"key":"a","operator":"Gt"}]}}})",
            "ImagePullJob j spec.podSelector.matchExpressions[0].operator: \"Gt\" is not one of In, NotIn, Exists, "
            "DoesNotExist"},
           {R"({"metadata":{"name":"j"},"spec":{"image":"i","podSelector":{"matchLabels":{"a":1}}}})",
            "ImagePullJob j spec.podSelector.matchLabels.a: expected string, got number"},
           {R"({"metadata":{"name":"j"},"spec":{"image":"i","podSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}})",
            "ImagePullJob j spec.podSelector.matchExpressions[0].values: must be non-empty when operator is In or NotIn"}}) {
    auto job = ParsePullJob(c.json);
    ASSERT_FALSE(job.ok()) << c.json;
    EXPECT_THAT(job.status().message(), HasSubstr(c.error));
  }
}

TEST(ParsePullJobTest, NonPositiveValuesFallBackToDefaults) {
  auto job = ParsePullJob(R"({"metadata":{"name":"j"},"spec":{"image":"i","parallelism":0,"timeoutSeconds":-1}})");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->parallelism, 1);
  EXPECT_EQ(job->timeout_seconds, 300);
}

TEST(NodeImageTest, RoundTripsRequestsAndReports) {
  const absl::Time t = absl::FromUnixSeconds(1767225600);
  std::vector<PullRequest> reqs = {{.job = "ns/j", .job_uid = "u", .image = "nginx:1.25", .secret_namespace = "ns",
                                    .pull_secrets = {"a", "b"}, .timeout_seconds = 30, .assigned_at = t}};
  std::vector<PullReport> reps = {{.job = "ns/j", .job_uid = "u", .image = "nginx:1.25", .phase = PullPhase::kSucceeded,
                                   .image_id = "sha256:abc", .attempts = 2, .start_time = t,
                                   .completion_time = t + absl::Seconds(2)}};
  nlohmann::json obj = {{"metadata", {{"name", "node-1"}, {"resourceVersion", "7"}}},
                        {"spec", {{"pulls", RequestsJson(reqs)}}},
                        {"status", {{"pulls", ReportsJson(reps)}}}};
  EXPECT_EQ(RequestsJson(reqs)[0]["assignedAt"], "2026-01-01T00:00:00Z");
  auto ni = ParseNodeImage(obj.dump());
  ASSERT_TRUE(ni.ok()) << ni.status();
  EXPECT_EQ(ni->node, "node-1");
  EXPECT_EQ(ni->resource_version, "7");
  EXPECT_EQ(ni->requests, reqs);
  EXPECT_EQ(ni->reports, reps);
  EXPECT_NE(ni->ReportFor("u"), nullptr);
  EXPECT_EQ(ni->ReportFor("x"), nullptr);
}

TEST(NodeImageTest, RejectsRequestsWithoutIdentity) {
  auto ni = ParseNodeImage(R"({"metadata":{"name":"n"},"spec":{"pulls":[{"image":"i"}]}})");
  ASSERT_FALSE(ni.ok());
  EXPECT_THAT(ni.status().message(), HasSubstr("NodeImage n spec.pulls[]: jobUID and image are required"));
}

TEST(JobStatusJsonTest, PrintsCountsAndNodes) {
  PullJobStatus st{.phase = "Running", .desired = 2, .pending = 1, .pulling = 1,
                   .nodes = {{.node = "n0", .phase = PullPhase::kPulling}, {.node = "n1"}}};
  EXPECT_EQ(JobStatusJson(st).dump(),
            R"({"desired":2,"failed":0,"nodes":[{"name":"n0","phase":"Pulling"},{"name":"n1","phase":"Pending"}],)"
            R"("pending":1,"phase":"Running","pulling":1,"succeeded":0})");
}

}  // namespace
}  // namespace cloneset::imagepull
