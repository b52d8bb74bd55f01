#include "planner/pod_facts.h"

#include <algorithm>
#include <cstring>

#include "planapi/pod_table.h"
#include "planner/predicates.h"
#include "planner/resolved_spec.h"

namespace cloneset::planner {
namespace {

// The well-known keys compared by length first: one walk over a pod's labels and annotations instead of a hashed
// find per key (the maps are small, their nodes cold).
template <size_t N>
bool Is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

// Every string the scan tells apart, whatever its role (label key, condition type, status, ...): classifying a
// string once answers every question the scan asks of it, and a pod table's strings are classified once per plan.
enum class Word : uint8_t {
  kUnclassified,  // TableFactsReader's memo: not looked at yet
  kOther,
  kRevisionLabel,
  kInstanceIdLabel,
  kLifecycleStateLabel,
  kSpecifiedDeleteLabel,
  kPodTemplateHashLabel,
  kInPlaceStateAnnotation,
  kInPlaceGraceAnnotation,
  kLegacyInPlaceStateAnnotation,
  kLegacyInPlaceGraceAnnotation,
  kRunning,
  kUnknown,
  kReady,
  kInPlaceUpdateReady,
  kContainersReady,
  kTrue,
  kFalse,
  kStateNormal,
  kStatePreparingNormal,
  kStatePreparingUpdate,
  kStateUpdating,
  kStateUpdated,
  kStatePreparingDelete,
};

Word WordOf(std::string_view s) {
  switch (s.size()) {
    case sizeof(kRevisionLabel) - 1:
      if (Is(s, kRevisionLabel)) return Word::kRevisionLabel;
      break;
    case sizeof(kPodTemplateHashLabel) - 1:
      if (Is(s, kPodTemplateHashLabel)) return Word::kPodTemplateHashLabel;
      break;
    case sizeof(kInstanceIdLabel) - 1:  // also kInPlaceStateAnnotation and kInPlaceGraceAnnotation
      if (Is(s, kInstanceIdLabel)) return Word::kInstanceIdLabel;
      if (Is(s, kInPlaceStateAnnotation)) return Word::kInPlaceStateAnnotation;
      if (Is(s, kInPlaceGraceAnnotation)) return Word::kInPlaceGraceAnnotation;
      break;
    case sizeof(kLifecycleStateLabel) - 1:
      if (Is(s, kLifecycleStateLabel)) return Word::kLifecycleStateLabel;
      break;
    case sizeof(kSpecifiedDeleteLabel) - 1:
      if (Is(s, kSpecifiedDeleteLabel)) return Word::kSpecifiedDeleteLabel;
      break;
    case sizeof(kLegacyInPlaceStateAnnotation) - 1:  // also kLegacyInPlaceGraceAnnotation
      if (Is(s, kLegacyInPlaceStateAnnotation)) return Word::kLegacyInPlaceStateAnnotation;
      if (Is(s, kLegacyInPlaceGraceAnnotation)) return Word::kLegacyInPlaceGraceAnnotation;
      break;
    case sizeof(kInPlaceUpdateReadyCondition) - 1:
      if (Is(s, kInPlaceUpdateReadyCondition)) return Word::kInPlaceUpdateReady;
      break;
    case 15:  // ContainersReady, PreparingNormal, PreparingUpdate, PreparingDelete
      if (Is(s, "ContainersReady")) return Word::kContainersReady;
      if (Is(s, kStatePreparingNormal)) return Word::kStatePreparingNormal;
      if (Is(s, kStatePreparingUpdate)) return Word::kStatePreparingUpdate;
      if (Is(s, kStatePreparingDelete)) return Word::kStatePreparingDelete;
      break;
    case 7:  // Running, Unknown, Updated
      if (Is(s, "Running")) return Word::kRunning;
      if (Is(s, "Unknown")) return Word::kUnknown;
      if (Is(s, kStateUpdated)) return Word::kStateUpdated;
      break;
    case 5:  // Ready, False
      if (Is(s, "Ready")) return Word::kReady;
      if (Is(s, "False")) return Word::kFalse;
      break;
    case 4:
      if (Is(s, "True")) return Word::kTrue;
      break;
    case 6:
      if (Is(s, kStateNormal)) return Word::kStateNormal;
      break;
    case 8:
      if (Is(s, kStateUpdating)) return Word::kStateUpdating;
      break;
    default:
      break;
  }
  return Word::kOther;
}

Lifecycle LifecycleOf(Word state, bool empty) {
  if (empty) return Lifecycle::kNone;
  switch (state) {
    case Word::kStateNormal: return Lifecycle::kNormal;
    case Word::kStatePreparingNormal: return Lifecycle::kPreparingNormal;
    case Word::kStatePreparingUpdate: return Lifecycle::kPreparingUpdate;
    case Word::kStateUpdating: return Lifecycle::kUpdating;
    case Word::kStateUpdated: return Lifecycle::kUpdated;
    case Word::kStatePreparingDelete: return Lifecycle::kPreparingDelete;
    default: return Lifecycle::kOther;
  }
}

void SetRevisionFlags(std::string_view update_revision, std::string_view current_revision, const PodColdFacts& cold,
                      PodHotFacts& f) {
  f.on_update_revision = RevisionMatches(cold, update_revision);
  f.on_current_revision = RevisionMatches(cold, current_revision);
}

// The per-entry steps of a scan, shared by the protobuf pod and the pod table; each string comes with its Word.
struct Scan {
  Scan(PodHotFacts& hot, PodColdFacts& cold) : f(hot), c(cold) {}
  PodHotFacts& f;
  PodColdFacts& c;
  std::string_view state, legacy_state, grace, legacy_grace;
  Word lifecycle = Word::kOther;
  bool has_lifecycle = false;
  bool has_containers_ready = false;

