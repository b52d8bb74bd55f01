// The coordinator's imperative shell: every `period` while there are jobs (watched, see watch_jobs) it lists ImagePullJobs and NodeImages, the pods each job
// selects and the owning CloneSet's status, runs DecideJob, writes new pull requests into the nodes' NodeImage
// specs (resourceVersion-guarded merge patches), the job status (status subresource) and events, and removes
// the requests of deleted jobs (deleting a NodeImage left empty). All state lives in the API server, so a
// restarted executor continues where the last one stopped. Run it in one replica only (leader lease).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "kube/event_recorder.h"
#include "kube/rest_client.h"

namespace prometheus {
class Registry;
template <typename T>
class Family;
class Counter;
class Gauge;
}  // namespace prometheus

namespace cloneset::kube {
template <typename T>
class Informer;
}  // namespace cloneset::kube

namespace cloneset::imagepull {

struct CoordinatorOptions {
  absl::Duration period = absl::Seconds(1);
  // Watch the ImagePullJobs (a list+watch informer) and run no round while there is none: an idle cluster then
  // costs one open watch instead of a LIST every period, and a new job starts a round at once. Off: a round (at
  // least one LIST) every period.
  bool watch_jobs = false;
  const base::Clock* clock = nullptr;          // RealClock when null
  kube::EventRecorder* events = nullptr;       // no events when null
  prometheus::Registry* registry = nullptr;    // cloneset_imagepull_* metrics when set
};

struct RoundStats {
  int jobs = 0;
  int assigned = 0;
  int status_writes = 0;
  int deleted = 0;  // jobs of finished rollouts
  int node_writes = 0;
  int errors = 0;
  bool crd_missing = false;  // the ImagePullJob CRD is not installed: pre-download is off
};

class Coordinator {
 public:
  Coordinator(kube::RestClient& client, CoordinatorOptions options);
  ~Coordinator();

  // One pass over every job. Errors of single objects are counted and retried next round.
  absl::StatusOr<RoundStats> RunOnce();
  // Runs RunOnce every period on a thread while `active()` (e.g. "we hold the lease") is true.
  void Start(std::function<bool()> active = nullptr);
  void Stop();

 private:
  kube::RestClient& client_;
  const CoordinatorOptions opts_;
  const base::Clock& clock_;
  prometheus::Family<prometheus::Counter>* rounds_ = nullptr;
  prometheus::Family<prometheus::Gauge>* nodes_gauge_ = nullptr;
  // The jobs as watched (watch_jobs): only whether there are any is read.
  std::unique_ptr<kube::Informer<std::string>> jobs_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool job_event_ ABSL_GUARDED_BY(mu_) = false;  // a job came, changed or went since the last round
  std::thread thread_;
};

}  // namespace cloneset::imagepull
