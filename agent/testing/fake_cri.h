// Test double of the CRI ImageService: scripted failures, present images, call counts.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "agent/cri_client.h"

namespace cloneset::agent::testing {

class FakeCri final : public ImageService {
 public:
  absl::StatusOr<std::optional<ImageInfo>> ImageStatus(const std::string& image) override {
    absl::MutexLock l(&mu_);
    ++status_calls;
    if (present_.contains(image)) return std::optional<ImageInfo>(ImageInfo{"sha256:" + image, 1000});
    return std::optional<ImageInfo>();
  }
  absl::StatusOr<std::string> PullImage(const std::string& image, const std::optional<RegistryAuth>& auth,
                                        absl::Duration timeout) override {
    absl::MutexLock l(&mu_);
    ++pull_calls[image];
    last_timeout = timeout;
    if (auth) last_auth = *auth;
    if (!failures_.empty()) {
      absl::Status s = failures_.front();
      failures_.pop_front();
      if (!s.ok()) return s;
    }
    if (always_fail_.contains(image)) return absl::UnavailableError("registry down");
    present_.insert(image);
    return "sha256:" + image;
  }
  void Preload(const std::string& image) {
    absl::MutexLock l(&mu_);
    present_.insert(image);
  }
  void FailNext(absl::Status s) {
    absl::MutexLock l(&mu_);
    failures_.push_back(std::move(s));
  }
  void AlwaysFail(const std::string& image) {
    absl::MutexLock l(&mu_);
    always_fail_.insert(image);
  }
  int Pulls(const std::string& image) {
    absl::MutexLock l(&mu_);
    return pull_calls[image];
  }

  absl::Mutex mu_;
  int status_calls = 0;
  std::map<std::string, int> pull_calls;
  absl::Duration last_timeout;
  std::optional<RegistryAuth> last_auth;

 private:
  std::set<std::string> present_;
  std::set<std::string> always_fail_;
  std::deque<absl::Status> failures_;
};

}  // namespace cloneset::agent::testing
