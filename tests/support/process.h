// Test helpers: child processes with their output in a log file, and kubectl runs.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace cloneset::testing {

class Process {
 public:
  Process() = default;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() { Stop(); }

  // Starts `argv` with stdout+stderr appended to `log_path`.
  bool Start(const std::vector<std::string>& argv, const std::string& log_path);
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status (or -1).
  int Stop(absl::Duration grace = absl::Seconds(15));
  bool Running();
  // Waits up to `timeout` for the process to exit by itself and returns its exit code (128 + the signal when a
  // signal ended it), or -1 when it still runs then (it is left running).
  int WaitExit(absl::Duration timeout);
  // Waits until the log contains "<prefix> <addr>" and returns addr without a scheme ("" on timeout).
  std::string WaitForAddress(const std::string& prefix, absl::Duration timeout);
  std::string Log() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout (stderr appended after a marker when the command failed)
};
// Runs argv with extra environment variables; stdin from `input` if not empty.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         const std::string& input = "");

// A fresh temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace cloneset::testing
