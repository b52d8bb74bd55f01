// The agent's CRI client and pull logic against real containerd 1.6 (CRI plugin) pulling from docker-registry,
// all on loopback, with the configuration that works on this kernel:
// restrict_oom_score_adj = true, a plain-HTTP hosts.toml, and an image built by umoci + skopeo from a static
// binary. Any missing piece or a containerd that the kernel refuses is a FAILURE with the reason printed.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "agent/cri_client.h"
#include "agent/puller.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"

namespace cloneset::agent {
namespace {

using cloneset::testing::CommandResult;
using cloneset::testing::Process;
using cloneset::testing::RunCommand;
using cloneset::testing::TempDir;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

#define RUN_OK(...)                                                                          \
  do {                                                                                       \
    CommandResult r_ = RunCommand(__VA_ARGS__, {});                                          \
    ASSERT_EQ(r_.exit_code, 0) << "command failed: " << r_.output;                           \
  } while (0)

TEST(ContainerdIntegrationTest, AgentPullsThroughCriAndImageStatusSeesIt) {
  for (const char* tool : {"containerd", "runc", "docker-registry", "skopeo", "umoci", "gcc"}) {
    ASSERT_EQ(RunCommand({"sh", "-c", absl::StrCat("command -v ", tool)}, {}).exit_code, 0)
        << tool << " is not installed: run ./run deps (packages containerd runc docker-registry skopeo umoci)";
  }
  TempDir tmp;
  const std::string dir = tmp.path();
  const int port = FreePort();
  const std::string registry = absl::StrCat("127.0.0.1:", port);
  const std::string image = absl::StrCat(registry, "/test/app:v1");

  // 1. The image: a static binary in a single-layer OCI image, pushed with skopeo.
  Write(dir + "/app.c", "#include <stdio.h>\nint main(void){puts(\"hello from test/app:v1\");return 0;}\n");
  RUN_OK({"gcc", "-static", "-O2", "-o", dir + "/app", dir + "/app.c"});
  const std::string oci = dir + "/oci";
  RUN_OK({"umoci", "init", "--layout", oci});
  RUN_OK({"umoci", "new", "--image", oci + ":v1"});
  RUN_OK({"umoci", "unpack", "--rootless", "--image", oci + ":v1", dir + "/bundle"});
  std::filesystem::create_directories(dir + "/bundle/rootfs/bin");
  std::filesystem::copy_file(dir + "/app", dir + "/bundle/rootfs/bin/app");
  RUN_OK({"umoci", "repack", "--image", oci + ":v1", dir + "/bundle"});
  RUN_OK({"umoci", "config", "--image", oci + ":v1", "--config.entrypoint", "/bin/app", "--os", "linux",
          "--architecture", "amd64"});

  // 2. docker-registry on loopback.
  Write(dir + "/registry.yml", absl::StrCat("version: 0.1\nlog: {level: info}\nstorage:\n  filesystem: {rootdirectory: ",
                                            dir, "/registry-data}\n  delete: {enabled: true}\nhttp: {addr: ", registry,
                                            "}\n"));
  // Process::Start uses execv: absolute paths.
  Process reg;
  ASSERT_TRUE(reg.Start({"/usr/bin/docker-registry", "serve", dir + "/registry.yml"}, dir + "/registry.log"));
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = RunCommand({"curl", "-sf", absl::StrCat("http://", registry, "/v2/")}, {}).exit_code == 0;
    if (!up) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(up) << "docker-registry did not start: " << reg.Log();
  RUN_OK({"skopeo", "copy", "--dest-tls-verify=false", "oci:" + oci + ":v1", "docker://" + image});

  // 3. containerd with its CRI plugin, own root/state/socket, plain-HTTP registry config.
  const std::string ctd = dir + "/ctd";
  const std::string sock = ctd + "/containerd.sock";
  Write(ctd + "/config.toml", absl::StrCat(R"(version = 2
root = ")", ctd, R"(/root"
state = ")", ctd, R"(/state"
[grpc]
  address = ")", sock, R"("
[ttrpc]
  address = ")", sock, R"(.ttrpc"
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = ")", image, R"("
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ")", ctd, R"(/certs.d"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = ")", ctd, R"(/cni"
)"));
  Write(absl::StrCat(ctd, "/certs.d/", registry, "/hosts.toml"),
        absl::StrCat("server = \"http://", registry, "\"\n[host.\"http://", registry,
                     "\"]\n  capabilities = [\"pull\", \"resolve\", \"push\"]\n  skip_verify = true\n"));
  Process containerd;
  ASSERT_TRUE(containerd.Start({"/usr/bin/containerd", "--config", ctd + "/config.toml"}, dir + "/containerd.log"));
  std::unique_ptr<ImageService> cri = NewCriImageService("unix://" + sock, absl::Seconds(2));
  absl::StatusOr<std::optional<ImageInfo>> before = absl::UnavailableError("not tried");
  for (int i = 0; i < 100; ++i) {
    if (!containerd.Running()) break;
    before = cri->ImageStatus(image);
    if (before.ok()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(containerd.Running()) << "containerd exited (the kernel refused it?); its log:\n" << containerd.Log();
  ASSERT_TRUE(before.ok()) << "CRI ImageStatus never answered: " << before.status() << "\ncontainerd log:\n"
                           << containerd.Log();
  EXPECT_FALSE(before->has_value()) << "a fresh containerd must not have the image yet";

  // 4. The agent's pull: ImageStatus first, PullImage, then ImageStatus again.
  PullResult r = PullWithRetries(*cri, image, std::nullopt, absl::Seconds(60), base::RealClock::Get(),
                                 [](absl::Duration d) { absl::SleepFor(d); return true; });
  ASSERT_TRUE(r.ok) << r.message << "\ncontainerd log:\n" << containerd.Log();
  EXPECT_FALSE(r.already_present);
  EXPECT_EQ(r.attempts, 1);
  auto after = cri->ImageStatus(image);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_TRUE(after->has_value()) << "image absent after the pull";
  EXPECT_EQ((*after)->id, r.image_id);
  EXPECT_EQ((*after)->id.rfind("sha256:", 0), 0u) << (*after)->id;
  EXPECT_GT((*after)->size, 100000u) << "the static binary layer";

  // A second pull request is served from ImageStatus alone.
  PullResult again = PullWithRetries(*cri, image, std::nullopt, absl::Seconds(60), base::RealClock::Get(),
                                     [](absl::Duration) { return true; });
  EXPECT_TRUE(again.ok && again.already_present);
  EXPECT_EQ(again.attempts, 0);

  EXPECT_EQ(containerd.Stop(absl::Seconds(10)) >= 0, true);
  reg.Stop(absl::Seconds(5));
  RunCommand({"sh", "-c", absl::StrCat("umount -R ", ctd, "/root 2>/dev/null; true")}, {});
}

}  // namespace
}  // namespace cloneset::agent
