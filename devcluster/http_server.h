// HTTP(S) front of the ApiServer on cpp-httplib: chunked watch streams, /metrics, request logs.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "devcluster/api_server.h"
#include "devcluster/faults.h"
#include "devcluster/store.h"

namespace prometheus {
class Registry;
}

namespace cloneset::devcluster {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                 // 0 = any free port
  std::string cert_path, key_path;  // empty = plain HTTP
  int threads = 256;            // each open watch holds one worker thread
  bool log_requests = false;    // one JSON line per request on stderr
  FaultOptions faults;          // injected 409s/500s/watch cuts for fault tests (off by default)
};

class HttpServer {
 public:
  // registry: where the apiserver_* metrics live; /metrics serves it (shared with other components).
  HttpServer(ApiServer* api, Store* store, std::shared_ptr<prometheus::Registry> registry, HttpServerOptions options);
  ~HttpServer();
  // Binds and starts serving on a background thread; port() is valid afterwards.
  absl::Status Start();
  void Stop();
  int port() const { return port_; }
  std::string url() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// UserAgentLabel (the user_agent label of a client) is in devcluster/faults.h.


}  // namespace cloneset::devcluster
