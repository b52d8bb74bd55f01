// Size: one format's encoder (rows, the builder), its checked view and its materializer: each walks the same column
// layout, which they must change in step.
#include "planapi/pod_table.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"

namespace cloneset::planapi {
namespace {

using google::protobuf::RepeatedField;
using google::protobuf::Timestamp;

// The entries of `map` in key order, in `out` (reused from pod to pod).
const std::vector<const google::protobuf::Map<std::string, std::string>::value_type*>& SortedEntries(
    const google::protobuf::Map<std::string, std::string>& map,
    std::vector<const google::protobuf::Map<std::string, std::string>::value_type*>& out) {
  out.clear();
  for (const auto& entry : map) out.push_back(&entry);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return out;
}

// Nanoseconds since the epoch; 0 for an unset (or zero) Timestamp, which the planner treats alike. Out of range:
// `error` receives the field (the path under the pod, or under its condition `condition` when that is not negative)
// and why; the builder names the pod.
int64_t Nanos(const Timestamp& ts, absl::string_view field, std::string* error, int condition = -1) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return 0;
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000000000 - 1;
  if (ts.seconds() < -kMaxSeconds || ts.seconds() > kMaxSeconds || ts.nanos() < 0 || ts.nanos() > 999999999) {
    if (error->empty()) {
      const std::string path =
          condition < 0 ? std::string(field) : absl::StrCat("status.conditions[", condition, "].", field);
      *error = absl::StrCat(path, ": seconds ", ts.seconds(), ", nanos ", ts.nanos(),
                            " is outside what a pod table carries (1678-2262)");
    }
    return 0;
  }
  return ts.seconds() * 1000000000 + ts.nanos();
}

void SetTimestamp(int64_t nanos, Timestamp* ts) {
  // Floor division, so times before the epoch keep 0 <= nanos < 1e9.
  int64_t seconds = nanos / 1000000000;
  int64_t rest = nanos % 1000000000;
  if (rest < 0) {
    rest += 1000000000;
    --seconds;
  }
  ts->set_seconds(seconds);
  ts->set_nanos(static_cast<int32_t>(rest));
}

// Drops a per-pod column whose every entry is the default, as the format allows.
template <typename T>
void DropIfDefault(RepeatedField<T>* column) {
  for (const T& v : *column) {
    if (v != T{}) return;
  }
  column->Clear();
}

// Checks a per-entry column: empty, or `expected` entries.
template <typename T>
absl::Status CheckLength(const RepeatedField<T>& column, absl::string_view name, uint32_t expected, bool optional) {
  const auto size = static_cast<uint32_t>(column.size());
  if (size == expected || (optional && size == 0)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("pod_table.", name, ": holds ", size, " entries, expected ",
                                                 expected, optional ? " (or none)" : ""));
}

absl::Status CheckRefs(const RepeatedField<uint32_t>& column, absl::string_view name, uint32_t strings) {
  // Whether any reference is bad first, in a loop without an exit (the compiler vectorizes it); the index of the
  // first bad one only when there is one.
  // Unsigned order as signed order after flipping the top bit: baseline x86-64 (SSE2) compares signed only.
  const auto biased = [](uint32_t v) { return static_cast<int32_t>(v ^ 0x80000000u); };
  const int32_t limit = biased(strings);
  uint32_t any_bad = 0;
  const uint32_t* refs = column.data();
  for (int i = 0; i < column.size(); ++i) any_bad |= biased(refs[i]) > limit ? ~0u : 0u;
  if (any_bad == 0) return absl::OkStatus();
  for (int i = 0; i < column.size(); ++i) {
    if (column.Get(i) > strings) {
      return absl::InvalidArgumentError(absl::StrCat("pod_table.", name, "[", i, "]: string ", column.Get(i),
                                                     " does not exist (the table has ", strings, ")"));
    }
  }
  return absl::OkStatus();
}

// Builds offsets from a count column and checks the list column (`arity` values per entry) against it.
absl::Status Offsets(const RepeatedField<uint32_t>& counts, absl::string_view counts_name,
                     const RepeatedField<uint32_t>& list, absl::string_view list_name, uint32_t arity, uint32_t pods,
                     uint32_t strings, std::vector<uint32_t>* offsets) {
  if (absl::Status s = CheckLength(counts, counts_name, pods, true); !s.ok()) return s;
  uint64_t total = 0;
  if (!counts.empty()) {
    offsets->resize(pods + 1);
    for (uint32_t row = 0; row < pods; ++row) {
      (*offsets)[row] = static_cast<uint32_t>(total);
      total += counts.Get(static_cast<int>(row));
      if (total * arity > static_cast<uint64_t>(list.size())) break;
    }
    (*offsets)[pods] = static_cast<uint32_t>(total);
  }
  if (total * arity != static_cast<uint64_t>(list.size())) {
    return absl::InvalidArgumentError(absl::StrCat("pod_table.", list_name, ": holds ", list.size(), " values, but ",
                                                   counts_name, " needs ", total * arity, " (", arity,
                                                   " per entry)"));
  }
  return CheckRefs(list, list_name, strings);
}

}  // namespace

