// The one entry routine of the project's daemons (cloneset-planner, cloneset-executor, cloneset-agent,
// cloneset-devcluster): each main declares a DaemonSpec and its run function, and DaemonMain does what they all
// need the same way:
//   * --help (and -h, --helpfull, --helpshort): the usage and the program's own flags on stdout, exit 0
//     (flag_usage.h); absl's --helpon/--helpmatch see the same flags;
//   * other spellings of flags (upstream's dashed names, flag_aliases.h), rewritten before absl parses;
//   * the flags every daemon has, defined here once: --log_level and --shutdown_grace (an absl::Duration; the
//     planner's old --shutdown_grace_seconds stays as a deprecated alias, ResolveShutdownGrace);
//   * the process logger (log.h) at --log_level;
//   * SIGTERM and SIGINT blocked before the run function starts any thread (signals.h), taken by WaitForStop;
//   * one way to fail at start: the run function returns a Status, written as one JSON log line, exit code 1 (as
//     absl's own parser exits on an unknown flag or a value that does not parse: one code for "did not start").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/flag_aliases.h"
#include "base/log.h"
#include "base/signals.h"

ABSL_DECLARE_FLAG(std::string, log_level);
ABSL_DECLARE_FLAG(absl::Duration, shutdown_grace);

namespace cloneset::base {

// What a daemon declares about itself.
struct DaemonSpec {
  // What --help prints first: what the program does, then "Usage: ...".
  std::string usage;
  // Source folders whose flags are the program's own ("planner/service", "executor/"); the shared flags of
  // base/daemon_main.cc are added. Only these are listed by --help.
  std::vector<std::string> flag_dirs;
  // Other spellings of the program's flags ({"feature-gates", "feature_gates"}).
  std::vector<FlagAlias> aliases;
  // Every own flag is also accepted with dashes for its underscores (--data-dir for --data_dir).
  bool dashed_flags = false;
  // The process logger's options; min_level comes from --log_level.
  LogOptions log;
  // --shutdown_grace's default for this program (its Deployment's or DaemonSet's terminationGracePeriodSeconds).
  absl::Duration shutdown_grace = absl::Seconds(30);
  // The deprecated --shutdown_grace_seconds, for the program that had it (the planner), defined beside its main;
  // null for the others.
  const absl::Flag<std::optional<int32_t>>* shutdown_grace_seconds = nullptr;
};

// What the run function gets.
class Daemon {
 public:
  Daemon(JsonLogger* log, const StopSignals* signals, absl::Duration shutdown_grace)
      : log_(log), signals_(signals), shutdown_grace_(shutdown_grace) {}

  JsonLogger& log() const { return *log_; }
  // --shutdown_grace, the deprecated alias resolved.
  absl::Duration shutdown_grace() const { return shutdown_grace_; }
  // Waits for SIGTERM or SIGINT, logs "shutting down" with its number and arms a deadline of shutdown_grace() plus
  // `slack`: past it the process exits 1 with a reason in the log (signals.h). Disarm it once stopped.
  std::unique_ptr<ShutdownDeadline> WaitForStop(absl::Duration slack = absl::ZeroDuration()) const;

 private:
  JsonLogger* log_;
  const StopSignals* signals_;
  absl::Duration shutdown_grace_;
};

// The daemon's work, from start-up to a finished stop: OK, or why it could not start.
using DaemonRun = std::function<absl::Status(const Daemon&)>;

// The whole main: `return base::DaemonMain(argc, argv, spec, Run);`.
int DaemonMain(int argc, char** argv, const DaemonSpec& spec, const DaemonRun& run);

// Why a daemon cannot start: "<what>: <cause's message>", with the cause's code.
absl::Status StartupError(absl::string_view what, const absl::Status& cause);

// The pure parts, tested on their own.

// main's exit code for the run function's result: 0 when it is OK, 1 otherwise.
int StartupExitCode(const absl::Status& status);

// The grace period from --shutdown_grace (`grace`; `grace_given` when it is not the program's default) and the
// deprecated --shutdown_grace_seconds: the deprecated one counts when given alone; both given must agree. A
// negative value is an InvalidArgument naming the flag.
absl::StatusOr<absl::Duration> ResolveShutdownGrace(absl::Duration grace, bool grace_given,
                                                    std::optional<int32_t> deprecated_seconds);

// {"data-dir", "data_dir"} for every name holding an underscore.
std::vector<std::pair<std::string, std::string>> DashedSpellings(const std::vector<std::string>& names);

// spec.flag_dirs and the file that defines the shared flags.
std::vector<std::string> OwnFlagDirs(const DaemonSpec& spec);

}  // namespace cloneset::base
