#include "planner/delete_order.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json.hpp"
#include "planner/predicates.h"

namespace cloneset::planner {
namespace {

constexpr char kHostnameKey[] = "kubernetes.io/hostname";

// Everything the comparator reads, computed once per pod.
struct Key {
  bool unscheduled = false;
  int phase_order = 0;
  bool available = false;
  bool ready = false;
  int32_t cost = 0;
  double rank = 0;
  absl::Time ready_time;  // InfiniteFuture when zero: "zero counts as latest"
  int32_t restarts = 0;
  absl::Time created;  // InfiniteFuture when zero: "zero counts as newest"
};

int PhaseOrder(const std::string& phase) {
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 0;  // Pending and anything else
}

Key KeyOf(const PlanContext& ctx, const pb::Pod& pod) {
  Key k;
  k.unscheduled = pod.node_name().empty();
  k.phase_order = PhaseOrder(pod.phase());
  k.available = IsAvailable(pod, ctx.spec.min_ready_seconds, ctx.now);
  k.ready = IsK8sReady(pod);
  k.cost = DeletionCost(pod);
  const pb::Condition* ready = FindCondition(pod, "Ready");
  k.ready_time = ready != nullptr && IsSet(ready->last_transition_time()) ? ToTime(ready->last_transition_time())
                                                                           : absl::InfiniteFuture();
  for (const auto& s : pod.container_statuses()) k.restarts = std::max(k.restarts, s.restart_count());
  k.created = IsSet(pod.metadata().creation_timestamp()) ? ToTime(pod.metadata().creation_timestamp())
                                                         : absl::InfiniteFuture();
  return k;
}

// "a is deleted before b". The same-node ranker sorts without availability and rank.
bool Before(const Key& a, const Key& b, bool use_availability_and_rank) {
  if (a.unscheduled != b.unscheduled) return a.unscheduled;
  if (a.phase_order != b.phase_order) return a.phase_order < b.phase_order;
  if (use_availability_and_rank && a.available != b.available) return !a.available;
  if (a.ready != b.ready) return !a.ready;
  if (a.cost != b.cost) return a.cost < b.cost;
  if (use_availability_and_rank && a.rank != b.rank) return a.rank > b.rank;
  if (a.ready && b.ready && a.ready_time != b.ready_time) return a.ready_time > b.ready_time;
  if (a.restarts != b.restarts) return a.restarts > b.restarts;
  if (a.created != b.created) return a.created > b.created;
  return false;
}

// Indices of `keys` sorted for deletion.
std::vector<size_t> SortedIndices(const std::vector<Key>& keys, bool use_availability_and_rank) {
  std::vector<size_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return Before(keys[a], keys[b], use_availability_and_rank); });
  return idx;
}

// Same-node ranker over `keys` (indices into the caller's pods): on a node with n >= 2 pods the best one keeps
// rank 0 and the others get n-1, n-2, ..., 1 in deletion order.
std::vector<double> SameNodeRanks(const std::vector<const pb::Pod*>& pods, const std::vector<Key>& keys) {
  std::vector<double> ranks(pods.size(), 0);
  std::map<std::string, std::vector<size_t>> by_node;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (!pods[i]->node_name().empty()) by_node[pods[i]->node_name()].push_back(i);
  }
  for (auto& [_, members] : by_node) {
    if (members.size() < 2) continue;
    std::stable_sort(members.begin(), members.end(),
                     [&](size_t a, size_t b) { return Before(keys[a], keys[b], false); });
    const size_t n = members.size();
    for (size_t j = 0; j + 1 < n; ++j) ranks[members[j]] = static_cast<double>(n - 1 - j);
  }
  return ranks;
}

}  // namespace

int32_t DeletionCost(const pb::Pod& pod) {
  const std::string_view text = Annotation(pod.metadata(), kDeletionCostAnnotation);
  if (text.empty()) return 0;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) i = 1;
  if (i >= text.size()) return 0;
  if (text[i] == '0' && text.size() - i > 1) return 0;  // leading zero
  if (negative && text.substr(i) == "0") return 0;
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return 0;
    v = v * 10 + (text[i] - '0');
    if (v > int64_t{INT32_MAX} + 1) return 0;
  }
  if (negative) v = -v;
  if (v < INT32_MIN || v > INT32_MAX) return 0;
  return static_cast<int32_t>(v);
}

