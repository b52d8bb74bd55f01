// In-memory NodeImageApi with resourceVersion checks (a stale write is a conflict, like the API server).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/pull_manager.h"

namespace cloneset::agent::testing {

class FakeNodeApi final : public NodeImageApi {
 public:
  absl::StatusOr<imagepull::NodeImage> Get() override {
    absl::MutexLock l(&mu_);
    if (!exists_) return absl::NotFoundError("nodeimages \"n0\" not found");
    return node_;
  }
  absl::Status WriteReports(const imagepull::NodeImage& read, const std::vector<imagepull::PullReport>& reports) override {
    absl::MutexLock l(&mu_);
    ++writes;
    if (read.resource_version != node_.resource_version) return absl::AbortedError("Conflict");
    node_.reports = reports;
    Bump();
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> GetSecret(const std::string& ns, const std::string& name) override {
    absl::MutexLock l(&mu_);
    secret_reads.push_back(ns + "/" + name);
    auto it = secrets.find(ns + "/" + name);
    if (it == secrets.end()) return absl::NotFoundError(absl::StrCat("secrets \"", name, "\" not found"));
    return it->second;
  }
  void SetRequests(std::vector<imagepull::PullRequest> requests) {
    absl::MutexLock l(&mu_);
    exists_ = true;
    node_.node = "n0";
    node_.requests = std::move(requests);
    Bump();
  }
  imagepull::NodeImage Snapshot() {
    absl::MutexLock l(&mu_);
    return node_;
  }
  // Waits, at most `timeout` of real time, until `done` holds for the stored NodeImage (re-checked after every
  // write), and returns whether it does: a test waits for the agent's reports without sleeping.
  bool AwaitNode(const std::function<bool(const imagepull::NodeImage&)>& done, absl::Duration timeout) {
    absl::MutexLock l(&mu_);
    const auto holds = [&]() { return done(node_); };
    return mu_.AwaitWithTimeout(absl::Condition(&holds), timeout);
  }

  absl::Mutex mu_;
  std::map<std::string, std::string> secrets;  // "ns/name" -> Secret JSON
  std::vector<std::string> secret_reads;
  int writes = 0;

 private:
  void Bump() { node_.resource_version = std::to_string(++rv_); }
  bool exists_ = false;
  imagepull::NodeImage node_;
  int rv_ = 0;
};

}  // namespace cloneset::agent::testing
