// Each Plan call parses its request and builds its response on one protobuf arena: parsing a 10^5-pod snapshot
// then costs one block allocation per megabyte instead of a malloc per string, map entry and sub-message, and the
// whole call is freed at once when the handler returns (docs/performance.md "Planner").
#pragma once

#include "google/protobuf/arena.h"

namespace cloneset::planner::service {

inline google::protobuf::ArenaOptions CallArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 << 10;  // a small request stays small
  options.max_block_size = 8 << 20;     // blocks double up to 8 MiB for the big ones
  return options;
}

}  // namespace cloneset::planner::service
