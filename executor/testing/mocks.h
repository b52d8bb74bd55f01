// gmock doubles of the executor's interfaces.
#pragma once

#include <utility>

#include "executor/interfaces.h"
#include "gmock/gmock.h"
#include "planapi/pod_table.h"
#include "planner/client/testing/mock_planner_client.h"

namespace cloneset::executor::testing {

// The planner's doubles live beside its interface (planner/client/testing); the executor's tests name them here.
using ::cloneset::planner::client::testing::AnswerLikeAPlanner;
using ::cloneset::planner::client::testing::MockPlannerClient;

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
