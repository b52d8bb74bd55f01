// RunCommand returns when the command exits, even when it leaves a daemon running with its output redirected (as
// `./run up` leaves the real control plane): no descriptor of the output pipe may leak into the daemon.
#include "tests/support/process.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace cloneset::testing {
namespace {

TEST(RunCommand, ReturnsWhileADaemonItStartedKeepsRunning) {
  const absl::Time start = absl::Now();
  // The daemon's stdout and stderr go elsewhere, as `./run up`'s components' do; it runs for 20 s.
  auto r = RunCommand({"/bin/sh", "-c", "sleep 20 >/dev/null 2>&1 </dev/null & echo $!; echo started"}, {});
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("started"), std::string::npos) << r.output;
  EXPECT_LT(took, absl::Seconds(10)) << "RunCommand waited for the daemon";
  const std::string pid = r.output.substr(0, r.output.find('\n'));
  RunCommand({"kill", pid}, {});
}

TEST(RunCommand, PassesInputAndEnvironment) {
  auto r = RunCommand({"/bin/sh", "-c", "cat; echo \" $GREETING\""}, {{"GREETING", "hello"}}, "input");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "input hello\n");
}

}  // namespace
}  // namespace cloneset::testing
