#include "planapi/pod_table.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace cloneset::planapi {
namespace {

using google::protobuf::RepeatedField;
using google::protobuf::Timestamp;

// Interns strings into the table: one copy of each distinct string, numbered from 1 (0 is "").
class StringTable {
 public:
  explicit StringTable(pb::PodTable* table) : table_(table) {}

  // Starts the strings of the next pod (see Ref).
  void NextPod() { position_ = 0; }

  // A string no other pod holds (a name, uid, resourceVersion or container id): stored without looking for an
  // equal one, as the format allows; at 10^5 pods hashing these half million strings dominated encoding.
  uint32_t Unique(std::string_view s) { return s.empty() ? 0 : Append(s); }

  uint32_t Ref(std::string_view s) {
    // Consecutive pods mostly hold the same strings in the same order (label keys, owner, condition types,
    // statuses, images): the string the previous pod had at this position is compared first, which costs a
    // fraction of hashing it.
    if (position_ == previous_.size()) previous_.emplace_back();
    Previous& previous = previous_[position_++];
    if (s == previous.text) {  // not memcmp: an empty view may have a null pointer
      return previous.ref;
    }
    previous.text = s;
    previous.ref = Intern(s);
    return previous.ref;
  }

 private:
  uint32_t Intern(std::string_view s) {
    if (s.empty()) return 0;
    // The key must outlive the map: it points into the pods being encoded, which do.
    auto [it, inserted] = refs_.try_emplace(s, 0);
    if (inserted) it->second = Append(s);
    return it->second;
  }

  // Adds `s` as the table's next string and returns its reference.
  uint32_t Append(std::string_view s) {
    table_->mutable_string_data()->append(s.data(), s.size());
    table_->add_string_ends(static_cast<uint32_t>(table_->string_data().size()));
    return static_cast<uint32_t>(table_->string_ends_size());
  }

