#ifndef CLONESET_KUBE_LEADER_LEASE_H_
#define CLONESET_KUBE_LEADER_LEASE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "kube/rest_client.h"

namespace prometheus {
class Registry;
class Gauge;
}  // namespace prometheus

namespace cloneset::kube {

// The spec of a coordination.k8s.io/v1 Lease plus its resourceVersion.
struct LeaseRecord {
  std::string holder;  // spec.holderIdentity; "" = released
  int lease_duration_seconds = 0;
  absl::Time acquire_time = absl::InfinitePast();
  absl::Time renew_time = absl::InfinitePast();
  int transitions = 0;
  std::string resource_version;
  bool operator==(const LeaseRecord&) const = default;
};

// MicroTime as the API server writes it: "2006-01-02T15:04:05.000000Z".
std::string FormatMicroTime(absl::Time t);
absl::StatusOr<absl::Time> ParseMicroTime(const std::string& s);
absl::StatusOr<LeaseRecord> ParseLease(std::string_view json);
std::string LeaseJson(const std::string& ns, const std::string& name, const LeaseRecord& r);

enum class LeaseAction { kAcquire, kRenew, kWait };
struct LeaseDecision {
  LeaseAction action;
  LeaseRecord next;  // what to write for kAcquire / kRenew
};

// The pure decision. Expiry is judged by `observed_at` (when WE last saw the
// record change) plus the record's own duration, never by the holder's
// renewTime, so clock skew between replicas cannot steal a live lease
// (client-go does the same).
LeaseDecision DecideLease(const std::optional<LeaseRecord>& lease, absl::Time observed_at,
                          std::string_view me, absl::Duration lease_duration, absl::Time now);

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  const base::Clock* clock = nullptr;  // RealClock when null
  prometheus::Registry* registry = nullptr;  // leader_election_master_status{name=<lease>}
};

// Acquires, renews and releases one Lease with optimistic concurrency
// (PUT carrying the resourceVersion we read; a 409 means someone else won).
class LeaderElector {
 public:
  LeaderElector(RestClient& client, LeaderElectionConfig config);
  ~LeaderElector();

  // One round: read, decide, write. Returns whether we hold the lease now. A leader first renews without the
  // read, on the record its last write returned (as client-go's leader election does since 1.28): one request a
  // round instead of two; a 409 or an error falls back to the read-decide-write round.
  absl::StatusOr<bool> TryAcquireOrRenew();
  // Gives the lease up (holder "", 1 s duration) if we hold it, so a
  // successor need not wait for expiry.
  absl::Status Release();
  // True while the last successful renewal is younger than renew_deadline.
  bool IsLeader() const;

  // Runs TryAcquireOrRenew every retry_period on a thread. on_started runs
  // when leadership is gained, on_stopped when it is lost (no renewal for
  // renew_deadline) or on Stop().
  void Start(std::function<void()> on_started, std::function<void()> on_stopped);
  void Stop(bool release = true);

 private:
  std::string Path(bool item) const;
  void SetLeader(bool leader);
  // The renewal without the read; true when it succeeded.
  bool RenewOptimistically();

  RestClient& client_;
  const LeaderElectionConfig cfg_;
  const base::Clock& clock_;
  prometheus::Gauge* gauge_ = nullptr;

  mutable absl::Mutex mu_;
  std::optional<LeaseRecord> observed_ ABSL_GUARDED_BY(mu_);
  absl::Time observed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time last_renew_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool leader_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_LEADER_LEASE_H_
