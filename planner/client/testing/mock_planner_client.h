// gmock doubles of the planner (planner_client.h), for callers' tests (the executor's reconcile).
#pragma once

#include <utility>

#include "gmock/gmock.h"
#include "planapi/pod_table.h"
#include "planner/client/planner_client.h"

namespace cloneset::planner::client::testing {

class MockPlannerClient : public PlannerClient {
 public:
  MOCK_METHOD(absl::StatusOr<pb::PlanResponse>, Plan, (const pb::PlanRequest&), (override));
  MOCK_METHOD(absl::StatusOr<pb::ValidateResponse>, Validate, (const pb::ValidateRequest&), (override));
  MOCK_METHOD(bool, Healthy, (), (override));
};

// A gmock action answering Plan with `plan` as a planner that read the request would: PlanResponse.pods_read is
// the number of pods sent (a caller drops a plan whose count does not match a pod table it sent).
inline auto AnswerLikeAPlanner(pb::PlanResponse plan) {
  return [plan](const pb::PlanRequest& request) {
    pb::PlanResponse answer = plan;
    answer.set_pods_read(planapi::PodsInRequest(request));
    return absl::StatusOr<pb::PlanResponse>(std::move(answer));
  };
}

}  // namespace cloneset::planner::client::testing