struct StringPool::Index {
  // Nodes do not move: Text's views point into the keys.
  absl::node_hash_map<std::string, uint32_t> numbers;
};

StringPool::StringPool() : texts_(1), counts_(1), index_(std::make_unique<Index>()) {}
StringPool::~StringPool() = default;

size_t StringPool::size() const { return index_->numbers.size(); }

uint32_t StringPool::Intern(std::string_view s) {
  // Looked up by view first: a string the pool holds (nearly every one) costs no key string.
  if (auto found = index_->numbers.find(absl::string_view(s.data(), s.size())); found != index_->numbers.end()) {
    ++counts_[found->second];
    return found->second;
  }
  auto it = index_->numbers.try_emplace(std::string(s), 0).first;
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(texts_.size());
    texts_.emplace_back();
    counts_.push_back(0);
  }
  it->second = id;
  texts_[id] = it->first;
  counts_[id] = 1;
  return id;
}

uint32_t StringPool::Find(std::string_view s) const {
  auto it = index_->numbers.find(absl::string_view(s.data(), s.size()));
  return it == index_->numbers.end() ? 0 : it->second;
}

void StringPool::Retain(uint32_t id) { ++counts_[id]; }

void StringPool::Release(uint32_t id) {
  if (--counts_[id] != 0) return;
  index_->numbers.erase(std::string(texts_[id]));
  texts_[id] = {};
  free_.push_back(id);
}

namespace {

// Where each part of a row starts in PodRow::counts.
enum Counts { kLabels, kAnnotations, kFinalizers, kOwners, kGates, kContainers, kConditions, kStatuses };

}  // namespace

void EncodePodRow(const pb::Pod& pod, StringPool& pool, PodRow* row) { EncodePodRow(pod, pool, row, nullptr); }