  struct Previous {
    std::string_view text;  // points into the previous pod, which outlives the encoding
    uint32_t ref = 0;
  };
  pb::PodTable* table_;
  absl::flat_hash_map<std::string_view, uint32_t> refs_;
  std::vector<Previous> previous_;
  size_t position_ = 0;
};

// The entries of `map` in key order, in `out` (reused from pod to pod).
const std::vector<const google::protobuf::Map<std::string, std::string>::value_type*>& SortedEntries(
    const google::protobuf::Map<std::string, std::string>& map,
    std::vector<const google::protobuf::Map<std::string, std::string>::value_type*>& out) {
  out.clear();
  for (const auto& entry : map) out.push_back(&entry);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return out;
}

// Nanoseconds since the epoch; 0 for an unset (or zero) Timestamp, which the planner treats alike.
// `field` is the path under the pod, or under its condition `condition` when that is not negative.
absl::StatusOr<int64_t> Nanos(const Timestamp& ts, int pod, absl::string_view field, int condition = -1) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return 0;
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000000000 - 1;
  if (ts.seconds() < -kMaxSeconds || ts.seconds() > kMaxSeconds || ts.nanos() < 0 || ts.nanos() > 999999999) {
    const std::string path =
        condition < 0 ? std::string(field) : absl::StrCat("status.conditions[", condition, "].", field);
    return absl::InvalidArgumentError(absl::StrCat("pods[", pod, "].", path, ": seconds ", ts.seconds(), ", nanos ",
                                                   ts.nanos(), " is outside what a pod table carries (1678-2262)"));
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

absl::StatusOr<pb::PodTable> EncodePodTable(const google::protobuf::RepeatedPtrField<pb::Pod>& pods) {
  std::vector<const pb::Pod*> pointers(pods.pointer_begin(), pods.pointer_end());
  return EncodePodTable(pointers);
}

absl::StatusOr<pb::PodTable> EncodePodTable(absl::Span<const pb::Pod* const> pods) {
  pb::PodTable t;
  StringTable strings(&t);
  const int n = static_cast<int>(pods.size());
  for (auto* column : {t.mutable_name(), t.mutable_namespace_(), t.mutable_uid(), t.mutable_resource_version(),
                       t.mutable_node_name(), t.mutable_phase(), t.mutable_label_counts(),
                       t.mutable_annotation_counts(), t.mutable_finalizer_counts(),
                       t.mutable_owner_reference_counts(), t.mutable_readiness_gate_counts(),
                       t.mutable_container_counts(), t.mutable_condition_counts(),
                       t.mutable_container_status_counts()}) {
    column->Reserve(n);
  }
  std::vector<const google::protobuf::Map<std::string, std::string>::value_type*> entries;
  for (int i = 0; i < n; ++i) {
    const pb::Pod& pod = *pods[i];
    const pb::ObjectMeta& meta = pod.metadata();
    strings.NextPod();
    t.add_name(strings.Unique(meta.name()));
    t.add_namespace_(strings.Ref(meta.namespace_()));
    t.add_uid(strings.Unique(meta.uid()));
    t.add_resource_version(strings.Unique(meta.resource_version()));
    t.add_generation(meta.generation());
    absl::StatusOr<int64_t> created = Nanos(meta.creation_timestamp(), i, "metadata.creationTimestamp");
    if (!created.ok()) return created.status();
    t.add_creation_timestamp(*created);
    absl::StatusOr<int64_t> deleted = Nanos(meta.deletion_timestamp(), i, "metadata.deletionTimestamp");
    if (!deleted.ok()) return deleted.status();
    t.add_deletion_timestamp(*deleted);
    t.add_node_name(strings.Ref(pod.node_name()));
    t.add_phase(strings.Ref(pod.phase()));
    // Map entries go in key order: protobuf's map order differs from map to map, and sorted entries make the
    // same pods encode to the same bytes and let consecutive pods' keys meet at the same positions (see Ref).
    t.add_label_counts(static_cast<uint32_t>(meta.labels().size()));
    for (const auto* entry : SortedEntries(meta.labels(), entries)) {
      t.add_labels(strings.Ref(entry->first));
      t.add_labels(strings.Ref(entry->second));
    }
    t.add_annotation_counts(static_cast<uint32_t>(meta.annotations().size()));
    for (const auto* entry : SortedEntries(meta.annotations(), entries)) {
      t.add_annotations(strings.Ref(entry->first));
      t.add_annotations(strings.Ref(entry->second));
    }
    t.add_finalizer_counts(static_cast<uint32_t>(meta.finalizers_size()));
    for (const std::string& f : meta.finalizers()) t.add_finalizers(strings.Ref(f));
    t.add_owner_reference_counts(static_cast<uint32_t>(meta.owner_references_size()));
    for (const pb::OwnerReference& ref : meta.owner_references()) {
      for (const std::string* s : {&ref.api_version(), &ref.kind(), &ref.name(), &ref.uid()}) {
        t.add_owner_references(strings.Ref(*s));
      }
      t.add_owner_reference_flags((ref.controller() ? 1u : 0u) | (ref.block_owner_deletion() ? 2u : 0u));
    }
    t.add_readiness_gate_counts(static_cast<uint32_t>(pod.readiness_gates_size()));
    for (const std::string& gate : pod.readiness_gates()) t.add_readiness_gates(strings.Ref(gate));
    t.add_container_counts(static_cast<uint32_t>(pod.containers_size()));
    for (const pb::Container& c : pod.containers()) {
      t.add_containers(strings.Ref(c.name()));
      t.add_containers(strings.Ref(c.image()));
      t.add_container_has_launch_priority(c.has_launch_priority());
      t.add_container_launch_priority(c.has_launch_priority() ? c.launch_priority() : 0);
    }
    t.add_condition_counts(static_cast<uint32_t>(pod.conditions_size()));
    for (int k = 0; k < pod.conditions_size(); ++k) {
      const pb::Condition& c = pod.conditions(k);
      for (const std::string* s : {&c.type(), &c.status(), &c.reason(), &c.message()}) {
        t.add_conditions(strings.Ref(*s));
      }
      // The field path is formatted only for an error (a string per condition cost as much as the rest).
      absl::StatusOr<int64_t> transition = Nanos(c.last_transition_time(), i, "lastTransitionTime", k);
      if (!transition.ok()) return transition.status();
      t.add_condition_last_transition_time(*transition);
      absl::StatusOr<int64_t> update = Nanos(c.last_update_time(), i, "lastUpdateTime", k);
      if (!update.ok()) return update.status();
      t.add_condition_last_update_time(*update);
    }
    t.add_container_status_counts(static_cast<uint32_t>(pod.container_statuses_size()));
    for (const pb::ContainerStatus& s : pod.container_statuses()) {
      for (const std::string* v : {&s.name(), &s.image(), &s.image_id()}) t.add_container_statuses(strings.Ref(*v));
      t.add_container_statuses(strings.Unique(s.container_id()));
      t.add_container_status_ready(s.ready());
      t.add_container_status_restart_count(s.restart_count());
    }
  }
  DropIfDefault(t.mutable_namespace_());
  DropIfDefault(t.mutable_generation());
  DropIfDefault(t.mutable_deletion_timestamp());
  for (auto* counts : {t.mutable_finalizer_counts(), t.mutable_owner_reference_counts(),
                       t.mutable_readiness_gate_counts(), t.mutable_container_counts(), t.mutable_condition_counts(),
                       t.mutable_container_status_counts(), t.mutable_label_counts(), t.mutable_annotation_counts()}) {
    DropIfDefault(counts);
  }
  DropIfDefault(t.mutable_owner_reference_flags());
  DropIfDefault(t.mutable_container_has_launch_priority());
  DropIfDefault(t.mutable_container_launch_priority());
  DropIfDefault(t.mutable_condition_last_update_time());
  DropIfDefault(t.mutable_container_status_ready());
  DropIfDefault(t.mutable_container_status_restart_count());
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
  }
  return pod;
}

}  // namespace cloneset::planapi
