#include "executor/expectations.h"

#include <algorithm>

#include "absl/strings/numbers.h"

namespace cloneset::executor {

std::string_view ObjectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kPod: return "pod";
    case ObjectKind::kPvc: return "pvc";
    case ObjectKind::kRevision: return "revision";
    case ObjectKind::kCloneSet: return "cloneset";
  }
  return "unknown";
}

namespace {
bool VersionAtLeast(const std::string& cached, const std::string& expected) {
  if (expected.empty()) return true;
  uint64_t c = 0, e = 0;
  if (!absl::SimpleAtoi(cached, &c)) return false;
  if (!absl::SimpleAtoi(expected, &e)) return cached == expected;
  return c >= e;
}
}  // namespace

bool IsMet(const Expectation& e, const Observed& o) {
  switch (e.want) {
    case Want::kPresent:
      // A create is observed once the object is in the cache at all (a later delete also means it was seen).
      return o.exists;
    case Want::kAbsent:
      return !o.exists || o.deleting;
    case Want::kAtLeastVersion:
      // Gone objects cannot show the version any more; waiting for them would only leak.
      return !o.exists || VersionAtLeast(o.resource_version, e.resource_version);
  }
  return true;
}

void Expectations::Expect(const std::string& key, Expectation e, absl::Time now) {
  absl::MutexLock l(&mu_);
  auto [it, inserted] = records_.try_emplace(key);
  if (inserted || it->second.items.empty()) it->second.since = now;
  auto& items = it->second.items;
  std::erase_if(items, [&](const Expectation& x) { return x.kind == e.kind && x.name == e.name; });
  items.push_back(std::move(e));
}

GateResult Expectations::Check(const std::string& key, const Lookup& lookup, absl::Time now) {
  absl::MutexLock l(&mu_);
  GateResult r;
  auto it = records_.find(key);
  if (it == records_.end()) return r;
  auto& items = it->second.items;
  std::erase_if(items, [&](const Expectation& e) { return IsMet(e, lookup(e.kind, e.name)); });
  if (items.empty()) {
    records_.erase(it);
    return r;
  }
  r.unmet = items;
  const absl::Duration elapsed = now - it->second.since;
  if (elapsed >= timeout_) {
    r.state = GateResult::kExpired;
    records_.erase(it);
    return r;
  }
  r.state = GateResult::kPending;
  r.requeue_after = timeout_ - elapsed;
  return r;
}

void Expectations::Forget(const std::string& key) {
  absl::MutexLock l(&mu_);
  records_.erase(key);
}

size_t Expectations::pending_keys() const {
  absl::MutexLock l(&mu_);
  return records_.size();
}

std::vector<Expectation> Expectations::Get(const std::string& key) const {
  absl::MutexLock l(&mu_);
  auto it = records_.find(key);
  return it == records_.end() ? std::vector<Expectation>{} : it->second.items;
}

}  // namespace cloneset::executor
