// What one API version of an object cannot say, kept in an annotation of the other version so that converting there
// and back gives the object back exactly (docs/semantics.md §1.2, "Lossless round trips").
//
// An entry names a JSON Pointer, the value the plain conversion back produces there ("was", absent when it produces
// nothing) and the value the original had ("value", absent when it had nothing). Applying an entry restores the
// original value only while the path still holds "was": a client that changed the field in the other version wins,
// and its entry is dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace cloneset::conversion {

struct StashEntry {
  nlohmann::json::json_pointer path;
  std::optional<nlohmann::json> was;
  std::optional<nlohmann::json> value;

  bool operator==(const StashEntry&) const = default;
};

// The entries that turn `computed` into `wanted`: one per member present or different on one side, recursing into
// members that are objects on both sides (arrays and scalars are compared whole). Members are visited in name order,
// so equal inputs give equal entries.
std::vector<StashEntry> DiffForStash(const nlohmann::json& computed, const nlohmann::json& wanted);

// Applies each entry whose path holds its "was" (or nothing, when "was" is absent); the others are skipped. Missing
// parent objects are created; an entry whose parent is not an object is skipped.
void ApplyStash(const std::vector<StashEntry>& entries, nlohmann::json* target);

// The annotation value: a compact JSON array of {"path","was","value"} (absent members left out).
std::string EncodeStash(const std::vector<StashEntry>& entries);
// Reads EncodeStash's form. Anything else (not JSON, not an array, an entry without a valid "path") is ignored
// entry by entry: the annotation is the converter's, and a damaged one must not make an object unreadable.
std::vector<StashEntry> DecodeStash(std::string_view text);

}  // namespace cloneset::conversion
