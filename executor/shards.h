// Sharding of CloneSets over executor replicas with coordination.k8s.io Leases.
//
// A CloneSet belongs to shard fnv1a32("namespace/name") mod N. Shard i is owned by whoever holds the Lease
// `cloneset-executor-shard-<i>` in the lease namespace (15 s lease, 10 s renew deadline, 2 s retry). A replica
// only reconciles keys of shards it holds and checks ownership before every write; kube::LeaderElector's
// IsLeader() turns false once no renewal succeeded for the renew deadline, which is shorter than the lease, so a
// replica stops writing before anyone else can take the shard over.
//
// Fair share: every replica also holds a membership Lease `cloneset-executor-member-<fnv(identity)>` so replicas
// that own no shard are visible. Each round (every retry period) a replica counts the live members (membership
// Leases with a holder and renewTime + duration in the future), computes quota = ceil(N / live), renews the shards
// it holds, releases the highest-numbered extras when it holds more than the quota (a newcomer takes them), and
// tries free or expired shards while it holds fewer than the quota. With one replica alive, quota = N: one replica
// owns every shard. Releases set the holder to "" so the successor need not wait for expiry.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/clock.h"
#include "kube/leader_lease.h"
#include "kube/rest_client.h"

namespace cloneset::executor {

uint32_t Fnv1a32(std::string_view s);
int ShardOf(std::string_view key, int shards);
std::string ShardLeaseName(int shard);
std::string MemberLeaseName(std::string_view identity);

// ceil(shards / max(1, live_replicas)).
int FairShare(int shards, int live_replicas);

// What one round does to each shard, given which ones we hold and the quota. Pure.
struct ShardRound {
  std::vector<int> renew;    // held, within quota
  std::vector<int> release;  // held, over quota (highest numbers first)
  std::vector<int> try_acquire;  // not held, in order, while under quota
};
ShardRound DecideShards(const std::vector<bool>& held, int quota);

// Counts live members among `leases_json` (a LeaseList) with the member name prefix. `now` judges expiry.
int CountLiveMembers(std::string_view leases_json, absl::Time now);

struct ShardOptions {
  int shards = 1;
  std::string lease_namespace = "cloneset-system";
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  const kube::Clock* clock = nullptr;
  prometheus::Registry* registry = nullptr;  // leader_election_master_status{name=<shard lease>}
};

class ShardManager {
 public:
  // `on_acquired(shard)` runs (on the manager thread) when a shard is gained, so its keys get enqueued.
  ShardManager(kube::RestClient& client, ShardOptions options, std::function<void(int)> on_acquired);
  ~ShardManager();

  void Start();
  // Stops renewing; with `release`, gives every held Lease up.
  void Stop(bool release = true);
  // One round (exposed for tests; Start() runs it every retry period).
  void RunRound();

  bool OwnsShard(int shard) const;
  bool Owns(std::string_view key) const { return OwnsShard(ShardOf(key, options_.shards)); }
  int owned() const;
  int shards() const { return options_.shards; }

 private:
  kube::RestClient& client_;
  const ShardOptions options_;
  const kube::Clock& clock_;
  std::function<void(int)> on_acquired_;
  std::unique_ptr<kube::LeaderElector> member_;
  std::vector<std::unique_ptr<kube::LeaderElector>> electors_;
  std::vector<bool> was_leader_;  // manager thread only
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cloneset::executor
