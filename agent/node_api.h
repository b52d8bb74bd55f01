// NodeImageApi over the API server: GET/PATCH of nodeimages/<this node> (status subresource) and GET of one
// named Secret in one namespace — exactly what the agent's RBAC grants (docs/architecture.md).
#pragma once

#include <string>

#include "agent/pull_manager.h"
#include "kube/rest_client.h"

namespace cloneset::agent {

class RestNodeImageApi final : public NodeImageApi {
 public:
  RestNodeImageApi(kube::RestClient& client, std::string node) : client_(client), node_(std::move(node)) {}
  absl::StatusOr<imagepull::NodeImage> Get() override;
  absl::Status WriteReports(const imagepull::NodeImage& read, const std::vector<imagepull::PullReport>& reports) override;
  absl::StatusOr<std::string> GetSecret(const std::string& ns, const std::string& name) override;

 private:
  kube::RestClient& client_;
  const std::string node_;
};

}  // namespace cloneset::agent
