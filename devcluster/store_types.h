// Value types the store shares with its stateless policies: object_meta.h builds a StoredObject's index and
// garbage_collector.h decides a collection's propagation. They sit below store.h so that those policies include
// this header, not the store that calls them (tests/layout/include_cycles.py keeps the arrows one way).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cloneset::devcluster {

// One stored version of an object: immutable, shared between the current state, the watch history
// and readers.
struct StoredObject {
  std::string json;  // compact serialized object (includes metadata.resourceVersion)
  int64_t resource_version = 0;
  std::string ns, name, uid;
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<std::string, std::string>> fields;  // selectable fields (FieldsFor)
  std::vector<std::string> owner_uids;
  std::vector<std::string> finalizers;
  bool deleting = false;  // metadata.deletionTimestamp is set

  // The object as nlohmann::json, exactly what nlohmann::json::parse(json) gives (object_meta.cc: a faster parser
  // for the serializations the store writes).
  nlohmann::json Parse() const;
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

// How a delete reaches the object's dependents (metadata.ownerReferences pointing at it).
enum class Propagation { kBackground, kForeground, kOrphan };

}  // namespace cloneset::devcluster
