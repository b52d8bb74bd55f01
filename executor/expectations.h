// Read-after-write expectations per CloneSet.
//
// The planner trusts its snapshot to reflect every write the executor made before (it keeps no expectations of
// its own, semantics §9). The informer caches lag behind our writes, so after each write the executor records
// what the cache must show before that CloneSet may be planned again: created objects present, deleted objects
// absent (or terminating), patched objects at a resourceVersion >= the one the write returned. A lost watch event
// must never freeze a CloneSet, so unsatisfied expectations expire after a timeout; the caller then counts a leak
// and re-reads the CloneSet's objects with a fresh LIST.
//
// Pure data structure: time comes in as an argument, cache state through the `Lookup` callback. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace cloneset::executor {

enum class ObjectKind { kPod, kPvc, kRevision, kCloneSet };
std::string_view ObjectKindName(ObjectKind kind);

// What the cache shows for one object.
struct Observed {
  bool exists = false;
  bool deleting = false;          // metadata.deletionTimestamp set
  std::string resource_version;   // "" when absent
};
using Lookup = std::function<Observed(ObjectKind kind, const std::string& name)>;

enum class Want { kPresent, kAbsent, kAtLeastVersion };

struct Expectation {
  ObjectKind kind;
  std::string name;
  Want want;
  std::string resource_version;  // for kAtLeastVersion (and kPresent: the version the create returned)
  bool operator==(const Expectation&) const = default;
};

// Whether `observed` meets `e`. resourceVersions compare as integers (the API server's are etcd revisions);
// a non-numeric cached version never satisfies a version expectation, an empty expected version always does.
bool IsMet(const Expectation& e, const Observed& observed);

struct GateResult {
  enum State { kSatisfied, kPending, kExpired } state = kSatisfied;
  absl::Duration requeue_after = absl::ZeroDuration();  // kPending: time left until the timeout
  std::vector<Expectation> unmet;                       // kPending / kExpired
};

class Expectations {
 public:
  explicit Expectations(absl::Duration timeout) : timeout_(timeout) {}

  // Records an expectation for `key` ("namespace/name" of the CloneSet). A newer expectation on the same object
  // replaces the older one (a create then a patch of the same pod keeps only the patch's version). The timeout
  // runs from the first expectation added to an empty record.
  void Expect(const std::string& key, Expectation e, absl::Time now);
  // Drops met expectations. kSatisfied (record removed) when none is left; kExpired when some are still unmet
  // after the timeout (the record is removed too, so the caller proceeds after a fresh read); else kPending.
  GateResult Check(const std::string& key, const Lookup& lookup, absl::Time now);
  void Forget(const std::string& key);  // CloneSet deleted, or a write failed
  size_t pending_keys() const;
  std::vector<Expectation> Get(const std::string& key) const;

 private:
  struct Record {
    absl::Time since;
    std::vector<Expectation> items;
  };
  const absl::Duration timeout_;
  mutable absl::Mutex mu_;
  std::map<std::string, Record> records_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cloneset::executor
