#include "tests/support/stack.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace cloneset::testing {
namespace {

// The binary to start: $CLONESET_<NAME>_BIN if set, else the one this build made.
std::string Bin(const char* env, const char* built) {
  const char* v = std::getenv(env);
  return v != nullptr && *v != '\0' ? v : built;
}

std::string Tail(const std::string& s, size_t n) { return s.substr(s.size() > n ? s.size() - n : 0); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::string BackendFromEnv(Backend* backend) {
  const char* v = std::getenv("CLONESET_E2E_BACKEND");
  const std::string name = v == nullptr ? "" : v;
  if (name.empty() || name == "embedded") {
    *backend = Backend::kEmbedded;
  } else if (name == "real") {
    *backend = Backend::kReal;
  } else {
    return "CLONESET_E2E_BACKEND must be 'embedded' or 'real', got '" + name + "'";
  }
  return "";
}

bool Poll(const std::function<bool()>& f, absl::Duration timeout, absl::Duration every) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (f()) return true;
    absl::SleepFor(every);
  }
  return f();
}

bool IsReady(const json& pod) {
  for (const auto& c : pod.value("status", json::object()).value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

std::vector<json> ReadJsonValues(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  try {
    while (in >> std::ws && in.peek() != EOF) {
      json j;
      in >> j;
      out.push_back(std::move(j));
    }
  } catch (const json::exception&) {
    // A value cut off by the stop: the values before it are complete.
  }
  return out;
}

std::string Stack::Start(const StackOptions& options) {
  if (std::string err = BackendFromEnv(&backend_); !err.empty()) return err;
  env_ = {{"KUBECACHEDIR", dir_.path() + "/kubecache"}, {"HOME", dir_.path()}};
  if (real()) {
    if (std::string err = StartReal(options); !err.empty()) return err;
  } else {
    kubeconfig_ = dir_.path() + "/kubeconfig";
    executor_kubeconfig_ = kubeconfig_;
    std::vector<std::string> argv = {Bin("CLONESET_DEVCLUSTER_BIN", DEVCLUSTER_BIN), "--listen=127.0.0.1:0",
                                     "--kubeconfig=" + kubeconfig_, "--nodes=3",
                                     "--pod_ready_delay=" + options.pod_ready_delay,
                                     "--pod_start_delay=" + options.pod_start_delay, "--pod_max_grace=1s"};
    argv.insert(argv.end(), options.devcluster_flags.begin(), options.devcluster_flags.end());
    if (!devcluster_.Start(argv, dir_.path() + "/devcluster.log")) return "cannot start devcluster";
    if (devcluster_.WaitForAddress("listening on", absl::Seconds(30)).empty()) {
      return "devcluster: " + devcluster_.Log();
    }
  }
  env_["KUBECONFIG"] = kubeconfig_;
  if (!Poll([&] { return Kubectl({"get", "--raw", "/healthz"}).exit_code == 0; }, absl::Seconds(20))) {
    return "API server not healthy";
  }
  if (std::string err = StartPlanner(); !err.empty()) return err;
  // On the real backend `./run up` applied the CRD and pointed its conversion at the run's webhook by URL; the file
  // names the chart's Service instead, and applying it again would ask for both.
  if (!real()) {
    auto crd = Kubectl({"apply", "-f", std::string(SOURCE_DIR) + "/charts/cloneset/files/crds/clonesets.apps.kruise.io.yaml"});
    if (crd.exit_code != 0) return "CRD: " + crd.output;
  }
  if (!Poll([&] { return Kubectl({"get", "clonesets"}).exit_code == 0; }, absl::Seconds(20))) return "CRD not served";
  // `apply` rather than `create namespace`: the embedded cluster takes JSON/YAML bodies only (no protobuf).
  auto setup = Kubectl({"apply", "-f", "-"}, options.setup_yaml +
                                                 "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloneset-system\n");
  if (setup.exit_code != 0) return "setup: " + setup.output;
  // Pods of the default namespace (the clonesetctl suites use it) need its ServiceAccount on the real backend.
  if (real()) return CreateNamespace("default");
  return "";
}

// `./run up --cluster real` with nothing of ours: the planner and executors are started here as on the embedded
// backend (with flags and identities per test), so only the cluster differs between the backends.
std::string Stack::StartReal(const StackOptions& options) {
  if (!options.devcluster_flags.empty()) {
    return "the devcluster flags " + absl::StrJoin(options.devcluster_flags, " ") +
           " need the embedded backend (CLONESET_E2E_BACKEND=embedded); this test must not be registered for real";
  }
  if (const char* shared = std::getenv("CLONESET_E2E_REAL_RUN_DIR"); shared != nullptr && *shared != '\0') {
    shared_run_dir_ = shared;
    kubeconfig_ = shared_run_dir_ + "/kubeconfig";
    if (!std::filesystem::exists(kubeconfig_)) {
      const std::string err = "CLONESET_E2E_REAL_RUN_DIR=" + shared_run_dir_ +
                              ": no control plane there (no kubeconfig); ctest starts it in real.control_plane_up";
      shared_run_dir_.clear();
      return err;
    }
    const std::string executor = shared_run_dir_ + "/kubeconfig-executor";
    executor_kubeconfig_ = std::filesystem::exists(executor) ? executor : kubeconfig_;
    // A test before this one that died without Stop may have left objects behind.
    return ResetShared();
  }
  run_dir_ = dir_.path() + "/run";
  const std::map<std::string, std::string> run_env = {{"RUN_DIR", run_dir_}, {"BUILD_DIR", BUILD_DIR}};
  // A test killed by its ctest timeout never reaches Stop, and the control plane runs in sessions of its own: this
  // guard outlives the test process and takes the cluster down after it.
  std::string env_args;
  for (const auto& [k, v] : run_env) absl::StrAppend(&env_args, " ", k, "='", v, "'");
  if (!reaper_.Start({"/bin/sh", "-c",
                      absl::StrCat("trap '' HUP INT; while kill -0 ", getpid(), " 2>/dev/null; do sleep 1; done; env",
                                   env_args, " '", SOURCE_DIR, "/run' down --purge; rm -rf '", dir_.path(), "'")},
                     dir_.path() + "/reaper.log")) {
    return "cannot start the reaper of the real cluster";
  }
  auto up = RunCommand({std::string(SOURCE_DIR) + "/run", "up", "--cluster", "real", "--executors", "0", "--planners",
                        "0", "--no-agents"},
                       run_env);
  std::ofstream(dir_.path() + "/up.log") << up.output;
  if (up.exit_code != 0) return "./run up --cluster real --executors 0 --planners 0 --no-agents: " + Tail(up.output, 4000);
  kubeconfig_ = run_dir_ + "/kubeconfig";
  const std::string executor = run_dir_ + "/kubeconfig-executor";
  executor_kubeconfig_ = std::filesystem::exists(executor) ? executor : kubeconfig_;
  return "";
}

std::string Stack::ResetShared() const {
  auto r = RunCommand({std::string(SOURCE_DIR) + "/tests/real/shared_control_plane.sh", "reset", shared_run_dir_}, {});
  std::ofstream(dir_.path() + "/reset.log", std::ios::app) << r.output;
  if (r.exit_code != 0) return "resetting the shared control plane in " + shared_run_dir_ + ": " + Tail(r.output, 4000);
  return "";
}

std::string Stack::CreateNamespace(const std::string& ns) const {
  auto r = Kubectl({"apply", "-f", "-"}, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n");
  if (r.exit_code != 0) return "namespace " + ns + ": " + r.output;
  if (real() && !Poll([&] { return Kubectl({"get", "serviceaccount", "default", "-n", ns}).exit_code == 0; },
                      absl::Seconds(30))) {
    return "namespace " + ns + ": no ServiceAccount default after 30 s (kube-controller-manager)";
  }
  return "";
}

std::string Stack::RestartControlPlane(const std::string& component, bool kill) const {
  const std::string run_dir = shared_run_dir_.empty() ? run_dir_ : shared_run_dir_;
  if (!real() || run_dir.empty()) return "restarting " + component + ": needs the real backend's control plane";
  std::vector<std::string> argv = {std::string(SOURCE_DIR) + "/run", "restart", "--cluster", "real"};
  if (kill) argv.push_back("--kill");
  argv.push_back(component);
  auto r = RunCommand(argv, {{"RUN_DIR", run_dir}, {"BUILD_DIR", BUILD_DIR}});
  std::ofstream(dir_.path() + "/restart.log", std::ios::app) << r.output;
  if (r.exit_code != 0) return absl::StrCat("./run restart --cluster real ", component, ": ", Tail(r.output, 4000));
  return "";
}

std::string Stack::DevclusterLog() const {
  if (!real()) return devcluster_.Log();
  std::string out;
  for (const char* c : {"kube-apiserver", "kube-controller-manager", "kwok"}) {
    absl::StrAppend(&out, "--- ", c, " (tail) ---\n", Tail(ReadFile(run_dir_ + "/" + c + ".log"), 3000));
  }
  return out;
}

void Stack::Stop(absl::Duration grace) {
  for (auto& [_, p] : executors_) p->Stop(grace);
  planner_.Stop(grace);
  devcluster_.Stop(grace);
  if (!run_dir_.empty()) {
    auto down = RunCommand({std::string(SOURCE_DIR) + "/run", "down", "--purge"},
                           {{"RUN_DIR", run_dir_}, {"BUILD_DIR", BUILD_DIR}});
    if (down.exit_code != 0) std::ofstream(dir_.path() + "/down.log") << down.output;
    run_dir_.clear();
  }
  if (!shared_run_dir_.empty()) {
    // Left as found for the next test; a failure here fails that test's Start (it resets again and says what).
    ResetShared();
    shared_run_dir_.clear();
  }
  reaper_.Stop(absl::Seconds(1));
}

std::string Stack::StartPlanner() {
  const std::string listen = planner_addr_.empty() ? "127.0.0.1:0" : planner_addr_;
  const std::string log = absl::StrCat(dir_.path(), "/planner-", ++planner_starts_, ".log");
  if (!planner_.Start({Bin("CLONESET_PLANNER_BIN", PLANNER_BIN), "--listen=" + listen, "--metrics_listen=127.0.0.1:0"},
                      log)) {
    return "cannot start planner";
  }
  const std::string addr = planner_.WaitForAddress("listening on", absl::Seconds(20));
  if (addr.empty()) return "planner: " + planner_.Log();
  planner_addr_ = addr;
  return "";
}

void Stack::KillPlanner() {
  kill(planner_.pid(), SIGKILL);
  planner_.Stop(absl::ZeroDuration());
}

std::vector<std::string> Stack::ExecutorArgv(const std::string& identity, const ExecutorOptions& options) const {
  const std::string& kubeconfig = options.kubeconfig.empty() ? executor_kubeconfig_ : options.kubeconfig;
  std::vector<std::string> argv = {Bin("CLONESET_EXECUTOR_BIN", EXECUTOR_BIN), "--kubeconfig=" + kubeconfig,
                                   "--planner_address=ipv4:" + planner_addr_, "--metrics_listen=127.0.0.1:0",
                                   "--health_listen=127.0.0.1:0", "--identity=" + identity};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  return argv;
}

std::string Stack::StartExecutor(const std::string& identity, const ExecutorOptions& options) {
  auto& p = executors_[identity];
  if (!p) p = std::make_unique<Process>();
  const std::string log = absl::StrCat(dir_.path(), "/executor-", identity, "-", ++executor_starts_[identity], ".log");
  if (!p->Start(ExecutorArgv(identity, options), log)) return "cannot start executor " + identity;
  const std::string health = p->WaitForAddress("listening on", absl::Seconds(20));
  if (health.empty()) return "executor: " + p->Log();
  health_[identity] = health;
  if (options.wait_ready &&
      !Poll([&] { return RunCommand({"curl", "-sf", "http://" + health + "/readyz"}, {}).exit_code == 0; },
            absl::Seconds(30))) {
    return "executor not ready: " + p->Log();
  }
  return "";
}

CommandResult Stack::RunExecutorToExit(const std::string& identity, const ExecutorOptions& options,
                                       absl::Duration timeout) {
  auto& p = executors_[identity];
  if (!p) p = std::make_unique<Process>();
  const std::string log = absl::StrCat(dir_.path(), "/executor-", identity, "-", ++executor_starts_[identity], ".log");
  CommandResult r;
  if (!p->Start(ExecutorArgv(identity, options), log)) return r;
  r.exit_code = p->WaitExit(timeout);
  if (r.exit_code == -1) p->Stop(absl::Seconds(5));
  r.output = p->Log();
  return r;
}

void Stack::KillExecutor(const std::string& identity) {
  auto& p = executors_.at(identity);
  kill(p->pid(), SIGKILL);
  p->Stop(absl::ZeroDuration());
}

void Stack::StopExecutor(const std::string& identity, absl::Duration grace) {
  auto it = executors_.find(identity);
  if (it != executors_.end()) it->second->Stop(grace);
}

bool Stack::ExecutorRunning(const std::string& identity) {
  auto it = executors_.find(identity);
  return it != executors_.end() && it->second->Running();
}

std::string Stack::ExecutorLog(const std::string& identity) const {
  auto it = executors_.find(identity);
  return it == executors_.end() ? "" : it->second->Log();
}

std::string Stack::ExecutorLogTails(size_t max_chars) const {
  std::string out;
  for (const auto& [id, p] : executors_) {
    const std::string log = p->Log();
    absl::StrAppend(&out, "--- executor ", id, " (tail) ---\n",
                    log.substr(log.size() > max_chars ? log.size() - max_chars : 0));
  }
  return out;
}

CommandResult Stack::Kubectl(std::vector<std::string> args, const std::string& input) const {
  args.insert(args.begin(), "kubectl");
  return RunCommand(args, env_, input);
}

json Stack::GetJson(std::vector<std::string> args) const {
  args.insert(args.begin(), "get");
  args.insert(args.end(), {"-o", "json"});
  auto r = Kubectl(args);
  if (r.exit_code != 0) return json::object();
  json j = json::parse(r.output, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

bool Stack::StartKubectl(Process& process, const std::vector<std::string>& args, const std::string& out_path) const {
  // Through env and sh: the environment is the stack's, and kubectl's stderr must not land in the JSON output.
  std::vector<std::string> argv = {"/usr/bin/env"};
  for (const auto& [k, v] : env_) argv.push_back(k + "=" + v);
  for (const char* a : {"/bin/sh", "-c", "exec kubectl \"$@\" 2>/dev/null", "kubectl"}) argv.push_back(a);
  argv.insert(argv.end(), args.begin(), args.end());
  return process.Start(argv, out_path);
}

}  // namespace cloneset::testing
