#include "executor/shards.h"

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace cloneset::executor {

namespace {
constexpr char kShardPrefix[] = "cloneset-executor-shard-";
constexpr char kMemberPrefix[] = "cloneset-executor-member-";
}  // namespace

uint32_t Fnv1a32(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

int ShardOf(std::string_view key, int shards) {
  return shards <= 1 ? 0 : static_cast<int>(Fnv1a32(key) % static_cast<uint32_t>(shards));
}

std::string ShardLeaseName(int shard) { return kShardPrefix + std::to_string(shard); }
std::string MemberLeaseName(std::string_view identity) {
  return absl::StrFormat("%s%08x", kMemberPrefix, Fnv1a32(identity));
}

int FairShare(int shards, int live) {
  if (live < 1) live = 1;
  return (shards + live - 1) / live;
}

ShardRound DecideShards(const std::vector<bool>& held, int quota) {
  ShardRound r;
  int count = 0;
  for (bool h : held) count += h;
  int extra = count - quota;
  for (int i = static_cast<int>(held.size()) - 1; i >= 0; --i) {
    if (!held[i]) continue;
    if (extra > 0) {
      r.release.push_back(i);
      --extra;
    }
  }
  for (int i = 0; i < static_cast<int>(held.size()); ++i) {
    if (held[i] && std::find(r.release.begin(), r.release.end(), i) == r.release.end()) r.renew.push_back(i);
  }
  if (count < quota) {
    for (int i = 0; i < static_cast<int>(held.size()); ++i) {
      if (!held[i]) r.try_acquire.push_back(i);
    }
  }
  return r;
}

std::vector<int> ShardsToEnqueue(const std::vector<bool>& held, const std::vector<bool>& was_held,
                                 const std::vector<bool>& skipped) {
  std::vector<int> out;
  for (size_t i = 0; i < held.size(); ++i) {
    const bool gained = i >= was_held.size() || !was_held[i];
    const bool was_skipped = i < skipped.size() && skipped[i];
    if (held[i] && (gained || was_skipped)) out.push_back(static_cast<int>(i));
  }
  return out;
}

int CountLiveMembers(std::string_view leases_json, absl::Time now) {
  const auto doc = nlohmann::json::parse(leases_json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) return 0;
  int live = 0;
  for (const auto& item : doc["items"]) {
    const std::string name = item.value("/metadata/name"_json_pointer, std::string());
    if (!name.starts_with(kMemberPrefix)) continue;
    auto lease = kube::ParseLease(item.dump());
    if (!lease.ok() || lease->holder.empty()) continue;
    if (lease->renew_time + absl::Seconds(lease->lease_duration_seconds) > now) ++live;
  }
  return live;
}

ShardManager::ShardManager(kube::RestClient& client, ShardOptions options,
                           std::function<void(int shard, bool gained)> on_acquired)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : base::RealClock::Get()),
      on_acquired_(std::move(on_acquired)) {
  const auto config = [&](std::string name, prometheus::Registry* registry) {
    kube::LeaderElectionConfig c;
    c.lease_namespace = options_.lease_namespace;
    c.lease_name = std::move(name);
    c.identity = options_.identity;
    c.lease_duration = options_.lease_duration;
    c.renew_deadline = options_.renew_deadline;
    c.retry_period = options_.retry_period;
    c.clock = &clock_;
    c.registry = registry;
    return c;
  };
  // The membership Lease only feeds the fair share, which with one shard is that shard whatever the number of
  // replicas: one shard needs neither it nor the LIST of Leases each round (two requests a round fewer at idle).
  if (options_.shards > 1) {
    member_ = std::make_unique<kube::LeaderElector>(client, config(MemberLeaseName(options_.identity), nullptr));
  }
  for (int i = 0; i < options_.shards; ++i) {
    electors_.push_back(std::make_unique<kube::LeaderElector>(client, config(ShardLeaseName(i), options_.registry)));
  }
  was_leader_.assign(options_.shards, false);
  skipped_.assign(options_.shards, false);
}

ShardManager::~ShardManager() { Stop(/*release=*/false); }

void ShardManager::RunRound() {
  int live = 1;
  if (member_) {
    (void)member_->TryAcquireOrRenew();
    auto leases = client_.List("/apis/coordination.k8s.io/v1/namespaces/" + options_.lease_namespace + "/leases", {});
    if (leases.ok()) live = std::max(1, CountLiveMembers(*leases, clock_.Now()));
  }
  std::vector<bool> held(options_.shards);
  for (int i = 0; i < options_.shards; ++i) held[i] = electors_[i]->IsLeader();
  const ShardRound round = DecideShards(held, FairShare(options_.shards, live));
  for (int i : round.release) (void)electors_[i]->Release();
  for (int i : round.renew) (void)electors_[i]->TryAcquireOrRenew();
  int owned = static_cast<int>(round.renew.size());
  const int quota = FairShare(options_.shards, live);
  for (int i : round.try_acquire) {
    if (owned >= quota) break;
    auto got = electors_[i]->TryAcquireOrRenew();
    if (got.ok() && *got) ++owned;
  }
  std::vector<bool> held_now(options_.shards);
  for (int i = 0; i < options_.shards; ++i) held_now[i] = electors_[i]->IsLeader();
  std::vector<bool> skipped;
  {
    // Cleared only for shards held now: a worker's "no" after this point marks the shard for the next round.
    absl::MutexLock l(&skipped_mu_);
    skipped = skipped_;
    for (int i = 0; i < options_.shards; ++i) {
      if (held_now[i]) skipped_[i] = false;
    }
  }
  for (int i : ShardsToEnqueue(held_now, was_leader_, skipped)) {
    if (on_acquired_) on_acquired_(i, !was_leader_[i]);
  }
  was_leader_ = std::move(held_now);
}

void ShardManager::Start() {
  thread_ = std::thread([this] {
    for (;;) {
      RunRound();
      absl::MutexLock l(&mu_);
      if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), options_.retry_period)) return;
    }
  });
}

void ShardManager::Stop(bool release) {
  {
    absl::MutexLock l(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  if (!release) return;
  for (auto& e : electors_) (void)e->Release();
  if (member_) (void)member_->Release();
}

bool ShardManager::Owns(std::string_view key) {
  const int shard = ShardOf(key, options_.shards);
  if (OwnsShard(shard)) return true;
  absl::MutexLock l(&skipped_mu_);
  if (shard >= 0 && shard < static_cast<int>(skipped_.size())) skipped_[shard] = true;
  return false;
}

bool ShardManager::OwnsShard(int shard) const {
  return shard >= 0 && shard < static_cast<int>(electors_.size()) && electors_[shard]->IsLeader();
}

int ShardManager::owned() const {
  int n = 0;
  for (const auto& e : electors_) n += e->IsLeader();
  return n;
}

}  // namespace cloneset::executor
