#ifndef CLONESET_KUBE_INFORMER_H_
#define CLONESET_KUBE_INFORMER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "kube/rest_client.h"
#include "kube/watch_stream.h"

namespace cloneset::kube {

struct InformerOptions {
  std::string path;  // collection: "/api/v1/pods", "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets"
  std::string label_selector;
  std::string field_selector;
  int page_size = 500;  // LIST limit; 0 = one unpaged LIST
  absl::Duration resync_period = absl::ZeroDuration();  // 0 = no resync
  // Each watch asks for timeoutSeconds in [watch_timeout, 2*watch_timeout)
  // so a fleet of informers doesn't reconnect in lockstep (as client-go).
  absl::Duration watch_timeout = absl::Minutes(5);
  absl::Duration backoff_initial = absl::Milliseconds(800);
  absl::Duration backoff_max = absl::Seconds(30);
  // The back-off between failed LISTs or watches and the resync period wait on it (Stop ends them at once).
  const base::Clock* clock = nullptr;  // RealClock when null
};

// The type-independent list+watch loop (client-go's reflector):
//   LIST (paged with limit/continue; on 410 of a continue token, one unpaged
//   LIST), then WATCH from the list's resourceVersion with
//   allowWatchBookmarks; a clean end of the stream re-watches from the last
//   seen resourceVersion (bookmarks advance it); 410 Gone re-lists; other
//   errors reconnect after an exponential backoff with jitter.
class ListWatch {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    // A full LIST: BeginReplace, ReplaceItem for every object, EndReplace.
    virtual void BeginReplace() = 0;
    virtual void ReplaceItem(const ObjectMeta& meta, std::string_view json) = 0;
    virtual void EndReplace() = 0;
    virtual void Apply(const WatchEvent& event) = 0;  // ADDED, MODIFIED, DELETED
    virtual void Resync() = 0;
  };

  ListWatch(RestClient& client, InformerOptions options, Sink& sink);
  ~ListWatch();
  void Start();
  void Stop();  // idempotent; joins the threads
  bool HasSynced() const { return synced_.load(); }
  std::string resource_version() const;
  int lists() const { return lists_.load(); }
  int watches() const { return watches_.load(); }
  absl::Status last_error() const;

 private:
  void Run();
  void RunResync();
  absl::Status List();
  // `progressed`: the stream delivered at least one event (bookmarks count) before it ended.
  absl::Status WatchOnce(bool* progressed);
  bool SleepUnlessStopped(absl::Duration d);
  void SetError(absl::Status s);

  RestClient& client_;
  const InformerOptions opts_;
  const base::Clock& clock_;
  Sink& sink_;
  CancelToken cancel_;
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0}, watches_{0};
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string rv_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  std::thread thread_, resync_thread_;
};

// A list+watch informer keeping a cache of COMPACT objects: `decoder` turns
// an object's JSON into T with only the fields the caller needs (objects it
// rejects are skipped and counted, never cached). Indexed by "ns/name" and
// by an optional secondary index function (e.g. owner uid). Reads are
// thread-safe. Handlers run after the cache has been updated, on the watch
// thread (or the resync thread for resyncs), so they must be quick and
// thread-safe (typically: enqueue a key in a WorkQueue).
template <typename T>
class Informer final : private ListWatch::Sink {
 public:
  using Ptr = std::shared_ptr<const T>;
  using Decoder = std::function<absl::StatusOr<T>(std::string_view json)>;
  using IndexFunc = std::function<std::vector<std::string>(const T&)>;
  struct Handlers {
    std::function<void(const Ptr&)> on_add;
    std::function<void(const Ptr& old_obj, const Ptr& new_obj)> on_update;  // resync: old == new
    std::function<void(const Ptr&)> on_delete;  // the last known state
  };

  Informer(RestClient& client, InformerOptions options, Decoder decoder, Handlers handlers = {},
           IndexFunc index = nullptr)
      : decoder_(std::move(decoder)),
        handlers_(std::move(handlers)),
        index_(std::move(index)),
        lw_(client, std::move(options), *this) {}
  ~Informer() override { Stop(); }

  void Start() { lw_.Start(); }
  void Stop() { lw_.Stop(); }
  bool HasSynced() const { return lw_.HasSynced(); }
  const ListWatch& list_watch() const { return lw_; }
  int decode_errors() const { return decode_errors_.load(); }

