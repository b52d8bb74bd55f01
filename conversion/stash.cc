#include "conversion/stash.h"

#include <set>
#include <utility>

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;
using Pointer = Json::json_pointer;

void Diff(const Json& computed, const Json& wanted, const Pointer& at, std::vector<StashEntry>* out) {
  if (computed.is_object() && wanted.is_object()) {
    std::set<std::string> keys;
    for (auto it = computed.begin(); it != computed.end(); ++it) keys.insert(it.key());
    for (auto it = wanted.begin(); it != wanted.end(); ++it) keys.insert(it.key());
    for (const std::string& k : keys) {
      const auto c = computed.find(k);
      const auto w = wanted.find(k);
      if (c != computed.end() && w != wanted.end()) {
        Diff(*c, *w, at / k, out);
        continue;
      }
      StashEntry e{at / k, std::nullopt, std::nullopt};
      if (c != computed.end()) e.was = *c;
      if (w != wanted.end()) e.value = *w;
      out->push_back(std::move(e));
    }
    return;
  }
  if (computed != wanted) out->push_back(StashEntry{at, computed, wanted});
}

// The value at `path`, or nullptr when a member on the way is missing or not an object.
Json* Lookup(Json* root, const Pointer& path) {
  if (path.empty()) return root;
  Json* parent = Lookup(root, path.parent_pointer());
  if (parent == nullptr || !parent->is_object()) return nullptr;
  const auto it = parent->find(path.back());
  return it == parent->end() ? nullptr : &*it;
}

// The object at `path`, created (with its missing parents) when absent; nullptr when something on the way is not an
// object.
Json* ObjectAt(Json* root, const Pointer& path) {
  if (path.empty()) return root->is_object() ? root : nullptr;
  Json* parent = ObjectAt(root, path.parent_pointer());
  if (parent == nullptr) return nullptr;
  Json& child = (*parent)[path.back()];
  if (child.is_null()) child = Json::object();
  return child.is_object() ? &child : nullptr;
}

}  // namespace

std::vector<StashEntry> DiffForStash(const Json& computed, const Json& wanted) {
  std::vector<StashEntry> out;
  Diff(computed, wanted, Pointer(), &out);
  return out;
}

void ApplyStash(const std::vector<StashEntry>& entries, Json* target) {
  for (const StashEntry& e : entries) {
    if (e.path.empty()) continue;  // the whole object is never replaced from an annotation
    const Json* now = Lookup(target, e.path);
    if (now == nullptr ? e.was.has_value() : (!e.was.has_value() || *now != *e.was)) continue;
    if (e.value.has_value()) {
      Json* parent = ObjectAt(target, e.path.parent_pointer());
      if (parent != nullptr) (*parent)[e.path.back()] = *e.value;
      continue;
    }
    if (Json* parent = Lookup(target, e.path.parent_pointer()); parent != nullptr && parent->is_object()) {
      parent->erase(e.path.back());
    }
  }
}

std::string EncodeStash(const std::vector<StashEntry>& entries) {
  Json out = Json::array();
  for (const StashEntry& e : entries) {
    Json entry = {{"path", e.path.to_string()}};
    if (e.was.has_value()) entry["was"] = *e.was;
    if (e.value.has_value()) entry["value"] = *e.value;
    out.push_back(std::move(entry));
  }
  return out.dump();
}

std::vector<StashEntry> DecodeStash(std::string_view text) {
  std::vector<StashEntry> out;
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) return out;
  for (const Json& entry : doc) {
    if (!entry.is_object()) continue;
    const auto path = entry.find("path");
    if (path == entry.end() || !path->is_string()) continue;
    const std::string& p = path->get_ref<const std::string&>();
    if (p.empty() || p.front() != '/') continue;
    StashEntry e;
    try {
      e.path = Pointer(p);
    } catch (const Json::exception&) {  // a malformed escape ("~2")
      continue;
    }
    if (const auto w = entry.find("was"); w != entry.end()) e.was = *w;
    if (const auto v = entry.find("value"); v != entry.end()) e.value = *v;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace cloneset::conversion
