// What the stages ask about each active pod, read from the protobuf once per plan (docs/performance.md
// "Planner": label and condition lookups on cold protobuf objects dominated the profile). Only facts that depend
// on the pod alone live here; the spec- and time-dependent predicates (avail, revMatch) are cheap functions of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;
struct PlanContext;
struct ResolvedSpec;

enum class Lifecycle : uint8_t { kNone, kPreparingNormal, kNormal, kPreparingUpdate, kUpdating, kUpdated,
                                 kPreparingDelete, kOther };

struct PodFacts {
  const pb::Pod* pod = nullptr;   // the pod these facts describe (ctx.pods[i])
  std::string_view revision;      // controller-revision-hash label, "" if absent
  absl::Time ready_since;         // Ready condition's lastTransitionTime (InfinitePast if unset)
  Lifecycle lifecycle = Lifecycle::kNone;
  bool running = false;           // phase == Running
  bool k8s_ready = false;         // Ready condition is True
  bool in_place_ready = true;     // no InPlaceUpdateReady condition, or it is True
  bool specified_delete_label = false;
};

PodFacts ComputePodFacts(const pb::Pod& pod);
// Fills ctx.pod_facts parallel to ctx.pods.
void ComputePodFacts(PlanContext& ctx);
// ctx.pod_facts[i] when it describes ctx.pods[i]; computed afresh otherwise (a context whose pods were edited).
PodFacts FactsAt(const PlanContext& ctx, size_t i);

// The predicates.h predicates on facts; same results as IsUpdateReady / IsAvailable / RevisionMatches /
// IsSpecifiedDelete on the pod.
bool IsUpdateReady(const PodFacts& f, int32_t min_ready_seconds, absl::Time now);
bool IsAvailable(const PodFacts& f, int32_t min_ready_seconds, absl::Time now);
bool RevisionMatches(const PodFacts& f, std::string_view revision);
bool IsSpecifiedDelete(const PodFacts& f, const ResolvedSpec& spec);

}  // namespace cloneset::planner
