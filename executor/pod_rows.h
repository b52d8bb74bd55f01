// The executor's pods by owner, each with its pod-table row (planapi/pod_table.h, PodRow), kept up to date by the
// pod informer's events: a reconcile takes a CloneSet's pods already sorted by name and assembles their table from
// the rows, instead of copying every pod out of the cache, sorting and encoding them again
// (docs/performance.md "Executor reconcile at 100 000 pods").
//
// The expectations gate reads the pods through Lookup, from here too: a reconcile whose gate saw a pod also finds
// it in its snapshot (the informer updates its own map before its event handlers run, and this index is updated
// by them).
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cloneset/planner/v1/planner.pb.h"
#include "executor/expectations.h"
#include "planapi/pod_table.h"
#include "planapi/request.h"

namespace cloneset::executor {

namespace pb = ::cloneset::planner::v1;

class PodRowIndex {
 public:
  // Files `pod` under the uid of each of its owners ("ns/uid"), replacing what the index held for its key
  // ("ns/name"); its row is encoded now. The same object again (a resync) changes nothing.
  void Upsert(const std::shared_ptr<const pb::Pod>& pod);
  void Remove(const pb::Pod& pod);

  Observed Lookup(const std::string& ns, const std::string& name) const;
  // The pods owned by `ns`/`owner_uid`, sorted by name, and with `with_table` their pod table, assembled from
  // the rows (the bytes planapi::EncodePodTable gives for the same pods).
  planapi::SnapshotPods Owned(const std::string& ns, const std::string& owner_uid, bool with_table) const;

  size_t size() const;
  // Distinct shared strings the rows hold (label keys and values, images, ...).
  size_t shared_strings() const;

 private:
  struct Entry {
    std::shared_ptr<const pb::Pod> pod;
    planapi::PodRow row;
    std::vector<std::string> owners;  // "ns/uid" of each owner reference
  };
  void UnfileLocked(const std::string& name, Entry& e);

  mutable std::shared_mutex mu_;
  planapi::StringPool pool_;
  std::unordered_map<std::string, Entry> entries_;  // "ns/name"; nodes do not move (by_owner_ points at them)
  std::unordered_map<std::string, std::map<std::string, const Entry*>> by_owner_;  // "ns/uid" -> name -> entry
};

}  // namespace cloneset::executor
