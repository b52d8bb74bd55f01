#include "common/update_order.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "common/label_selector.h"

namespace cloneset::common {
namespace {

// An unset timestamp is InfinitePast, which no set time equals.
absl::Time TimeOf(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return absl::InfinitePast();
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

// k8s afterOrZero: a zero (unset) time counts as the latest.
bool AfterOrZero(absl::Time a, absl::Time b) {
  const bool a_set = a != absl::InfinitePast();
  const bool b_set = b != absl::InfinitePast();
  if (!a_set || !b_set) return !a_set;
  return a > b;
}

// k8s controller.ActivePods "Less": the pod that is least useful comes first.
bool ActivePodsLess(const ActiveKey& a, const ActiveKey& b) {
  const bool a_unscheduled = a.node_name.empty();
  const bool b_unscheduled = b.node_name.empty();
  if ((a_unscheduled || b_unscheduled) && a.node_name != b.node_name) return a_unscheduled;
  if (a.phase != b.phase) return a.phase < b.phase;
  if (a.ready != b.ready) return !a.ready;
  if (a.ready && b.ready && a.ready_time != b.ready_time) return AfterOrZero(a.ready_time, b.ready_time);
  if (a.restarts != b.restarts) return a.restarts > b.restarts;
  if (a.created != b.created) return AfterOrZero(a.created, b.created);
  return false;
}

// ActivePodsLess as integers (SortByActivePodsOrder): `high` holds scheduled, phase, ready and the ready time,
// `low` the restarts, the creation time and the candidate's position. Each field is mapped so that the pod that
// comes first has the smaller number.
struct PackedActiveKey {
  unsigned __int128 high;
  unsigned __int128 low;
  bool operator<(const PackedActiveKey& o) const { return high != o.high ? high < o.high : low < o.low; }
  uint32_t Position() const { return static_cast<uint32_t>(low); }
};

// A time as a number that grows as the time gets earlier, 0 for unset (k8s afterOrZero: unset counts as the
// latest, so it comes first); false when the time does not fit int64 nanoseconds.
bool LaterFirst(absl::Time t, uint64_t& out) {
  if (t == absl::InfinitePast()) {
    out = 0;
    return true;
  }
  const int64_t nanos = absl::ToUnixNanos(t);
  // ToUnixNanos saturates: a saturated value may stand for several times, which the comparator would tell apart.
  if (nanos == std::numeric_limits<int64_t>::min() || nanos == std::numeric_limits<int64_t>::max()) return false;
  // Flipping the sign bit orders int64 as uint64; inverting puts later times first. Never 0: nanos < max.
  out = ~(static_cast<uint64_t>(nanos) ^ (uint64_t{1} << 63));
  return true;
}

bool Pack(const ActiveKey& key, uint32_t position, PackedActiveKey& out) {
  uint64_t ready_time = 0;
  uint64_t created = 0;
  // The comparator reads the ready times only when both pods are ready; not-ready pods all get 0.
  if (key.ready && !LaterFirst(key.ready_time, ready_time)) return false;
  if (!LaterFirst(key.created, created)) return false;
  const uint64_t order = (key.node_name.empty() ? 0u : 4u) | (static_cast<uint64_t>(key.phase) & 3u);
  const uint64_t head = (order << 1) | (key.ready ? 1u : 0u);
  // More restarts first: invert the restart count (as int32 ordered by flipping its sign bit).
  const uint32_t restarts = ~(static_cast<uint32_t>(key.restarts) ^ 0x80000000u);
  out.high = (static_cast<unsigned __int128>(head) << 64) | ready_time;
  out.low = (static_cast<unsigned __int128>(restarts) << 96) | (static_cast<unsigned __int128>(created) << 32) |
            position;
  return true;
}

// Rounds half away from zero, like Go's math.Round.
int RoundDiv(int numerator, int denominator) {
  return static_cast<int>(std::round(static_cast<double>(numerator) / static_cast<double>(denominator)));
}

struct ScatterGroup {
  int groups = 0;
  int matched_size = 0;
  int unmatched_size = 0;
  int unmatched_remainder = 0;
};

ScatterGroup NewScatterGroup(int matched, int unmatched) {
  ScatterGroup group;
  group.groups = std::min(matched, unmatched);
  group.matched_size = RoundDiv(matched, group.groups);
  group.unmatched_size = RoundDiv(unmatched, group.groups);
  return group;
}

ScatterGroup GroupByDensity(int total_matched, int total_unmatched, int update_matched, int update_unmatched) {
  const ScatterGroup update_group = NewScatterGroup(update_matched, update_unmatched);
  // float32 like upstream, so borderline ratios compare the same way.
  if (static_cast<float>(total_unmatched) / static_cast<float>(total_matched) >=
      static_cast<float>(update_unmatched) / static_cast<float>(update_matched)) {
    return update_group;
  }
  const ScatterGroup total_group = NewScatterGroup(total_matched, total_unmatched);
  ScatterGroup group;
  group.matched_size = total_group.matched_size;
  group.unmatched_size = total_group.unmatched_size;
  group.groups = std::min(update_matched / group.matched_size, update_unmatched / group.unmatched_size);
  group.unmatched_remainder = update_unmatched - group.groups * group.unmatched_size;
  return group;
}

void Migrate(std::vector<int>& src, size_t& next, std::vector<int>& dst, int size) {
  for (int i = 0; i < size && next < src.size(); ++i) dst.push_back(src[next++]);
}

std::string_view LabelOrEmpty(const pb::Pod& pod, const std::string& key) {
  const auto& labels = pod.metadata().labels();
  auto it = labels.find(key);
  return it == labels.end() ? std::string_view() : std::string_view(it->second);
}

std::vector<int> ScatterByTerm(const pb::UpdateScatterTerm& term, const std::vector<const pb::Pod*>& pods,
                               const std::vector<int>& candidates) {
  std::vector<int> matched;
  std::vector<int> unmatched;
  for (int i : candidates) {
    (LabelOrEmpty(*pods[i], term.key()) == term.value() ? matched : unmatched).push_back(i);
  }
  if (matched.size() <= 1 || unmatched.size() <= 1) return candidates;
  int total_matched = 0;
  int total_unmatched = 0;
  for (const pb::Pod* pod : pods) {
    if (pod == nullptr) continue;
    (LabelOrEmpty(*pod, term.key()) == term.value() ? total_matched : total_unmatched)++;
  }
  const int last_matched = matched.back();
  matched.pop_back();
  --total_matched;

  const ScatterGroup group = GroupByDensity(total_matched, total_unmatched, static_cast<int>(matched.size()),
                                            static_cast<int>(unmatched.size()));
  std::vector<int> out;
  out.reserve(candidates.size());
  size_t next_matched = 0;
  size_t next_unmatched = 0;
  Migrate(unmatched, next_unmatched, out, group.unmatched_remainder);
  for (int g = 0; g < group.groups; ++g) {
    Migrate(matched, next_matched, out, group.matched_size);
    Migrate(unmatched, next_unmatched, out, group.unmatched_size);
  }
  out.insert(out.end(), matched.begin() + static_cast<std::ptrdiff_t>(next_matched), matched.end());
  out.insert(out.end(), unmatched.begin() + static_cast<std::ptrdiff_t>(next_unmatched), unmatched.end());
  out.push_back(last_matched);
  return out;
}

}  // namespace

int64_t TrailingNumber(std::string_view value) {
  size_t start = value.size();
  while (start > 0 && value[start - 1] >= '0' && value[start - 1] <= '9') --start;
  // Upstream parses with strconv.ParseInt; more than 18 digits would overflow, so keep the last 18.
  if (value.size() - start > 18) start = value.size() - 18;
  int64_t number = 0;
  for (size_t i = start; i < value.size(); ++i) number = number * 10 + (value[i] - '0');
  return number;
}

void SortByActivePodsOrder(std::vector<int>& candidates, absl::FunctionRef<ActiveKey(int)> key_of) {
  std::vector<ActiveKey> keys;
  keys.reserve(candidates.size());
  for (int i : candidates) keys.push_back(key_of(i));
  // The comparator's order as two 128-bit integers per candidate, its position in `candidates` last: a total
  // order, so an unstable sort of 32-byte entries gives the stable sort's result (in 60 % of its instructions
  // at 5 000 candidates). Times past what int64 nanoseconds hold (years 1678-2262) keep the comparator.
  std::vector<PackedActiveKey> packed(keys.size());
  bool packable = true;
  for (size_t k = 0; k < keys.size() && packable; ++k) packable = Pack(keys[k], static_cast<uint32_t>(k), packed[k]);
  std::vector<int> ordered(candidates.size());
  if (packable) {
    std::sort(packed.begin(), packed.end());
    for (size_t k = 0; k < packed.size(); ++k) ordered[k] = candidates[packed[k].Position()];
  } else {
    std::vector<uint32_t> positions(keys.size());
    for (size_t k = 0; k < positions.size(); ++k) positions[k] = static_cast<uint32_t>(k);
    std::stable_sort(positions.begin(), positions.end(),
                     [&](uint32_t a, uint32_t b) { return ActivePodsLess(keys[a], keys[b]); });
    for (size_t k = 0; k < positions.size(); ++k) ordered[k] = candidates[positions[k]];
  }
  candidates = std::move(ordered);
}

void SortByPriority(const pb::UpdatePriorityStrategy& priority, const std::vector<const pb::Pod*>& pods,
                    std::vector<int>& candidates) {
  if (priority.weight_priority_size() > 0) {
    // A term whose selector is invalid matches no pod (validation reports it).
    std::vector<std::pair<LabelSelector, int64_t>> terms;
    for (const pb::UpdatePriorityWeightTerm& term : priority.weight_priority()) {
      if (absl::StatusOr<LabelSelector> s = LabelSelector::FromProto(term.match_selector(), "matchSelector"); s.ok()) {
        terms.emplace_back(*std::move(s), term.weight());
      }
    }
    std::map<int, int64_t> score;
    for (int i : candidates) {
      int64_t total = 0;
      for (const auto& [selector, weight] : terms) {
        if (selector.Matches(pods[i]->metadata().labels())) total += weight;
      }
      score[i] = total;
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) { return score[a] > score[b]; });
    return;
  }
  if (priority.order_priority_size() == 0) return;
  struct Rank {
    int level = -1;
    int64_t value = 0;
  };
  std::map<int, Rank> rank;
  for (int i : candidates) {
    Rank r;
    for (int level = 0; level < priority.order_priority_size(); ++level) {
      const auto& labels = pods[i]->metadata().labels();
      auto it = labels.find(priority.order_priority(level).ordered_key());
      if (it == labels.end()) continue;
      r.level = level;
      r.value = TrailingNumber(it->second);
      break;
    }
    rank[i] = r;
  }
  // Upstream parity: a pod with none of the keys has level -1 and therefore comes first.
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    if (rank[a].level != rank[b].level) return rank[a].level < rank[b].level;
    return rank[a].value > rank[b].value;
  });
}