void EncodePodRow(const pb::Pod& pod, StringPool& pool, PodRow* row, const PodRow* previous) {
  row->strings.clear();
  row->own.clear();
  row->values.clear();
  row->error.clear();
  const auto own = [row](std::string_view s) {
    row->strings.push_back(static_cast<uint32_t>(s.size() << 1) | 1u);
    row->own.append(s.data(), s.size());
  };
  // The previous row's string in the same place, when it is a shared one with the same text: counted again by its
  // number, without hashing the text (most of a pod's next version is its previous one).
  const uint32_t* hint = previous == nullptr ? nullptr : previous->strings.data();
  const size_t hints = previous == nullptr ? 0 : previous->strings.size();
  const auto shared = [row, &pool, hint, hints](std::string_view s) {
    if (s.empty()) {
      row->strings.push_back(0);
      return;
    }
    const size_t at = row->strings.size();
    if (at < hints && hint[at] != 0 && (hint[at] & 1u) == 0 && pool.Text(hint[at] >> 1) == s) {
      pool.Retain(hint[at] >> 1);
      row->strings.push_back(hint[at]);
      return;
    }
    row->strings.push_back(pool.Intern(s) << 1);
  };
  const pb::ObjectMeta& meta = pod.metadata();
  own(meta.name());
  shared(meta.namespace_());
  own(meta.uid());
  own(meta.resource_version());
  row->generation = meta.generation();
  row->creation_timestamp = Nanos(meta.creation_timestamp(), "metadata.creationTimestamp", &row->error);
  row->deletion_timestamp = Nanos(meta.deletion_timestamp(), "metadata.deletionTimestamp", &row->error);
  shared(pod.node_name());
  shared(pod.phase());
  // Map entries go in key order: protobuf's map order differs from map to map, and sorted entries make the
  // same pods encode to the same bytes.
  thread_local std::vector<const google::protobuf::Map<std::string, std::string>::value_type*> entries;
  row->counts[kLabels] = static_cast<uint32_t>(meta.labels().size());
  for (const auto* entry : SortedEntries(meta.labels(), entries)) {
    shared(entry->first);
    shared(entry->second);
  }
  row->counts[kAnnotations] = static_cast<uint32_t>(meta.annotations().size());
  for (const auto* entry : SortedEntries(meta.annotations(), entries)) {
    shared(entry->first);
    shared(entry->second);
  }
  row->counts[kFinalizers] = static_cast<uint32_t>(meta.finalizers_size());
  for (const std::string& f : meta.finalizers()) shared(f);
  row->counts[kOwners] = static_cast<uint32_t>(meta.owner_references_size());
  for (const pb::OwnerReference& ref : meta.owner_references()) {
    for (const std::string* s : {&ref.api_version(), &ref.kind(), &ref.name(), &ref.uid()}) shared(*s);
    row->values.push_back((ref.controller() ? 1 : 0) | (ref.block_owner_deletion() ? 2 : 0));
  }
  row->counts[kGates] = static_cast<uint32_t>(pod.readiness_gates_size());
  for (const std::string& gate : pod.readiness_gates()) shared(gate);
  // A container's or status's resources: "requests"/"limits", name, quantity per entry, requests then limits,
  // each by name.
  const auto resources = [&](const google::protobuf::Map<std::string, std::string>& requests,
                             const google::protobuf::Map<std::string, std::string>& limits) {
    row->values.push_back(static_cast<int64_t>(requests.size() + limits.size()));
    using Named = std::pair<std::string_view, const google::protobuf::Map<std::string, std::string>*>;
    for (const auto& [kind, list] : {Named{"requests", &requests}, Named{"limits", &limits}}) {
      for (const auto* entry : SortedEntries(*list, entries)) {
        shared(kind);
        shared(entry->first);
        shared(entry->second);
      }
    }
  };
  row->counts[kContainers] = static_cast<uint32_t>(pod.containers_size());
  for (const pb::Container& c : pod.containers()) {
    shared(c.name());
    shared(c.image());
    row->values.push_back(c.has_launch_priority() ? 1 : 0);
    row->values.push_back(c.has_launch_priority() ? c.launch_priority() : 0);
    resources(c.resource_requests(), c.resource_limits());
    row->values.push_back(c.restart_on_resize_size());
    for (const std::string& r : c.restart_on_resize()) shared(r);
  }
  row->counts[kConditions] = static_cast<uint32_t>(pod.conditions_size());
  for (int k = 0; k < pod.conditions_size(); ++k) {
    const pb::Condition& c = pod.conditions(k);
    for (const std::string* s : {&c.type(), &c.status(), &c.reason(), &c.message()}) shared(*s);
    row->values.push_back(Nanos(c.last_transition_time(), "lastTransitionTime", &row->error, k));
    row->values.push_back(Nanos(c.last_update_time(), "lastUpdateTime", &row->error, k));
  }
  row->counts[kStatuses] = static_cast<uint32_t>(pod.container_statuses_size());
  for (const pb::ContainerStatus& s : pod.container_statuses()) {
    for (const std::string* v : {&s.name(), &s.image(), &s.image_id()}) shared(*v);
    own(s.container_id());
    row->values.push_back(s.ready() ? 1 : 0);
    row->values.push_back(s.restart_count());
    resources(s.resource_requests(), s.resource_limits());
  }
}

void ReleasePodRow(StringPool& pool, const PodRow& row) {
  for (const uint32_t s : row.strings) {
    if (s != 0 && (s & 1u) == 0) pool.Release(s >> 1);
  }
}

