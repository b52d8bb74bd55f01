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
  std::vector<PodFacts> facts;
  facts.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) facts.push_back(FactsForIndex(ctx, i));
  ctx.pod_facts = std::move(facts);
}

PodFacts FactsAt(const PlanContext& ctx, size_t i) {
  if (i < ctx.pod_facts.size() && ctx.pod_facts[i].pod == ctx.pods[i] &&
      ctx.facts_update_revision == ctx.update_revision && ctx.facts_current_revision == ctx.current_revision) {
    return ctx.pod_facts[i];
  }
  return FactsForIndex(ctx, i);
}

namespace {

// ctx.pod_facts.data() when it is parallel to ctx.pods and current, else nullptr.
const PodFacts* CurrentFacts(const PlanContext& ctx) {
  if (ctx.pod_facts.size() != ctx.pods.size() || ctx.facts_update_revision != ctx.update_revision ||
      ctx.facts_current_revision != ctx.current_revision) {
    return nullptr;
  }
  // A context built from a pod table has no pod objects to edit: its facts stay current.
  if (ctx.pod_store != nullptr) return ctx.pod_facts.data();
  for (size_t i = 0; i < ctx.pods.size(); ++i) {
    if (ctx.pod_facts[i].pod != ctx.pods[i]) return nullptr;
  }
  return ctx.pod_facts.data();
}

}  // namespace

const std::vector<PodFacts>& AllFacts(const PlanContext& ctx, std::vector<PodFacts>& scratch) {
  if (CurrentFacts(ctx) != nullptr) return ctx.pod_facts;
  scratch.clear();
  scratch.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) scratch.push_back(FactsAt(ctx, i));
  return scratch;
}

bool OnRevision(const PlanContext& ctx, const PodFacts& f, const std::string& revision) {
  // FactsAt and AllFacts hand out flags computed against the context's revisions as they are now.
  if (revision == ctx.update_revision) return f.on_update_revision;
  if (revision == ctx.current_revision) return f.on_current_revision;
  return RevisionMatches(f, revision);
}

}  // namespace cloneset::planner
