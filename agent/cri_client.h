// The agent's view of the node's container runtime: the CRI calls it needs (two ImageService calls for
// pre-download, RuntimeService.StopContainer for env-from-metadata restarts), behind interfaces so the logic is
// tested against fakes, the simulated CRI (devcluster/nodes) and real containerd.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cloneset::agent {

struct ImageInfo {
  std::string id;
  uint64_t size = 0;
};

// runtime.v1.AuthConfig.
struct RegistryAuth {
  std::string username;
  std::string password;
  std::string auth;
  std::string server_address;
  std::string identity_token;
  std::string registry_token;
  bool operator==(const RegistryAuth&) const = default;
};

class ImageService {
 public:
  virtual ~ImageService() = default;
  // nullopt when the runtime does not have the image.
  virtual absl::StatusOr<std::optional<ImageInfo>> ImageStatus(const std::string& image) = 0;
  // Returns the image reference (id) the runtime reports; the call is cancelled after `timeout`.
  virtual absl::StatusOr<std::string> PullImage(const std::string& image, const std::optional<RegistryAuth>& auth,
                                                absl::Duration timeout) = 0;
};

class ContainerRuntime {
 public:
  virtual ~ContainerRuntime() = default;
  // Stops the container (SIGTERM, SIGKILL after `timeout`); `container_id` is the runtime's id without the
  // "containerd://" scheme of a pod status. The kubelet then starts it again under the pod's restartPolicy.
  virtual absl::Status StopContainer(const std::string& container_id, absl::Duration timeout) = 0;
};

// runtime.v1 over gRPC; `endpoint` like "unix:///run/containerd/containerd.sock" (a bare path gets "unix://").
std::unique_ptr<ImageService> NewCriImageService(const std::string& endpoint, absl::Duration status_timeout = absl::Seconds(10));
std::unique_ptr<ContainerRuntime> NewCriRuntimeService(const std::string& endpoint);

}  // namespace cloneset::agent
