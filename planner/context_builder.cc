#include "planner/context_builder.h"

#include <algorithm>
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "planner/inplace.h"
#include "planner/int_or_percent.h"
#include "planner/pod_facts.h"
#include "planner/pod_source.h"
#include "planapi/pod_table.h"
#include "planner/predicates.h"
#include "planner/revision.h"
#include "planner/validation.h"

namespace cloneset::planner {
namespace {

using Json = nlohmann::json;

// An owned object: some owner reference carries the CloneSet's uid, and no *other* object is its controller.
bool OwnedBy(const pb::ObjectMeta& meta, const std::string& uid) {
  bool ours = false;
  for (const pb::OwnerReference& ref : meta.owner_references()) {
    if (ref.uid() == uid) {
      ours = true;
    } else if (ref.controller()) {
      return false;
    }
  }
  return ours;
}

template <typename T>
void SortByName(std::vector<const T*>& objects) {
  const auto before = [](const T* a, const T* b) {
    const int by_name = a->metadata().name().compare(b->metadata().name());
    return by_name != 0 ? by_name < 0 : a->metadata().uid() < b->metadata().uid();
  };
  // Lists from the API server come sorted by name already; checking that is linear, sorting is not.
  if (std::is_sorted(objects.begin(), objects.end(), before)) return;
  std::stable_sort(objects.begin(), objects.end(), before);
}

}  // namespace

namespace {

// The indexes of request.pods in name order. Names are compared after the prefix they all share (the CloneSet's
// name and "-"), the next eight bytes packed into an integer, so sorting 10^5 pods seldom reads a name again.
// Equal names stay in request order (duplicates are then adjacent, first occurrence first). *distinct is set when
// the names are known to hold no duplicate (strictly increasing in request order); false means "not known".
std::vector<int> PodsByName(const std::vector<std::string_view>& names, bool* distinct) {
  const int n = static_cast<int>(names.size());
  std::vector<int> order(n);
  // The executor sends its pods in name order: comparing neighbours (a memcmp each) answers that, without the
  // common prefix and packed keys below (perf: PodsByName was a few percent of an idle 10^5-pod plan).
  // Strictly increasing names are also distinct, which spares the caller its pass looking for duplicates.
  // Non-decreasing names are also the order the keys give: equal names keep their request order.
  int increasing = 1;
  while (increasing < n && names[increasing - 1] < names[increasing]) ++increasing;
  *distinct = increasing >= n;
  if (*distinct || std::is_sorted(names.begin() + (increasing - 1), names.end())) {
    for (int i = 0; i < n; ++i) order[i] = i;
    return order;
  }
  size_t common = std::string_view::npos;
  for (int i = 0; i < n; ++i) {
    if (common == std::string_view::npos) {
      common = names[i].size();
    } else {
      common = std::min(common, names[i].size());
      size_t k = 0;
      while (k < common && names[i][k] == names[0][k]) ++k;
      common = k;
    }
  }
  if (common == std::string_view::npos) common = 0;
  struct Key {
    uint64_t prefix;
    int index;
  };
  std::vector<Key> keys(n);
  for (int i = 0; i < n; ++i) {
    uint64_t packed = 0;
    const std::string_view rest = names[i].substr(common);
    for (size_t k = 0; k < 8; ++k) {
      packed = (packed << 8) | (k < rest.size() ? static_cast<unsigned char>(rest[k]) : 0u);
    }
    keys[i] = {packed, i};
  }
  const auto before = [&](const Key& a, const Key& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int by_name = names[a.index].compare(names[b.index]);
    return by_name != 0 ? by_name < 0 : a.index < b.index;
  };
  if (keys.size() < 256) {
    std::sort(keys.begin(), keys.end(), before);
  } else {
    // A stable radix sort by the packed prefix, a byte a pass (a byte that every key has alike, as the padding
    // of short names, is skipped), then a comparison sort of each run of equal prefixes, which only
    // names that share more than eight bytes after the common prefix make. At 10^4 unsorted names PodsByName
    // takes two thirds of the instructions it took with std::sort (callgrind).
    std::vector<Key> scratch(keys.size());
    uint64_t varying = 0;  // the bits in which some prefix differs from the first
    for (const Key& key : keys) varying |= key.prefix ^ keys[0].prefix;
    for (int shift = 0; shift < 64; shift += 8) {
      if (((varying >> shift) & 0xff) == 0) continue;
      std::array<uint32_t, 257> starts{};
      for (const Key& key : keys) ++starts[((key.prefix >> shift) & 0xff) + 1];
      for (size_t d = 1; d < starts.size(); ++d) starts[d] += starts[d - 1];
      for (const Key& key : keys) scratch[starts[(key.prefix >> shift) & 0xff]++] = key;
      keys.swap(scratch);
    }
    for (size_t run = 0; run < keys.size();) {
      size_t end = run + 1;
      while (end < keys.size() && keys[end].prefix == keys[run].prefix) ++end;
      if (end - run > 1) std::sort(keys.begin() + static_cast<std::ptrdiff_t>(run),
                                   keys.begin() + static_cast<std::ptrdiff_t>(end), before);
      run = end;
    }
  }
  for (int i = 0; i < n; ++i) order[i] = keys[i].index;
  return order;
}

// Empties the context's pod lists for `pods` pods and returns the selector's matchLabels as pairs (matched during
// the walk over each pod's labels).
std::vector<std::pair<std::string, std::string>> StartClassifying(PlanContext& ctx, size_t pods) {
  ctx.pods.clear();
  ctx.pod_facts.clear();
  ctx.pod_cold.clear();
  ctx.pods.reserve(pods);
  ctx.pod_facts.reserve(pods);
  ctx.pod_cold.reserve(pods);
  return {ctx.selector.match_labels().begin(), ctx.selector.match_labels().end()};
}

// ClassifyPods for a request that carries a pod table: the same decisions, read from the table; only inactive
// and released pods (few) are built as objects, for the stages that keep them.
absl::Status ClassifyTablePods(const pb::PlanRequest& request, PlanContext& ctx) {
  absl::StatusOr<std::unique_ptr<PodTableView>> view = PodTableView::Open(request.pod_table());
  if (!view.ok()) return view.status();
  ctx.pod_store = std::make_shared<PodStore>(*std::move(view));
  PodStore& store = *ctx.pod_store;
  const PodTableView& table = store.view();
  const pb::PodTable& t = table.table();
  std::vector<std::string_view> names(table.size());
  for (uint32_t row = 0; row < table.size(); ++row) names[row] = table.name(row);
  bool distinct = false;
  const std::vector<int> order = PodsByName(names, &distinct);
  // Equal names are adjacent and in request order after the stable sort: report the lowest later occurrence.
  int first_duplicate = -1;
  for (size_t k = 1; !distinct && k < order.size(); ++k) {
    if (names[order[k - 1]] != names[order[k]]) continue;
    if (first_duplicate < 0 || order[k] < first_duplicate) first_duplicate = order[k];
  }
  if (first_duplicate >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("pod_table.name[", first_duplicate, "]: duplicate pod \"",
                                                   std::string(names[first_duplicate]), "\""));
  }
  const std::vector<std::pair<std::string, std::string>> match_labels = StartClassifying(ctx, order.size());
  const bool only_match_labels = ctx.selector.match_expressions().empty();
  const std::string& uid = ctx.clone_set->metadata().uid();
  TableFactsReader reader(table, match_labels, ctx.update_revision, ctx.current_revision);
  // Every pod names the same owner uid and one of a few phases: remember the references already compared (a
  // table may repeat a string under several references, so a different reference is compared by text).
  uint32_t our_uid_ref = ~uint32_t{0};
  const auto is_our_uid = [&](uint32_t ref) {
    if (ref == our_uid_ref) return true;
    if (table.String(ref) != uid) return false;
    our_uid_ref = ref;
    return true;
  };
  struct PhaseMemo {
    uint32_t ref;
    bool finished;  // Succeeded or Failed
  };
  std::vector<PhaseMemo> phases;
  const auto finished_phase = [&](uint32_t ref) {
    for (const PhaseMemo& m : phases) {
      if (m.ref == ref) return m.finished;
    }
    const std::string_view phase = table.String(ref);
    const bool finished = phase == "Succeeded" || phase == "Failed";
    if (phases.size() < 8) phases.push_back({ref, finished});
    return finished;
  };
  const uint32_t* owner_refs = t.owner_references().data();
  for (const int i : order) {
    const auto row = static_cast<uint32_t>(i);
    // OwnedBy on the table: ours when a reference has our uid and no other reference is the controller.
    bool ours = false;
    bool other_controller = false;
    for (auto r = table.owner_references(row); r.begin < r.end; ++r.begin) {
      if (is_our_uid(owner_refs[4 * r.begin + 3])) {
        ours = true;
      } else if ((PodTableView::Value(t.owner_reference_flags(), r.begin) & 1u) != 0) {
        other_controller = true;
        break;
      }
    }
    if (!ours || other_controller) continue;
    const bool finished = !t.phase().empty() && finished_phase(t.phase().data()[row]);
    if (finished || PodTableView::Value(t.deletion_timestamp(), row) != 0) {
      ctx.inactive_pods.push_back(&store.Pod(row));
      continue;
    }
    size_t matched = 0;
    reader.Read(row, ctx.pod_facts.emplace_back(), ctx.pod_cold.emplace_back(), &matched);
    bool selected = matched == match_labels.size();
    if (!only_match_labels) {
      LabelMap labels;
      for (auto r = table.labels(row); r.begin < r.end; ++r.begin) {
        labels[std::string(table.Entry(t.labels(), 2, r.begin, 0))] = table.Entry(t.labels(), 2, r.begin, 1);
      }
      selected = ctx.label_selector.Matches(labels);
    }
    if (!selected) {
      ctx.pod_facts.pop_back();
      ctx.pod_cold.pop_back();
      ctx.released_pods.push_back(&store.Pod(row));
      continue;
    }
    ctx.pods.push_back(nullptr);
  }
  ctx.facts_update_revision = ctx.update_revision;
  ctx.facts_current_revision = ctx.current_revision;
  return absl::OkStatus();
}

}  // namespace

