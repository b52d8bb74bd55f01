// The executor's overall write limit (write_limit.h): writes wait for a token on the injected clock, reads never.
#include "executor/write_limit.h"

#include <string>
#include <thread>
#include <vector>

#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::executor {
namespace {

using ::testing::ElementsAre;

// Records each request with the fake time it reached the API server.
class RecordingClient final : public kube::RestClient {
 public:
  explicit RecordingClient(const base::Clock& clock) : clock_(clock) {}
  absl::StatusOr<kube::HttpResponse> Do(std::string_view method, std::string_view path, std::string_view,
                                        std::string_view) override {
    absl::MutexLock l(&mu_);
    calls_.push_back(std::string(method) + " +" + absl::FormatDuration(clock_.Now() - start_));
    return kube::HttpResponse{.status = 200, .body = "{}"};
  }
  absl::Status Watch(std::string_view, const std::function<bool(std::string_view)>&, kube::CancelToken*) override {
    return absl::OkStatus();
  }
  std::vector<std::string> calls() {
    absl::MutexLock l(&mu_);
    return calls_;
  }

 private:
  const base::Clock& clock_;
  const absl::Time start_ = clock_.Now();
  absl::Mutex mu_;
  std::vector<std::string> calls_;
};

TEST(IsWriteTest, Verbs) {
  for (const char* m : {"POST", "PUT", "PATCH", "DELETE"}) EXPECT_TRUE(IsWrite(m)) << m;
  for (const char* m : {"GET", "HEAD", "OPTIONS"}) EXPECT_FALSE(IsWrite(m)) << m;
}

TEST(WriteRateLimitedRestClientTest, WritesBeyondTheBurstWaitForTheirToken) {
  base::testing::FakeClock clock;
  RecordingClient inner(clock);
  WriteRateLimitedRestClient limited(inner, /*qps=*/2, /*burst=*/2, clock);
  ASSERT_TRUE(limited.Create("/api/v1/namespaces/ns/pods", "{}").ok());
  ASSERT_TRUE(limited.Patch("/api/v1/namespaces/ns/pods/a", kube::PatchType::kMerge, "{}").ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(limited.Get("/api/v1/namespaces/ns/pods/a").ok());  // reads never wait
  std::thread third([&] { ASSERT_TRUE(limited.Delete("/api/v1/namespaces/ns/pods/a").ok()); });
  ASSERT_TRUE(clock.AwaitWaiters(1, absl::Seconds(30)));
  EXPECT_EQ(inner.calls().size(), 7u) << "the third write waits for its token";
  clock.Advance(absl::Milliseconds(500));
  third.join();
  EXPECT_THAT(inner.calls(), ElementsAre("POST +0", "PATCH +0", "GET +0", "GET +0", "GET +0", "GET +0", "GET +0",
                                         "DELETE +500ms"));
}

TEST(WriteRateLimitedRestClientTest, ZeroQpsIsNoLimit) {
  base::testing::FakeClock clock;
  RecordingClient inner(clock);
  WriteRateLimitedRestClient limited(inner, /*qps=*/0, /*burst=*/1, clock);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(limited.Create("/api/v1/namespaces/ns/pods", "{}").ok());
  EXPECT_EQ(inner.calls().size(), 100u);
}

}  // namespace
}  // namespace cloneset::executor
