// The /readyz decision (pure, time as an input) and the records that feed it.
#include "executor/readyz.h"

#include <string>
#include <vector>

#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"
#include "kube/testing/mock_rest_client.h"

namespace cloneset::executor {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;

const absl::Time kNow = absl::FromUnixSeconds(1700000000);
constexpr absl::Duration kBound = absl::Seconds(10);

Contact Ok() { return {.last_success = kNow - absl::Seconds(1)}; }
Contact FailingFor(absl::Duration d) {
  return {.last_success = kNow - d - absl::Seconds(1), .failing_since = kNow - d, .last_error = "connection refused"};
}

TEST(ReadinessProblemTest, Table) {
  struct Case {
    std::string name;
    ReadinessInputs in;
    std::string want;  // substring of the answer; "" = ready
  };
  const std::vector<Case> cases = {
      {"everything answers", {.caches_synced = true, .api_server = Ok(), .planner = Ok()}, ""},
      {"stopping", {.stopping = true, .caches_synced = true, .api_server = Ok(), .planner = Ok()}, "shutting down"},
      {"caches not synced", {.caches_synced = false, .api_server = Ok(), .planner = Ok()}, "caches not synced"},
      {"API server failing within the bound",
       {.caches_synced = true, .api_server = FailingFor(kBound), .planner = Ok()},
       ""},
      {"API server lost",
       {.caches_synced = true, .api_server = FailingFor(kBound + absl::Seconds(1)), .planner = Ok()},
       "lost the API server: every request failed for 11s (last error: connection refused)"},
      {"planner never answered", {.caches_synced = true, .api_server = Ok(), .planner = {}}, "no planner answered yet"},
      {"planner never answered, with the error",
       {.caches_synced = true, .api_server = Ok(), .planner = {.failing_since = kNow, .last_error = "refused"}},
       "no planner answered yet (refused)"},
      {"planner failing within the bound",
       {.caches_synced = true, .api_server = Ok(), .planner = FailingFor(absl::Seconds(3))},
       ""},
      {"planner lost",
       {.caches_synced = true, .api_server = Ok(), .planner = FailingFor(absl::Minutes(2))},
       "lost the planner: every request failed for 2m"},
      {"both lost: the API server is named first",
       {.caches_synced = true, .api_server = FailingFor(absl::Minutes(1)), .planner = FailingFor(absl::Minutes(1))},
       "lost the API server"},
  };
  for (const Case& c : cases) {
    const std::string got = ReadinessProblem(c.in, kNow, kBound);
    if (c.want.empty()) {
      EXPECT_EQ(got, "") << c.name;
    } else {
      EXPECT_THAT(got, HasSubstr(c.want)) << c.name;
    }
  }
}

TEST(ContactTrackerTest, FailingSinceIsTheFirstFailureAfterTheLastSuccess) {
  base::testing::FakeClock clock(kNow);
  ContactTracker t(&clock);
  EXPECT_FALSE(t.Get().last_success.has_value());
  t.Success();
  clock.Advance(absl::Seconds(5));
  t.Failure("refused");
  clock.Advance(absl::Seconds(5));
  t.Failure("refused again");
  Contact c = t.Get();
  EXPECT_EQ(c.last_success, kNow);
  EXPECT_EQ(c.failing_since, kNow + absl::Seconds(5));
  EXPECT_EQ(c.last_error, "refused again");
  EXPECT_THAT(ReadinessProblem({.caches_synced = true, .api_server = c, .planner = c}, clock.Now(), kBound), "");
  clock.Advance(absl::Seconds(6));
  EXPECT_THAT(ReadinessProblem({.caches_synced = true, .api_server = c, .planner = Ok()}, clock.Now(), kBound),
              HasSubstr("lost the API server"));
  t.Success();
  c = t.Get();
  EXPECT_FALSE(c.failing_since.has_value());
  EXPECT_EQ(ReadinessProblem({.caches_synced = true, .api_server = c, .planner = c}, clock.Now(), kBound), "");
}

// The planner client's reports land in the planner's tracker: Reached is a success, Unreachable a failure with why.
TEST(PlannerContactTest, TheClientsReportsAreThePlannersContact) {
  base::testing::FakeClock clock(kNow);
  ContactTracker t(&clock);
  PlannerContact observer(&t);
  observer.Unreachable("health check: connection refused");
  EXPECT_FALSE(t.Get().last_success.has_value());
  EXPECT_EQ(t.Get().failing_since, kNow);
  EXPECT_EQ(t.Get().last_error, "health check: connection refused");
  clock.Advance(absl::Seconds(3));
  observer.Reached();
  EXPECT_EQ(t.Get().last_success, kNow + absl::Seconds(3));
  EXPECT_FALSE(t.Get().failing_since.has_value());
}

TEST(TrackedRestClientTest, AnyHttpAnswerIsContactATransportErrorIsNot) {
  base::testing::FakeClock clock(kNow);
  ContactTracker t(&clock);
  auto inner = std::make_unique<::testing::StrictMock<kube::testing::MockRestClient>>();
  auto* mock = inner.get();
  auto client = NewTrackedRestClient(std::move(inner), &t);
  EXPECT_CALL(*mock, Do("GET", "/api/v1/pods", _, _))
      .WillOnce(Return(kube::HttpResponse{.status = 503, .body = "overloaded"}))
      .WillOnce(Return(absl::UnavailableError("GET https://127.0.0.1:1/api/v1/pods: Connection")));
  // Through the typed helper: the 503 is an error for the caller but shows the server answered.
  EXPECT_FALSE(client->Get("/api/v1/pods").ok());
  EXPECT_FALSE(t.Get().failing_since.has_value());
  EXPECT_TRUE(t.Get().last_success.has_value());
  EXPECT_FALSE(client->Do("GET", "/api/v1/pods", "", "application/json").ok());
  EXPECT_EQ(t.Get().failing_since, kNow);
  EXPECT_THAT(t.Get().last_error, HasSubstr("Connection"));

  // A watch that delivers data is contact even when its connection is cut later... which is then a failure.
  EXPECT_CALL(*mock, Watch("/api/v1/pods?watch=1", _, _))
      .WillOnce([](std::string_view, const std::function<bool(std::string_view)>& on_data, kube::CancelToken*) {
        on_data("{}");
        return absl::OkStatus();
      })
      .WillOnce([](std::string_view, const std::function<bool(std::string_view)>&, kube::CancelToken*) {
        return absl::UnavailableError("watch: connection reset");
      })
      .WillOnce([](std::string_view, const std::function<bool(std::string_view)>&, kube::CancelToken*) {
        return kube::StatusFromHttp(410, R"({"kind":"Status","reason":"Expired","message":"too old"})");
      });
  int delivered = 0;
  const auto count = [&](std::string_view) {
    ++delivered;
    return true;
  };
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(client->Watch("/api/v1/pods?watch=1", count, nullptr).ok());
  EXPECT_EQ(delivered, 1);
  EXPECT_FALSE(t.Get().failing_since.has_value());
  clock.Advance(absl::Seconds(1));
  EXPECT_FALSE(client->Watch("/api/v1/pods?watch=1", count, nullptr).ok());
  EXPECT_EQ(t.Get().failing_since, kNow + absl::Seconds(2));
  EXPECT_TRUE(kube::IsGone(client->Watch("/api/v1/pods?watch=1", count, nullptr)));
  EXPECT_FALSE(t.Get().failing_since.has_value());
}

}  // namespace
}  // namespace cloneset::executor
