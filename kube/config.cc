#include "kube/config.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "yaml-cpp/yaml.h"

namespace cloneset::kube {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(what, ": cannot read file \"", path, "\""));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return absl::StrCat(base_dir, "/", path);
}

std::string DirName(const std::string& path) {
  auto pos = path.rfind('/');
  if (pos == std::string::npos) return ".";
  return pos == 0 ? "/" : path.substr(0, pos);
}

// Finds the entry `name` in a kubeconfig list such as `clusters`, returning
// its inner map (e.g. the `cluster:` node).
absl::StatusOr<YAML::Node> FindNamed(const YAML::Node& root, const std::string& list,
                                     const std::string& inner, const std::string& name,
                                     const std::string& src) {
  YAML::Node seq = root[list];
  if (seq && !seq.IsSequence()) {
    return absl::InvalidArgumentError(absl::StrCat(src, ": field \"", list, "\" must be a list"));
  }
  for (const auto& entry : seq) {
    if (entry["name"] && entry["name"].as<std::string>() == name) {
      YAML::Node n = entry[inner];
      if (!n || !n.IsMap()) {
        return absl::InvalidArgumentError(
            absl::StrCat(src, ": field \"", list, "[name=", name, "].", inner, "\" is missing"));
      }
      return n;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(src, ": ", list, " has no entry named \"", name, "\""));
}

std::string Str(const YAML::Node& n, const char* key) {
  return n[key] ? n[key].as<std::string>() : std::string();
}

// Reads `<key>-data` (base64) or `<key>` (a file path) into `out`.
absl::Status DataOrFile(const YAML::Node& n, const std::string& key, const std::string& field,
                        const std::string& src, const std::string& base_dir, std::string* out) {
  std::string data = Str(n, (key + "-data").c_str());
  if (!data.empty()) {
    if (!absl::Base64Unescape(data, out)) {
      return absl::InvalidArgumentError(
          absl::StrCat(src, ": field \"", field, "-data\" is not valid base64"));
    }
    return absl::OkStatus();
  }
  std::string path = Str(n, key.c_str());
  if (path.empty()) return absl::OkStatus();
  auto content = ReadFile(Resolve(base_dir, path), absl::StrCat(src, ": field \"", field, "\""));
  if (!content.ok()) return content.status();
  *out = *std::move(content);
  return absl::OkStatus();
}

absl::StatusOr<ClientConfig> ParseKubeconfigOrThrow(const std::string& yaml,
                                                    const std::string& src,
                                                    const std::string& base_dir,
                                                    const std::string& context_override) {
  YAML::Node root = YAML::Load(yaml);
  if (!root.IsMap()) return absl::InvalidArgumentError(absl::StrCat(src, ": not a kubeconfig map"));
  std::string context = context_override.empty() ? Str(root, "current-context") : context_override;
  if (context.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(src, ": field \"current-context\" is empty"));
  }
  auto ctx = FindNamed(root, "contexts", "context", context, src);
  if (!ctx.ok()) return ctx.status();
  const std::string cluster_name = Str(*ctx, "cluster");
  const std::string user_name = Str(*ctx, "user");
  const std::string cprefix = absl::StrCat("clusters[name=", cluster_name, "].cluster.");
  const std::string uprefix = absl::StrCat("users[name=", user_name, "].user.");

  ClientConfig cfg;
  cfg.source = src;
  if (std::string ns = Str(*ctx, "namespace"); !ns.empty()) cfg.default_namespace = ns;

  auto cluster = FindNamed(root, "clusters", "cluster", cluster_name, src);
  if (!cluster.ok()) return cluster.status();
  cfg.server = Str(*cluster, "server");
  if (!absl::StartsWith(cfg.server, "https://") && !absl::StartsWith(cfg.server, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat(src, ": field \"", cprefix,
                                                   "server\" must start with https:// or http://, got \"",
                                                   cfg.server, "\""));
  }
  if ((*cluster)["insecure-skip-tls-verify"]) {
    cfg.insecure_skip_tls_verify = (*cluster)["insecure-skip-tls-verify"].as<bool>();
  }
  cfg.tls_server_name = Str(*cluster, "tls-server-name");
  if (auto s = DataOrFile(*cluster, "certificate-authority", cprefix + "certificate-authority", src,
                          base_dir, &cfg.ca_pem);
      !s.ok()) {
    return s;
  }

  if (!user_name.empty()) {
    auto user = FindNamed(root, "users", "user", user_name, src);
    if (!user.ok()) return user.status();
    cfg.token = Str(*user, "token");
    if (std::string f = Str(*user, "tokenFile"); !f.empty()) cfg.token_file = Resolve(base_dir, f);
    if (auto s = DataOrFile(*user, "client-certificate", uprefix + "client-certificate", src,
                            base_dir, &cfg.client_cert_pem);
        !s.ok()) {
      return s;
    }
    if (auto s = DataOrFile(*user, "client-key", uprefix + "client-key", src, base_dir,
                            &cfg.client_key_pem);
        !s.ok()) {
      return s;
    }
    if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          src, ": field \"", uprefix, "client-certificate\" and \"client-key\" must be set together"));
    }
  }
  return cfg;
}

}  // namespace

