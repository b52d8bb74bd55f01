// What the stages ask about each active pod, read from the protobuf once per plan (docs/performance.md
// "Planner"): label, annotation and condition lookups on cold protobuf objects dominated the profile, so one scan
// walks each pod's labels, annotations, conditions and container statuses once and every stage reads these facts.
// Only facts that depend on the pod alone (plus which of the two chosen revisions it is on) live here; the spec-
// and time-dependent predicates (avail, revMatch) are cheap functions of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "planner/resolved_spec.h"

namespace cloneset::planapi {
class PodTableView;  // planapi/pod_table.h
}  // namespace cloneset::planapi

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;
using planapi::PodTableView;

enum class Lifecycle : uint8_t { kNone, kPreparingNormal, kNormal, kPreparingUpdate, kUpdating, kUpdated,
                                 kPreparingDelete, kOther };

// What the per-pod loops of every stage read (availability, revision, lifecycle, refresh, specified-delete): one
// cache line per pod. At 10^5 pods the whole facts were 20 MB and each stage's walk read all of them; the walks
// now read these 6.4 MB and the pods' strings (PodColdFacts) sit in a side array that only the pods needing them
// touch.
struct PodHotFacts {
  absl::Time ready_since;         // Ready condition's lastTransitionTime (InfinitePast if unset)
  absl::Time created;             // metadata.creationTimestamp (InfinitePast if unset)
  int32_t max_restarts = 0;       // max restartCount over container statuses
  uint32_t row = 0;               // index in the request's pods or pod table
  Lifecycle lifecycle = Lifecycle::kNone;
  int8_t phase_ordinal = 0;       // ActivePods order of status.phase: Pending/other 0, Unknown 1, Running 2
  bool running = false;           // phase == Running
  bool k8s_ready = false;         // Ready condition is True
  bool in_place_ready = true;     // no InPlaceUpdateReady condition, or it is True
  bool in_place_gate = false;     // spec.readinessGates holds InPlaceUpdateReady
  // The InPlaceUpdateReady condition is True with no reason and no message (what MarkInPlaceReady writes).
  bool in_place_settled = false;
  bool specified_delete_label = false;
  bool has_template_hash_label = false;  // pod-template-hash label present
  // RevisionMatches(pod, ctx.update_revision / ctx.current_revision); set by ComputePodFacts(ctx) and FactsAt
  // (context_facts.h).
  bool on_update_revision = false;
  bool on_current_revision = false;
  bool has_revision_label = false;
  bool has_ready_condition = false;  // a "Ready" condition exists (the first one is read)
  bool ready_false = false;       // the Ready condition's status is "False"
  bool containers_ready = false;  // the first "ContainersReady" condition is True
  bool has_in_place_condition = false;  // an "InPlaceUpdateReady" condition exists
  bool has_legacy_state = false;  // legacy inplace-update-state annotation present
  bool has_grace_key = false;     // apps.kruise.io/inplace-update-grace present (any value)
  bool has_legacy_grace = false;  // legacy inplace-update-grace present
  bool has_in_place_state = false;  // PodColdFacts::in_place_state is not empty
  bool has_in_place_grace = false;  // PodColdFacts::in_place_grace is not empty
};
static_assert(sizeof(PodHotFacts) <= 64, "the stages' walks read one cache line per pod");

// The pod's strings: read only for the pods a stage acts on (and by the few walks that need a string of every
// pod: instance ids for PVCs, revision labels for history truncation).
struct PodColdFacts {
  // The pod these facts describe (ctx.pods[i]); nullptr when the request carried a pod table (pod_source.h reads
  // the pod through PodOf then).
  const pb::Pod* pod = nullptr;
  std::string_view name;          // metadata.name
  std::string_view revision;      // controller-revision-hash label, "" if absent
  std::string_view instance_id;   // apps.kruise.io/cloneset-instance-id label, "" if absent
  // InPlaceStateAnnotation / InPlaceGraceAnnotation (inplace.h): the current key, else the legacy one.
  std::string_view in_place_state;
  std::string_view in_place_grace;
  std::string_view node_name;     // spec.nodeName
  std::string_view uid;           // metadata.uid
  std::string_view resource_version;  // metadata.resourceVersion
};

// All the facts of one pod: what a computation for one pod returns and what the functions acting on one pod read.
struct PodFacts : PodHotFacts, PodColdFacts {
  PodFacts() = default;
  PodFacts(const PodHotFacts& hot, const PodColdFacts& cold) : PodHotFacts(hot), PodColdFacts(cold) {}
};