PodRowKey ReadPodRowKey(const PodRow& row, const StringPool& pool) {
  // name, uid and resourceVersion are the row's first own strings, the namespace a shared one (EncodePodRow).
  const auto own_length = [&](int slot) -> size_t { return row.strings[slot] >> 1; };
  const std::string_view own(row.own);
  PodRowKey key;
  size_t at = 0;
  key.name = own.substr(at, own_length(0));
  at += key.name.size();
  key.namespace_ = row.strings[1] == 0 ? std::string_view() : pool.Text(PoolNumber(row.strings[1]));
  key.uid = own.substr(at, own_length(2));
  at += key.uid.size();
  key.resource_version = own.substr(at, own_length(3));
  return key;
}

absl::Span<const uint32_t> PodRowOwnerStrings(const PodRow& row) {
  // After name, namespace, uid, resourceVersion, node name, phase, labels and annotations (two strings each) and
  // finalizers; every owner reference string is a shared one.
  const size_t begin = 6 + 2 * row.counts[kLabels] + 2 * row.counts[kAnnotations] + row.counts[kFinalizers];
  return absl::MakeConstSpan(row.strings).subspan(begin, 4 * row.counts[kOwners]);
}

pb::Pod MaterializePodRow(const PodRow& row, const StringPool& pool) {
  pb::PodTable table;
  PodTableBuilder builder(&table, pool, 1);
  if (!builder.Add(row).ok()) return pb::Pod();
  builder.Finish();
  auto view = PodTableView::Open(table);
  if (!view.ok()) return pb::Pod();
  std::unique_ptr<pb::Pod> pod((*view)->Materialize(0, nullptr));
  return std::move(*pod);
}

PodTableBuilder::PodTableBuilder(pb::PodTable* table, const StringPool& pool, size_t rows_hint)
    : t_(table), pool_(pool), refs_(pool.capacity(), 0) {
  const int n = static_cast<int>(rows_hint);
  for (auto* column : {t_->mutable_name(), t_->mutable_namespace_(), t_->mutable_uid(),
                       t_->mutable_resource_version(), t_->mutable_node_name(), t_->mutable_phase(),
                       t_->mutable_label_counts(), t_->mutable_annotation_counts(), t_->mutable_finalizer_counts(),
                       t_->mutable_owner_reference_counts(), t_->mutable_readiness_gate_counts(),
                       t_->mutable_container_counts(), t_->mutable_condition_counts(),
                       t_->mutable_container_status_counts()}) {
    column->Reserve(n);
  }
  for (auto* column : {t_->mutable_generation(), t_->mutable_creation_timestamp(), t_->mutable_deletion_timestamp()}) {
    column->Reserve(n);
  }
}

uint32_t PodTableBuilder::Append(std::string_view s) {
  t_->mutable_string_data()->append(s.data(), s.size());
  t_->add_string_ends(static_cast<uint32_t>(t_->string_data().size()));
  return static_cast<uint32_t>(t_->string_ends_size());
}

