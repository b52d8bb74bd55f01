// cloneset-devcluster: the embedded Kubernetes-API-compatible development cluster.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <algorithm>
#include <memory>
#include <vector>

#include <prometheus/registry.h>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_format.h"
#include "base/daemon_main.h"
#include "base/log.h"
#include "base/signals.h"
#include "devcluster/api_server.h"
#include "devcluster/crd_dir.h"
#include "devcluster/http_server.h"
#include "devcluster/store.h"
#include "devcluster/tls.h"
#include "devcluster/wal.h"
#ifdef CLONESET_HAVE_NODES
#include "devcluster/nodes/simulator.h"
#endif

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "Address to serve the API, /metrics, /healthz on (port 0 = any free port)");
ABSL_FLAG(std::string, data_dir, "",
          "Directory that keeps the cluster state (write-ahead log + snapshots), certificates and token across "
          "restarts; empty = state in memory only, certificates in a temporary directory");
ABSL_FLAG(std::string, kubeconfig, "", "Write a kubeconfig for this cluster to this path");
ABSL_FLAG(std::string, crd_dir, "",
          "Directories (comma-separated) of CustomResourceDefinition manifests (*.yaml) applied before the server "
          "listens, e.g. the chart's crds/ and files/crds/ (for a cluster started with no kubectl beside it, as in "
          "a container)");
ABSL_FLAG(std::string, token, "",
          "Bearer token clients must send; empty = generate one (kept in --data-dir/token when set)");
ABSL_FLAG(bool, insecure_http, false, "Serve plain HTTP instead of HTTPS (the token is still required)");
ABSL_FLAG(bool, no_auth, false, "Accept requests without a bearer token");
ABSL_FLAG(int, threads, 256, "HTTP worker threads; every open watch holds one");
ABSL_FLAG(int, watch_history, 10000, "Watch events kept per resource for resuming watches (older -> 410 Gone)");
ABSL_FLAG(int, snapshot_every, 20000, "Write a snapshot after this many write-ahead log records");
ABSL_FLAG(bool, fsync, true, "fdatasync the write-ahead log on every commit");
ABSL_FLAG(bool, log_requests, false, "Log every request as a JSON line on stderr (5xx are always logged)");
ABSL_FLAG(double, fault_conflict_rate, 0, "Fault tests: share of writes answered 409 Conflict unapplied (0 = off)");
ABSL_FLAG(double, fault_error_rate, 0,
          "Fault tests: share of writes answered 500 InternalError, half of them after applying the write (0 = off)");
ABSL_FLAG(absl::Duration, fault_watch_drop_after, absl::ZeroDuration(),
          "Fault tests: cut every watch connection after a random time in [d/2, d] (0 = never)");
ABSL_FLAG(std::string, fault_user_agent, "",
          "Fault tests: inject faults only for this client (first User-Agent token, e.g. cloneset-executor); empty = all");
ABSL_FLAG(uint64_t, fault_seed, 1, "Fault tests: seed of the fault decisions");
ABSL_FLAG(std::string, version_minor, "32", "Minor version reported by /version (kubectl's dispatcher picks its binary by it)");

namespace cd = cloneset::devcluster;