std::vector<int> ScatterCandidates(const google::protobuf::RepeatedPtrField<pb::UpdateScatterTerm>& terms,
                                   const std::vector<const pb::Pod*>& pods, std::vector<int> candidates) {
  if (terms.empty() || candidates.size() <= 1) return candidates;
  std::vector<pb::UpdateScatterTerm> ordered;
  if (terms.size() == 1) {
    ordered.push_back(terms[0]);
  } else {
    std::vector<int> counts;
    for (const pb::UpdateScatterTerm& term : terms) {
      int count = 0;
      for (int i : candidates) {
        const auto& labels = pods[i]->metadata().labels();
        auto it = labels.find(term.key());
        if (it != labels.end() && it->second == term.value()) ++count;
      }
      if (count == 0) continue;
      // Duplicate terms are counted once, as upstream does.
      auto dup = std::find_if(ordered.begin(), ordered.end(), [&](const pb::UpdateScatterTerm& t) {
        return t.key() == term.key() && t.value() == term.value();
      });
      if (dup != ordered.end()) continue;
      ordered.push_back(term);
      counts.push_back(count);
    }
    std::vector<size_t> order(ordered.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return counts[a] > counts[b]; });
    std::vector<pb::UpdateScatterTerm> sorted;
    for (size_t i : order) sorted.push_back(ordered[i]);
    ordered = std::move(sorted);
  }
  for (const pb::UpdateScatterTerm& term : ordered) candidates = ScatterByTerm(term, pods, candidates);
  return candidates;
}