  Ptr Get(const std::string& key) const {
    std::shared_lock l(mu_);
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second.obj;
  }
  std::vector<Ptr> List() const {
    std::shared_lock l(mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [k, e] : items_) out.push_back(e.obj);
    return out;
  }
  std::vector<Ptr> ListNamespace(const std::string& ns) const {
    std::shared_lock l(mu_);
    std::vector<Ptr> out;
    const std::string prefix = ns + "/";
    for (auto it = items_.lower_bound(prefix); it != items_.end() && it->first.starts_with(prefix); ++it) {
      out.push_back(it->second.obj);
    }
    return out;
  }
  std::vector<Ptr> ByIndex(const std::string& value) const {
    std::shared_lock l(mu_);
    std::vector<Ptr> out;
    auto [lo, hi] = index_map_.equal_range(value);
    for (auto it = lo; it != hi; ++it) {
      auto e = items_.find(it->second);
      if (e != items_.end()) out.push_back(e->second.obj);
    }
    return out;
  }
  size_t size() const {
    std::shared_lock l(mu_);
    return items_.size();
  }

 private:
  struct Entry {
    std::string rv;
    Ptr obj;
    std::vector<std::string> index_values;
  };
  using Notice = std::function<void()>;

  std::optional<Entry> Decode(const ObjectMeta& meta, std::string_view json) {
    auto decoded = decoder_(json);
    if (!decoded.ok()) {
      ++decode_errors_;
      return std::nullopt;
    }
    Entry e{meta.resource_version, std::make_shared<const T>(*std::move(decoded)), {}};
    if (index_) e.index_values = index_(*e.obj);
    return e;
  }
  void IndexLocked(const std::string& key, const Entry& e, bool add) {
    for (const auto& v : e.index_values) {
      if (add) {
        index_map_.emplace(v, key);
        continue;
      }
      auto [lo, hi] = index_map_.equal_range(v);
      for (auto it = lo; it != hi; ++it) {
        if (it->second == key) {
          index_map_.erase(it);
          break;
        }
      }
    }
  }

  void BeginReplace() override { pending_.clear(); }
  void ReplaceItem(const ObjectMeta& meta, std::string_view json) override {
    if (auto e = Decode(meta, json)) pending_[meta.Key()] = *std::move(e);
  }
  void EndReplace() override {
    std::vector<Notice> notices;
    {
      std::unique_lock l(mu_);
      for (auto& [key, e] : pending_) {
        auto old = items_.find(key);
        if (old == items_.end()) {
          if (handlers_.on_add) notices.push_back([this, p = e.obj] { handlers_.on_add(p); });
        } else if (old->second.rv == e.rv) {
          e = old->second;  // unchanged: keep the cached object, no event
        } else if (handlers_.on_update) {
          notices.push_back([this, o = old->second.obj, p = e.obj] { handlers_.on_update(o, p); });
        }
      }
      for (auto& [key, e] : items_) {
        if (!pending_.count(key) && handlers_.on_delete) {
          notices.push_back([this, o = e.obj] { handlers_.on_delete(o); });
        }
      }
      items_.swap(pending_);
      index_map_.clear();
      for (const auto& [key, e] : items_) IndexLocked(key, e, true);
    }
    pending_.clear();
    for (auto& n : notices) n();
  }
  void Apply(const WatchEvent& ev) override {
    const std::string key = ev.meta.Key();
    Notice notice;
    if (ev.type == "DELETED") {
      std::unique_lock l(mu_);
      auto it = items_.find(key);
      if (it == items_.end()) return;
      IndexLocked(key, it->second, false);
      if (handlers_.on_delete) notice = [this, o = it->second.obj] { handlers_.on_delete(o); };
      items_.erase(it);
    } else {
      auto e = Decode(ev.meta, ev.object_json);
      if (!e) return;
      std::unique_lock l(mu_);
      auto it = items_.find(key);
      if (it == items_.end()) {
        if (handlers_.on_add) notice = [this, p = e->obj] { handlers_.on_add(p); };
      } else {
        IndexLocked(key, it->second, false);
        if (handlers_.on_update) {
          notice = [this, o = it->second.obj, p = e->obj] { handlers_.on_update(o, p); };
        }
      }
      IndexLocked(key, *e, true);
      items_[key] = *std::move(e);
    }
    if (notice) notice();
  }
  void Resync() override {
    if (!handlers_.on_update) return;
    for (const Ptr& p : List()) handlers_.on_update(p, p);
  }

  Decoder decoder_;
  Handlers handlers_;
  IndexFunc index_;
  mutable std::shared_mutex mu_;
  std::map<std::string, Entry> items_;
  std::multimap<std::string, std::string> index_map_;  // index value -> key
  std::map<std::string, Entry> pending_;               // informer thread only
  std::atomic<int> decode_errors_{0};
  ListWatch lw_;  // last: its thread must stop before the members above go
};

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_INFORMER_H_
