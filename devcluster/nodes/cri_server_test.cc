// The simulated CRI endpoint called with the generated runtime.v1 client over a temp unix socket.
#include "base/testing/fake_clock.h"
#include "devcluster/nodes/cri_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "runtime/v1/cri.grpc.pb.h"

namespace cloneset::devcluster::nodes {
namespace {

namespace v1 = ::runtime::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;

class CriServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("d2cri-" + std::to_string(::getpid()));
    policy_.default_pull_time = seconds(2);
    policy_.pull_times = *ParsePullTimeRules("instant=0s", "image-pull-time");
    policy_.fail_pulls = std::regex("broken");
    policy_.fail_pattern = "broken";
    images_ = std::make_unique<ImageStore>("devcluster-node-0", &policy_, &metrics_);
    auto server = CriServer::Start((dir_ / "nodes/devcluster-node-0/cri.sock").string(), images_.get(), &clock_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    auto channel = grpc::CreateChannel("unix://" + server_->socket_path(), grpc::InsecureChannelCredentials());
    images_stub_ = v1::ImageService::NewStub(channel);
    runtime_stub_ = v1::RuntimeService::NewStub(channel);
  }
  void TearDown() override {
    server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  bool Present(const std::string& image) {
    grpc::ClientContext ctx;
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(image);
    v1::ImageStatusResponse resp;
    EXPECT_TRUE(images_stub_->ImageStatus(&ctx, req, &resp).ok());
    return resp.has_image();
  }
  grpc::Status Pull(const std::string& image, v1::PullImageResponse* resp,
                    std::chrono::milliseconds deadline = milliseconds(0)) {
    grpc::ClientContext ctx;
    if (deadline.count() > 0) ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    v1::PullImageRequest req;
    req.mutable_image()->set_image(image);
    req.mutable_auth()->set_username("robot");
    req.mutable_auth()->set_password("s3cret");
    req.mutable_auth()->set_server_address("registry.example.com");
    return images_stub_->PullImage(&ctx, req, resp);
  }
  // Waits until `n` pulls are in flight: each pull's handler then waits on the clock for its next step.
  void WaitInFlight(int n) {
    ASSERT_TRUE(clock_.AwaitDeadlineAfter(clock_.Now(), absl::Seconds(60), n)) << n << " pulls never waited on the clock";
    ASSERT_EQ(images_->InFlight(), n);
  }

  std::filesystem::path dir_;
  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  prometheus::Registry registry_;
  CriMetrics metrics_{&registry_};
  ImagePolicy policy_;
  std::unique_ptr<ImageStore> images_;
  std::unique_ptr<CriServer> server_;
  std::unique_ptr<v1::ImageService::Stub> images_stub_;
  std::unique_ptr<v1::RuntimeService::Stub> runtime_stub_;
};

TEST_F(CriServerTest, Version) {
  grpc::ClientContext ctx;
  v1::VersionResponse resp;
  ASSERT_TRUE(runtime_stub_->Version(&ctx, v1::VersionRequest(), &resp).ok());
  EXPECT_EQ(resp.runtime_api_version(), "v1");
  EXPECT_EQ(resp.runtime_name(), "devcluster-sim");
}

TEST_F(CriServerTest, PullHonoursPullTimeAndImageStatusReflectsIt) {
  EXPECT_FALSE(Present("nginx:1.25"));
  v1::PullImageResponse resp;
  grpc::Status st;
  std::atomic<bool> returned{false};
  std::thread t([&] {
    st = Pull("nginx:1.25", &resp);
    returned = true;
  });
  WaitInFlight(1);
  const absl::Time start = clock_.Now();
  clock_.Advance(seconds(1));
  // The handler saw the 1 s and armed its next wait step on the clock: it is still pulling (rather than a guess
  // that it had time to return).
  ASSERT_TRUE(clock_.AwaitDeadlineAfter(start + absl::Seconds(1), absl::Seconds(60)));
  EXPECT_FALSE(returned) << "the pull returned before its 2 s pull time";
  EXPECT_FALSE(Present("nginx:1.25")) << "pulled before its 2 s pull time";
  clock_.Advance(seconds(1));
  t.join();
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.image_ref(), ImageIdFor("nginx:1.25"));
  EXPECT_TRUE(Present("nginx:1.25"));
  EXPECT_TRUE(Present("docker.io/library/nginx:1.25"));

