// The compact pod encoding of PlanRequest.pod_table (proto/planner.proto, message PodTable): encoding pods into
// it, checking a received table, and reading it row by row without building Pod objects.
//
// Why: a snapshot's pods sent as protobuf objects cost more to parse and to walk than the whole plan budget
// (labels are map<string,string>: an allocation per entry and a cold hash node per lookup). The table keeps every
// string once in one buffer and every pod as a few packed integers, so parsing it is a handful of copies and
// reading a pod touches a few cache lines (docs/performance.md "The pod table").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "google/protobuf/arena.h"

namespace cloneset::planapi {

namespace pb = ::cloneset::planner::v1;

// Encodes `pods` (in order) as a table that decodes to equal pods, sharing repeated strings (names, uids,
// resourceVersions and container ids, which pods do not share, are stored without looking for a repeat). Fails,
// naming the pod and field, for a timestamp outside what the table carries (years 1678 to 2262, as int64
// nanoseconds). The same as one PodRow per pod (EncodePodRow) appended by a PodTableBuilder, which is how it is
// done: a caller that keeps the rows of its pods (the executor's pod cache) assembles the same bytes without
// encoding the pods again.
absl::StatusOr<pb::PodTable> EncodePodTable(const google::protobuf::RepeatedPtrField<pb::Pod>& pods);
absl::StatusOr<pb::PodTable> EncodePodTable(absl::Span<const pb::Pod* const> pods);

// The strings pods share (label keys and values, images, namespaces, owner uids, condition types, ...), one copy
// each, numbered densely from 1 so that assembling a table maps them to the table's string numbers with an array
// lookup instead of a hash. Counted by the rows that hold them: a string no row holds any more is dropped and its
// number reused. Not thread-safe: the caller serializes Intern and Release with each other and with the readers
// of the rows (the executor's pod cache does, under its lock).
class StringPool {
 public:
  StringPool();
  ~StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  // The number of `s` (not empty), counted once more.
  uint32_t Intern(std::string_view s);
  // Counts `id` (a number the pool holds) once more, as Intern of its text would.
  void Retain(uint32_t id);
  // Counts `id` once less.
  void Release(uint32_t id);
  // The number of `s`, or 0 when no row holds it.
  uint32_t Find(std::string_view s) const;
  std::string_view Text(uint32_t id) const { return texts_[id]; }
  // Every number is below this.
  uint32_t capacity() const { return static_cast<uint32_t>(texts_.size()); }
  // Distinct strings held.
  size_t size() const;

 private:
  struct Index;
  std::vector<std::string> texts_;  // by number; [0] unused
  std::vector<uint32_t> counts_;    // by number
  std::vector<uint32_t> free_;
  std::unique_ptr<Index> index_;    // text -> number
};

// One pod as the table encodes it: its strings (the shared ones as StringPool numbers) and numbers in the order
// EncodePodTable writes them, so that appending rows with a PodTableBuilder gives the bytes EncodePodTable gives
// for the same pods. Three allocations, reused when the row is encoded again.
struct PodRow {
  // The row's strings in the encoder's order: 0 for "", (n << 1) for pool string n, (length << 1) | 1 for the
  // row's next own string (names, uids, resourceVersions and container ids, which pods do not share).
  std::vector<uint32_t> strings;
  std::string own;  // the own strings, back to back
  // The per-entry numbers in the encoder's order: owner reference flags; launch priority (has, value), resource
  // entries and restart-on-resize entries per container; transition and update times per condition; ready,
  // restart count and resource entries per container status.
  std::vector<int64_t> values;
  int64_t generation = 0;
  int64_t creation_timestamp = 0;
  int64_t deletion_timestamp = 0;
  // Entries of labels, annotations, finalizers, owner references, readiness gates, containers, conditions,
  // container statuses.
  uint32_t counts[8] = {};
  // A timestamp the table cannot carry: the field under the pod and why. The builder refuses the row.
  std::string error;
};

// Encodes `pod` into `row` (its buffers reused), counting its shared strings in `pool`. A row encoded before must
// have been released first (ReleasePodRow), or come from a pool that is dropped as a whole.
void EncodePodRow(const pb::Pod& pod, StringPool& pool, PodRow* row);
// The same, for a pod whose row `previous` (not `row`) the pool still counts, to be released after: a shared string
// in the same place in both rows is counted again by its number instead of looked up by its text. The row is the one
// the call without `previous` gives.
void EncodePodRow(const pb::Pod& pod, StringPool& pool, PodRow* row, const PodRow* previous);
// Gives the row's shared strings back to `pool`.
void ReleasePodRow(StringPool& pool, const PodRow& row);

// What a cache that keeps only rows reads back from one (its first strings, in the encoder's order).
struct PodRowKey {
  std::string_view name;
  std::string_view namespace_;
  std::string_view uid;
  std::string_view resource_version;
};
PodRowKey ReadPodRowKey(const PodRow& row, const StringPool& pool);
// The row's owner references, four pool numbers each (api_version, kind, name, uid; 0 for ""), in order.
absl::Span<const uint32_t> PodRowOwnerStrings(const PodRow& row);
inline uint32_t PoolNumber(uint32_t slot) { return slot >> 1; }
// The pod `row` was encoded from (a row without an error: every field is in it).
pb::Pod MaterializePodRow(const PodRow& row, const StringPool& pool);

// Appends rows, in order, to a table. `pool` holds the rows' shared strings and must not change until Finish.
class PodTableBuilder {
 public:
  PodTableBuilder(pb::PodTable* table, const StringPool& pool, size_t rows_hint);
  // Fails, naming the row as pods[i] and the field, for a row with an error; the table is unusable then.
  absl::Status Add(const PodRow& row);
  // Drops the columns whose every entry is the default, as the format allows.
  void Finish();

