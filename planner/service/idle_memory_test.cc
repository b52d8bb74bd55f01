#include "planner/service/idle_memory.h"

#include <vector>

#include "gtest/gtest.h"

namespace cloneset::planner::service {
namespace {

struct Step {
  int64_t calls_started;
  int in_flight;
  bool releases;
};

struct IdleCase {
  const char* name;
  std::vector<Step> steps;
};

class IdleMemoryReleaseTest : public ::testing::TestWithParam<IdleCase> {};

TEST_P(IdleMemoryReleaseTest, ReleasesOncePerIdlePeriod) {
  int released = 0;
  IdleMemoryRelease idle([&] { ++released; });
  int expected = 0;
  for (size_t i = 0; i < GetParam().steps.size(); ++i) {
    const Step& step = GetParam().steps[i];
    EXPECT_EQ(idle.Check(step.calls_started, step.in_flight), step.releases) << "step " << i;
    expected += step.releases ? 1 : 0;
    EXPECT_EQ(released, expected) << "step " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, IdleMemoryReleaseTest,
    ::testing::Values(
        // The first check only learns the count: a fresh process has nothing to give back yet.
        IdleCase{"first_check_learns", {{0, 0, false}, {0, 0, true}, {0, 0, false}}},
        IdleCase{"busy_never_releases", {{1, 0, false}, {2, 0, false}, {3, 1, false}, {4, 0, false}}},
        IdleCase{"long_call_in_flight_waits", {{5, 1, false}, {5, 1, false}, {5, 0, true}}},
        IdleCase{"each_burst_released_once", {{3, 0, false}, {3, 0, true}, {3, 0, false}, {9, 0, false},
                                               {9, 0, true}, {9, 0, false}}}),
    [](const ::testing::TestParamInfo<IdleCase>& info) { return info.param.name; });

TEST(PurgeAllocatorTest, PurgesUnderJemalloc) {
  // This test binary links jemalloc, as cloneset-planner does.
  EXPECT_TRUE(PurgeAllocator());
}

}  // namespace
}  // namespace cloneset::planner::service
