#include "kube/config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::kube {
namespace {

using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kube_config_test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string p = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << content;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr char kKubeconfig[] = R"(apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team-a}
- name: prod
  context: {cluster: c2, user: u2}
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: Q0EtUEVN
    tls-server-name: kubernetes
- name: c2
  cluster:
    server: http://127.0.0.1:8080
    insecure-skip-tls-verify: true
    certificate-authority: certs/ca.crt
users:
- name: u1
  user: {token: abc123}
- name: u2
  user:
    tokenFile: token
    client-certificate: certs/client.crt
    client-key-data: S0VZ
)";

TEST(ParseKubeconfigTest, CurrentContextWithInlineData) {
  auto cfg = ParseKubeconfig(kKubeconfig, "kc", "/nowhere");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:6443");
  EXPECT_EQ(cfg->ca_pem, "CA-PEM");
  EXPECT_EQ(cfg->tls_server_name, "kubernetes");
  EXPECT_FALSE(cfg->insecure_skip_tls_verify);
  EXPECT_EQ(cfg->token, "abc123");
  EXPECT_EQ(cfg->token_file, "");
  EXPECT_EQ(cfg->default_namespace, "team-a");
  EXPECT_EQ(cfg->source, "kc");
}

TEST(ParseKubeconfigTest, ContextOverrideResolvesRelativeFiles) {
  TempDir dir;
  dir.Write("certs/ca.crt", "FILE-CA");
  dir.Write("certs/client.crt", "FILE-CERT");
  auto cfg = ParseKubeconfig(kKubeconfig, "kc", dir.path(), "prod");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "http://127.0.0.1:8080");
  EXPECT_TRUE(cfg->insecure_skip_tls_verify);
  EXPECT_EQ(cfg->ca_pem, "FILE-CA");
  EXPECT_EQ(cfg->client_cert_pem, "FILE-CERT");
  EXPECT_EQ(cfg->client_key_pem, "KEY");
  EXPECT_EQ(cfg->token_file, dir.path() + "/token");
  EXPECT_EQ(cfg->default_namespace, "default");
}

TEST(ParseKubeconfigTest, ErrorsNameTheFileAndField) {
  struct Case {
    std::string yaml;
    std::string context;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"current-context: ''\n", "", "kc: field \"current-context\" is empty"},
      {"current-context: x\ncontexts: []\n", "", "kc: contexts has no entry named \"x\""},
      {kKubeconfig, "nope", "kc: contexts has no entry named \"nope\""},
      {"current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
       "  cluster: {server: 'ftp://x'}\n",
       "", "kc: field \"clusters[name=c].cluster.server\" must start with https:// or http://"},
      {"current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n"
       "  cluster: {server: 'https://x', certificate-authority-data: '!!!'}\n",
       "", "kc: field \"clusters[name=c].cluster.certificate-authority-data\" is not valid base64"},
      {"current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n"
       "  cluster: {server: 'https://x', certificate-authority: /no/such/ca}\n",
       "", "kc: field \"clusters[name=c].cluster.certificate-authority\": cannot read file \"/no/such/ca\""},
      {"current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
       "  cluster: {server: 'https://x'}\nusers:\n- name: u\n  user: {client-certificate-data: QQ==}\n",
       "", "must be set together"},
      {"[1, 2", "", "kc: invalid kubeconfig"},
      {"- a\n- b\n", "", "kc: not a kubeconfig map"},
  };
  for (const auto& c : cases) {
    auto cfg = ParseKubeconfig(c.yaml, "kc", "/", c.context);
    ASSERT_FALSE(cfg.ok()) << c.yaml;
    EXPECT_THAT(std::string(cfg.status().message()), HasSubstr(c.want)) << c.yaml;
  }
}

TEST(InClusterConfigTest, ReadsServiceAccountFiles) {
  TempDir dir;
  dir.Write("sa/token", "tok\n");
  dir.Write("sa/ca.crt", "CA");
  dir.Write("sa/namespace", "kruise-system\n");
  InClusterEnv env{"10.96.0.1", "443", dir.path() + "/sa"};
  auto cfg = InClusterConfig(env);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://10.96.0.1:443");
  EXPECT_EQ(cfg->ca_pem, "CA");
  EXPECT_EQ(cfg->token_file, dir.path() + "/sa/token");
  EXPECT_EQ(cfg->default_namespace, "kruise-system");
  EXPECT_EQ(cfg->source, "in-cluster");

  env.service_host = "fd00::1";
  EXPECT_EQ(InClusterConfig(env)->server, "https://[fd00::1]:443");
  env.service_host = "";
  EXPECT_THAT(std::string(InClusterConfig(env).status().message()),
              HasSubstr("KUBERNETES_SERVICE_HOST"));
}

TEST(LoadClientConfigTest, Precedence) {
  TempDir dir;
  auto kc = [](const std::string& server) {
    return "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n"
           "  cluster: {server: '" + server + "'}\n";
  };
  const std::string flag = dir.Write("flag.yaml", kc("https://flag"));
  const std::string env1 = dir.Write("env1.yaml", kc("https://env1"));
  dir.Write("home/.kube/config", kc("https://home"));
  dir.Write("sa/token", "t");
  dir.Write("sa/ca.crt", "CA");
  ConfigSources s;
  s.flag_path = flag;
  s.kubeconfig_env = dir.path() + "/missing.yaml:" + env1;
  s.home = dir.path() + "/home";
  s.in_cluster = InClusterEnv{"10.0.0.1", "443", dir.path() + "/sa"};
  EXPECT_EQ(LoadClientConfig(s)->server, "https://flag");
  s.flag_path.clear();
  EXPECT_EQ(LoadClientConfig(s)->server, "https://env1");
  s.kubeconfig_env.clear();
  EXPECT_EQ(LoadClientConfig(s)->server, "https://home");
  s.home = dir.path() + "/nohome";
  EXPECT_EQ(LoadClientConfig(s)->server, "https://10.0.0.1:443");
  s.in_cluster.service_host.clear();
  EXPECT_THAT(std::string(LoadClientConfig(s).status().message()), HasSubstr("no Kubernetes configuration"));
  s.flag_path = dir.path() + "/absent.yaml";
  EXPECT_THAT(std::string(LoadClientConfig(s).status().message()), HasSubstr("absent.yaml"));
}

TEST(TokenSourceTest, RereadsRotatedFileAndKeepsLastGood) {
  TempDir dir;
  const std::string path = dir.Write("token", "first\n");
  TokenSource src("", path);
  EXPECT_EQ(*src.Token(), "first");
  dir.Write("token", "second-token");  // new size, so a change even within one mtime tick
  EXPECT_EQ(*src.Token(), "second-token");
  std::filesystem::remove(path);
  EXPECT_EQ(*src.Token(), "second-token");
  TokenSource missing("", dir.path() + "/none");
  EXPECT_FALSE(missing.Token().ok());
  TokenSource fixed("static", "");
  EXPECT_EQ(*fixed.Token(), "static");
}

}  // namespace
}  // namespace cloneset::kube
