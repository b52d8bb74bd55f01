// The store's state: construction with the built-in types, the type registry, reads (get, list), commit
// listeners, the consistent view snapshots take, and restore from the write-ahead log.
#include "devcluster/store_state.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/label_selector.h"
#include "devcluster/object_meta.h"
#include "devcluster/selectors.h"
#include "devcluster/versions.h"

namespace cloneset::devcluster {

namespace store_internal {

std::string ConflictMessage(const ResourceType& t, std::string_view name) {
  return absl::StrCat("Operation cannot be fulfilled on ", QualifiedName(t, name),
                      ": the object has been modified; please apply your changes to the latest version "
                      "and try again");
}

// The object `name` in `ns` (ignored for cluster-scoped types), or kube-apiserver's 404 for it.
absl::StatusOr<std::map<std::string, ObjectPtr>::iterator> FindObject(TypeState& ts, std::string_view ns,
                                                                      std::string_view name) {
  auto it = ts.objects.find(Key(ts.type.namespaced ? ns : "", name));
  if (it == ts.objects.end()) return absl::NotFoundError(absl::StrCat(QualifiedName(ts.type, name), " not found"));
  return it;
}

}  // namespace store_internal

using store_internal::FindObject;
using store_internal::Key;

Store::Store(base::Clock* clock, StoreOptions options)
    : clock_(clock), options_(options), state_(std::make_unique<State>()) {
  state_->clock = clock;
  state_->options = options;
  state_->options.journal = nullptr;  // bootstrap objects are not journaled (see SetJournal)
  for (const auto& t : BuiltinResourceTypes()) state_->RegisterLocked(t);
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"})
    (void)Create(kNamespaces, {{"metadata", {{"name", ns}}}});
  state_->options.journal = options.journal;
}

Store::~Store() = default;

void Store::SetJournal(Journal* journal) {
  std::lock_guard<std::mutex> l(state_->mu);
  state_->options.journal = journal;
}

std::optional<ResourceType> Store::FindType(std::string_view id) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto t = state_->FindLocked(id);
  if (!t) return std::nullopt;
  return t->type;
}

std::vector<ResourceType> Store::Types() const {
  std::lock_guard<std::mutex> l(state_->mu);
  std::vector<ResourceType> out;
  for (const auto& [id, t] : state_->types) out.push_back(t->type);
  return out;
}

int64_t Store::TypesGeneration() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->types_generation;
}


absl::StatusOr<ObjectPtr> Store::GetStored(std::string_view resource, std::string_view ns,
                                           std::string_view name) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  auto it = FindObject(**ts, ns, name);
  if (!it.ok()) return it.status();
  return (*it)->second;
}

absl::StatusOr<nlohmann::json> Store::Get(std::string_view resource, std::string_view ns,
                                          std::string_view name) const {
  auto obj = GetStored(resource, ns, name);
  if (!obj.ok()) return obj.status();
  return (*obj)->Parse();
}


absl::StatusOr<ListResult> Store::List(std::string_view resource, const ListOptions& options) const {
  auto labels = common::LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return absl::FailedPreconditionError(labels.status().message());
  auto fields = FieldSelector::ParseFields(options.field_selector);
  if (!fields.ok()) return absl::FailedPreconditionError(fields.status().message());
  if (absl::Status s = CheckFieldSelector(*fields, resource); !s.ok()) return s;
  std::string start;
  if (!options.continue_token.empty() && !absl::WebSafeBase64Unescape(options.continue_token, &start))
    return absl::FailedPreconditionError("invalid continue token");
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  ListResult result;
  result.resource_version = state_->rv;
  const auto& objects = (*ts)->objects;
  std::string prefix = options.ns.empty() || !(*ts)->type.namespaced ? "" : options.ns + "/";
  auto it = start.empty() ? objects.lower_bound(prefix) : objects.upper_bound(start);
  for (; it != objects.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
    const ObjectPtr& o = it->second;
    if (!labels->Matches(o->labels) || !fields->Matches(o->fields)) continue;
    if (options.limit > 0 && static_cast<int64_t>(result.items.size()) >= options.limit) {
      if (result.continue_token.empty()) result.continue_token = absl::WebSafeBase64Escape(result.items.back() ? Key(result.items.back()->ns, result.items.back()->name) : "");
      ++result.remaining;
      continue;
    }
    result.items.push_back(o);
  }
  return result;
}

