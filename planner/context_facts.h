// The pod facts (pod_facts.h) of a context's active pods: computed once per plan into ctx.pod_facts and read
// through these, which notice a context whose pods or revisions were edited since. Apart from pod_facts.h, which
// the context includes, so that the facts of one pod need not know the context.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "planner/context.h"
#include "planner/pod_facts.h"

namespace cloneset::planner {

// Fills ctx.pod_facts and ctx.pod_cold parallel to ctx.pods, including the revision flags (so after the revisions
// are chosen).
void ComputePodFacts(PlanContext& ctx);
// The facts of ctx.pods[i]: ctx.pod_facts[i] and ctx.pod_cold[i] when they describe it; computed afresh otherwise
// (a context whose pods were edited).
PodFacts FactsAt(const PlanContext& ctx, size_t i);
// The facts parallel to ctx.pods, hot and cold halves: ctx.pod_facts / ctx.pod_cold when current, else `scratch`
// filled with FactsAt for each pod. A walk that needs both takes both; the cold half is read only where needed.
const std::vector<PodHotFacts>& AllFacts(const PlanContext& ctx, std::vector<PodHotFacts>& scratch);
const std::vector<PodColdFacts>& AllColdFacts(const PlanContext& ctx, std::vector<PodColdFacts>& scratch);

// RevisionMatches(cold, revision) using the precomputed flags when `revision` is one of ctx's two revisions.
bool OnRevisionByText(const PlanContext& ctx, const PodHotFacts& f, const PodColdFacts& cold,
                      const std::string& revision);
// Inline, and ctx's own strings known without comparing their text: the stages ask it of every pod with
// ctx.update_revision itself (perf of the idle 10^5-pod plan: a call and a memcmp per pod per stage, 9 %). The
// pod's revision label, in `cold`, is read only for another revision.
inline bool OnRevision(const PlanContext& ctx, const PodHotFacts& f, const PodColdFacts& cold,
                       const std::string& revision) {
  if (&revision == &ctx.update_revision) return f.on_update_revision;
  return OnRevisionByText(ctx, f, cold, revision);
}
inline bool OnRevision(const PlanContext& ctx, const PodFacts& f, const std::string& revision) {
  return OnRevision(ctx, f, f, revision);
}

}  // namespace cloneset::planner
