// The coordinator's loop against a small API server (kube/testing/fake_apiserver.h), on an injected clock: with the
// ImagePullJobs watched, an idle cluster costs the watch and no LIST per period, and a new job starts a round at once.
#include "imagepull/coordinator_loop.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "base/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "kube/rest_client.h"
#include "kube/testing/fake_apiserver.h"
#include "nlohmann/json.hpp"

namespace cloneset::imagepull {
namespace {

using base::testing::FakeClock;
using kube::testing::FakeApiServer;

// Requests the server saw that start with `prefix` ("GET /apis/.../imagepulljobs") and are not watches.
int Lists(const FakeApiServer& server, const std::string& prefix) {
  const std::vector<std::string> requests = server.requests();
  return static_cast<int>(std::count_if(requests.begin(), requests.end(), [&](const std::string& r) {
    return absl::StartsWith(r, prefix) && !absl::StrContains(r, "watch=");
  }));
}

// Waits (real time, bounded) for a condition of the server, which answers on its own threads.
bool Eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 1000; ++i) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return cond();
}

TEST(CoordinatorLoopTest, WatchedJobsIdleWithoutListsAndANewJobStartsARound) {
  FakeApiServer server;
  ASSERT_TRUE(server.Start().ok());
  auto client = kube::NewHttpRestClient(kube::ClientConfig{.server = server.url()});
  ASSERT_TRUE(client.ok()) << client.status();
  FakeClock clock;
  Coordinator coordinator(**client, {.period = absl::Seconds(1), .watch_jobs = true, .clock = &clock});
  coordinator.Start();

  const std::string jobs = "GET /apis/apps.kruise.io/v1alpha1/imagepulljobs";
  const std::string node_images = "GET /apis/apps.kruise.io/v1alpha1/nodeimages";
  // The informer lists the jobs once and watches them.
  ASSERT_TRUE(Eventually([&] { return server.open_watches() == 1; })) << server.requests().size();
  // Until the informer's first LIST, rounds run on the period; after it, none while there are no jobs: a minute of
  // the clock brings no LIST of jobs or NodeImages.
  clock.Advance(absl::Seconds(1));
  absl::SleepFor(absl::Milliseconds(200));
  const int jobs_before = Lists(server, jobs);
  const int nodes_before = Lists(server, node_images);
  for (int i = 0; i < 60; ++i) clock.Advance(absl::Seconds(1));
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(Lists(server, jobs), jobs_before) << "an idle coordinator listed the jobs";
  EXPECT_EQ(Lists(server, node_images), nodes_before) << "an idle coordinator listed the NodeImages";

  // A job comes: a round runs at once (it lists the jobs and the NodeImages), with no clock moved.
  server.Upsert("/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs",
                nlohmann::json{{"apiVersion", "apps.kruise.io/v1alpha1"},
                               {"kind", "ImagePullJob"},
                               {"metadata", {{"name", "job-1"}, {"namespace", "default"}}},
                               {"spec", {{"image", "app:v2"}, {"parallelism", 1}}}}
                    .dump());
  EXPECT_TRUE(Eventually([&] { return Lists(server, node_images) > nodes_before; }))
      << "no round after the job came";
  // While a job exists, a round every period.
  // (Once the loop waits for its period again: an Advance before it armed that wait would not end it.)
  ASSERT_TRUE(Eventually([&] { return Lists(server, node_images) > nodes_before; }));
  ASSERT_TRUE(clock.AwaitWaiters(1, absl::Seconds(10))) << "the loop did not wait for its period";
  const int with_job = Lists(server, node_images);
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(Eventually([&] { return Lists(server, node_images) > with_job; })) << "no round on the period";
  coordinator.Stop();
}

// Without the ImagePullJob CRD (every LIST of jobs answers 404) pre-download is off: the loop asks again every 30 s
// of the clock, not every period.
TEST(CoordinatorLoopTest, WithoutTheCrdItAsksEveryThirtySeconds) {
  FakeApiServer server;
  ASSERT_TRUE(server.Start().ok());
  server.InjectFault({.method = "GET", .path_prefix = "/apis/apps.kruise.io/v1alpha1/imagepulljobs", .status = 404,
                      .reason = "NotFound", .count = 1000000});
  auto client = kube::NewHttpRestClient(kube::ClientConfig{.server = server.url()});
  ASSERT_TRUE(client.ok()) << client.status();
  FakeClock clock;
  Coordinator coordinator(**client, {.period = absl::Seconds(1), .clock = &clock});
  coordinator.Start();
  const std::string jobs = "GET /apis/apps.kruise.io/v1alpha1/imagepulljobs";
  ASSERT_TRUE(clock.AwaitWaiters(1, absl::Seconds(10))) << "the loop does not wait on the clock";
  for (int second = 1; second <= 61; ++second) {
    clock.Advance(absl::Seconds(1));
    // Once the loop waits past the new time, the round this second may have started is done.
    ASSERT_TRUE(clock.AwaitDeadlineAfter(clock.Now(), absl::Seconds(10))) << "no wait armed after +" << second << "s";
  }
  // Rounds at +1 s (the first, which finds the CRD missing), +31 s and +61 s.
  EXPECT_EQ(Lists(server, jobs), 3) << "the jobs were listed every period without their CRD";
  coordinator.Stop();
}

}  // namespace
}  // namespace cloneset::imagepull
