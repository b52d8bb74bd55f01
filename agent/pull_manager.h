// Serves this node's pull requests (NodeImage spec.pulls) and reports them (NodeImage status.pulls).
// Restart-safe by construction: a request with a terminal report is never started again, and an interrupted
// one (report Pulling, no local worker) is re-run, which costs one ImageStatus when the image arrived meanwhile.
// At most --max_concurrent_pulls run at once on the node, whatever the number of jobs.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/cri_client.h"
#include "base/clock.h"
#include "imagepull/types.h"

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace cloneset::agent {

// The agent's only API access for pulls: its own NodeImage and the named pull Secrets.
class NodeImageApi {
 public:
  virtual ~NodeImageApi() = default;
  virtual absl::StatusOr<imagepull::NodeImage> Get() = 0;  // NotFound: no requests for this node
  // Replaces status.pulls, guarded by the resourceVersion of `read`. Conflict -> the caller re-reads.
  virtual absl::Status WriteReports(const imagepull::NodeImage& read, const std::vector<imagepull::PullReport>& reports) = 0;
  virtual absl::StatusOr<std::string> GetSecret(const std::string& ns, const std::string& name) = 0;
};

struct PullPlan {
  std::vector<imagepull::PullReport> reports;  // the status to write (one per request, in request order)
  std::vector<imagepull::PullRequest> start;   // requests to start now
};

// Pure: which requests to start given those running here, and the resulting reports.
PullPlan DecidePulls(const imagepull::NodeImage& node, const std::set<std::string>& running_uids, int max_concurrent,
                     absl::Time now);

struct PullMetrics {
  explicit PullMetrics(prometheus::Registry* registry);
  prometheus::Counter* success = nullptr;
  prometheus::Counter* already_present = nullptr;
  prometheus::Counter* failure = nullptr;
  prometheus::Histogram* duration = nullptr;
  prometheus::Gauge* in_flight = nullptr;
  prometheus::Counter* bytes = nullptr;
};

class PullManager {
 public:
  struct Options {
    int max_concurrent = 2;
    const base::Clock* clock = nullptr;  // RealClock when null
    prometheus::Registry* registry = nullptr;
    absl::Duration resync = absl::Seconds(5);
  };
  PullManager(NodeImageApi& api, ImageService& cri, Options options);
  ~PullManager();

  // One reconcile of the NodeImage: writes reports and starts workers. Thread-safe.
  absl::Status Sync();
  // Sync on Notify() (a watch event) or every `resync` of the clock, on a thread.
  void Start();
  void Notify();
  // Ends the loop's wait and waiting workers' backoffs at once (whatever the clock says) and joins everything;
  // running CRI calls end at their deadline.
  void Stop();
  int running() const;

 private:
  void Work(imagepull::PullRequest request);
  absl::Status Report(const imagepull::PullReport& report);
  bool SleepUnlessStopped(absl::Duration d);
  bool Woken() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || notified_; }

  NodeImageApi& api_;
  ImageService& cri_;
  const Options opts_;
  const base::Clock& clock_;
  PullMetrics metrics_;
  mutable absl::Mutex mu_;
  absl::Mutex write_mu_;  // one status read-modify-write at a time
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> running_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(mu_);
  std::thread loop_;
};

}  // namespace cloneset::agent