absl::Status ClassifyPods(const pb::PlanRequest& request, PlanContext& ctx) {
  if (request.has_pod_table()) {
    if (request.pods_size() > 0) {
      return absl::InvalidArgumentError("pod_table: set either pods or pod_table, not both");
    }
    return ClassifyTablePods(request, ctx);
  }
  std::vector<std::string_view> names(request.pods_size());
  for (int i = 0; i < request.pods_size(); ++i) names[i] = request.pods(i).metadata().name();
  bool distinct = false;
  const std::vector<int> order = PodsByName(names, &distinct);
  // The first invalid pod in request order (what a check pod by pod would report).
  int bad = -1;
  bool bad_is_duplicate = false;
  const std::vector<std::pair<std::string, std::string>> match_labels = StartClassifying(ctx, order.size());
  const bool only_match_labels = ctx.selector.match_expressions().empty();
  const std::string& uid = ctx.clone_set->metadata().uid();
  for (size_t k = 0; k < order.size(); ++k) {
    const int i = order[k];
    const pb::Pod& pod = request.pods(i);
    // Equal names are adjacent and in request order: every one but the first is a duplicate.
    const bool duplicate = !distinct && k > 0 && names[order[k - 1]] == names[i];
    if (duplicate || !PodLooksValid(pod)) {
      if (bad < 0 || i < bad) {
        bad = i;
        bad_is_duplicate = duplicate;
      }
      continue;
    }
    if (bad >= 0 || !OwnedBy(pod.metadata(), uid)) continue;
    if (!IsActive(pod)) {
      ctx.inactive_pods.push_back(&pod);
      continue;
    }
    size_t matched = 0;
    PodFacts facts = ComputePodFacts(pod, match_labels, &matched, ctx.update_revision, ctx.current_revision);
    const bool selected = only_match_labels ? matched == match_labels.size()
                                            : ctx.label_selector.Matches(pod.metadata().labels());
    if (!selected) {
      ctx.released_pods.push_back(&pod);
      continue;
    }
    ctx.pods.push_back(&pod);
    ctx.pod_facts.push_back(facts);
    ctx.pod_cold.push_back(facts);
  }
  if (bad >= 0) return PodError(request.pods(bad), bad, bad_is_duplicate);
  ctx.facts_update_revision = ctx.update_revision;
  ctx.facts_current_revision = ctx.current_revision;
  return absl::OkStatus();
}

