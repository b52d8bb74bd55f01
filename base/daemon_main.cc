#include "base/daemon_main.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/flag_usage.h"

ABSL_FLAG(std::string, log_level, "info", "Minimum log level: debug, info, warn or error.");
// The default is the program's own (DaemonSpec::shutdown_grace), set before parsing.
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(30),
          "On SIGTERM/SIGINT, how long stopping (the work in flight, releasing what the process holds) may take "
          "before the process exits anyway; match the pod's terminationGracePeriodSeconds (e.g. 30s, 1m).");

namespace cloneset::base {

namespace {
constexpr char kSharedFlagsFile[] = "base/daemon_main.cc";
}  // namespace

std::unique_ptr<ShutdownDeadline> Daemon::WaitForStop(absl::Duration slack) const {
  const int signal_number = signals_->Wait();
  log_->Info("shutting down", {{"signal", int64_t{signal_number}}});
  const absl::Duration limit = shutdown_grace_ + slack;
  return std::make_unique<ShutdownDeadline>(limit, ExitAfterGrace(limit));
}

absl::Status StartupError(absl::string_view what, const absl::Status& cause) {
  return absl::Status(cause.code(), absl::StrCat(what, ": ", cause.message()));
}

int StartupExitCode(const absl::Status& status) {
  return status.ok() ? 0 : 1;
}

absl::StatusOr<absl::Duration> ResolveShutdownGrace(absl::Duration grace, bool grace_given,
                                                    std::optional<int32_t> deprecated_seconds) {
  if (deprecated_seconds.has_value()) {
    if (*deprecated_seconds < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shutdown_grace_seconds: must not be negative, got ", *deprecated_seconds));
    }
    const absl::Duration from_seconds = absl::Seconds(*deprecated_seconds);
    if (grace_given && grace != from_seconds) {
      return absl::InvalidArgumentError(absl::StrCat("--shutdown_grace=", absl::FormatDuration(grace),
                                                     " and the deprecated --shutdown_grace_seconds=",
                                                     *deprecated_seconds, " disagree; give --shutdown_grace only"));
    }
    grace = from_seconds;
  }
  if (grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shutdown_grace: must not be negative, got ", absl::FormatDuration(grace)));
  }
  return grace;
}

std::vector<std::pair<std::string, std::string>> DashedSpellings(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : names) {
    if (name.find('_') == std::string::npos) continue;
    out.emplace_back(absl::StrReplaceAll(name, {{"_", "-"}}), name);
  }
  return out;
}

std::vector<std::string> OwnFlagDirs(const DaemonSpec& spec) {
  std::vector<std::string> dirs = spec.flag_dirs;
  dirs.push_back(kSharedFlagsFile);
  return dirs;
}

int DaemonMain(int argc, char** argv, const DaemonSpec& spec, const DaemonRun& run) {
  const std::vector<std::string> dirs = OwnFlagDirs(spec);
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [dirs](absl::string_view file) { return IsOwnFlagFile(file, dirs); };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(spec.usage);
  // Before --help, which prints the current values as the defaults.
  absl::SetFlag(&FLAGS_shutdown_grace, spec.shutdown_grace);
  if (PrintHelpIfAsked(argc, argv, spec.usage, dirs)) return 0;

  std::vector<std::pair<std::string, std::string>> dashed;
  if (spec.dashed_flags) {
    std::vector<std::string> names;
    for (const absl::CommandLineFlag* flag : OwnFlags(dirs)) names.push_back(std::string(flag->Name()));
    dashed = DashedSpellings(names);
  }
  std::vector<FlagAlias> aliases = spec.aliases;
  for (const auto& [from, to] : dashed) aliases.push_back({from, to});
  std::vector<std::string> args = RewriteFlagAliases(argc, argv, aliases);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(cargs.size()), cargs.data());

  LogOptions log_options = spec.log;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &log_options.min_level)) {
    const absl::Status bad = absl::InvalidArgumentError(
        absl::StrCat("--log_level: \"", absl::GetFlag(FLAGS_log_level), "\" is not debug, info, warn or error"));
    JsonLogger(spec.log).Error("startup failed", {{"error", std::string(bad.message())}});
    return StartupExitCode(bad);
  }
  // Never freed: threads of the run function that outlive it (detached ones, a deadline's) may still log.
  auto* log = new JsonLogger(log_options);
  SetProcessLogger(log);

  std::optional<int32_t> deprecated_seconds;
  if (spec.shutdown_grace_seconds != nullptr) deprecated_seconds = absl::GetFlag(*spec.shutdown_grace_seconds);
  // absl tells no flag given on the command line from one left at its default: a --shutdown_grace other than
  // the program's default counts as given.
  const absl::Duration grace_flag = absl::GetFlag(FLAGS_shutdown_grace);
  const absl::StatusOr<absl::Duration> grace =
      ResolveShutdownGrace(grace_flag, grace_flag != spec.shutdown_grace, deprecated_seconds);
  if (!grace.ok()) {
    log->Error("startup failed", {{"error", std::string(grace.status().message())}});
    return StartupExitCode(grace.status());
  }
  if (deprecated_seconds.has_value()) {
    log->Warn("--shutdown_grace_seconds is deprecated: use --shutdown_grace",
              {{"shutdown_grace", absl::FormatDuration(*grace)}});
  }

  // Before the run function starts any thread: threads inherit the mask, so the signals wait for WaitForStop.
  const StopSignals signals = StopSignals::Block();
  const Daemon daemon(log, &signals, *grace);
  const absl::Status status = run(daemon);
  if (!status.ok()) log->Error("startup failed", {{"error", std::string(status.message())}});
  return StartupExitCode(status);
}

}  // namespace cloneset::base
