#include "devcluster/nodes/cri_server.h"

#include <sys/un.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "runtime/v1/cri.grpc.pb.h"

namespace cloneset::devcluster::nodes {
namespace {

namespace v1 = ::runtime::v1;

void FillImage(const ImageRecord& rec, v1::Image* out) {
  out->set_id(rec.id);
  out->add_repo_tags(rec.ref);
  auto at = rec.ref.find('@');
  auto colon = rec.ref.rfind(':');
  std::string repo = at != std::string::npos ? rec.ref.substr(0, at) : rec.ref.substr(0, colon);
  out->add_repo_digests(absl::StrCat(repo, "@", rec.id));
  out->set_size(rec.size);
  out->mutable_spec()->set_image(rec.ref);
}

class RuntimeImpl final : public v1::RuntimeService::Service {
 public:
  grpc::Status Version(grpc::ServerContext*, const v1::VersionRequest*, v1::VersionResponse* resp) override {
    resp->set_version("0.1.0");
    resp->set_runtime_name("devcluster-sim");
    resp->set_runtime_version("1.0.0");
    resp->set_runtime_api_version("v1");
    return grpc::Status::OK;
  }
};

class ImageImpl final : public v1::ImageService::Service {
 public:
  ImageImpl(ImageStore* images, base::Clock* clock) : images_(images), clock_(clock) {}

  grpc::Status ListImages(grpc::ServerContext*, const v1::ListImagesRequest* req,
                          v1::ListImagesResponse* resp) override {
    std::string filter = req->filter().image().image();
    std::string norm = filter.empty() ? "" : NormalizeImage(filter);
    for (const auto& rec : images_->List(clock_->ChronoNow())) {
      if (!norm.empty() && rec.ref != norm && rec.id != filter) continue;
      FillImage(rec, resp->add_images());
    }
    return grpc::Status::OK;
  }

  grpc::Status ImageStatus(grpc::ServerContext*, const v1::ImageStatusRequest* req,
                           v1::ImageStatusResponse* resp) override {
    if (req->image().image().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "image.image: must not be empty");
    }
    auto rec = images_->Status(req->image().image(), clock_->ChronoNow());
    // Like containerd: an absent image is a successful response without `image`.
    if (rec && rec->present) FillImage(*rec, resp->mutable_image());
    return grpc::Status::OK;
  }

  grpc::Status PullImage(grpc::ServerContext* ctx, const v1::PullImageRequest* req,
                         v1::PullImageResponse* resp) override {
    const std::string& image = req->image().image();
    if (image.empty()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "image.image: must not be empty");
    if (req->has_auth()) {
      images_->RecordAuth(RecordedAuth{.image = image,
                                       .username = req->auth().username(),
                                       .password = req->auth().password(),
                                       .auth = req->auth().auth(),
                                       .server_address = req->auth().server_address()});
    }
    ImageView view = images_->EnsurePull(image, clock_->ChronoNow());
    if (!view.error.ok()) return grpc::Status(grpc::StatusCode::UNKNOWN, std::string(view.error.message()));
    auto status = images_->Status(image, clock_->ChronoNow());
    uint64_t generation = status ? status->pull_generation : 0;
    // Wait in short steps so a cancelled client (timeout) abandons the pull promptly.
    while (!view.present && clock_->ChronoNow() < view.ready_at) {
      if (ctx->IsCancelled()) {
        images_->CancelPull(image, generation, clock_->ChronoNow());
        return grpc::Status(grpc::StatusCode::CANCELLED, "pull cancelled by the client");
      }
      clock_->SleepUntil(std::min(absl::FromChrono(view.ready_at), clock_->Now() + absl::Milliseconds(20)));
    }
    auto done = images_->Status(image, clock_->ChronoNow());
    if (!done || !done->present) {
      return grpc::Status(grpc::StatusCode::ABORTED, absl::StrCat("pull of ", image, " was abandoned"));
    }
    resp->set_image_ref(done->id);
    return grpc::Status::OK;
  }

  grpc::Status RemoveImage(grpc::ServerContext*, const v1::RemoveImageRequest* req,
                           v1::RemoveImageResponse*) override {
    // Removing an absent image succeeds, as in the CRI contract (idempotent).
    images_->Remove(req->image().image(), clock_->ChronoNow());
    return grpc::Status::OK;
  }

  grpc::Status ImageFsInfo(grpc::ServerContext*, const v1::ImageFsInfoRequest*,
                           v1::ImageFsInfoResponse* resp) override {
    auto now = clock_->ChronoNow();
    uint64_t used = 0;
    auto list = images_->List(now);
    for (const auto& rec : list) used += rec.size;
    auto* fs = resp->add_image_filesystems();
    fs->set_timestamp(std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
    fs->mutable_fs_id()->set_mountpoint("/var/lib/devcluster/" + images_->node() + "/images");
    fs->mutable_used_bytes()->set_value(used);
    fs->mutable_inodes_used()->set_value(list.size());
    return grpc::Status::OK;
  }

 private:
  ImageStore* images_;
  base::Clock* clock_;
};

}  // namespace

CriServer::~CriServer() { Stop(); }

absl::StatusOr<std::unique_ptr<CriServer>> CriServer::Start(const std::string& socket_path, ImageStore* images,
                                                             base::Clock* clock) {
  if (socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("CRI socket path \"", socket_path, "\" is longer than ",
                                                   sizeof(sockaddr_un{}.sun_path) - 1,
                                                   " bytes (unix socket limit); use a shorter --run-dir"));
  }
  std::error_code ec;
  std::filesystem::path path(socket_path);
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("creating ", path.parent_path().string(), ": ", ec.message()));
  std::filesystem::remove(path, ec);

  std::unique_ptr<CriServer> s(new CriServer());
  s->socket_path_ = socket_path;
  s->runtime_ = std::make_unique<RuntimeImpl>();
  s->image_ = std::make_unique<ImageImpl>(images, clock);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(s->runtime_.get());
  builder.RegisterService(s->image_.get());
  // Many nodes each run a server: keep the idle thread count per server minimal.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr) return absl::UnavailableError(absl::StrCat("cannot listen on unix://", socket_path));
  return s;
}

void CriServer::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
  server_.reset();
  std::error_code ec;
  std::filesystem::remove(socket_path_, ec);
}

}  // namespace cloneset::devcluster::nodes
