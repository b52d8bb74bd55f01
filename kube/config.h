#ifndef CLONESET_KUBE_CONFIG_H_
#define CLONESET_KUBE_CONFIG_H_

#include <ctime>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace cloneset::kube {

// Everything needed to talk to one API server. PEM material is held in
// memory (kubeconfig *-data fields are decoded, file fields are read at load
// time) except the bearer token file, which is re-read on rotation.
struct ClientConfig {
  std::string server;  // "https://host:port" or "http://host:port"
  std::string ca_pem;  // empty: the system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // name to verify instead of the server host
  std::string token;            // static bearer token
  std::string token_file;       // re-read when it changes (service-account rotation)
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string default_namespace = "default";
  std::string source;  // where this came from, for messages ("/path/kubeconfig", "in-cluster")
};

// Parses kubeconfig YAML. Relative file paths resolve against `base_dir`
// (the kubeconfig's directory, as client-go does). `context` overrides
// current-context when non-empty. Errors name `source_name` and the field.
absl::StatusOr<ClientConfig> ParseKubeconfig(const std::string& yaml,
                                             const std::string& source_name,
                                             const std::string& base_dir,
                                             const std::string& context = "");
absl::StatusOr<ClientConfig> LoadKubeconfigFile(const std::string& path,
                                                const std::string& context = "");

// Inputs of the in-cluster configuration; defaults are the real locations.
struct InClusterEnv {
  std::string service_host;  // $KUBERNETES_SERVICE_HOST
  std::string service_port;  // $KUBERNETES_SERVICE_PORT
  std::string sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  static InClusterEnv FromEnvironment();
};
absl::StatusOr<ClientConfig> InClusterConfig(const InClusterEnv& env);

// The precedence of controller tools: --kubeconfig flag, $KUBECONFIG (first
// existing file of the colon-separated list), ~/.kube/config, in-cluster.
struct ConfigSources {
  std::string flag_path;
  std::string kubeconfig_env;  // $KUBECONFIG
  std::string home;            // $HOME
  std::string context;         // --context
  InClusterEnv in_cluster;
  static ConfigSources FromEnvironment(const std::string& flag_path,
                                       const std::string& context = "");
};
absl::StatusOr<ClientConfig> LoadClientConfig(const ConfigSources& sources);

// Hands out the current bearer token. A token file is re-read when its
// mtime or size changes (kubelet rotates projected service-account tokens
// by replacing the file), so long-running processes never use an expired
// token. If a re-read fails the last good token is kept. Thread-safe.
class TokenSource {
 public:
  TokenSource(std::string static_token, std::string token_file);
  // Empty string: no token configured.
  absl::StatusOr<std::string> Token();

 private:
  const std::string static_token_;
  const std::string file_;
  absl::Mutex mu_;
  std::string cached_ ABSL_GUARDED_BY(mu_);
  std::timespec mtime_ ABSL_GUARDED_BY(mu_) = {0, 0};
  long long size_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_CONFIG_H_
