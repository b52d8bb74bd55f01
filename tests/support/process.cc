#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/time/clock.h"

namespace cloneset::testing {

bool Process::Start(const std::vector<std::string>& argv, const std::string& log_path) {
  log_path_ = log_path;
  pid_ = fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    setpgid(0, 0);
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    if (fd > 2) close(fd);
    if (null > 2) close(null);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return true;
}

bool Process::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  return waitpid(pid_, &status, WNOHANG) == 0;
}

int Process::WaitExit(absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 || absl::Now() > deadline) return -1;
    absl::SleepFor(absl::Milliseconds(20));
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int Process::Stop(absl::Duration grace) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || r < 0) break;
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Process::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Process::WaitForAddress(const std::string& prefix, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::istringstream lines(Log());
    std::string line;
    while (std::getline(lines, line)) {
      auto pos = line.find(prefix + " ");
      if (pos == std::string::npos) continue;
      std::string addr = line.substr(pos + prefix.size() + 1);
      addr = addr.substr(0, addr.find_first_of(" \t\""));
      if (auto s = addr.find("://"); s != std::string::npos) addr = addr.substr(s + 3);
      return addr;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return "";
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         const std::string& input) {
  CommandResult result;
  int out_pipe[2], in_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(in_pipe) != 0) return result;
  char err_path[] = "/tmp/cmd-stderr-XXXXXX";
  int err_fd = mkstemp(err_path);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_fd, 2);
    // Only 0, 1 and 2 may stay open: a daemon the command leaves running (`./run up` starts the real control plane)
    // would otherwise inherit the pipe's write end, and the read below would wait for that daemon to exit.
    for (int fd : {out_pipe[0], out_pipe[1], in_pipe[0], in_pipe[1], err_fd}) {
      if (fd > 2) close(fd);
    }
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(in_pipe[0]);
  if (!input.empty()) (void)!write(in_pipe[1], input.data(), input.size());
  close(in_pipe[1]);
  char buf[65536];
  ssize_t n;
  while ((n = read(out_pipe[0], buf, sizeof(buf))) > 0) result.output.append(buf, n);
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (result.exit_code != 0) {
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    result.output += "\n--- stderr ---\n" + ss.str();
  }
  close(err_fd);
  unlink(err_path);
  return result;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/executor-e2e-XXXXXX";
  path_ = mkdtemp(tmpl);
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cloneset::testing
