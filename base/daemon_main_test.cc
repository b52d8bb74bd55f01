#include "base/daemon_main.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "base/flag_usage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// A flag of this test's own folder, to see which flags --help lists.
ABSL_FLAG(int32_t, daemon_main_test_workers, 4, "Workers of the test daemon");

namespace cloneset::base {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Which files' flags are a program's own: its folders, matched at a path component, never absl's.
TEST(FlagUsageTest, OwnFlagFiles) {
  struct Case {
    std::string file;
    std::vector<std::string> dirs;
    bool own;
  };
  const std::vector<std::string> executor = {"executor/", "base/daemon_main.cc"};
  for (const Case& c : std::vector<Case>{
           {"/src/executor/main.cc", executor, true},
           {"executor/main.cc", executor, true},
           {"/src/base/daemon_main.cc", executor, true},
           {"/src/imagepull_executor/main.cc", executor, false},
           {"/src/tests/fault_proxy/main.cc", executor, false},
           {"/src/planner/service/main.cc", {"planner/service"}, true},
           {"/src/planner/core.cc", {"planner/service"}, false},
           {"/usr/include/absl/flags/parse.cc", {}, false},
           {"/src/tests/fault_proxy/main.cc", {}, true},
           {"/usr/include/absl/flags/parse.cc", {"absl/flags"}, false},
       }) {
    SCOPED_TRACE(c.file);
    EXPECT_EQ(IsOwnFlagFile(c.file, c.dirs), c.own);
  }
}

// --help lists the program's own flags, sorted, with the shared ones of base/daemon_main.cc, and never absl's.
TEST(FlagUsageTest, HelpListsOwnFlagsOnly) {
  DaemonSpec spec{.usage = "test-daemon: does nothing.\nUsage: test-daemon", .flag_dirs = {"base/daemon_main_test.cc"}};
  const std::string help = HelpText(spec.usage, OwnFlags(OwnFlagDirs(spec)));
  EXPECT_TRUE(absl::StartsWith(help, "test-daemon: does nothing.\nUsage: test-daemon\n\nFlags:\n")) << help;
  EXPECT_THAT(help, ::testing::HasSubstr("  --daemon_main_test_workers=4\n      Workers of the test daemon\n"));
  EXPECT_THAT(help, ::testing::HasSubstr("  --log_level=info\n"));
  EXPECT_THAT(help, ::testing::HasSubstr("  --shutdown_grace="));
  EXPECT_THAT(help, ::testing::Not(::testing::HasSubstr("--flagfile")));
  EXPECT_THAT(help, ::testing::Not(::testing::HasSubstr("--helpfull")));
  EXPECT_LT(help.find("--daemon_main_test_workers"), help.find("--log_level"));
  EXPECT_LT(help.find("--log_level"), help.find("--shutdown_grace"));
}

// The value --help shows is the one the program set before parsing: a daemon's own default of a shared flag.
TEST(FlagUsageTest, HelpShowsTheProgramsDefault) {
  const absl::Duration before = absl::GetFlag(FLAGS_shutdown_grace);
  absl::SetFlag(&FLAGS_shutdown_grace, absl::Seconds(5));
  const std::string help = HelpText("u", OwnFlags({"base/daemon_main.cc"}));
  absl::SetFlag(&FLAGS_shutdown_grace, before);
  EXPECT_THAT(help, ::testing::HasSubstr("  --shutdown_grace=5s\n")) << help;
}

TEST(FlagUsageTest, AsksForHelp) {
  struct Case {
    std::vector<std::string> args;
    bool help;
  };
  for (const Case& c : std::vector<Case>{{{"d", "--help"}, true},
                                         {{"d", "-h"}, true},
                                         {{"d", "--listen=x", "--helpfull"}, true},
                                         {{"d", "--helpshort"}, true},
                                         {{"d", "--", "--help"}, false},
                                         {{"d", "--helpmatch=x"}, false},
                                         {{"d"}, false}}) {
    std::vector<char*> argv;
    for (std::string& a : const_cast<std::vector<std::string>&>(c.args)) argv.push_back(a.data());
    EXPECT_EQ(AsksForHelp(static_cast<int>(argv.size()), argv.data()), c.help) << c.args.back();
  }
}

// --shutdown_grace and the planner's deprecated --shutdown_grace_seconds: the old one alone still works, both must
// agree, and negative values are refused naming the flag.
TEST(ResolveShutdownGraceTest, DeprecatedSecondsAlias) {
  struct Case {
    std::string name;
    absl::Duration grace;
    bool grace_given;
    std::optional<int32_t> seconds;
    absl::StatusOr<absl::Duration> want;
  };
  const auto bad = [](const char* text) { return absl::StatusOr<absl::Duration>(absl::InvalidArgumentError(text)); };
  for (const Case& c : std::vector<Case>{
           {"default", absl::Seconds(5), false, std::nullopt, absl::Seconds(5)},
           {"new flag", absl::Seconds(12), true, std::nullopt, absl::Seconds(12)},
           {"old flag alone", absl::Seconds(5), false, 20, absl::Seconds(20)},
           {"old flag zero", absl::Seconds(5), false, 0, absl::ZeroDuration()},
           {"both agree", absl::Seconds(20), true, 20, absl::Seconds(20)},
           {"both disagree", absl::Seconds(7), true, 20, bad("--shutdown_grace=7s and the deprecated")},
           {"old negative", absl::Seconds(5), false, -1, bad("--shutdown_grace_seconds: must not be negative")},
           {"new negative", absl::Seconds(-3), true, std::nullopt, bad("--shutdown_grace: must not be negative")},
       }) {
    SCOPED_TRACE(c.name);
    const absl::StatusOr<absl::Duration> got = ResolveShutdownGrace(c.grace, c.grace_given, c.seconds);
    if (c.want.ok()) {
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, *c.want);
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr(std::string(c.want.status().message())));
    }
  }
}

TEST(DaemonMainTest, StartupExitCodes) {
  EXPECT_EQ(StartupExitCode(absl::OkStatus()), 0);
  EXPECT_EQ(StartupExitCode(absl::InvalidArgumentError("--shards must be >= 1")), 1);
  EXPECT_EQ(StartupExitCode(absl::UnavailableError("cannot serve metrics")), 1);
  EXPECT_EQ(StartupExitCode(absl::InternalError("x")), 1);
}

TEST(DaemonMainTest, DashedSpellings) {
  EXPECT_THAT(DashedSpellings({"data_dir", "listen", "fault_watch_drop_after"}),
              ElementsAre(Pair("data-dir", "data_dir"), Pair("fault-watch-drop-after", "fault_watch_drop_after")));
}

}  // namespace
}  // namespace cloneset::base