  void Label(Word key, std::string_view value, Word value_word) {
    switch (key) {
      case Word::kRevisionLabel:
        c.revision = value;
        f.has_revision_label = true;
        break;
      case Word::kInstanceIdLabel:
        c.instance_id = value;
        break;
      case Word::kLifecycleStateLabel:
        lifecycle = value_word;
        has_lifecycle = !value.empty();
        break;
      case Word::kSpecifiedDeleteLabel:
        f.specified_delete_label = true;
        break;
      case Word::kPodTemplateHashLabel:
        f.has_template_hash_label = true;
        break;
      default:
        break;
    }
  }
  void Annotation(Word key, std::string_view value) {
    switch (key) {
      case Word::kInPlaceStateAnnotation:
        state = value;
        break;
      case Word::kInPlaceGraceAnnotation:
        grace = value;
        f.has_grace_key = true;
        break;
      case Word::kLegacyInPlaceStateAnnotation:
        legacy_state = value;
        f.has_legacy_state = true;
        break;
      case Word::kLegacyInPlaceGraceAnnotation:
        legacy_grace = value;
        f.has_legacy_grace = true;
        break;
      default:
        break;
    }
  }
  void Phase(Word phase) {
    f.running = phase == Word::kRunning;
    f.phase_ordinal = f.running ? 2 : phase == Word::kUnknown ? 1 : 0;
  }
  // First match wins, as in FindCondition.
  void Condition(Word type, Word status, bool no_reason_or_message, absl::Time since) {
    if (!f.has_ready_condition && type == Word::kReady) {
      f.has_ready_condition = true;
      f.k8s_ready = status == Word::kTrue;
      f.ready_false = status == Word::kFalse;
      f.ready_since = since;
    } else if (!f.has_in_place_condition && type == Word::kInPlaceUpdateReady) {
      f.has_in_place_condition = true;
      f.in_place_ready = status == Word::kTrue;
      f.in_place_settled = f.in_place_ready && no_reason_or_message;
    } else if (!has_containers_ready && type == Word::kContainersReady) {
      has_containers_ready = true;
      f.containers_ready = status == Word::kTrue;
    }
  }
  void Gate(Word gate) {
    if (gate == Word::kInPlaceUpdateReady) f.in_place_gate = true;
  }
  void Finish() {
    f.lifecycle = LifecycleOf(lifecycle, !has_lifecycle);
    c.in_place_state = state.empty() ? legacy_state : state;
    c.in_place_grace = grace.empty() ? legacy_grace : grace;
    f.has_in_place_state = !c.in_place_state.empty();
    f.has_in_place_grace = !c.in_place_grace.empty();
  }
};

// Everything but the revision flags, counting the `match_labels` the pod holds exactly in *matched.
PodFacts ScanPod(const pb::Pod& pod, const std::vector<std::pair<std::string, std::string>>& match_labels,
                 size_t* matched) {
  PodFacts f;
  f.pod = &pod;
  f.name = pod.metadata().name();
  f.uid = pod.metadata().uid();
  f.resource_version = pod.metadata().resource_version();
  *matched = 0;
  Scan scan(f, f);
  for (const auto& [key, value] : pod.metadata().labels()) {
    for (const auto& [want_key, want_value] : match_labels) {
      if (key == want_key && value == want_value) ++*matched;
    }
    const Word word = WordOf(key);
    scan.Label(word, value, word == Word::kLifecycleStateLabel ? WordOf(value) : Word::kOther);
  }
  for (const auto& [key, value] : pod.metadata().annotations()) scan.Annotation(WordOf(key), value);
  f.node_name = pod.node_name();
  f.created = ToTime(pod.metadata().creation_timestamp());
  scan.Phase(WordOf(pod.phase()));
  for (const pb::Condition& c : pod.conditions()) {
    scan.Condition(WordOf(c.type()), WordOf(c.status()), c.reason().empty() && c.message().empty(),
                   ToTime(c.last_transition_time()));
  }
  for (const std::string& gate : pod.readiness_gates()) scan.Gate(WordOf(gate));
  for (const pb::ContainerStatus& status : pod.container_statuses()) {
    f.max_restarts = std::max(f.max_restarts, status.restart_count());
  }
  scan.Finish();
  return f;
}

}  // namespace

PodFacts ComputePodFacts(const pb::Pod& pod) {
  static const std::vector<std::pair<std::string, std::string>> kNone;
  size_t matched = 0;
  return ScanPod(pod, kNone, &matched);
}

TableFactsReader::TableFactsReader(const PodTableView& table,
                                   const std::vector<std::pair<std::string, std::string>>& match_labels,
                                   std::string_view update_revision, std::string_view current_revision, bool memoize)
    : table_(table),
      match_labels_(match_labels),
      update_revision_(update_revision),
      current_revision_(current_revision),
      selector_value_refs_(match_labels.size(), kNoRef) {
  if (memoize) memo_.resize(static_cast<size_t>(table.strings()) + 1);
}

TableFactsReader::StringMemo TableFactsReader::Classify(uint32_t ref) {
  StringMemo* memo = memo_.empty() ? &scratch_ : &memo_[ref];
  const std::string_view s = table_.String(ref);
  memo->word = static_cast<uint8_t>(WordOf(s));
  memo->selector_key = kNoSelectorKey;
  // Selectors of more than kNoSelectorKey matchLabels compare every key by text instead (Read's slow_selector).
  for (size_t k = 0; k < match_labels_.size() && k < kNoSelectorKey; ++k) {
    if (match_labels_[k].first == s) {
      memo->selector_key = static_cast<uint8_t>(k);
      break;
    }
  }
  return *memo;
}

bool TableFactsReader::SelectorValueMatches(size_t k, uint32_t value_ref) {
  if (selector_value_refs_[k] == value_ref) return true;
  // A table may repeat a string under several references: equal text is what counts. The last reference seen
  // equal is kept, so a table that shares its strings compares each text once.
  if (table_.String(value_ref) != match_labels_[k].second) return false;
  selector_value_refs_[k] = value_ref;
  return true;
}

void TableFactsReader::FlagRevisions(uint32_t revision_ref, const PodColdFacts& cold, PodHotFacts& f) {
  for (const RevisionMemo& m : revision_memo_) {
    if (m.ref == revision_ref) {
      f.on_update_revision = m.on_update;
      f.on_current_revision = m.on_current;
      return;
    }
  }
  SetRevisionFlags(update_revision_, current_revision_, cold, f);
  // Pods carry few distinct revisions (two mid-rollout): a handful of entries catches them all.
  if (revision_memo_.size() < 8) {
    revision_memo_.push_back({revision_ref, f.on_update_revision, f.on_current_revision});
  }
}

void TableFactsReader::Read(uint32_t row, PodHotFacts& f, PodColdFacts& c, size_t* matched) {
  const PodTableView& table = table_;
  const pb::PodTable& t = table.table();
  // `f` and `c` come value-initialized (the header says so): no `f = PodFacts()` here. Assigning a temporary cost a
  // second write of every pod's facts and a store-forwarding stall on reading the temporary back (perf of the
  // idle 10^5-pod plan: 40 % of Read's samples on that one load).
  f.row = row;
  c.name = table.name(row);
  c.uid = table.Column(t.uid(), row);
  c.resource_version = table.Column(t.resource_version(), row);
  *matched = 0;
  const bool slow_selector = match_labels_.size() > kNoSelectorKey;
  Scan scan(f, c);
  uint32_t revision_ref = 0;
  const uint32_t* labels = t.labels().data();
  for (auto r = table.labels(row); r.begin < r.end; ++r.begin) {
    const uint32_t key_ref = labels[2 * r.begin];
    const uint32_t value_ref = labels[2 * r.begin + 1];
    const StringMemo key = Memo(key_ref);
    if (slow_selector) {
      const std::string_view key_text = table.String(key_ref);
      const std::string_view value_text = table.String(value_ref);
      for (const auto& [want_key, want_value] : match_labels_) {
        if (key_text == want_key && value_text == want_value) ++*matched;
      }
    } else if (key.selector_key != kNoSelectorKey && SelectorValueMatches(key.selector_key, value_ref)) {
      ++*matched;
    }
    const auto key_word = static_cast<Word>(key.word);
    if (key_word == Word::kOther) continue;
    if (key_word == Word::kRevisionLabel) revision_ref = value_ref;
    const Word value_word =
        key_word == Word::kLifecycleStateLabel ? static_cast<Word>(Memo(value_ref).word) : Word::kOther;
    scan.Label(key_word, table.String(value_ref), value_word);
  }
  const uint32_t* annotations = t.annotations().data();
  for (auto r = table.annotations(row); r.begin < r.end; ++r.begin) {
    const auto key = static_cast<Word>(Memo(annotations[2 * r.begin]).word);
    if (key != Word::kOther) scan.Annotation(key, table.String(annotations[2 * r.begin + 1]));
  }
  c.node_name = table.Column(t.node_name(), row);
  f.created = PodTableView::Time(PodTableView::Value(t.creation_timestamp(), row));
  scan.Phase(t.phase().empty() ? Word::kOther : static_cast<Word>(Memo(t.phase().data()[row]).word));
  const uint32_t* conditions = t.conditions().data();
  for (auto r = table.conditions(row); r.begin < r.end; ++r.begin) {
    const uint32_t* c = conditions + 4 * r.begin;
    const auto type = static_cast<Word>(Memo(c[0]).word);
    const auto status = static_cast<Word>(Memo(c[1]).word);
    // c[2], c[3]: reason and message (reference 0 is the empty string; another may be too).
    const bool no_reason_or_message =
        (c[2] == 0 || table.String(c[2]).empty()) && (c[3] == 0 || table.String(c[3]).empty());
    scan.Condition(type, status, no_reason_or_message,
                   PodTableView::Time(PodTableView::Value(t.condition_last_transition_time(), r.begin)));
  }
  const uint32_t* gates = t.readiness_gates().data();
  for (auto r = table.readiness_gates(row); r.begin < r.end; ++r.begin) {
    scan.Gate(static_cast<Word>(Memo(gates[r.begin]).word));
  }
  if (!t.container_status_restart_count().empty()) {
    for (auto r = table.container_statuses(row); r.begin < r.end; ++r.begin) {
      f.max_restarts = std::max(f.max_restarts, t.container_status_restart_count(r.begin));
    }
  }
  scan.Finish();
  FlagRevisions(revision_ref, c, f);
}

PodFacts ComputePodFacts(const pb::Pod& pod, const std::vector<std::pair<std::string, std::string>>& match_labels,
                         size_t* matched, std::string_view update_revision, std::string_view current_revision) {
  PodFacts f = ScanPod(pod, match_labels, matched);
  SetRevisionFlags(update_revision, current_revision, f, f);
  return f;
}

bool RevisionMatches(const PodColdFacts& f, std::string_view revision) {
  return f.revision == revision || ShortHash(f.revision) == ShortHash(revision);
}

bool IsNamedForDeletion(const PodColdFacts& f, const ResolvedSpec& spec) {
  return std::find(spec.pods_to_delete.begin(), spec.pods_to_delete.end(), f.name) != spec.pods_to_delete.end();
}

}  // namespace cloneset::planner
