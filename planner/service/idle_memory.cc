#include "planner/service/idle_memory.h"

#include <jemalloc/jemalloc.h>

#include <string>

namespace cloneset::planner::service {

bool IdleMemoryRelease::Check(int64_t calls_started, int in_flight) {
  const bool idle = calls_started == last_calls_ && in_flight == 0;
  if (calls_started != last_calls_) released_ = false;  // a new burst: release again after it
  last_calls_ = calls_started;
  if (!idle || released_) return false;
  release_();
  released_ = true;
  return true;
}

bool PurgeAllocator() {
  const std::string purge = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  return mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0) == 0;
}

}  // namespace cloneset::planner::service
