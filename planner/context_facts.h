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

// Fills ctx.pod_facts parallel to ctx.pods, including the revision flags (so after the revisions are chosen).
void ComputePodFacts(PlanContext& ctx);
// ctx.pod_facts[i] when it describes ctx.pods[i]; computed afresh otherwise (a context whose pods were edited).
PodFacts FactsAt(const PlanContext& ctx, size_t i);
// The facts parallel to ctx.pods: ctx.pod_facts when current, else `scratch` filled with FactsAt for each pod.
const std::vector<PodFacts>& AllFacts(const PlanContext& ctx, std::vector<PodFacts>& scratch);

// RevisionMatches(f, revision) using the precomputed flags when `revision` is one of ctx's two revisions.
bool OnRevision(const PlanContext& ctx, const PodFacts& f, const std::string& revision);

}  // namespace cloneset::planner