std::vector<int> SortUpdateCandidates(const pb::UpdateStrategy& strategy, const std::vector<const pb::Pod*>& pods,
                                      std::vector<int> candidates, absl::FunctionRef<ActiveKey(int)> key_of,
                                      absl::FunctionRef<bool(int)> preparing_update) {
  SortByActivePodsOrder(candidates, key_of);
  if (strategy.has_priority_strategy()) SortByPriority(strategy.priority_strategy(), pods, candidates);
  candidates = ScatterCandidates(strategy.scatter_strategy(), pods, std::move(candidates));
  // Stable partition = stable sort with "PreparingUpdate first" as the only key.
  std::stable_partition(candidates.begin(), candidates.end(), preparing_update);
  return candidates;
}

bool IsPreparingUpdate(const pb::Pod& pod) {
  return LabelOrEmpty(pod, "lifecycle.apps.kruise.io/state") == "PreparingUpdate";
}

ActiveKey ActiveKeyOf(const pb::Pod& pod) {
  ActiveKey key;
  key.node_name = pod.node_name();
  key.phase = pod.phase() == "Running" ? 2 : pod.phase() == "Unknown" ? 1 : 0;
  for (const pb::Condition& c : pod.conditions()) {
    if (c.type() != "Ready") continue;  // the first Ready condition counts
    key.ready = c.status() == "True";
    key.ready_time = TimeOf(c.last_transition_time());
    break;
  }
  for (const pb::ContainerStatus& status : pod.container_statuses()) {
    key.restarts = std::max(key.restarts, status.restart_count());
  }
  key.created = TimeOf(pod.metadata().creation_timestamp());
  return key;
}

}  // namespace cloneset::common
