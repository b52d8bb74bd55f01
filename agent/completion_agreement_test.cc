// The agent reports InPlaceUpdateReady exactly when the planner counts the pod's in-place update completed (and
// its containers are ready, which the agent waits for as well): both decide with common/inplace_completion.h.
// Every pairing of the spellings below, through the decoder both use (snapshot::PodFromJson).
#include <string>
#include <vector>

#include "agent/readiness.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planner/inplace.h"
#include "snapshot/snapshot.h"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

Json PodJson(const std::string& spec_image, const std::string& status_image, const std::string& status_image_id,
             const std::string& recorded_container_id, const std::string& status_container_id) {
  Json recorded = {{"imageID", "old-id"}};
  if (!recorded_container_id.empty()) recorded["containerID"] = recorded_container_id;
  const Json state = {{"revision", "web-2"},
                      {"updateTimestamp", "2026-01-01T00:00:00Z"},
                      {"lastContainerStatuses", {{"c1", recorded}}},
                      {"updateImages", true}};
  return {{"metadata",
           {{"namespace", "ns"}, {"name", "web-0"}, {"uid", "u"}, {"resourceVersion", "17"},
            {"annotations", {{"apps.kruise.io/inplace-update-state", state.dump()}}}}},
          {"spec",
           {{"readinessGates", {{{"conditionType", "InPlaceUpdateReady"}}}},
            {"containers", {{{"name", "c1"}, {"image", spec_image}}}}}},
          {"status",
           {{"conditions", {{{"type", "InPlaceUpdateReady"}, {"status", "False"}, {"reason", "StartInPlaceUpdate"}}}},
            {"containerStatuses",
             {{{"name", "c1"},
               {"image", status_image},
               {"imageID", status_image_id},
               {"containerID", status_container_id},
               {"ready", true}}}}}}};
}

TEST(CompletionAgreementTest, AgentReportsExactlyWhenThePlannerCountsTheUpdateCompleted) {
  const std::vector<std::string> images = {"nginx",          "nginx:latest", "docker.io/library/nginx:latest",
                                           "nginx:1.24",     "registry:5000/app", "registry:5000/app:latest",
                                           "docker.io/nginx"};
  int reported = 0;
  int cases = 0;
  for (const std::string& spec_image : images) {
    for (const std::string& status_image : images) {
      for (const std::string status_image_id : {"old-id", "new-id"}) {
        for (const std::string recorded_cid : {"", "cid-old"}) {
          for (const std::string status_cid : {"cid-old", "cid-new"}) {
            const std::string json =
                PodJson(spec_image, status_image, status_image_id, recorded_cid, status_cid).dump();
            SCOPED_TRACE(json);
            absl::StatusOr<snapshot::pb::Pod> pod = snapshot::PodFromJson(json);
            ASSERT_TRUE(pod.ok()) << pod.status();
            const ReadinessDecision agent = DecideReadiness(*pod, absl::FromUnixSeconds(1767225700));
            EXPECT_EQ(agent.report, planner::InPlaceUpdateCompleted(*pod)) << agent.why;
            reported += agent.report ? 1 : 0;
            ++cases;
          }
        }
      }
    }
  }
  // Both outcomes occur, so the comparison means something.
  EXPECT_GT(reported, 0);
  EXPECT_LT(reported, cases);
}

}  // namespace
}  // namespace cloneset::agent