 private:
  uint32_t Append(std::string_view s);
  pb::PodTable* t_;
  const StringPool& pool_;
  std::vector<uint32_t> refs_;  // pool number -> table string number (0: not in the table yet)
  int rows_ = 0;
};

// How many pods a request carries, in `pods` or in `pod_table`.
inline int PodsInRequest(const pb::PlanRequest& request) {
  return request.has_pod_table() ? request.pod_table().name_size() : request.pods_size();
}

// A checked, indexed PodTable. The table must outlive the view.
class PodTableView {
 public:
  // Checks every column's length, every count column against its list, and every string reference; the error
  // names the column and the index ("pod_table.labels[7]: string 90 does not exist (the table has 80)").
  static absl::StatusOr<std::unique_ptr<PodTableView>> Open(const pb::PodTable& table);

  // Entries [begin, end) of one list column that belong to one pod.
  struct Range {
    uint32_t begin = 0;
    uint32_t end = 0;
  };

  uint32_t size() const { return pods_; }
  // How many strings the table holds: every reference is at most this.
  uint32_t strings() const { return static_cast<uint32_t>(table_->string_ends_size()); }
  const pb::PodTable& table() const { return *table_; }
  // String `ref` (checked by Open: every reference in the table is at most the number of strings).
  std::string_view String(uint32_t ref) const {
    if (ref == 0) return {};
    const uint32_t begin = ref == 1 ? 0 : ends_[ref - 2];
    return std::string_view(data_ + begin, ends_[ref - 1] - begin);
  }

  std::string_view name(uint32_t row) const { return String(table_->name().data()[row]); }
  std::string_view Column(const google::protobuf::RepeatedField<uint32_t>& column, uint32_t row) const {
    return column.empty() ? std::string_view() : String(column.data()[row]);
  }
  // Entry `index` of a column the encoder drops when every entry is the default (0, false): the default then.
  template <typename T>
  static T Value(const google::protobuf::RepeatedField<T>& column, uint32_t index) {
    return column.empty() ? T{} : column.Get(static_cast<int>(index));
  }
  // InfinitePast for 0 (unset), as ToTime does for an unset Timestamp.
  static absl::Time Time(int64_t nanos) {
    return nanos == 0 ? absl::InfinitePast() : absl::FromUnixNanos(nanos);
  }

  Range labels(uint32_t row) const { return RangeOf(label_offsets_, row); }
  Range annotations(uint32_t row) const { return RangeOf(annotation_offsets_, row); }
  Range finalizers(uint32_t row) const { return RangeOf(finalizer_offsets_, row); }
  Range owner_references(uint32_t row) const { return RangeOf(owner_offsets_, row); }
  Range readiness_gates(uint32_t row) const { return RangeOf(gate_offsets_, row); }
  Range containers(uint32_t row) const { return RangeOf(container_offsets_, row); }
  Range conditions(uint32_t row) const { return RangeOf(condition_offsets_, row); }
  Range container_statuses(uint32_t row) const { return RangeOf(status_offsets_, row); }
  // The entries of container (or container status) `entry`'s own lists: its resources (3 strings each:
  // "requests"/"limits", name, quantity) and its restart-on-resize resources.
  Range container_resources(uint32_t entry) const { return RangeOf(container_resource_offsets_, entry); }
  Range container_restart_on_resize(uint32_t entry) const { return RangeOf(container_restart_offsets_, entry); }
  Range container_status_resources(uint32_t entry) const { return RangeOf(status_resource_offsets_, entry); }

  // Field `field` of list entry `entry` of a list of `arity` strings per entry.
  std::string_view Entry(const google::protobuf::RepeatedField<uint32_t>& list, uint32_t arity, uint32_t entry,
                         uint32_t field) const {
    return String(list.data()[entry * arity + field]);
  }

  // The pod of `row`, equal to the one EncodePodTable encoded, allocated on `arena`.
  pb::Pod* Materialize(uint32_t row, google::protobuf::Arena* arena) const;
  // Every pod of the table, in order (what a caller that holds only the table sends or checks as objects).
  std::vector<std::shared_ptr<const pb::Pod>> MaterializeAll() const;

 private:
  static Range RangeOf(const std::vector<uint32_t>& offsets, uint32_t row) {
    if (offsets.empty()) return {};
    return {offsets[row], offsets[row + 1]};
  }

  const pb::PodTable* table_ = nullptr;
  const char* data_ = nullptr;      // string_data
  const uint32_t* ends_ = nullptr;  // string_ends
  uint32_t pods_ = 0;
  // offsets[row] .. offsets[row + 1]: the row's entries; empty when the count column is empty (no entries).
  std::vector<uint32_t> label_offsets_, annotation_offsets_, finalizer_offsets_, owner_offsets_, gate_offsets_,
      container_offsets_, condition_offsets_, status_offsets_;
  // The same per container (resources, restart-on-resize) and per container status (resources).
  std::vector<uint32_t> container_resource_offsets_, container_restart_offsets_, status_resource_offsets_;
};

}  // namespace cloneset::planapi
