// The per-CloneSet back-off (retry_backoff.h): delays by failure count and jitter, and what resets it. Injected
// clock (times are inputs) and random source.
#include "executor/retry_backoff.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cloneset::executor {
namespace {

struct DelayCase {
  std::string name;
  RetryBackoffOptions options;
  int failures;
  double random;
  absl::Duration want;
};

class BackoffDelayTest : public ::testing::TestWithParam<DelayCase> {};

TEST_P(BackoffDelayTest, Delay) {
  const DelayCase& c = GetParam();
  EXPECT_EQ(BackoffDelay(c.options, c.failures, c.random), c.want);
}

constexpr RetryBackoffOptions kNoJitter{.base = absl::Seconds(1), .cap = absl::Seconds(60), .jitter = 0};
constexpr RetryBackoffOptions kJitter{.base = absl::Seconds(1), .cap = absl::Seconds(60), .jitter = 0.5};

INSTANTIATE_TEST_SUITE_P(
    Cases, BackoffDelayTest,
    ::testing::Values(DelayCase{"no_failure", kNoJitter, 0, 0, absl::ZeroDuration()},
                      DelayCase{"first", kNoJitter, 1, 0, absl::Seconds(1)},
                      DelayCase{"doubles", kNoJitter, 4, 0, absl::Seconds(8)},
                      DelayCase{"capped", kNoJitter, 7, 0, absl::Seconds(60)},
                      DelayCase{"capped_far_out", kNoJitter, 10000, 0, absl::Seconds(60)},
                      DelayCase{"jitter_low_end", kJitter, 3, 0.0, absl::Seconds(4)},
                      DelayCase{"jitter_takes_off", kJitter, 3, 0.5, absl::Seconds(3)},
                      DelayCase{"jitter_at_cap_stays_under_it", kJitter, 9, 0.99, absl::Seconds(60) * 0.505},
                      DelayCase{"client_go_base", RetryBackoffOptions{}, 1, 0, absl::Milliseconds(5)},
                      DelayCase{"client_go_base_tenth", RetryBackoffOptions{.jitter = 0}, 10, 0,
                                absl::Milliseconds(5 * 512)}),
    [](const auto& info) { return info.param.name; });

TEST(ValidateBackoffTest, NamesTheField) {
  EXPECT_TRUE(ValidateBackoff({}).ok());
  EXPECT_NE(ValidateBackoff({.base = absl::ZeroDuration()}).message().find("retry_backoff_base"), std::string::npos);
  EXPECT_NE(ValidateBackoff({.base = absl::Seconds(2), .cap = absl::Seconds(1)}).message().find("retry_backoff_max"),
            std::string::npos);
  EXPECT_NE(ValidateBackoff({.jitter = 1}).message().find("retry_backoff_jitter"), std::string::npos);
  EXPECT_NE(ValidateBackoff({.jitter = -0.1}).message().find("retry_backoff_jitter"), std::string::npos);
}

// Steps on one key: what each call returns at which time.
struct Step {
  enum Kind { kWait, kFailed, kForget } kind;
  std::string version;
  absl::Duration at;  // since the start
  std::optional<absl::Duration> want;  // Wait: the time left; Failed: the delay
  int want_failures;
};

struct ResetCase {
  std::string name;
  std::vector<Step> steps;
};

class RetryBackoffTest : public ::testing::TestWithParam<ResetCase> {};

TEST_P(RetryBackoffTest, Steps) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  RetryBackoff b(kNoJitter, [] { return 0.0; });
  int i = 0;
  for (const Step& s : GetParam().steps) {
    SCOPED_TRACE(i++);
    switch (s.kind) {
      case Step::kWait:
        EXPECT_EQ(b.Wait("ns/a", s.version, t0 + s.at), s.want);
        break;
      case Step::kFailed:
        EXPECT_EQ(b.Failed("ns/a", s.version, t0 + s.at), s.want.value());
        break;
      case Step::kForget:
        b.Forget("ns/a");
        break;
    }
    EXPECT_EQ(b.Failures("ns/a"), s.want_failures);
  }
}

const absl::Duration kS = absl::Seconds(1);

INSTANTIATE_TEST_SUITE_P(
    Cases, RetryBackoffTest,
    ::testing::Values(
        ResetCase{"nothing_recorded", {{Step::kWait, "u/1", 0 * kS, std::nullopt, 0}}},
        ResetCase{"waits_out_the_delay",
                  {{Step::kFailed, "u/1", 0 * kS, 1 * kS, 1},
                   {Step::kWait, "u/1", absl::Milliseconds(400), absl::Milliseconds(600), 1},
                   {Step::kWait, "u/1", 1 * kS, std::nullopt, 1},
                   {Step::kFailed, "u/1", 1 * kS, 2 * kS, 2},
                   {Step::kWait, "u/1", 2 * kS, 1 * kS, 2},
                   {Step::kFailed, "u/1", 3 * kS, 4 * kS, 3}}},
        ResetCase{"success_resets",
                  {{Step::kFailed, "u/1", 0 * kS, 1 * kS, 1},
                   {Step::kFailed, "u/1", 1 * kS, 2 * kS, 2},
                   {Step::kForget, "", 3 * kS, std::nullopt, 0},
                   {Step::kFailed, "u/1", 4 * kS, 1 * kS, 1}}},
        ResetCase{"new_generation_resets",
                  {{Step::kFailed, "u/1", 0 * kS, 1 * kS, 1},
                   {Step::kFailed, "u/1", 1 * kS, 2 * kS, 2},
                   {Step::kWait, "u/2", absl::Milliseconds(1500), std::nullopt, 0},
                   {Step::kFailed, "u/2", 2 * kS, 1 * kS, 1}}},
        ResetCase{"failure_at_new_generation_starts_afresh",
                  {{Step::kFailed, "u/1", 0 * kS, 1 * kS, 1},
                   {Step::kFailed, "u/1", 1 * kS, 2 * kS, 2},
                   {Step::kFailed, "u/2", 3 * kS, 1 * kS, 1}}},
        ResetCase{"recreated_cloneset_resets",
                  {{Step::kFailed, "u/1", 0 * kS, 1 * kS, 1},
                   {Step::kWait, "v/1", absl::Milliseconds(10), std::nullopt, 0}}}),
    [](const auto& info) { return info.param.name; });

TEST(RetryBackoffTest, JitterFromTheInjectedSource) {
  std::vector<double> draws = {0.5, 0.25};
  size_t next = 0;
  RetryBackoff b({.base = absl::Seconds(4), .cap = absl::Minutes(1), .jitter = 0.5},
                 [&] { return draws[next++ % draws.size()]; });
  EXPECT_EQ(b.Failed("k", "v", absl::UnixEpoch()), absl::Seconds(3));    // 4 s less 0.5 * 0.5 of it
  EXPECT_EQ(b.Failed("k", "v", absl::UnixEpoch()), absl::Seconds(7));    // 8 s less 0.5 * 0.25 of it
  EXPECT_EQ(b.Failed("other", "v", absl::UnixEpoch()), absl::Seconds(3));  // keys back off on their own
}

}  // namespace
}  // namespace cloneset::executor
