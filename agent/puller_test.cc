#include "agent/puller.h"

#include "agent/testing/fake_cri.h"
#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::agent {
namespace {

using ::testing::ElementsAre;

TEST(BackoffTest, OneSecondDoublingToThirty) {
  std::vector<int64_t> secs;
  for (int i = 1; i <= 8; ++i) secs.push_back(absl::ToInt64Seconds(Backoff(i)));
  EXPECT_THAT(secs, ElementsAre(1, 2, 4, 8, 16, 30, 30, 30));
}

struct Harness {
  base::testing::FakeClock clock;
  testing::FakeCri cri;
  std::vector<int64_t> sleeps;
  std::function<bool(absl::Duration)> Sleep() {
    return [this](absl::Duration d) {
      sleeps.push_back(absl::ToInt64Seconds(d));
      clock.Advance(d);
      return true;
    };
  }
};

TEST(PullWithRetriesTest, PresentImageIsNotPulled) {
  Harness h;
  h.cri.Preload("nginx:1.25");
  PullResult r = PullWithRetries(h.cri, "nginx:1.25", std::nullopt, absl::Seconds(300), h.clock, h.Sleep());
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.already_present);
  EXPECT_EQ(r.attempts, 0);
  EXPECT_EQ(h.cri.Pulls("nginx:1.25"), 0);
}

TEST(PullWithRetriesTest, RetriesWithBackoffThenSucceeds) {
  Harness h;
  h.cri.FailNext(absl::UnavailableError("connection reset"));
  h.cri.FailNext(absl::UnavailableError("connection reset"));
  RegistryAuth auth{.username = "u", .password = "p"};
  PullResult r = PullWithRetries(h.cri, "nginx:1.25", auth, absl::Seconds(300), h.clock, h.Sleep());
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.already_present);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.image_id, "sha256:nginx:1.25");
  EXPECT_EQ(r.size, 1000u);
  EXPECT_THAT(h.sleeps, ElementsAre(1, 2));
  EXPECT_EQ(h.cri.last_auth, auth);
  EXPECT_EQ(h.cri.last_timeout, absl::Seconds(297)) << "each attempt gets what is left of the job timeout";
}

TEST(PullWithRetriesTest, GivesUpAtTheTimeout) {
  Harness h;
  h.cri.AlwaysFail("big:1");
  PullResult r = PullWithRetries(h.cri, "big:1", std::nullopt, absl::Seconds(10), h.clock, h.Sleep());
  EXPECT_FALSE(r.ok);
  // t=0 fail, sleep 1; t=1 fail, sleep 2; t=3 fail, sleep 4; t=7 fail, 7+8 >= 10: give up.
  EXPECT_EQ(r.attempts, 4);
  EXPECT_THAT(h.sleeps, ElementsAre(1, 2, 4));
  EXPECT_EQ(r.message, "pull of big:1 did not finish within 10s (4 attempts): registry down");
}

TEST(PullWithRetriesTest, ShutdownAbandonsThePull) {
  Harness h;
  h.cri.AlwaysFail("big:1");
  PullResult r = PullWithRetries(h.cri, "big:1", std::nullopt, absl::Seconds(10), h.clock,
                                 [](absl::Duration) { return false; });
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.message, "agent shutting down");
}

}  // namespace
}  // namespace cloneset::agent
