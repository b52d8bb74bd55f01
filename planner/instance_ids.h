// Fresh instance ids (semantics §4.7): 5 characters over upstream's 27-letter alphabet, drawn from a PRNG seeded by
// the request, so the same request always gets the same ids.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/plan_limits.h"

namespace cloneset::planner {

inline constexpr int kInstanceIdLength = 5;
// 27^5: every id there is. A CloneSet cannot have more pods (or PVC sets) than this.
inline constexpr int64_t kInstanceIdSpace = int64_t{27} * 27 * 27 * 27 * 27;

// The PRNG seed of a plan: PlanRequest.random_seed mixed with the CloneSet uid.
uint64_t InstanceIdSeed(uint64_t random_seed, std::string_view clone_set_uid);

// Up to `n` distinct ids for which `taken` is false, in draw order. Collisions are redrawn a bounded number of
// times; after that the rest is found by walking the id space in order from a drawn start, so the call always
// ends: it returns fewer than `n` ids only when fewer are free, or when `cancelled` says so. `length` is the id
// length (27^length ids); only tests of a crowded space use a shorter one, so that walking it all is quick.
std::vector<std::string> FreshInstanceIds(uint64_t seed, int64_t n, const std::function<bool(std::string_view)>& taken,
                                          const CancelCheck* cancelled = nullptr, int length = kInstanceIdLength);

}  // namespace cloneset::planner
