#ifndef CLONESET_KUBE_EVENT_RECORDER_H_
#define CLONESET_KUBE_EVENT_RECORDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/lru_map.h"
#include "kube/rest_client.h"
#include "kube/token_bucket.h"

namespace cloneset::kube {

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
};

struct EventRecorderOptions {
  std::string component = "cloneset-controller";  // source.component / reportingComponent
  std::string host;                               // source.host / reportingInstance
  size_t max_entries = 4096;                      // client-go's LRU size
  absl::Duration aggregation_window = absl::Minutes(10);
  // client-go's spam filter (EventSourceObjectSpamFilter): per source and involved object, `spam_burst` events at
  // once, then one per `spam_refill`; the rest are dropped. A 10 000-pod scale-up names its CloneSet in 10 000
  // events; this keeps it to what a client-go controller such as kruise-manager writes. spam_burst 0: no filter.
  int spam_burst = 25;
  absl::Duration spam_refill = absl::Minutes(5);
  const base::Clock* clock = nullptr;  // RealClock when null
};

// Writes core v1 Events with client-go-style aggregation: a repeat of the
// same (object, type, reason, message) within the window PATCHes the
// existing Event (count+1, lastTimestamp) instead of creating a new one,
// so a hot loop costs one small patch per repeat, not a new object. The
// memory of recent events is an LRU bounded by max_entries. If the
// aggregated Event is gone (TTL), a new one is created. Before any write,
// client-go's spam filter: an object's events beyond its burst are dropped
// (counted in dropped()) until its bucket refills.
//
// Calls are synchronous and serialised (events are rare next to pod writes);
// thread-safe.
class EventRecorder {
 public:
  EventRecorder(RestClient& client, EventRecorderOptions options);

  absl::Status Event(const ObjectReference& object, std::string_view type, std::string_view reason,
                     std::string_view message);
  size_t cache_size() const;
  int64_t dropped() const;  // events the spam filter dropped so far

 private:
  struct Series {  // one aggregated Event on the server
    std::string event_namespace;
    std::string event_name;
    int count = 0;
    absl::Time first, last;
  };

  absl::Status Create(const ObjectReference& object, std::string_view type, std::string_view reason,
                      std::string_view message, const std::string& key, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  RestClient& client_;
  const EventRecorderOptions opts_;
  const base::Clock& clock_;
  mutable absl::Mutex mu_;
  // By (source, object, type, reason, message), bounded by max_entries as client-go's.
  base::LruMap<std::string, Series> series_ ABSL_GUARDED_BY(mu_);
  int64_t last_suffix_ ABSL_GUARDED_BY(mu_) = 0;
  // The spam filter's buckets by source and object, bounded by max_entries as client-go's.
  base::LruMap<std::string, std::unique_ptr<TokenBucket>> spam_buckets_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

// Event timestamps (metav1.Time): RFC3339 with seconds precision.
std::string FormatEventTime(absl::Time t);

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_EVENT_RECORDER_H_
