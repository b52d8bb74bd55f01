#include "planner/instance_ids.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace cloneset::planner {
namespace {

constexpr char kIdAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // 27 letters, as upstream
// Redraws allowed (kExtraDraws plus one per id asked, at most kMaxDrawsPerId in all) before the walk takes over: with a
// mostly free space the walk is never needed; with a nearly full one, redrawing would take longer and longer (and
// forever once it is full).
constexpr int64_t kExtraDraws = 64;
constexpr int64_t kMaxDrawsPerId = 1 << 16;
// How often the walk asks whether to stop (one question per this many ids looked at).
constexpr int64_t kCancelCheckEvery = 1 << 16;

// splitmix64: a tiny, well-mixed PRNG; seeded from the request so plans are reproducible.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// The id at `index` of the space of ids of `length` letters, first letter most significant.
std::string IdAt(int64_t index, int length) {
  std::string id(static_cast<size_t>(length), kIdAlphabet[0]);
  for (int i = length - 1; i >= 0; --i) {
    id[i] = kIdAlphabet[index % 27];
    index /= 27;
  }
  return id;
}

}  // namespace

uint64_t InstanceIdSeed(uint64_t random_seed, std::string_view clone_set_uid) {
  return random_seed ^ Fnv1a64(clone_set_uid);
}

std::vector<std::string> FreshInstanceIds(uint64_t seed, int64_t n, const std::function<bool(std::string_view)>& taken,
                                          const CancelCheck* cancelled, int length) {
  std::vector<std::string> out;
  if (n <= 0 || length <= 0 || length > kInstanceIdLength) return out;
  int64_t space = 1;
  for (int i = 0; i < length; ++i) space *= 27;
  n = std::min(n, space);
  out.reserve(static_cast<size_t>(std::min<int64_t>(n, 1 << 16)));
  absl::flat_hash_set<std::string> chosen;
  const auto accept = [&](std::string id) {
    if (chosen.contains(id) || taken(id)) return false;
    chosen.insert(id);
    out.push_back(std::move(id));
    return true;
  };
  SplitMix64 rng(seed);
  const int64_t max_misses = std::min(n, kMaxDrawsPerId) + kExtraDraws;
  for (int64_t misses = 0; static_cast<int64_t>(out.size()) < n && misses <= max_misses;) {
    std::string id;
    for (int i = 0; i < length; ++i) id += kIdAlphabet[rng.Next() % 27];
    if (!accept(std::move(id))) ++misses;
  }
  if (static_cast<int64_t>(out.size()) >= n) return out;
  // Crowded space: walk it once from a drawn start. Ends after `space` looks at most.
  const int64_t start = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(space));
  for (int64_t k = 0; k < space && static_cast<int64_t>(out.size()) < n; ++k) {
    if (k % kCancelCheckEvery == kCancelCheckEvery - 1 && cancelled != nullptr && *cancelled && (*cancelled)()) break;
    accept(IdAt((start + k) % space, length));
  }
  return out;
}

}  // namespace cloneset::planner
