#include "tools/demo/demo.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace cloneset::demo {
namespace {

TEST(WritesFromTest, CountsWriteVerbsOfTheGivenAgents) {
  const std::string metrics = R"(# HELP apiserver_request_total API requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="pods",user_agent="cloneset-executor",verb="create"} 5
apiserver_request_total{code="200",resource="pods",user_agent="cloneset-executor",verb="get"} 70
apiserver_request_total{code="409",resource="pods",user_agent="cloneset-executor",verb="patch"} 2
apiserver_request_total{code="200",resource="pods",user_agent="cloneset-executor",verb="delete"} 3
apiserver_request_total{code="200",resource="clonesets",user_agent="kubectl",verb="patch"} 4
apiserver_request_total{code="200",resource="leases",user_agent="cloneset-executor",verb="update"} 30
apiserver_request_total{code="201",resource="events",user_agent="cloneset-executor",verb="create"} 8
apiserver_request_total{code="200",resource="pods",user_agent="cloneset-executor/v1",verb="update"} 1
apiserver_request_duration_seconds_count{user_agent="cloneset-executor",verb="create"} 9
)";
  EXPECT_EQ(WritesFrom(metrics, {"cloneset-executor"}), 11);
  EXPECT_EQ(WritesFrom(metrics, {"kubectl"}), 4);
  EXPECT_EQ(WritesFrom(metrics, {"nobody"}), 0);
  EXPECT_EQ(WritesFrom("", {"cloneset-executor"}), 0);
}

// The argv bash makes of `command` with kubectl standing for a function that prints its arguments, NUL-separated.
std::vector<std::string> ArgvFromBash(const std::string& command) {
  const std::string script = "kubectl() { printf '%s\\0' kubectl \"$@\"; }; " + command;
  // The script reaches bash -c in single quotes of the test's own, independent of the ShellCommand under test.
  std::string quoted = "'";
  for (char c : script) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const std::string line = "bash --norc -c " + quoted;
  FILE* p = popen(line.c_str(), "r");
  if (p == nullptr) return {"popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) return {"bash failed: " + out};
  std::vector<std::string> argv = absl::StrSplit(out, '\0');
  if (!argv.empty() && argv.back().empty()) argv.pop_back();
  return argv;
}

TEST(ShellCommandTest, EveryDemoCommandPastedIntoBashIsTheArgvItRuns) {
  const std::vector<std::vector<std::string>> commands = {
      DemoApplyArgs("/home/me/clone set/tests/data/seed000/cloneset.yaml"),
      DemoReplicasArgs(5),
      DemoCanaryArgs(3, "my-registry/video-transcoder:v1.2.1"),
      DemoPartitionArgs(0),
      DemoPodsToDeleteArgs(4, "video-transcoder-x7k2p"),
      DemoReplicasArgs(2),
      {"get", "pvc", "workspace-video-transcoder-x7k2p", "-o", "name"},
      // Shell metacharacters of every kind, and an argument that is a single quote.
      {"label", "pod", "a*b", "x=$(id)", "'", "it's", "{a,b}", "~", "", "back\\slash", "tab\there", "!", "#c"},
  };
  for (const std::vector<std::string>& args : commands) {
    std::vector<std::string> argv = {"kubectl"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string printed = ShellCommand(argv);
    EXPECT_EQ(ArgvFromBash(printed), argv) << printed;
  }
}

TEST(ShellCommandTest, JsonIsQuotedAndPlainWordsAreNot) {
  EXPECT_EQ(ShellCommand({"kubectl"}), "kubectl");
  EXPECT_EQ(ShellCommand(DemoReplicasArgs(5)),
            R"(patch cloneset video-transcoder --type=merge -p '{"spec":{"replicas":5}}')");
  EXPECT_EQ(ShellCommand({"it's"}), R"('it'\''s')");
  EXPECT_EQ(ShellCommand({""}), "''");
}

}  // namespace
}  // namespace cloneset::demo
