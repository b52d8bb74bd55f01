#include "executor/same_pod.h"

#include <algorithm>

namespace cloneset::executor {
namespace {

template <class Map>
bool SameMap(const Map& a, const Map& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

bool SameTimestamp(const google::protobuf::Timestamp& a, const google::protobuf::Timestamp& b) {
  return a.seconds() == b.seconds() && a.nanos() == b.nanos();
}

bool SameOwner(const pb::OwnerReference& a, const pb::OwnerReference& b) {
  return a.uid() == b.uid() && a.name() == b.name() && a.kind() == b.kind() && a.api_version() == b.api_version() &&
         a.controller() == b.controller() && a.block_owner_deletion() == b.block_owner_deletion();
}

bool SameContainer(const pb::Container& a, const pb::Container& b) {
  return a.name() == b.name() && a.image() == b.image() && a.has_launch_priority() == b.has_launch_priority() &&
         a.launch_priority() == b.launch_priority() && SameMap(a.resource_requests(), b.resource_requests()) &&
         SameMap(a.resource_limits(), b.resource_limits()) &&
         std::equal(a.restart_on_resize().begin(), a.restart_on_resize().end(), b.restart_on_resize().begin(),
                    b.restart_on_resize().end());
}

template <class Repeated, class Eq>
bool SameList(const Repeated& a, const Repeated& b, Eq eq) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!eq(a.Get(i), b.Get(i))) return false;
  }
  return true;
}

}  // namespace

bool SameMetadataAndSpec(const pb::Pod& fresh, const pb::Pod& seen) {
  const pb::ObjectMeta& a = seen.metadata();
  const pb::ObjectMeta& b = fresh.metadata();
  if (a.uid() != b.uid() || a.name() != b.name() || a.namespace_() != b.namespace_()) return false;
  if (a.has_deletion_timestamp() != b.has_deletion_timestamp()) return false;
  if (a.has_deletion_timestamp() && !SameTimestamp(a.deletion_timestamp(), b.deletion_timestamp())) return false;
  if (!SameMap(a.labels(), b.labels()) || !SameMap(a.annotations(), b.annotations())) return false;
  if (!SameList(a.finalizers(), b.finalizers(), [](const std::string& x, const std::string& y) { return x == y; })) {
    return false;
  }
  if (!SameList(a.owner_references(), b.owner_references(), SameOwner)) return false;
  return seen.node_name() == fresh.node_name() && SameList(seen.containers(), fresh.containers(), SameContainer);
}

}  // namespace cloneset::executor
