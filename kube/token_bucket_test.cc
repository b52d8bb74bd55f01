#include "kube/token_bucket.h"

#include "gtest/gtest.h"

namespace cloneset::kube {
namespace {

TEST(TokenBucketTest, BurstThenPaced) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  struct Step {
    absl::Duration at;
    absl::Duration want_wait;
  };
  // 10 qps, burst 2.
  const std::vector<Step> steps = {
      {absl::ZeroDuration(), absl::ZeroDuration()},
      {absl::ZeroDuration(), absl::ZeroDuration()},
      {absl::ZeroDuration(), absl::Milliseconds(100)},
      {absl::ZeroDuration(), absl::Milliseconds(200)},
      {absl::Milliseconds(300), absl::ZeroDuration()},  // debt repaid exactly
      {absl::Seconds(10), absl::ZeroDuration()},        // refill caps at burst
      {absl::Seconds(10), absl::ZeroDuration()},
      {absl::Seconds(10), absl::Milliseconds(100)},
  };
  TokenBucket b(10, 2, t0);
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(b.Reserve(t0 + steps[i].at), steps[i].want_wait) << "step " << i;
  }
}

TEST(TokenBucketTest, NonPositiveQpsIsUnlimited) {
  TokenBucket b(-1, 1, absl::UnixEpoch());
  EXPECT_TRUE(b.unlimited());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b.Reserve(absl::UnixEpoch()), absl::ZeroDuration());
}

}  // namespace
}  // namespace cloneset::kube
