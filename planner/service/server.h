// Building and starting the gRPC server: listen address (port 0 allowed), TLS / mTLS from PEM files, request size
// limit, health service and reflection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace cloneset::planner::service {

struct ServerOptions {
  std::string listen = "127.0.0.1:7070";
  std::string tls_cert;       // PEM file; TLS when set (with tls_key)
  std::string tls_key;        // PEM file
  std::string tls_client_ca;  // PEM file; when set, clients must present a certificate signed by it (mTLS)
  int64_t max_request_bytes = 64 << 20;
};

struct RunningServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::string address;  // `listen` with the bound port
};

// Validates the options (INVALID_ARGUMENT naming the flag), reads the PEM files, and starts serving `service`.
absl::StatusOr<RunningServer> StartServer(const ServerOptions& options, grpc::Service* service);

// "host:port" with the port replaced ("127.0.0.1:0", 7070 -> "127.0.0.1:7070"; "[::1]:0" works too).
std::string WithPort(const std::string& address, int port);

}  // namespace cloneset::planner::service
