// The store's objects as stored (StoredObject, devcluster/store_types.h): built from a JSON object, before or
// after its resourceVersion is known, and parsed back. No locking, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "devcluster/store_types.h"

namespace cloneset::devcluster {

// Builds the index of a serialized object (labels, selectable fields, owners, finalizers) the store keeps beside
// its compact JSON; the store and the WAL's replay make every StoredObject with it.
ObjectPtr MakeStoredObject(const nlohmann::json& object, std::string_view resource);

// For text that nlohmann's dump() wrote (the store's serializations, StoredObject::Parse): nlohmann::json::parse(text)
// value for value and type for type (a non-negative integer is number_unsigned, a negative one number_integer, a
// number with a fraction or exponent number_float; the last of duplicate keys wins), at about half its cost:
// simdjson parses and the tree is built from its result. Text simdjson refuses, and text too large to keep a
// parser's buffers for on every thread, go to nlohmann's own parser, errors included. Not for request bodies:
// there "-0" is a signed integer to nlohmann and an unsigned 0 here.
nlohmann::json ParseStoredJson(const std::string& text);

// A StoredObject built before its resourceVersion is known: `object->json` is the object's compact serialization
// with metadata.resourceVersion as "" and `rv_at` the offset between those two quotes. A writer serializes and
// indexes outside the store's lock; the commit, under the lock, only inserts the version it assigns (SetVersion).
// The result is byte for byte MakeStoredObject's for the object with that version.
struct UnversionedObject {
  std::shared_ptr<StoredObject> object;
  size_t rv_at = 0;
};
// `object` must be a JSON object whose metadata is an object (every write path checks this first); its
// metadata.resourceVersion is set to "" here.
UnversionedObject MakeUnversionedObject(nlohmann::json& object, std::string_view resource);
// The serialized size the object will have with version `rv`.
size_t VersionedSize(const UnversionedObject& u, int64_t rv);
// Inserts `rv` into the serialization and the index; `u` is spent.
ObjectPtr SetVersion(UnversionedObject u, int64_t rv);

}  // namespace cloneset::devcluster
