// Gives memory back to the operating system once the planner has been idle for a while.
//
// Why: the planner binary runs jemalloc with page purging off (main.cc, `malloc_conf`), because re-faulting the
// pages of a 10^5-pod plan on every call doubled its cost (docs/performance.md "The pod table"). Memory then stays
// at its high-water mark during a burst of plans; this releases it when the bursts stop.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

namespace cloneset::planner::service {

class IdleMemoryRelease {
 public:
  // `release` returns freed memory to the OS (PurgeAllocator in production); it runs after a check finds no new
  // call since the previous check and none in flight, once per idle period.
  explicit IdleMemoryRelease(std::function<void()> release) : release_(std::move(release)) {}

  // One periodic check; returns true when it released memory.
  bool Check(int64_t calls_started, int in_flight);

 private:
  std::function<void()> release_;
  int64_t last_calls_ = -1;
  bool released_ = false;
};

// Purges every jemalloc arena (mallctl "arena.<all>.purge"). Returns false when the process does not run jemalloc.
bool PurgeAllocator();

}  // namespace cloneset::planner::service
