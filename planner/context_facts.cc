#include "planner/context_facts.h"

#include <string>
#include <utility>
#include <vector>

#include "planner/pod_source.h"

namespace cloneset::planner {
namespace {

// ComputePodFacts with the context's revisions (for a context built without ClassifyPods, or edited since).
PodFacts FactsFor(const PlanContext& ctx, const pb::Pod& pod) {
  static const std::vector<std::pair<std::string, std::string>> kNone;
  size_t matched = 0;
  return ComputePodFacts(pod, kNone, &matched, ctx.update_revision, ctx.current_revision);
}

// The same for the i-th active pod, read from the pod table when the request carried one.
PodFacts FactsForIndex(const PlanContext& ctx, size_t i) {
  if (ctx.pods[i] != nullptr || ctx.pod_store == nullptr) return FactsFor(ctx, *ctx.pods[i]);
  static const std::vector<std::pair<std::string, std::string>> kNone;
  TableFactsReader reader(ctx.pod_store->view(), kNone, ctx.update_revision, ctx.current_revision,
                          /*memoize=*/false);
  size_t matched = 0;
  PodFacts f;
  reader.Read(ctx.pod_facts[i].row, f, &matched);
  return f;
}

}  // namespace

void ComputePodFacts(PlanContext& ctx) {
  ctx.facts_update_revision = ctx.update_revision;
  ctx.facts_current_revision = ctx.current_revision;
  std::vector<PodHotFacts> facts;
  std::vector<PodColdFacts> cold;
  facts.reserve(ctx.pods.size());
  cold.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    const PodFacts f = FactsForIndex(ctx, i);
    facts.push_back(f);
    cold.push_back(f);
  }
  ctx.pod_facts = std::move(facts);
  ctx.pod_cold = std::move(cold);
}

namespace {

// Whether ctx.pod_facts[i] and ctx.pod_cold[i] describe ctx.pods[i] against ctx's revisions.
bool RevisionsCurrent(const PlanContext& ctx) {
  return ctx.facts_update_revision == ctx.update_revision && ctx.facts_current_revision == ctx.current_revision;
}

}  // namespace

PodFacts FactsAt(const PlanContext& ctx, size_t i) {
  if (i < ctx.pod_facts.size() && i < ctx.pod_cold.size() && ctx.pod_cold[i].pod == ctx.pods[i] &&
      RevisionsCurrent(ctx)) {
    return PodFacts(ctx.pod_facts[i], ctx.pod_cold[i]);
  }
  return FactsForIndex(ctx, i);
}

namespace {

// Whether ctx.pod_facts and ctx.pod_cold are parallel to ctx.pods and current.
bool FactsCurrent(const PlanContext& ctx) {
  if (ctx.pod_facts.size() != ctx.pods.size() || ctx.pod_cold.size() != ctx.pods.size() || !RevisionsCurrent(ctx)) {
    return false;
  }
  // A context built from a pod table has no pod objects to edit: its facts stay current.
  if (ctx.pod_store != nullptr) return true;
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    if (ctx.pod_cold[i].pod != ctx.pods[i]) return false;
  }
  return true;
}

}  // namespace

const std::vector<PodHotFacts>& AllFacts(const PlanContext& ctx, std::vector<PodHotFacts>& scratch) {
  if (FactsCurrent(ctx)) return ctx.pod_facts;
  scratch.clear();
  scratch.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) scratch.push_back(FactsAt(ctx, i));
  return scratch;
}

const std::vector<PodColdFacts>& AllColdFacts(const PlanContext& ctx, std::vector<PodColdFacts>& scratch) {
  if (FactsCurrent(ctx)) return ctx.pod_cold;
  scratch.clear();
  scratch.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) scratch.push_back(FactsAt(ctx, i));
  return scratch;
}

bool OnRevisionByText(const PlanContext& ctx, const PodHotFacts& f, const PodColdFacts& cold,
                      const std::string& revision) {
  // FactsAt and AllFacts hand out flags computed against the context's revisions as they are now.
  if (revision == ctx.update_revision) return f.on_update_revision;
  if (revision == ctx.current_revision) return f.on_current_revision;
  return RevisionMatches(cold, revision);
}

}  // namespace cloneset::planner