  grpc::ClientContext lctx;
  v1::ListImagesResponse list;
  ASSERT_TRUE(images_stub_->ListImages(&lctx, v1::ListImagesRequest(), &list).ok());
  ASSERT_EQ(list.images_size(), 1);
  EXPECT_EQ(list.images(0).repo_tags(0), "docker.io/library/nginx:1.25");
  EXPECT_EQ(list.images(0).id(), ImageIdFor("nginx:1.25"));

  grpc::ClientContext fctx;
  v1::ImageFsInfoResponse fs;
  ASSERT_TRUE(images_stub_->ImageFsInfo(&fctx, v1::ImageFsInfoRequest(), &fs).ok());
  EXPECT_EQ(fs.image_filesystems(0).inodes_used().value(), 1u);
  EXPECT_EQ(fs.image_filesystems(0).used_bytes().value(), list.images(0).size());

  grpc::ClientContext rctx;
  v1::RemoveImageRequest rreq;
  rreq.mutable_image()->set_image("nginx:1.25");
  v1::RemoveImageResponse rresp;
  ASSERT_TRUE(images_stub_->RemoveImage(&rctx, rreq, &rresp).ok());
  EXPECT_FALSE(Present("nginx:1.25"));

  auto auths = images_->Auths();
  ASSERT_EQ(auths.size(), 1u);
  EXPECT_EQ(auths[0].username, "robot");
  EXPECT_EQ(auths[0].password, "s3cret");
  EXPECT_EQ(auths[0].server_address, "registry.example.com");
}

TEST_F(CriServerTest, ConcurrentPullsAreCountedAndExposedAsMetrics) {
  std::vector<std::thread> pullers;
  for (const char* image : {"a:1", "b:1", "c:1"}) {
    pullers.emplace_back([this, image] {
      v1::PullImageResponse resp;
      EXPECT_TRUE(Pull(image, &resp).ok());
    });
  }
  WaitInFlight(3);
  clock_.Advance(seconds(2));
  for (auto& t : pullers) t.join();
  v1::PullImageResponse resp;
  EXPECT_TRUE(Pull("instant", &resp).ok());
  grpc::Status failed = Pull("repo/broken:1", &resp);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_NE(failed.error_message().find("simulated pull failure"), std::string::npos);
  EXPECT_EQ(images_->MaxInFlight(), 3);
  std::string text = prometheus::TextSerializer().Serialize(registry_.Collect());
  for (const char* line : {"devcluster_cri_pulls_in_flight{node=\"devcluster-node-0\"} 0",
                           "devcluster_cri_pulls_in_flight_max{node=\"devcluster-node-0\"} 3",
                           "devcluster_cri_pulls_total{node=\"devcluster-node-0\",result=\"success\"} 4",
                           "devcluster_cri_pulls_total{node=\"devcluster-node-0\",result=\"failure\"} 1"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST_F(CriServerTest, ClientTimeoutAbandonsThePull) {
  v1::PullImageResponse resp;
  grpc::Status st = Pull("slow:1", &resp, milliseconds(100));
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  for (int i = 0; i < 500 && images_->PullsTotal("cancelled") == 0; ++i) {
    clock_.Advance(milliseconds(20));  // let the handler's wait step observe the cancellation
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_EQ(images_->PullsTotal("cancelled"), 1u);
  EXPECT_FALSE(Present("slow:1"));
}

TEST_F(CriServerTest, BadRequestsAndSocketPathLimit) {
  grpc::ClientContext ctx;
  v1::ImageStatusResponse resp;
  EXPECT_EQ(images_stub_->ImageStatus(&ctx, v1::ImageStatusRequest(), &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  auto too_long = CriServer::Start("/tmp/" + std::string(120, 'x') + "/cri.sock", images_.get(), &clock_);
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
