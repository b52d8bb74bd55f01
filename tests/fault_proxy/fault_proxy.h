// A fault-injecting HTTP proxy on 127.0.0.1 in front of a real kube-apiserver, for the executor fault suite on the
// real control plane (tests/executor_fault, docs/reliability.md "Faults on the real control plane"). It injects
// the faults the embedded cluster's --fault_* flags inject, decided by the same code (devcluster/faults.h) from one
// seed:
//  - a 409 Conflict before anything reaches the API server;
//  - a 500 before the write is forwarded (nothing committed), or after it was forwarded and answered (committed:
//    the client sees a failure for a write that happened);
//  - watch streams cut after uniform[d/2, d], the connection closed without the final chunk, as a broken network
//    would;
//  - requests held for uniform[0, max] before they are forwarded.
// Clients speak plain HTTP to it; it speaks TLS to the API server, verified with the kubeconfig's CA, and forwards
// each client's own Authorization header, so the API server authenticates and authorizes the client itself (the
// executor keeps the chart's RBAC identity). One JSON line per request ("request", as the embedded cluster's
// --log_requests) and per injected fault ("fault injected") on stderr.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "devcluster/faults.h"
#include "kube/config.h"

namespace cloneset::testing {

struct FaultProxyOptions {
  std::string host = "127.0.0.1";
  int port = 0;                  // 0 = any free port
  kube::ClientConfig upstream;   // server (https:// or http://) and CA; its credentials are not used
  devcluster::FaultOptions faults;
  bool log_requests = false;     // one JSON line per request on stderr
  int threads = 128;             // each open watch holds one worker thread
};

class FaultProxy {
 public:
  explicit FaultProxy(FaultProxyOptions options);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Binds and serves on a background thread; port() is valid afterwards.
  absl::Status Start();
  void Stop();
  int port() const { return port_; }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// The kubeconfig YAML `kubeconfig_yaml` with every cluster's server replaced by `proxy_url` and its CA fields
// removed (the proxy speaks plain HTTP); users and contexts unchanged, so the client keeps its credentials.
absl::StatusOr<std::string> KubeconfigThroughProxy(const std::string& kubeconfig_yaml, const std::string& proxy_url);

}  // namespace cloneset::testing
