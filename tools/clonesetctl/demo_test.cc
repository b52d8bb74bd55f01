#include "tools/clonesetctl/demo.h"

#include "gtest/gtest.h"

namespace cloneset::clonesetctl {
namespace {

TEST(WritesFromTest, CountsWriteVerbsOfTheGivenAgents) {
  const std::string metrics = R"(# HELP apiserver_request_total API requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="pods",user_agent="cloneset-executor",verb="create"} 5
apiserver_request_total{code="200",resource="pods",user_agent="cloneset-executor",verb="get"} 70
apiserver_request_total{code="409",resource="pods",user_agent="cloneset-executor",verb="patch"} 2
apiserver_request_total{code="200",resource="pods",user_agent="cloneset-executor",verb="delete"} 3
apiserver_request_total{code="200",resource="clonesets",user_agent="kubectl",verb="patch"} 4
apiserver_request_total{code="200",resource="leases",user_agent="cloneset-executor",verb="update"} 30
apiserver_request_total{code="201",resource="events",user_agent="cloneset-executor",verb="create"} 8
apiserver_request_total{code="200",resource="pods",user_agent="cloneset-executor/v1",verb="update"} 1
apiserver_request_duration_seconds_count{user_agent="cloneset-executor",verb="create"} 9
)";
  EXPECT_EQ(WritesFrom(metrics, {"cloneset-executor"}), 11);
  EXPECT_EQ(WritesFrom(metrics, {"kubectl"}), 4);
  EXPECT_EQ(WritesFrom(metrics, {"nobody"}), 0);
  EXPECT_EQ(WritesFrom("", {"cloneset-executor"}), 0);
}

}  // namespace
}  // namespace cloneset::clonesetctl
