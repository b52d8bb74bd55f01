#include "agent/node_api.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {

absl::StatusOr<imagepull::NodeImage> RestNodeImageApi::Get() {
  auto body = client_.Get(absl::StrCat(imagepull::kApiPrefix, "/nodeimages/", node_));
  if (!body.ok()) return body.status();
  return imagepull::ParseNodeImage(*body);
}

absl::Status RestNodeImageApi::WriteReports(const imagepull::NodeImage& read,
                                            const std::vector<imagepull::PullReport>& reports) {
  nlohmann::json patch = {{"metadata", {{"resourceVersion", read.resource_version}}},
                          {"status", {{"pulls", imagepull::ReportsJson(reports)}}}};
  return client_
      .Patch(absl::StrCat(imagepull::kApiPrefix, "/nodeimages/", node_, "/status"), kube::PatchType::kMerge, patch.dump())
      .status();
}

absl::StatusOr<std::string> RestNodeImageApi::GetSecret(const std::string& ns, const std::string& name) {
  return client_.Get(absl::StrCat("/api/v1/namespaces/", ns, "/secrets/", name));
}

}  // namespace cloneset::agent