absl::StatusOr<ClientConfig> ParseKubeconfig(const std::string& yaml, const std::string& source_name,
                                             const std::string& base_dir,
                                             const std::string& context) {
  try {
    return ParseKubeconfigOrThrow(yaml, source_name, base_dir, context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": invalid kubeconfig: ", e.what()));
  }
}

absl::StatusOr<ClientConfig> LoadKubeconfigFile(const std::string& path, const std::string& context) {
  auto content = ReadFile(path, "kubeconfig");
  if (!content.ok()) return content.status();
  return ParseKubeconfig(*content, path, DirName(path), context);
}

InClusterEnv InClusterEnv::FromEnvironment() {
  InClusterEnv env;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) env.service_host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) env.service_port = p;
  return env;
}

absl::StatusOr<ClientConfig> InClusterConfig(const InClusterEnv& env) {
  if (env.service_host.empty() || env.service_port.empty()) {
    return absl::FailedPreconditionError(
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  ClientConfig cfg;
  cfg.source = "in-cluster";
  // IPv6 service addresses need brackets in a URL.
  const bool v6 = env.service_host.find(':') != std::string::npos;
  cfg.server = absl::StrCat("https://", v6 ? "[" : "", env.service_host, v6 ? "]" : "", ":",
                            env.service_port);
  cfg.token_file = env.sa_dir + "/token";
  if (!FileExists(cfg.token_file)) {
    return absl::NotFoundError(absl::StrCat("in-cluster: token file \"", cfg.token_file, "\" is missing"));
  }
  auto ca = ReadFile(env.sa_dir + "/ca.crt", "in-cluster: ca.crt");
  if (!ca.ok()) return ca.status();
  cfg.ca_pem = *std::move(ca);
  if (auto ns = ReadFile(env.sa_dir + "/namespace", "in-cluster: namespace"); ns.ok()) {
    std::string trimmed(absl::StripAsciiWhitespace(*ns));
    if (!trimmed.empty()) cfg.default_namespace = trimmed;
  }
  return cfg;
}

ConfigSources ConfigSources::FromEnvironment(const std::string& flag_path,
                                             const std::string& context) {
  ConfigSources s;
  s.flag_path = flag_path;
  s.context = context;
  if (const char* k = std::getenv("KUBECONFIG")) s.kubeconfig_env = k;
  if (const char* h = std::getenv("HOME")) s.home = h;
  s.in_cluster = InClusterEnv::FromEnvironment();
  return s;
}

absl::StatusOr<ClientConfig> LoadClientConfig(const ConfigSources& s) {
  // An explicit flag is never silently skipped: a missing file is an error.
  if (!s.flag_path.empty()) return LoadKubeconfigFile(s.flag_path, s.context);
  for (absl::string_view p : absl::StrSplit(s.kubeconfig_env, ':', absl::SkipEmpty())) {
    if (FileExists(std::string(p))) return LoadKubeconfigFile(std::string(p), s.context);
  }
  if (!s.home.empty()) {
    const std::string home_cfg = s.home + "/.kube/config";
    if (FileExists(home_cfg)) return LoadKubeconfigFile(home_cfg, s.context);
  }
  auto in_cluster = InClusterConfig(s.in_cluster);
  if (in_cluster.ok()) return in_cluster;
  return absl::NotFoundError(absl::StrCat(
      "no Kubernetes configuration: no --kubeconfig, no file in $KUBECONFIG, no ~/.kube/config, and ",
      in_cluster.status().message()));
}

TokenSource::TokenSource(std::string static_token, std::string token_file)
    : static_token_(std::move(static_token)), file_(std::move(token_file)) {}

absl::StatusOr<std::string> TokenSource::Token() {
  if (file_.empty()) return static_token_;
  absl::MutexLock l(&mu_);
  struct stat st;
  if (::stat(file_.c_str(), &st) != 0) {
    if (!cached_.empty()) return cached_;
    if (!static_token_.empty()) return static_token_;
    return absl::UnavailableError(absl::StrCat("token file \"", file_, "\" is missing"));
  }
  if (st.st_mtim.tv_sec != mtime_.tv_sec || st.st_mtim.tv_nsec != mtime_.tv_nsec ||
      st.st_size != size_) {
    auto content = ReadFile(file_, "token file");
    std::string token(content.ok() ? absl::StripAsciiWhitespace(*content) : "");
    if (!token.empty()) {
      cached_ = std::move(token);
      mtime_ = st.st_mtim;
      size_ = st.st_size;
    }
  }
  if (cached_.empty()) {
    return absl::UnavailableError(absl::StrCat("token file \"", file_, "\" is empty"));
  }
  return cached_;
}

}  // namespace cloneset::kube
