// gmock doubles of the executor's interfaces.
#pragma once

#include <utility>

#include "executor/interfaces.h"
#include "gmock/gmock.h"
#include "planapi/pod_table.h"

namespace cloneset::executor::testing {

class MockPlannerClient : public PlannerClient {
 public:
  MOCK_METHOD(absl::StatusOr<pb::PlanResponse>, Plan, (const pb::PlanRequest&), (override));
  MOCK_METHOD(absl::StatusOr<pb::ValidateResponse>, Validate, (const pb::ValidateRequest&), (override));
  MOCK_METHOD(bool, Healthy, (), (override));
};

// A gmock action answering Plan with `plan` as a planner that read the request would: PlanResponse.pods_read is
// the number of pods sent (the executor drops a plan whose count does not match a pod table it sent).
inline auto AnswerLikeAPlanner(pb::PlanResponse plan) {
  return [plan](const pb::PlanRequest& request) {
    pb::PlanResponse answer = plan;
    answer.set_pods_read(planapi::PodsInRequest(request));
    return absl::StatusOr<pb::PlanResponse>(std::move(answer));
  };
}

class MockClusterCache : public ClusterCache {
 public:
  MOCK_METHOD(std::shared_ptr<const pb::CloneSet>, GetCloneSet, (const std::string&), (override));
  MOCK_METHOD(std::vector<pb::Pod>, PodsOwnedBy, (const std::string&, const std::string&), (override));
  MOCK_METHOD(std::vector<pb::PersistentVolumeClaim>, PvcsOwnedBy, (const std::string&, const std::string&),
              (override));
  MOCK_METHOD(std::vector<pb::ControllerRevision>, RevisionsOwnedBy, (const std::string&, const std::string&),
              (override));
  MOCK_METHOD(Observed, Lookup, (ObjectKind, const std::string&, const std::string&), (override));
  MOCK_METHOD(absl::StatusOr<std::vector<pb::Pod>>, ListPodsFresh, (const std::string&, const std::string&),
              (override));
  MOCK_METHOD(std::vector<pb::Node>, NodesNamed, (const std::vector<std::string>&), (override));
  MOCK_METHOD(std::vector<pb::StorageClass>, StorageClasses, (), (override));
  MOCK_METHOD(bool, HasSynced, (), (override));
};

class MockEventSink : public EventSink {
 public:
  MOCK_METHOD(void, Event, (const pb::CloneSet&, std::string_view, std::string_view, std::string_view),
              (override));
};

}  // namespace cloneset::executor::testing
