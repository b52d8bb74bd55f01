// The agent's view of the node's container runtime: the two CRI ImageService calls it needs, behind an
// interface so pull logic is tested against a fake, the simulated CRI (devcluster/nodes) and real containerd.
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

// runtime.v1 over gRPC; `endpoint` like "unix:///run/containerd/containerd.sock" (a bare path gets "unix://").
std::unique_ptr<ImageService> NewCriImageService(const std::string& endpoint, absl::Duration status_timeout = absl::Seconds(10));

}  // namespace cloneset::agent
