// The agent against the embedded cluster's simulated CRI runtime (devcluster/nodes/cri_server.h) over a real unix
// socket.
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "absl/strings/escaping.h"
#include "agent/cri_client.h"
#include "agent/testing/fake_node_api.h"
#include "agent/pull_manager.h"
#include "agent/puller.h"
#include "base/clock.h"
#include "devcluster/nodes/cri_server.h"
#include "devcluster/nodes/images.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

namespace dn = ::cloneset::devcluster::nodes;
using imagepull::PullPhase;
using imagepull::PullRequest;
using ::testing::HasSubstr;

class SimulatedCriTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("a1cri-" + std::to_string(::getpid()));
    policy_.pull_times = *dn::ParsePullTimeRules("slow=300ms,glacial=5s", "image-pull-time");
    policy_.fail_pulls = std::regex("broken");
    policy_.fail_pattern = "broken";
    images_ = std::make_unique<dn::ImageStore>("node-0", &policy_, &metrics_);
    auto server = dn::CriServer::Start((dir_ / "cri.sock").string(), images_.get(), &base::RealClock::Get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    cri_ = NewCriImageService("unix://" + server_->socket_path());
  }
  void TearDown() override {
    server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  PullRequest Req(const std::string& uid, const std::string& image, int timeout = 30) {
    return PullRequest{.job = "ns/" + uid, .job_uid = uid, .image = image, .secret_namespace = "ns",
                       .timeout_seconds = timeout};
  }
  // Waits (re-checked after every report write, no polling) until `n` reports are all terminal.
  bool WaitTerminal(testing::FakeNodeApi& api, size_t n, absl::Duration limit = absl::Seconds(20)) {
    return api.AwaitNode(
        [n](const imagepull::NodeImage& ni) {
          size_t done = 0;
          for (const auto& r : ni.reports) done += imagepull::IsTerminal(r.phase) ? 1 : 0;
          return ni.reports.size() == n && done == n;
        },
        limit);
  }

  std::filesystem::path dir_;
  dn::ImagePolicy policy_;
  dn::CriMetrics metrics_{nullptr};
  std::unique_ptr<dn::ImageStore> images_;
  std::unique_ptr<dn::CriServer> server_;
  std::unique_ptr<ImageService> cri_;
};

TEST_F(SimulatedCriTest, ImageStatusThenPullThenPresent) {
  auto before = cri_->ImageStatus("slow-app:1");
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE(before->has_value());
  RegistryAuth auth{.username = "robot", .password = "s3cret", .server_address = "docker.io"};
  PullResult r = PullWithRetries(*cri_, "slow-app:1", auth, absl::Seconds(10), base::RealClock::Get(),
                                 [](absl::Duration d) { absl::SleepFor(d); return true; });
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.image_id, dn::ImageIdFor("slow-app:1"));
  auto after = cri_->ImageStatus("slow-app:1");
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->id, dn::ImageIdFor("slow-app:1"));
  ASSERT_EQ(images_->Auths().size(), 1u);
  EXPECT_EQ(images_->Auths()[0].username, "robot");
  EXPECT_EQ(images_->Auths()[0].password, "s3cret");
}

TEST_F(SimulatedCriTest, PerNodeCapIsHonouredMeasuredAndRestartDoesNotRepeat) {
  testing::FakeNodeApi api;
  api.secrets["ns/regcred"] =
      nlohmann::json({{"metadata", {{"name", "regcred"}}},
                      {"data", {{".dockerconfigjson",
                                 absl::Base64Escape(R"({"auths":{"docker.io":{"username":"robot","password":"pw"}}})")}}}})
          .dump();
  std::vector<PullRequest> reqs;
  for (int i = 0; i < 5; ++i) {
    PullRequest r = Req("j" + std::to_string(i), "slow-app:" + std::to_string(i));
    r.pull_secrets = {"regcred"};
    reqs.push_back(r);
  }
  api.SetRequests(reqs);
  {
    PullManager m(api, *cri_, {.max_concurrent = 2, .resync = absl::Milliseconds(20)});
    m.Start();
    m.Notify();
    ASSERT_TRUE(WaitTerminal(api, 5));
  }
  for (const auto& r : api.Snapshot().reports) EXPECT_EQ(r.phase, PullPhase::kSucceeded) << r.job_uid;
  EXPECT_EQ(images_->MaxInFlight(), 2) << "never more than --max_concurrent_pulls at once";
  EXPECT_EQ(images_->PullsTotal("success"), 5u);
  EXPECT_EQ(images_->Auths().size(), 5u);
  EXPECT_EQ(images_->Auths()[0].password, "pw");

  PullManager restarted(api, *cri_, {.max_concurrent = 2});
  ASSERT_TRUE(restarted.Sync().ok());
  EXPECT_EQ(restarted.running(), 0);
  EXPECT_EQ(images_->PullsTotal("success"), 5u) << "finished pulls are not repeated after a restart";
}

TEST_F(SimulatedCriTest, TimeoutAndFailureAreReportedWithoutBlockingOthers) {
  testing::FakeNodeApi api;
  api.SetRequests({Req("slowjob", "glacial-model:1", /*timeout=*/1), Req("badjob", "broken:1", /*timeout=*/2),
                   Req("okjob", "slow-app:9")});
  PullManager m(api, *cri_, {.max_concurrent = 2, .resync = absl::Milliseconds(20)});
  m.Start();
  m.Notify();
  ASSERT_TRUE(WaitTerminal(api, 3));
  imagepull::NodeImage ni = api.Snapshot();
  EXPECT_EQ(ni.reports[0].phase, PullPhase::kFailed);
  EXPECT_THAT(ni.reports[0].message, HasSubstr("pull of glacial-model:1 did not finish within 1s (1 attempts)"));
  EXPECT_EQ(ni.reports[1].phase, PullPhase::kFailed);
  // t=0 fails, backoff 1 s, t=1 fails, 1+2 s >= 2 s timeout: two attempts.
  EXPECT_EQ(ni.reports[1].attempts, 2);
  EXPECT_THAT(ni.reports[1].message, HasSubstr("failed to pull and unpack image"));
  EXPECT_EQ(ni.reports[2].phase, PullPhase::kSucceeded);
  EXPECT_EQ(images_->PullsTotal("failure"), 2u);
}

}  // namespace
}  // namespace cloneset::agent
