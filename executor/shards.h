// Sharding of CloneSets over executor replicas with coordination.k8s.io Leases.
//
// A CloneSet belongs to shard fnv1a32("namespace/name") mod N. Shard i is owned by whoever holds the Lease
// `cloneset-executor-shard-<i>` in the lease namespace (15 s lease, 10 s renew deadline, 2 s retry). A replica
// only reconciles keys of shards it holds and checks ownership before every write; kube::LeaderElector's
// IsLeader() turns false once no renewal succeeded for the renew deadline, which is shorter than the lease, so a
// replica stops writing before anyone else can take the shard over.
//
// Fair share: with more than one shard, every replica also holds a membership Lease
// `cloneset-executor-member-<fnv(identity)>` so replicas that own no shard are visible (with one shard the fair
// share is that shard whatever the number of replicas, so there is no membership Lease and no LIST of Leases). Each round (every retry period) a replica counts the live members (membership
// Leases with a holder and renewTime + duration in the future), computes quota = ceil(N / live), renews the shards
// it holds, releases the highest-numbered extras when it holds more than the quota (a newcomer takes them), and
// tries free or expired shards while it holds fewer than the quota. With one replica alive, quota = N: one replica
// owns every shard. Releases set the holder to "" so the successor need not wait for expiry.
//
// No key is lost while a shard is not held. A worker that finds a key's shard not ours (Owns() answers no) skips
// it: nothing requeues it, and no further event may ever come (a settled CloneSet). So every "no" marks the shard,
// and the round that next finds the shard held enqueues all its CloneSets again (on_acquired), as it does when the
// shard is gained. Sampling held/not held once per round would not do: IsLeader() turns false the moment the renew
// deadline passes, between two rounds or inside one, and the next successful renewal turns it true again before
// any round sees the gap (with failed renewals for longer than renew_deadline: seed 1795628852598324 stalled both
// CloneSets of the fault suite's API-fault test that way, docs/reliability.md).
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
#include "base/clock.h"
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

// The shards whose CloneSets a round enqueues (pure): held at the end of the round and either not held at the end of
// the last one (gained) or found not held by a worker since their keys were last enqueued (`skipped`).
std::vector<int> ShardsToEnqueue(const std::vector<bool>& held, const std::vector<bool>& was_held,
                                 const std::vector<bool>& skipped);

// Counts live members among `leases_json` (a LeaseList) with the member name prefix. `now` judges expiry.
int CountLiveMembers(std::string_view leases_json, absl::Time now);

struct ShardOptions {
  int shards = 1;
  std::string lease_namespace = "cloneset-system";
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  const base::Clock* clock = nullptr;
  prometheus::Registry* registry = nullptr;  // leader_election_master_status{name=<shard lease>}
};

class ShardManager {
 public:
  // `on_acquired(shard, gained)` runs on the manager thread for each shard of ShardsToEnqueue after a round and
  // enqueues the shard's CloneSets; `gained`: the shard was not held at the end of the last round (else a worker
  // skipped one of its keys since the last call).
  ShardManager(kube::RestClient& client, ShardOptions options,
               std::function<void(int shard, bool gained)> on_acquired);
  ~ShardManager();

  void Start();
  // Stops renewing; with `release`, gives every held Lease up.
  void Stop(bool release = true);
  // One round (exposed for tests; Start() runs it every retry period).
  void RunRound();

  bool OwnsShard(int shard) const;
  // For workers, before they act on `key`: whether its shard is held. A "no" means the key is skipped, so it marks
  // the shard and its CloneSets are enqueued once it is held again (see above).
  bool Owns(std::string_view key);
  int owned() const;
  int shards() const { return options_.shards; }

 private:
  kube::RestClient& client_;
  const ShardOptions options_;
  const base::Clock& clock_;
  std::function<void(int, bool)> on_acquired_;
  std::unique_ptr<kube::LeaderElector> member_;
  std::vector<std::unique_ptr<kube::LeaderElector>> electors_;
  std::vector<bool> was_leader_;  // manager thread only
  absl::Mutex skipped_mu_;
  std::vector<bool> skipped_ ABSL_GUARDED_BY(skipped_mu_);  // a worker found the shard not held
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cloneset::executor