namespace {

std::string RandomToken() {
  absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

absl::Status Run(const cloneset::base::Daemon& daemon) {
  signal(SIGPIPE, SIG_IGN);

  std::string listen = absl::GetFlag(FLAGS_listen);
  size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("--listen: expected host:port, got \"", listen, "\""));
  std::string host = listen.substr(0, colon);

  cloneset::base::Clock* clock = &cloneset::base::RealClock::Get();
  cd::StoreOptions store_options;
  store_options.watch_history = static_cast<size_t>(std::max(10, absl::GetFlag(FLAGS_watch_history)));
  cd::Store store(clock, store_options);

  // Absolute from here on: the simulated nodes serve their CRI sockets as unix:// URIs, where a relative path would
  // be read as an authority ("unix://.run/devcluster/..." cannot be listened on).
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (!data_dir.empty()) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(data_dir, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("--data-dir: cannot make \"", data_dir, "\" absolute: ", ec.message()));
    }
    data_dir = absolute.lexically_normal().string();
    if (data_dir.size() > 1 && data_dir.back() == '/') data_dir.pop_back();
  }
  std::unique_ptr<cd::WriteAheadLog> wal;
  std::string work_dir = data_dir;
  if (!data_dir.empty()) {
    cd::WalOptions wo;
    wo.snapshot_every = static_cast<size_t>(std::max(100, absl::GetFlag(FLAGS_snapshot_every)));
    wo.sync = absl::GetFlag(FLAGS_fsync);
    auto opened = cd::WriteAheadLog::Open(data_dir + "/state", &store, wo);
    if (!opened.ok()) return cloneset::base::StartupError("--data-dir: cannot open the state", opened.status());
    wal = std::move(*opened);
  } else {
    char tmpl[] = "/tmp/cloneset-devcluster-XXXXXX";
    if (!mkdtemp(tmpl)) return absl::UnavailableError("mkdtemp failed");
    work_dir = tmpl;
  }
  // A cluster without --data-dir keeps nothing: its temporary directory (certificates, token, the simulated nodes'
  // sockets) goes when it exits, whether it shuts down or fails to start.
  absl::Cleanup remove_work_dir = [&] {
    if (!data_dir.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  };

  std::string token = absl::GetFlag(FLAGS_token);
  if (token.empty() && !absl::GetFlag(FLAGS_no_auth)) {
    std::string token_file = work_dir + "/token";
    std::ifstream in(token_file);
    std::getline(in, token);
    if (token.empty()) {
      token = RandomToken();
      std::ofstream(token_file) << token << "\n";
      std::filesystem::permissions(token_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
  }
  if (absl::GetFlag(FLAGS_no_auth)) token.clear();

  cd::HttpServerOptions http;
  http.host = host;
  http.port = port;
  http.threads = std::max(8, absl::GetFlag(FLAGS_threads));
  http.log_requests = absl::GetFlag(FLAGS_log_requests);
  http.faults.conflict_rate = absl::GetFlag(FLAGS_fault_conflict_rate);
  http.faults.error_rate = absl::GetFlag(FLAGS_fault_error_rate);
  http.faults.watch_drop_after = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_fault_watch_drop_after));
  http.faults.user_agent = absl::GetFlag(FLAGS_fault_user_agent);
  http.faults.seed = absl::GetFlag(FLAGS_fault_seed);
  if (http.faults.conflict_rate < 0 || http.faults.error_rate < 0 ||
      http.faults.conflict_rate + http.faults.error_rate > 1)
    return absl::InvalidArgumentError("--fault_conflict_rate and --fault_error_rate: each >= 0, sum <= 1");
  std::string ca_pem;
  if (!absl::GetFlag(FLAGS_insecure_http)) {
    auto certs = cd::EnsureServingCertificates(work_dir + "/pki");
    if (!certs.ok()) return certs.status();
    http.cert_path = certs->cert_path;
    http.key_path = certs->key_path;
    ca_pem = certs->ca_pem;
  }

  cd::ApiServerOptions api_options;
  api_options.token = token;
  api_options.version_minor = absl::GetFlag(FLAGS_version_minor);
  cd::ApiServer api(&store, api_options);
  for (absl::string_view dir : absl::StrSplit(absl::GetFlag(FLAGS_crd_dir), ',', absl::SkipEmpty())) {
    const std::string crd_dir(dir);
    auto applied = cd::ApplyCrdDir(api, token, crd_dir);
    if (!applied.ok()) return cloneset::base::StartupError(absl::StrCat("--crd-dir ", crd_dir), applied.status());
    cloneset::base::ProcessLogger().Info("CRDs applied", {{"dir", crd_dir}, {"count", static_cast<int64_t>(applied->size())}});
  }
  auto registry = std::make_shared<prometheus::Registry>();
  cd::HttpServer server(&api, &store, registry, http);
  if (absl::Status s = server.Start(); !s.ok()) return s;
  api.set_server_address(absl::StrCat(host, ":", server.port()));

  if (std::string path = absl::GetFlag(FLAGS_kubeconfig); !path.empty()) {
    if (absl::Status s = cd::WriteKubeconfig(path, server.url(), ca_pem, token); !s.ok()) return s;
  }

#ifdef CLONESET_HAVE_NODES
  std::unique_ptr<cd::nodes::NodeSimulator> simulator;
  {
    auto config = cd::nodes::SimulatorConfigFromFlags();
    if (!config.ok()) return config.status();
    config->run_dir = work_dir;
    config->registry = registry.get();
    if (config->nodes > 0) {
      auto sim = cd::nodes::StartNodeSimulator(store, *clock, *config);
      if (!sim.ok()) return sim.status();
      simulator = std::move(*sim);
    }
  }
#endif

  std::cout << "listening on " << server.url() << std::endl;
  cloneset::base::ProcessLogger().Info(
      "devcluster ready", {{"url", server.url()}, {"data_dir", data_dir}, {"work_dir", work_dir},
                           {"kubeconfig", absl::GetFlag(FLAGS_kubeconfig)},
                           {"resource_version", int64_t{store.CurrentResourceVersion()}}});

  const std::unique_ptr<cloneset::base::ShutdownDeadline> deadline = daemon.WaitForStop();
#ifdef CLONESET_HAVE_NODES
  if (simulator) simulator->Stop();
#endif
  server.Stop();
  if (wal) {
    if (absl::Status s = wal->Snapshot(); !s.ok()) {
      cloneset::base::ProcessLogger().Error("final snapshot failed", {{"error", s.ToString()}});
    }
  }
  deadline->Disarm();
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  cloneset::base::DaemonSpec spec;
  spec.usage =
      "Embedded Kubernetes-API-compatible development cluster for CloneSet.\n"
      "Serves namespaces, pods, PVCs, PVs, storage classes, config maps, secrets, services, events, nodes,\n"
      "controller revisions, leases and CRDs to real kubectl; simulates nodes (see --nodes and friends).\n"
      "Usage: cloneset-devcluster [--listen=127.0.0.1:0] [--data-dir=DIR] [--kubeconfig=PATH] [--nodes=N] ...";
  spec.flag_dirs = {"devcluster/"};
  // The documented --data-dir spelling as well as absl's --data_dir, for every flag.
  spec.dashed_flags = true;
  // Stopping the simulated nodes and writing the final snapshot.
  spec.shutdown_grace = absl::Seconds(30);
  return cloneset::base::DaemonMain(argc, argv, spec, Run);
}