std::vector<std::string> TopologySpreadKeys(const std::string& template_json) {
  std::vector<std::string> keys;
  nlohmann::json t = nlohmann::json::parse(template_json, nullptr, false);
  if (t.is_discarded() || !t.is_object()) return keys;
  auto spec = t.find("spec");
  if (spec == t.end() || !spec->is_object()) return keys;
  auto constraints = spec->find("topologySpreadConstraints");
  if (constraints == spec->end() || !constraints->is_array()) return keys;
  for (const auto& c : *constraints) {
    if (c.is_object() && c.contains("topologyKey") && c["topologyKey"].is_string()) {
      keys.push_back(c["topologyKey"].get<std::string>());
    }
  }
  return keys;
}

std::vector<double> RankPods(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods,
                             const std::vector<std::string>& spread_keys) {
  std::vector<Key> keys;
  keys.reserve(pods.size());
  for (const auto* p : pods) keys.push_back(KeyOf(ctx, *p));
  if (spread_keys.empty()) return SameNodeRanks(pods, keys);

  absl::flat_hash_map<std::string, const pb::Node*> nodes;
  for (const auto& n : ctx.request->nodes()) nodes[n.name()] = &n;
  std::vector<double> ranks(pods.size(), 0);
  for (const std::string& key : spread_keys) {
    std::map<std::string, std::vector<size_t>> topologies;
    for (size_t i = 0; i < pods.size(); ++i) {
      if (pods[i]->node_name().empty()) continue;
      auto node = nodes.find(pods[i]->node_name());
      if (node == nodes.end()) continue;  // unreadable node: skipped, as upstream
      auto label = node->second->labels().find(key);
      if (label == node->second->labels().end()) continue;
      topologies[label->second].push_back(i);
    }
    const double weight = std::log(static_cast<double>(topologies.size()) + 2);
    for (auto& [_, members] : topologies) {
      std::vector<const pb::Pod*> sub_pods;
      std::vector<Key> sub_keys;
      for (size_t i : members) {
        sub_pods.push_back(pods[i]);
        sub_keys.push_back(keys[i]);
      }
      if (key != kHostnameKey) {
        const std::vector<double> node_ranks = SameNodeRanks(sub_pods, sub_keys);
        for (size_t j = 0; j < sub_keys.size(); ++j) sub_keys[j].rank = node_ranks[j];
      }
      const std::vector<size_t> order = SortedIndices(sub_keys, true);
      const size_t k = order.size();
      for (size_t pos = 0; pos < k; ++pos) ranks[members[order[pos]]] += static_cast<double>(k - pos) * weight;
    }
  }
  return ranks;
}

std::vector<const pb::Pod*> SortForDeletion(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods) {
  const std::vector<double> ranks = RankPods(ctx, pods, TopologySpreadKeys(ctx.update_template_json));
  std::vector<Key> keys;
  keys.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    keys.push_back(KeyOf(ctx, *pods[i]));
    keys.back().rank = ranks[i];
  }
  std::vector<const pb::Pod*> out;
  out.reserve(pods.size());
  for (size_t i : SortedIndices(keys, true)) out.push_back(pods[i]);
  return out;
}

namespace {

std::vector<const pb::Pod*> Choose(const PlanContext& ctx, const std::vector<const pb::Pod*>& pods, int32_t k) {
  if (k <= 0) return {};
  if (static_cast<size_t>(k) >= pods.size()) return pods;
  std::vector<const pb::Pod*> sorted = SortForDeletion(ctx, pods);
  sorted.resize(static_cast<size_t>(k));
  return sorted;
}

}  // namespace

std::vector<const pb::Pod*> ChoosePodsToDelete(const PlanContext& ctx, int32_t total_diff, int32_t current_rev_diff,
                                               const std::vector<const pb::Pod*>& not_updated,
                                               const std::vector<const pb::Pod*>& updated) {
  if (current_rev_diff >= total_diff) return Choose(ctx, not_updated, total_diff);
  if (current_rev_diff > 0) {
    std::vector<const pb::Pod*> out = Choose(ctx, not_updated, current_rev_diff);
    std::vector<const pb::Pod*> more = Choose(ctx, updated, total_diff - current_rev_diff);
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  return Choose(ctx, updated, total_diff);
}

}  // namespace cloneset::planner