// The facts of one pod that do not depend on the context (revision flags stay false).
PodFacts ComputePodFacts(const pb::Pod& pod);
// The same, also counting in *matched how many of `match_labels` (key, value) the pod's labels hold exactly,
// and setting the revision flags against `update_revision` and `current_revision`: BuildContext's single walk
// over a pod's labels.
PodFacts ComputePodFacts(const pb::Pod& pod, const std::vector<std::pair<std::string, std::string>>& match_labels,
                         size_t* matched, std::string_view update_revision, std::string_view current_revision);
// The same for the rows of a pod table (pod_table.h), read without building pods (PodFacts::pod stays nullptr).
// A table holds each string once and pods share most of theirs (label keys, condition types, statuses,
// revisions), so the reader classifies each string the first time it meets it and then compares references:
// reading 10^4 pods then takes two thirds of the instructions of comparing every key's text.
class TableFactsReader {
 public:
  // `memoize` = false classifies every string afresh: for reading one or two rows, where a memo the size of the
  // table's strings would cost more than it saves. The table, labels and revisions must outlive the reader.
  TableFactsReader(const PodTableView& table, const std::vector<std::pair<std::string, std::string>>& match_labels,
                   std::string_view update_revision, std::string_view current_revision, bool memoize = true);

  // The facts of `row` into `hot` and `cold`, which must be value-initialized (Read sets only what the pod has;
  // BuildContext fills its vectors in place), with *matched set to how many of `match_labels` (key, value) the
  // pod's labels hold exactly and the revision flags set.
  void Read(uint32_t row, PodHotFacts& hot, PodColdFacts& cold, size_t* matched);
  void Read(uint32_t row, PodFacts& out, size_t* matched) { Read(row, out, out, matched); }

 private:
  static constexpr uint8_t kNoSelectorKey = 255;
  static constexpr uint32_t kNoRef = ~uint32_t{0};
  struct StringMemo {
    uint8_t word = 0;  // pod_facts.cc's Word; 0 = not classified yet
    uint8_t selector_key = kNoSelectorKey;  // the index in match_labels of this key
  };
  struct RevisionMemo {
    uint32_t ref;
    bool on_update;
    bool on_current;
  };
  StringMemo Memo(uint32_t ref) {
    if (!memo_.empty() && memo_[ref].word != 0) return memo_[ref];
    return Classify(ref);
  }
  StringMemo Classify(uint32_t ref);  // Memo's first look at a string
  bool SelectorValueMatches(size_t key, uint32_t value_ref);
  void FlagRevisions(uint32_t revision_ref, const PodColdFacts& cold, PodHotFacts& f);

  const PodTableView& table_;
  const std::vector<std::pair<std::string, std::string>>& match_labels_;
  std::string_view update_revision_;
  std::string_view current_revision_;
  std::vector<StringMemo> memo_;               // by string reference; empty when not memoizing
  StringMemo scratch_;                         // the one entry used when not memoizing
  std::vector<uint32_t> selector_value_refs_;  // a reference known to hold match_labels[k].second
  std::vector<RevisionMemo> revision_memo_;
};
// The predicates.h predicates on facts; same results as IsUpdateReady / IsAvailable / RevisionMatches /
// IsSpecifiedDelete on the pod.
// Inline: every stage asks them of every pod.
inline bool IsUpdateReady(const PodHotFacts& f, int32_t min_ready_seconds, absl::Time now) {
  if (!f.running || !f.k8s_ready) return false;
  if (min_ready_seconds > 0) {
    // An unset transition time (InfinitePast) is never available, as in IsRunningAvailable.
    if (f.ready_since == absl::InfinitePast()) return false;
    if (!(f.ready_since + absl::Seconds(min_ready_seconds) < now)) return false;
  }
  return f.in_place_ready;
}
inline bool IsAvailable(const PodHotFacts& f, int32_t min_ready_seconds, absl::Time now) {
  if (f.lifecycle != Lifecycle::kNone && f.lifecycle != Lifecycle::kNormal) return false;
  return IsUpdateReady(f, min_ready_seconds, now);
}
bool RevisionMatches(const PodColdFacts& f, std::string_view revision);
// IsSpecifiedDelete's podsToDelete half: the pod's name is listed.
bool IsNamedForDeletion(const PodColdFacts& f, const ResolvedSpec& spec);
// Inline: the scale stage and both diffs ask it of every pod, and the answer is nearly always the label's (the
// pod's name, in `cold`, is read only when podsToDelete lists some).
inline bool IsSpecifiedDelete(const PodHotFacts& f, const PodColdFacts& cold, const ResolvedSpec& spec) {
  if (f.specified_delete_label) return true;
  if (spec.pods_to_delete.empty()) return false;
  return IsNamedForDeletion(cold, spec);
}
inline bool IsSpecifiedDelete(const PodFacts& f, const ResolvedSpec& spec) { return IsSpecifiedDelete(f, f, spec); }

}  // namespace cloneset::planner