absl::StatusOr<PlanContext> BuildContext(const pb::PlanRequest& request, PlanBuilder& plan) {
  PlanContext ctx;
  ctx.request = &request;
  ctx.clone_set = &request.clone_set();
  ctx.now = ToTime(request.now());
  ctx.gates = request.feature_gates();
  const pb::CloneSet& cs = request.clone_set();

  absl::StatusOr<ResolvedSpec> spec = ResolveSpec(cs, ctx.gates);
  if (!spec.ok()) return spec.status();
  ctx.spec = *std::move(spec);

  absl::StatusOr<pb::LabelSelector> selector = EffectiveSelector(cs, &ctx.selector_defaulted);
  if (!selector.ok()) return selector.status();
  absl::StatusOr<common::LabelSelector> label_selector = common::LabelSelector::FromProto(*selector, "spec.selector");
  if (!label_selector.ok()) return label_selector.status();
  ctx.selector = *std::move(selector);
  ctx.selector_string = label_selector->String();
  ctx.label_selector = *std::move(label_selector);

  // The revisions do not depend on the pods: choosing them first lets the pod pass below set each pod's revision
  // flags while its labels are in cache. A revision error is still reported after any pod error, as before the
  // pod checks moved here.
  ctx.revisions = SortRevisions(request);
  absl::StatusOr<RevisionChoice> choice = ChooseRevisions(request, ctx.revisions, plan);
  if (choice.ok()) {
    ctx.current_revision = choice->current_revision;
    ctx.update_revision = choice->update_revision;
  }
  if (absl::Status s = ClassifyPods(request, ctx); !s.ok()) return s;
  if (!choice.ok()) return choice.status();
  ctx.current_template_json = choice->current_template_json;
  ctx.update_template_json = choice->update_template_json;
  ctx.collision_count = choice->collision_count;

  const std::string& uid = cs.metadata().uid();
  for (const pb::PersistentVolumeClaim& pvc : request.pvcs()) {
    if (OwnedBy(pvc.metadata(), uid) && !IsSet(pvc.metadata().deletion_timestamp())) ctx.pvcs.push_back(&pvc);
  }
  SortByName(ctx.pvcs);
  ctx.update_vct_hash = choice->vct_hash;
  ctx.rollout_in_place = RolloutIsInPlace(ctx);
  return ctx;
}

}  // namespace cloneset::planner