absl::StatusOr<std::vector<nlohmann::json>> Store::ListObjects(std::string_view resource,
                                                               const ListOptions& options) const {
  auto list = List(resource, options);
  if (!list.ok()) return list.status();
  std::vector<nlohmann::json> out;
  out.reserve(list->items.size());
  for (const auto& o : list->items) out.push_back(o->Parse());
  return out;
}

int64_t Store::CurrentResourceVersion() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->rv;
}

size_t Store::ObjectCount(std::string_view resource) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto t = state_->FindLocked(resource);
  return t ? t->objects.size() : 0;
}

int Store::AddCommitListener(std::function<void(const std::string&)> fn) {
  std::lock_guard<std::mutex> l(state_->mu);
  int id = state_->next_listener_id++;
  state_->commit_listeners.emplace_back(id, std::move(fn));
  return id;
}

void Store::RemoveCommitListener(int id) {
  std::lock_guard<std::mutex> l(state_->mu);
  auto& v = state_->commit_listeners;
  v.erase(std::remove_if(v.begin(), v.end(), [id](const auto& p) { return p.first == id; }), v.end());
}
absl::Status Store::Restore(const std::vector<JournalRecord>& records, int64_t resource_version) {
  std::lock_guard<std::mutex> l(state_->mu);
  for (auto& [id, ts] : state_->types) ts->objects.clear();
  state_->by_uid.clear();
  state_->dependents.clear();
  auto load = [&](const JournalRecord& r) {
    auto ts = state_->FindLocked(r.resource);
    if (!ts || !r.object) return;
    std::string key = Key(r.object->ns, r.object->name);
    ObjectPtr old = ts->objects.count(key) ? ts->objects[key] : nullptr;
    if (r.deleted) {
      ts->objects.erase(key);
      state_->IndexLocked(r.resource, key, nullptr, old);
    } else {
      ts->objects[key] = r.object;
      state_->IndexLocked(r.resource, key, r.object, old);
    }
  };
  for (const auto& r : records)
    if (r.resource == kCustomResourceDefinitions) load(r);
  for (const auto& [key, obj] : state_->FindLocked(kCustomResourceDefinitions)->objects) {
    auto t = ResourceTypeFromCrd(obj->Parse());
    if (t.ok()) state_->RegisterLocked(*t);
  }
  for (const auto& r : records)
    if (r.resource != kCustomResourceDefinitions) load(r);
  state_->rv = std::max(state_->rv, resource_version);
  for (auto& [id, ts] : state_->types) {
    ts->history.clear();
    ts->floor_rv = state_->rv;
  }
  return absl::OkStatus();
}

void Store::ForEach(const std::function<void(const std::string&, const ObjectPtr&)>& fn) const {
  std::lock_guard<std::mutex> l(state_->mu);
  for (const auto& [id, ts] : state_->types)
    for (const auto& [key, obj] : ts->objects) fn(id, obj);
}

void Store::ConsistentView(
    const std::function<void(const std::vector<std::pair<std::string, ObjectPtr>>&, int64_t)>& fn) const {
  std::lock_guard<std::mutex> l(state_->mu);
  std::vector<std::pair<std::string, ObjectPtr>> all;
  for (const auto& [id, ts] : state_->types)
    for (const auto& [key, obj] : ts->objects) all.emplace_back(id, obj);
  fn(all, state_->rv);
}


}  // namespace cloneset::devcluster