absl::Status PodTableBuilder::Add(const PodRow& row) {
  if (!row.error.empty()) return absl::InvalidArgumentError(absl::StrCat("pods[", rows_, "].", row.error));
  ++rows_;
  pb::PodTable& t = *t_;
  const uint32_t* slot = row.strings.data();
  const char* own = row.own.data();
  const int64_t* value = row.values.data();
  // The table's number of the row's next string: a pool string gets one the first time the table meets it, an
  // own string one of its own (as EncodePodTable's Unique, without looking for a repeat).
  const auto next = [&]() -> uint32_t {
    const uint32_t s = *slot++;
    if (s == 0) return 0;
    if ((s & 1u) != 0) {
      const std::string_view text(own, s >> 1);
      own += s >> 1;
      return text.empty() ? 0 : Append(text);
    }
    const uint32_t id = s >> 1;
    if (id >= refs_.size()) refs_.resize(pool_.capacity(), 0);
    uint32_t& ref = refs_[id];
    if (ref == 0) ref = Append(pool_.Text(id));
    return ref;
  };
  const auto strings = [&](google::protobuf::RepeatedField<uint32_t>* column, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) column->Add(next());
  };
  t.add_name(next());
  t.add_namespace_(next());
  t.add_uid(next());
  t.add_resource_version(next());
  t.add_generation(row.generation);
  t.add_creation_timestamp(row.creation_timestamp);
  t.add_deletion_timestamp(row.deletion_timestamp);
  t.add_node_name(next());
  t.add_phase(next());
  t.add_label_counts(row.counts[kLabels]);
  strings(t.mutable_labels(), 2 * row.counts[kLabels]);
  t.add_annotation_counts(row.counts[kAnnotations]);
  strings(t.mutable_annotations(), 2 * row.counts[kAnnotations]);
  t.add_finalizer_counts(row.counts[kFinalizers]);
  strings(t.mutable_finalizers(), row.counts[kFinalizers]);
  t.add_owner_reference_counts(row.counts[kOwners]);
  for (uint32_t i = 0; i < row.counts[kOwners]; ++i) {
    strings(t.mutable_owner_references(), 4);
    t.add_owner_reference_flags(static_cast<uint32_t>(*value++));
  }
  t.add_readiness_gate_counts(row.counts[kGates]);
  strings(t.mutable_readiness_gates(), row.counts[kGates]);
  t.add_container_counts(row.counts[kContainers]);
  for (uint32_t i = 0; i < row.counts[kContainers]; ++i) {
    strings(t.mutable_containers(), 2);
    t.add_container_has_launch_priority(*value++ != 0);
    t.add_container_launch_priority(static_cast<int32_t>(*value++));
    const auto resources = static_cast<uint32_t>(*value++);
    t.add_container_resource_counts(resources);
    strings(t.mutable_container_resources(), 3 * resources);
    const auto restart = static_cast<uint32_t>(*value++);
    t.add_container_restart_on_resize_counts(restart);
    strings(t.mutable_container_restart_on_resize(), restart);
  }
  t.add_condition_counts(row.counts[kConditions]);
  for (uint32_t i = 0; i < row.counts[kConditions]; ++i) {
    strings(t.mutable_conditions(), 4);
    t.add_condition_last_transition_time(*value++);
    t.add_condition_last_update_time(*value++);
  }
  t.add_container_status_counts(row.counts[kStatuses]);
  for (uint32_t i = 0; i < row.counts[kStatuses]; ++i) {
    strings(t.mutable_container_statuses(), 4);
    t.add_container_status_ready(*value++ != 0);
    t.add_container_status_restart_count(static_cast<int32_t>(*value++));
    const auto resources = static_cast<uint32_t>(*value++);
    t.add_container_status_resource_counts(resources);
    strings(t.mutable_container_status_resources(), 3 * resources);
  }
  return absl::OkStatus();
}

void PodTableBuilder::Finish() {
  pb::PodTable& t = *t_;
  DropIfDefault(t.mutable_namespace_());
  DropIfDefault(t.mutable_generation());
  DropIfDefault(t.mutable_deletion_timestamp());
  for (auto* counts : {t.mutable_finalizer_counts(), t.mutable_owner_reference_counts(),
                       t.mutable_readiness_gate_counts(), t.mutable_container_counts(), t.mutable_condition_counts(),
                       t.mutable_container_status_counts(), t.mutable_label_counts(), t.mutable_annotation_counts(),
                       t.mutable_container_resource_counts(), t.mutable_container_restart_on_resize_counts(),
                       t.mutable_container_status_resource_counts()}) {
    DropIfDefault(counts);
  }
  DropIfDefault(t.mutable_owner_reference_flags());
  DropIfDefault(t.mutable_container_has_launch_priority());
  DropIfDefault(t.mutable_container_launch_priority());
  DropIfDefault(t.mutable_condition_last_update_time());
  DropIfDefault(t.mutable_container_status_ready());
  DropIfDefault(t.mutable_container_status_restart_count());
}

absl::StatusOr<pb::PodTable> EncodePodTable(const google::protobuf::RepeatedPtrField<pb::Pod>& pods) {
  std::vector<const pb::Pod*> pointers(pods.pointer_begin(), pods.pointer_end());
  return EncodePodTable(pointers);
}

