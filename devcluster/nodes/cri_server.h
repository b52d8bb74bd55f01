// The simulated CRI endpoint of one node: runtime.v1 RuntimeService.Version and the ImageService subset on a
// unix socket, backed by the node's ImageStore. PullImage blocks for the image's configured pull time on the
// injected clock (a FakeClock makes it wait for the test to advance time) and is abandoned when the client
// cancels, as containerd does.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "devcluster/nodes/images.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace cloneset::devcluster::nodes {

class CriServer {
 public:
  ~CriServer();
  // Listens on `socket_path` (parent directories are created; a stale socket file is replaced).
  static absl::StatusOr<std::unique_ptr<CriServer>> Start(const std::string& socket_path, ImageStore* images,
                                                          base::Clock* clock);
  void Stop();
  const std::string& socket_path() const { return socket_path_; }

 private:
  CriServer() = default;
  std::string socket_path_;
  std::unique_ptr<grpc::Service> runtime_;
  std::unique_ptr<grpc::Service> image_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace cloneset::devcluster::nodes
