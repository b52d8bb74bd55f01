// cloneset-fault-proxy: the fault-injecting proxy of the executor fault suite on the real control plane
// (tests/fault_proxy/fault_proxy.h). Reads the API server's address and CA from --kubeconfig, writes the same
// kubeconfig pointed at itself to --kubeconfig_out, prints "listening on http://127.0.0.1:PORT" and serves until
// SIGTERM or SIGINT. The --fault_* flags are the embedded cluster's, with the same meaning.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/flag_usage.h"
#include "kube/config.h"
#include "tests/fault_proxy/fault_proxy.h"

ABSL_FLAG(std::string, kubeconfig, "", "The API server to forward to: its kubeconfig (server and CA are used)");
ABSL_FLAG(std::string, kubeconfig_out, "",
          "Write --kubeconfig pointed at this proxy here (mode 600): the clients' credentials, the proxy's address");
ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to serve plain HTTP on (port 0 = any free port)");
ABSL_FLAG(bool, log_requests, false, "Log every request as a JSON line on stderr");
ABSL_FLAG(int, threads, 128, "HTTP worker threads; every open watch holds one");
ABSL_FLAG(double, fault_conflict_rate, 0, "Share of writes answered 409 Conflict, not forwarded (0 = off)");
ABSL_FLAG(double, fault_error_rate, 0,
          "Share of writes answered 500: half before forwarding, half after the API server committed them (0 = off)");
ABSL_FLAG(absl::Duration, fault_watch_drop_after, absl::ZeroDuration(),
          "Cut each watch after uniform[d/2, d] (0 = never)");
ABSL_FLAG(absl::Duration, fault_delay_max, absl::ZeroDuration(),
          "Hold each request for uniform[0, d] before forwarding it (0 = never)");
ABSL_FLAG(std::string, fault_user_agent, "",
          "Inject faults only for this client (first User-Agent token, e.g. cloneset-executor); empty = all");
ABSL_FLAG(uint64_t, fault_seed, 1, "Seed of the fault decisions");

namespace {

int Fail(const std::string& what) {
  std::cerr << "cloneset-fault-proxy: " << what << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "cloneset-fault-proxy --kubeconfig=FILE --kubeconfig_out=FILE [--fault_...]: a fault-injecting proxy in "
      "front of a Kubernetes API server, for fault tests";
  if (cloneset::base::PrintHelpIfAsked(argc, argv, kUsage)) return 0;
  absl::SetProgramUsageMessage(kUsage);
  absl::ParseCommandLine(argc, argv);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts; main waits with sigwait
  signal(SIGPIPE, SIG_IGN);

  const std::string in = absl::GetFlag(FLAGS_kubeconfig), out = absl::GetFlag(FLAGS_kubeconfig_out);
  if (in.empty()) return Fail("--kubeconfig is required");
  if (out.empty()) return Fail("--kubeconfig_out is required");
  auto upstream = cloneset::kube::LoadKubeconfigFile(in);
  if (!upstream.ok()) return Fail(absl::StrCat("--kubeconfig: ", upstream.status().ToString()));

  cloneset::testing::FaultProxyOptions options;
  options.upstream = *upstream;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &options.port) || options.port < 0) {
    return Fail("--listen must be host:port, got '" + listen + "'");
  }
  options.host = listen.substr(0, colon);
  options.log_requests = absl::GetFlag(FLAGS_log_requests);
  options.threads = std::max(8, absl::GetFlag(FLAGS_threads));
  auto& f = options.faults;
  f.conflict_rate = absl::GetFlag(FLAGS_fault_conflict_rate);
  f.error_rate = absl::GetFlag(FLAGS_fault_error_rate);
  if (f.conflict_rate < 0 || f.error_rate < 0 || f.conflict_rate + f.error_rate > 1) {
    return Fail("--fault_conflict_rate and --fault_error_rate: each >= 0, sum <= 1");
  }
  const absl::Duration drop = absl::GetFlag(FLAGS_fault_watch_drop_after), delay = absl::GetFlag(FLAGS_fault_delay_max);
  if (drop < absl::ZeroDuration()) return Fail("--fault_watch_drop_after must be >= 0");
  if (delay < absl::ZeroDuration()) return Fail("--fault_delay_max must be >= 0");
  f.watch_drop_after = absl::ToChronoMilliseconds(drop);
  f.max_delay = absl::ToChronoMilliseconds(delay);
  f.user_agent = absl::GetFlag(FLAGS_fault_user_agent);
  f.seed = absl::GetFlag(FLAGS_fault_seed);

  cloneset::testing::FaultProxy proxy(options);
  if (absl::Status s = proxy.Start(); !s.ok()) return Fail(s.ToString());
  const std::string url = absl::StrCat("http://", options.host, ":", proxy.port());

  std::stringstream yaml;
  yaml << std::ifstream(in).rdbuf();
  auto through = cloneset::testing::KubeconfigThroughProxy(yaml.str(), url);
  if (!through.ok()) return Fail(absl::StrCat("--kubeconfig: ", through.status().ToString()));
  {
    const std::string tmp = out + ".tmp";
    std::ofstream(tmp) << *through;
    std::filesystem::permissions(tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::error_code ec;
    std::filesystem::rename(tmp, out, ec);
    if (ec) return Fail(absl::StrCat("--kubeconfig_out ", out, ": ", ec.message()));
  }
  std::cout << "listening on " << url << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  proxy.Stop();
  return 0;
}