absl::StatusOr<pb::PodTable> EncodePodTable(absl::Span<const pb::Pod* const> pods) {
  pb::PodTable t;
  StringPool pool;  // dropped as a whole: the rows are not released
  PodRow row;       // one row, reused from pod to pod
  PodTableBuilder builder(&t, pool, pods.size());
  for (const pb::Pod* pod : pods) {
    EncodePodRow(*pod, pool, &row);
    if (absl::Status s = builder.Add(row); !s.ok()) return s;
  }
  builder.Finish();
  return t;
}

absl::StatusOr<std::unique_ptr<PodTableView>> PodTableView::Open(const pb::PodTable& t) {
  auto view = std::unique_ptr<PodTableView>(new PodTableView());
  view->table_ = &t;
  view->pods_ = static_cast<uint32_t>(t.name_size());
  const uint32_t pods = view->pods_;
  // As in CheckRefs: one pass without an exit decides, a second finds the bad index.
  bool ends_ok = t.string_ends().empty() || t.string_ends().data()[t.string_ends_size() - 1] <= t.string_data().size();
  for (int i = 1; i < t.string_ends_size(); ++i) {
    ends_ok &= t.string_ends().data()[i - 1] <= t.string_ends().data()[i];
  }
  uint32_t previous = 0;
  for (int i = 0; !ends_ok && i < t.string_ends_size(); ++i) {
    const uint32_t end = t.string_ends(i);
    if (end < previous || end > t.string_data().size()) {
      return absl::InvalidArgumentError(absl::StrCat("pod_table.string_ends[", i, "]: ", end,
                                                     " is before the previous end or past string_data (",
                                                     t.string_data().size(), " bytes)"));
    }
    previous = end;
  }
  const auto strings = static_cast<uint32_t>(t.string_ends_size());
  view->data_ = t.string_data().data();
  view->ends_ = t.string_ends().data();
  uint32_t smallest_name = ~uint32_t{0};
  for (const uint32_t ref : t.name()) smallest_name = std::min(smallest_name, ref);
  if (smallest_name == 0) {
    for (int i = 0; i < t.name_size(); ++i) {
      if (t.name(i) == 0) return absl::InvalidArgumentError(absl::StrCat("pod_table.name[", i, "]: required"));
    }
  }
  struct PerPod {
    const RepeatedField<uint32_t>& column;
    absl::string_view name;
  };
  for (const PerPod& c : {PerPod{t.name(), "name"}, PerPod{t.namespace_(), "namespace"}, PerPod{t.uid(), "uid"},
                          PerPod{t.resource_version(), "resource_version"}, PerPod{t.node_name(), "node_name"},
                          PerPod{t.phase(), "phase"}}) {
    if (absl::Status s = CheckLength(c.column, c.name, pods, c.name != "name"); !s.ok()) return s;
    if (absl::Status s = CheckRefs(c.column, c.name, strings); !s.ok()) return s;
  }
  for (const absl::Status& s : {CheckLength(t.generation(), "generation", pods, true),
                                CheckLength(t.creation_timestamp(), "creation_timestamp", pods, true),
                                CheckLength(t.deletion_timestamp(), "deletion_timestamp", pods, true)}) {
    if (!s.ok()) return s;
  }
  struct List {
    const RepeatedField<uint32_t>& counts;
    absl::string_view counts_name;
    const RepeatedField<uint32_t>& list;
    absl::string_view list_name;
    uint32_t arity;
    std::vector<uint32_t>* offsets;
  };
  for (const List& l : {
           List{t.label_counts(), "label_counts", t.labels(), "labels", 2, &view->label_offsets_},
           List{t.annotation_counts(), "annotation_counts", t.annotations(), "annotations", 2,
                &view->annotation_offsets_},
           List{t.finalizer_counts(), "finalizer_counts", t.finalizers(), "finalizers", 1, &view->finalizer_offsets_},
           List{t.owner_reference_counts(), "owner_reference_counts", t.owner_references(), "owner_references", 4,
                &view->owner_offsets_},
           List{t.readiness_gate_counts(), "readiness_gate_counts", t.readiness_gates(), "readiness_gates", 1,
                &view->gate_offsets_},
           List{t.container_counts(), "container_counts", t.containers(), "containers", 2,
                &view->container_offsets_},
           List{t.condition_counts(), "condition_counts", t.conditions(), "conditions", 4,
                &view->condition_offsets_},
           List{t.container_status_counts(), "container_status_counts", t.container_statuses(),
                "container_statuses", 4, &view->status_offsets_},
       }) {
    if (absl::Status s = Offsets(l.counts, l.counts_name, l.list, l.list_name, l.arity, pods, strings, l.offsets);
        !s.ok()) {
      return s;
    }
  }
  // The per-entry columns, against the entry counts of their lists.
  const auto entries = [](const std::vector<uint32_t>& offsets) { return offsets.empty() ? 0u : offsets.back(); };
  const uint32_t owners = entries(view->owner_offsets_);
  const uint32_t containers = entries(view->container_offsets_);
  const uint32_t conditions = entries(view->condition_offsets_);
  const uint32_t statuses = entries(view->status_offsets_);
  // The lists of a container or a container status.
  for (const List& l : {
           List{t.container_resource_counts(), "container_resource_counts", t.container_resources(),
                "container_resources", 3, &view->container_resource_offsets_},
           List{t.container_restart_on_resize_counts(), "container_restart_on_resize_counts",
                t.container_restart_on_resize(), "container_restart_on_resize", 1, &view->container_restart_offsets_},
       }) {
    if (absl::Status s = Offsets(l.counts, l.counts_name, l.list, l.list_name, l.arity, containers, strings,
                                 l.offsets);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = Offsets(t.container_status_resource_counts(), "container_status_resource_counts",
                               t.container_status_resources(), "container_status_resources", 3, statuses, strings,
                               &view->status_resource_offsets_);
      !s.ok()) {
    return s;
  }
  for (const absl::Status& s : {
           CheckLength(t.owner_reference_flags(), "owner_reference_flags", owners, true),
           CheckLength(t.container_has_launch_priority(), "container_has_launch_priority", containers, true),
           CheckLength(t.container_launch_priority(), "container_launch_priority", containers, true),
           CheckLength(t.condition_last_transition_time(), "condition_last_transition_time", conditions, true),
           CheckLength(t.condition_last_update_time(), "condition_last_update_time", conditions, true),
           CheckLength(t.container_status_ready(), "container_status_ready", statuses, true),
           CheckLength(t.container_status_restart_count(), "container_status_restart_count", statuses, true),
       }) {
    if (!s.ok()) return s;
  }
  return view;
}

std::vector<std::shared_ptr<const pb::Pod>> PodTableView::MaterializeAll() const {
  std::vector<std::shared_ptr<const pb::Pod>> out;
  out.reserve(pods_);
  for (uint32_t row = 0; row < pods_; ++row) out.emplace_back(Materialize(row, nullptr));
  return out;
}

pb::Pod* PodTableView::Materialize(uint32_t row, google::protobuf::Arena* arena) const {
  const pb::PodTable& t = *table_;
  auto* pod = google::protobuf::Arena::CreateMessage<pb::Pod>(arena);
  pb::ObjectMeta* meta = pod->mutable_metadata();
  const auto set = [](std::string_view s, std::string* out) { out->assign(s.data(), s.size()); };
  // The strings of list entry `entry`, one per field, in the order the encoder wrote them.
  const auto set_entry = [&](const RepeatedField<uint32_t>& list, uint32_t entry,
                             std::initializer_list<std::string*> fields) {
    uint32_t field = 0;
    for (std::string* out : fields) set(Entry(list, static_cast<uint32_t>(fields.size()), entry, field++), out);
  };
  const auto set_map = [&](const RepeatedField<uint32_t>& list, Range r,
                           google::protobuf::Map<std::string, std::string>* map) {
    for (; r.begin < r.end; ++r.begin) (*map)[std::string(Entry(list, 2, r.begin, 0))] = Entry(list, 2, r.begin, 1);
  };
  const auto set_resources = [&](const RepeatedField<uint32_t>& list, Range r,
                                 google::protobuf::Map<std::string, std::string>* requests,
                                 google::protobuf::Map<std::string, std::string>* limits) {
    for (; r.begin < r.end; ++r.begin) {
      auto* map = Entry(list, 3, r.begin, 0) == "requests" ? requests : limits;
      (*map)[std::string(Entry(list, 3, r.begin, 1))] = Entry(list, 3, r.begin, 2);
    }
  };
  meta->set_name(std::string(name(row)));
  if (!t.namespace_().empty()) set(Column(t.namespace_(), row), meta->mutable_namespace_());
  set(Column(t.uid(), row), meta->mutable_uid());
  set(Column(t.resource_version(), row), meta->mutable_resource_version());
  meta->set_generation(Value(t.generation(), row));
  if (const int64_t created = Value(t.creation_timestamp(), row); created != 0) {
    SetTimestamp(created, meta->mutable_creation_timestamp());
  }
  if (const int64_t deleted = Value(t.deletion_timestamp(), row); deleted != 0) {
    SetTimestamp(deleted, meta->mutable_deletion_timestamp());
  }
  set_map(t.labels(), labels(row), meta->mutable_labels());
  set_map(t.annotations(), annotations(row), meta->mutable_annotations());
  for (Range r = finalizers(row); r.begin < r.end; ++r.begin) {
    set_entry(t.finalizers(), r.begin, {meta->add_finalizers()});
  }
  for (Range r = owner_references(row); r.begin < r.end; ++r.begin) {
    pb::OwnerReference* ref = meta->add_owner_references();
    set_entry(t.owner_references(), r.begin,
              {ref->mutable_api_version(), ref->mutable_kind(), ref->mutable_name(), ref->mutable_uid()});
    const uint32_t flags = Value(t.owner_reference_flags(), r.begin);
    ref->set_controller((flags & 1u) != 0);
    ref->set_block_owner_deletion((flags & 2u) != 0);
  }
  set(Column(t.node_name(), row), pod->mutable_node_name());
  for (Range r = readiness_gates(row); r.begin < r.end; ++r.begin) {
    set_entry(t.readiness_gates(), r.begin, {pod->add_readiness_gates()});
  }
  for (Range r = containers(row); r.begin < r.end; ++r.begin) {
    pb::Container* c = pod->add_containers();
    set_entry(t.containers(), r.begin, {c->mutable_name(), c->mutable_image()});
    if (Value(t.container_has_launch_priority(), r.begin)) {
      c->set_launch_priority(Value(t.container_launch_priority(), r.begin));
    }
    set_resources(t.container_resources(), RangeOf(container_resource_offsets_, r.begin),
                  c->mutable_resource_requests(), c->mutable_resource_limits());
    for (Range e = RangeOf(container_restart_offsets_, r.begin); e.begin < e.end; ++e.begin) {
      set_entry(t.container_restart_on_resize(), e.begin, {c->add_restart_on_resize()});
    }
  }
  set(Column(t.phase(), row), pod->mutable_phase());
  for (Range r = conditions(row); r.begin < r.end; ++r.begin) {
    pb::Condition* c = pod->add_conditions();
    set_entry(t.conditions(), r.begin,
              {c->mutable_type(), c->mutable_status(), c->mutable_reason(), c->mutable_message()});
    if (const int64_t transition = Value(t.condition_last_transition_time(), r.begin); transition != 0) {
      SetTimestamp(transition, c->mutable_last_transition_time());
    }
    if (const int64_t update = Value(t.condition_last_update_time(), r.begin); update != 0) {
      SetTimestamp(update, c->mutable_last_update_time());
    }
  }
  for (Range r = container_statuses(row); r.begin < r.end; ++r.begin) {
    pb::ContainerStatus* s = pod->add_container_statuses();
    set_entry(t.container_statuses(), r.begin,
              {s->mutable_name(), s->mutable_image(), s->mutable_image_id(), s->mutable_container_id()});
    s->set_ready(Value(t.container_status_ready(), r.begin));
    s->set_restart_count(Value(t.container_status_restart_count(), r.begin));
    set_resources(t.container_status_resources(), RangeOf(status_resource_offsets_, r.begin),
                  s->mutable_resource_requests(), s->mutable_resource_limits());
  }
  return pod;
}

}  // namespace cloneset::planapi
