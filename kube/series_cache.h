// A cache of metrics series, each looked up in its family once. prometheus-cpp's Family::Add builds and hashes a
// label map on every call; a caller that updates the same series per request or per reconcile caches what Add
// returned under a key of its own. The family owns the series; Erase forgets a key whose series the caller is about to remove from its
// family.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace cloneset::kube {

// `Value` is what a key caches: a series pointer, or several of them.
template <typename Value>
class SeriesCache {
 public:
  // The value cached for `key`, made by `make` (which calls the family's Add) on the first call. Thread-safe; two
  // first calls at once both make it, and Add gives both the same series.
  Value Get(std::string_view key, absl::FunctionRef<Value()> make) {
    {
      absl::ReaderMutexLock l(&mu_);
      if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    Value made = make();
    absl::MutexLock l(&mu_);
    cache_.try_emplace(std::string(key), made);
    return made;
  }
  void Erase(std::string_view key) {
    absl::MutexLock l(&mu_);
    if (auto it = cache_.find(key); it != cache_.end()) cache_.erase(it);
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, Value, std::less<>> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cloneset::kube
