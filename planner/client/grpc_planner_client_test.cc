// The planner client's waits (the back-off between attempts, the health probe's period) are on the injected clock,
// destroying the client ends the probe's wait at once, a client without the probe starts no thread, and the
// observer hears every outcome that says whether a planner can be reached. The planner is a loopback port that
// refuses connections: every attempt fails UNAVAILABLE at once, so only the clock decides how long a call takes.
#include "planner/client/grpc_planner_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "planapi/request.h"

namespace cloneset::planner::client {
namespace {

using base::testing::FakeClock;

// How long a test waits in real time for the client's threads (their work takes no clock time): a bound for a
// loaded machine, never reached when the code is right.
constexpr absl::Duration kRealTimeBound = absl::Seconds(30);

// A loopback port bound but not listening: connecting to it is refused.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot bind a loopback port";
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~RefusingPort() {
    if (fd_ >= 0) close(fd_);
  }
  std::string Address() const { return "ipv4:127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// What an observer heard, in order: "reached" or "unreachable: why".
class RecordingObserver final : public ContactObserver {
 public:
  void Reached() override {
    absl::MutexLock l(&mu_);
    heard_.push_back("reached");
  }
  void Unreachable(std::string_view why) override {
    absl::MutexLock l(&mu_);
    heard_.push_back("unreachable: " + std::string(why));
  }
  std::vector<std::string> Heard() const {
    absl::MutexLock l(&mu_);
    return heard_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> heard_ ABSL_GUARDED_BY(mu_);
};

// Two attempts with 200 ms between them: the second attempt waits for the clock to pass the back-off.
TEST(GrpcPlannerClientTest, BackoffBetweenAttemptsIsOnTheClock) {
  RefusingPort port;
  FakeClock clock;
  auto client = NewGrpcPlannerClient({.address = port.Address(), .max_attempts = 2,
                                      .backoff = absl::Milliseconds(200), .health_probe = true, .clock = &clock});
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<pb::PlanResponse> got;
  absl::Notification done;
  std::thread call([&] {
    got = (*client)->Plan(pb::PlanRequest());
    done.Notify();
  });
  // The health probe waits 250 ms (unhealthy), the call 200 ms before its second attempt.
  ASSERT_TRUE(clock.AwaitWaiters(2, kRealTimeBound)) << "the client does not wait on the injected clock";
  EXPECT_FALSE(done.HasBeenNotified());
  clock.Advance(absl::Milliseconds(200));
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(kRealTimeBound));
  clock.Advance(absl::Hours(1));  // releases the call if it still waits, so the test ends
  call.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable) << got.status();
  EXPECT_FALSE((*client)->Healthy());
}

// Destroying the client ends the health probe's wait at once, with the clock standing still.
TEST(GrpcPlannerClientTest, DestructionEndsTheProbeWaitAtOnce) {
  RefusingPort port;
  FakeClock clock;
  auto client = NewGrpcPlannerClient({.address = port.Address(), .health_probe = true, .clock = &clock});
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(clock.AwaitWaiters(1, kRealTimeBound));
  absl::Notification destroyed;
  std::thread destroyer([&] {
    client->reset();
    destroyed.Notify();
  });
  EXPECT_TRUE(destroyed.WaitForNotificationWithTimeout(kRealTimeBound)) << "destruction waited for the clock";
  clock.Advance(absl::Hours(1));  // releases the probe if destruction did not, so the test ends
  destroyer.join();
}

// Without the health probe (a one-shot caller) the client starts no thread: the only wait on the clock is the
// call's back-off, and the observer hears each attempt that found no planner.
TEST(GrpcPlannerClientTest, WithoutTheProbeOnlyCallsWaitAndReport) {
  RefusingPort port;
  FakeClock clock;
  RecordingObserver observer;
  auto client = NewGrpcPlannerClient({.address = port.Address(), .max_attempts = 2,
                                      .backoff = absl::Milliseconds(200), .observer = &observer, .clock = &clock});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(clock.waiters(), 0);
  absl::StatusOr<pb::PlanResponse> got;
  absl::Notification done;
  std::thread call([&] {
    got = (*client)->Plan(pb::PlanRequest());
    done.Notify();
  });
  ASSERT_TRUE(clock.AwaitWaiters(1, kRealTimeBound)) << "the call does not wait on the injected clock";
  EXPECT_EQ(clock.waiters(), 1) << "something besides the call waits: a probe thread?";
  clock.Advance(absl::Milliseconds(200));
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(kRealTimeBound));
  clock.Advance(absl::Hours(1));
  call.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable) << got.status();
  const std::vector<std::string> heard = observer.Heard();
  ASSERT_EQ(heard.size(), 2u) << "one report per attempt";
  for (const std::string& h : heard) EXPECT_TRUE(h.starts_with("unreachable: ")) << h;
}

// The probe reports its failed health check to the observer, naming it.
TEST(GrpcPlannerClientTest, TheProbeTellsTheObserverTheHealthCheckFailed) {
  RefusingPort port;
  FakeClock clock;
  RecordingObserver observer;
  auto client = NewGrpcPlannerClient(
      {.address = port.Address(), .health_probe = true, .observer = &observer, .clock = &clock});
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(clock.AwaitWaiters(1, kRealTimeBound));  // the probe checked once and waits for the next check
  const std::vector<std::string> heard = observer.Heard();
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_TRUE(heard[0].starts_with("unreachable: health check: ")) << heard[0];
  EXPECT_FALSE((*client)->Healthy());
}

// Without a kept table the pieces are the whole request, and an unreachable planner fails the call as Plan does.
TEST(GrpcPlannerClientTest, PlanBytesFailsAsPlanDoesWhenThePlannerIsDown) {
  RefusingPort port;
  auto client = NewGrpcPlannerClient({.address = port.Address(), .max_attempts = 1});
  ASSERT_TRUE(client.ok()) << client.status();
  planapi::RequestWithPods snapshot;
  absl::StatusOr<pb::PlanResponse> got = (*client)->PlanBytes(snapshot.request, snapshot.Serialize());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable) << got.status();
}

}  // namespace
}  // namespace cloneset::planner::client
