#include "planner/service/server.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"

namespace cloneset::planner::service {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError("--" + flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError("--" + flag + ": " + path + " is not a PEM file");
  }
  return ss.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(const ServerOptions& options) {
  if (options.tls_cert.empty() && options.tls_key.empty()) {
    if (!options.tls_client_ca.empty()) {
      return absl::InvalidArgumentError("--tls_client_ca: needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return absl::InvalidArgumentError(options.tls_cert.empty() ? "--tls_cert: required with --tls_key"
                                                               : "--tls_key: required with --tls_cert");
  }
  auto cert = ReadPem("tls_cert", options.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadPem("tls_key", options.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.tls_client_ca.empty()) {
    auto ca = ReadPem("tls_client_ca", options.tls_client_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

std::string WithPort(const std::string& address, int port) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return address + ":" + std::to_string(port);
  return address.substr(0, colon + 1) + std::to_string(port);
}

absl::StatusOr<RunningServer> StartServer(const ServerOptions& options, grpc::Service* service) {
  if (options.max_request_bytes <= 0 || options.max_request_bytes > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError("--max_request_bytes: must be between 1 and " +
                                      std::to_string(std::numeric_limits<int>::max()));
  }
  if (options.listen.empty() || options.listen.find(':') == std::string::npos) {
    return absl::InvalidArgumentError("--listen: \"" + options.listen + "\" is not host:port");
  }
  auto creds = Credentials(options);
  if (!creds.ok()) return creds.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  RunningServer running;
  builder.AddListeningPort(options.listen, *creds, &running.port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_request_bytes));
  builder.RegisterService(service);
  running.server = builder.BuildAndStart();
  if (running.server == nullptr || running.port == 0) {
    return absl::UnavailableError("--listen: cannot listen on " + options.listen);
  }
  running.address = WithPort(options.listen, running.port);
  return running;
}

}  // namespace cloneset::planner::service
