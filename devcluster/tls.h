// Certificates of the embedded cluster: a self-signed CA and a serving certificate for 127.0.0.1 and
// localhost, generated with OpenSSL at first start and reused from the directory afterwards.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace cloneset::devcluster {

struct ServingCertificates {
  std::string ca_cert_path, cert_path, key_path;
  std::string ca_pem;  // for the kubeconfig's certificate-authority-data
};

// Loads <dir>/{ca.crt,server.crt,server.key}, creating them (and dir) when absent.
absl::StatusOr<ServingCertificates> EnsureServingCertificates(const std::string& dir);

// Writes a kubeconfig (context "devcluster") for server_url with a bearer token; ca_pem empty = plain HTTP.
absl::Status WriteKubeconfig(const std::string& path, const std::string& server_url, const std::string& ca_pem,
                             const std::string& token);

}  // namespace cloneset::devcluster
