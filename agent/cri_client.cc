#include "agent/cri_client.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "runtime/v1/cri.grpc.pb.h"

namespace cloneset::agent {
namespace {

absl::Status FromGrpc(const grpc::Status& s, const char* call) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), absl::StrCat(call, ": ", s.error_message()));
}

class GrpcImageService final : public ImageService {
 public:
  GrpcImageService(std::shared_ptr<grpc::Channel> channel, absl::Duration status_timeout)
      : stub_(runtime::v1::ImageService::NewStub(std::move(channel))), status_timeout_(status_timeout) {}

  absl::StatusOr<std::optional<ImageInfo>> ImageStatus(const std::string& image) override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(status_timeout_));
    runtime::v1::ImageStatusRequest req;
    req.mutable_image()->set_image(image);
    runtime::v1::ImageStatusResponse resp;
    if (absl::Status s = FromGrpc(stub_->ImageStatus(&ctx, req, &resp), "ImageStatus"); !s.ok()) return s;
    if (!resp.has_image() || resp.image().id().empty()) return std::optional<ImageInfo>();
    return std::optional<ImageInfo>(ImageInfo{resp.image().id(), resp.image().size()});
  }

  absl::StatusOr<std::string> PullImage(const std::string& image, const std::optional<RegistryAuth>& auth,
                                        absl::Duration timeout) override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
    runtime::v1::PullImageRequest req;
    req.mutable_image()->set_image(image);
    if (auth.has_value()) {
      runtime::v1::AuthConfig* a = req.mutable_auth();
      a->set_username(auth->username);
      a->set_password(auth->password);
      a->set_auth(auth->auth);
      a->set_server_address(auth->server_address);
      a->set_identity_token(auth->identity_token);
      a->set_registry_token(auth->registry_token);
    }
    runtime::v1::PullImageResponse resp;
    if (absl::Status s = FromGrpc(stub_->PullImage(&ctx, req, &resp), "PullImage"); !s.ok()) return s;
    return resp.image_ref();
  }

 private:
  std::unique_ptr<runtime::v1::ImageService::Stub> stub_;
  const absl::Duration status_timeout_;
};

class GrpcRuntimeService final : public ContainerRuntime {
 public:
  explicit GrpcRuntimeService(std::shared_ptr<grpc::Channel> channel)
      : stub_(runtime::v1::RuntimeService::NewStub(std::move(channel))) {}

  absl::Status StopContainer(const std::string& container_id, absl::Duration timeout) override {
    grpc::ClientContext ctx;
    // The runtime answers after the container stopped: up to `timeout` plus the SIGKILL and clean-up.
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout + absl::Seconds(30)));
    runtime::v1::StopContainerRequest req;
    req.set_container_id(container_id);
    req.set_timeout(absl::ToInt64Seconds(timeout));
    runtime::v1::StopContainerResponse resp;
    return FromGrpc(stub_->StopContainer(&ctx, req, &resp), "StopContainer");
  }

 private:
  std::unique_ptr<runtime::v1::RuntimeService::Stub> stub_;
};

std::shared_ptr<grpc::Channel> Channel(const std::string& endpoint) {
  const std::string target = endpoint.find("://") == std::string::npos ? absl::StrCat("unix://", endpoint) : endpoint;
  return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
}

}  // namespace

std::unique_ptr<ImageService> NewCriImageService(const std::string& endpoint, absl::Duration status_timeout) {
  return std::make_unique<GrpcImageService>(Channel(endpoint), status_timeout);
}

std::unique_ptr<ContainerRuntime> NewCriRuntimeService(const std::string& endpoint) {
  return std::make_unique<GrpcRuntimeService>(Channel(endpoint));
}

}  // namespace cloneset::agent
