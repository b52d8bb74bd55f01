// The store's watches: a watcher reads its type's event history from its resourceVersion on, filtered by its
// namespace and selectors, and waits on the type's condition variable for more (kube-apiserver's watch cache).
#include "devcluster/store_state.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/label_selector.h"
#include "devcluster/object_meta.h"
#include "devcluster/selectors.h"

namespace cloneset::devcluster {

using store_internal::HistoryEvent;
using store_internal::TypeState;

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
    case EventType::kBookmark: return "BOOKMARK";
    case EventType::kError: return "ERROR";
  }
  return "ERROR";
}

namespace store_internal {

class WatcherImpl final : public Watcher {
 public:
  WatcherImpl(Store::State* st, std::shared_ptr<TypeState> ts, const WatchOptions& o,
              common::LabelSelector labels, FieldSelector fields)
      : st_(st), ts_(std::move(ts)), ns_(o.ns), labels_(std::move(labels)), fields_(std::move(fields)),
        bookmarks_(o.allow_bookmarks) {}
  ~WatcherImpl() override {
    std::lock_guard<std::mutex> l(st_->mu);
    ts_->watchers.erase(this);
  }

  // Called with st_->mu held at creation.
  void InitLocked(const WatchOptions& o) {
    ts_->watchers.insert(this);
    if (o.send_initial_events) {
      for (const auto& [key, obj] : ts_->objects)
        if (Match(obj)) pending_.push_back({EventType::kAdded, obj->resource_version, obj, {}});
      last_rv_ = st_->rv;
      // As kube-apiserver: the end is marked only for a client that takes bookmarks.
      if (bookmarks_) pending_.push_back({EventType::kBookmark, st_->rv, nullptr, {}, /*initial_events_end=*/true});
    } else if (!o.resource_version || *o.resource_version == 0) {
      for (const auto& [key, obj] : ts_->objects)
        if (Match(obj)) pending_.push_back({EventType::kAdded, obj->resource_version, obj, {}});
      last_rv_ = st_->rv;
    } else {
      last_rv_ = *o.resource_version;
    }
  }

  bool Next(WatchEvent* event, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> l(st_->mu);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!pending_.empty()) {
        *event = std::move(pending_.front());
        pending_.pop_front();
        return true;
      }
      if (stopped_ || failed_ || ts_->removed) return false;
      if (last_rv_ < ts_->floor_rv) {
        failed_ = true;
        event->type = EventType::kError;
        event->resource_version = 0;
        event->object = nullptr;
        event->error = absl::OutOfRangeError(absl::StrCat("too old resource version: ", last_rv_, " (",
                                                          ts_->floor_rv + 1, ")"));
        return true;
      }
      auto& h = ts_->history;
      auto it = std::upper_bound(h.begin(), h.end(), last_rv_,
                                 [](int64_t rv, const HistoryEvent& e) { return rv < e.rv; });
      for (; it != h.end(); ++it) {
        last_rv_ = it->rv;
        if (Translate(*it, event)) return true;
      }
      if (last_rv_ < st_->rv) last_rv_ = st_->rv;  // all events up to st_->rv are in history
      // A zero timeout only polls (the HTTP layer drains a burst this way): no wait, no bookmark.
      if (timeout.count() <= 0) return false;
      if (ts_->cv.wait_until(l, deadline) == std::cv_status::timeout) {
        if (!pending_.empty() || (!ts_->history.empty() && ts_->history.back().rv > last_rv_)) continue;
        if (bookmarks_ && !stopped_) {
          event->type = EventType::kBookmark;
          event->resource_version = last_rv_;
          event->object = nullptr;
          event->initial_events_end = false;
          return true;
        }
        return false;
      }
    }
  }

  bool NextOrBookmark(WatchEvent* event) override {
    if (Next(event, std::chrono::milliseconds(0))) return true;
    std::lock_guard<std::mutex> l(st_->mu);
    if (!bookmarks_ || stopped_ || failed_ || ts_->removed) return false;
    event->type = EventType::kBookmark;
    event->resource_version = last_rv_;
    event->object = nullptr;
    event->error = absl::OkStatus();
    event->initial_events_end = false;
    return true;
  }

  bool Ended() const override {
    std::lock_guard<std::mutex> l(st_->mu);
    return pending_.empty() && (stopped_ || failed_ || ts_->removed);
  }

  void Stop() override {
    std::lock_guard<std::mutex> l(st_->mu);
    stopped_ = true;
    ts_->cv.notify_all();
  }

 private:
  bool Match(const ObjectPtr& o) const {
    if (!o) return false;
    if (!ns_.empty() && o->ns != ns_) return false;
    return labels_.Matches(o->labels) && fields_.Matches(o->fields);
  }
  bool Translate(const HistoryEvent& e, WatchEvent* out) {
    bool now = Match(e.object);
    EventType type = e.type;
    if (e.type == EventType::kModified) {
      bool before = Match(e.previous);
      if (!now && !before) return false;
      if (now && !before) type = EventType::kAdded;
      if (!now && before) type = EventType::kDeleted;
    } else if (!now) {
      return false;
    }
    out->type = type;
    out->resource_version = e.rv;
    out->object = e.object;
    out->error = absl::OkStatus();
    return true;
  }

  Store::State* st_;
  std::shared_ptr<TypeState> ts_;
  std::string ns_;
  common::LabelSelector labels_;
  FieldSelector fields_;
  bool bookmarks_;
  int64_t last_rv_ = 0;
  std::deque<WatchEvent> pending_;
  bool stopped_ = false;
  bool failed_ = false;
};

}  // namespace store_internal

using store_internal::WatcherImpl;

absl::StatusOr<std::unique_ptr<Watcher>> Store::Watch(std::string_view resource, const WatchOptions& options) {
  auto labels = common::LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return absl::FailedPreconditionError(labels.status().message());
  auto fields = FieldSelector::ParseFields(options.field_selector);
  if (!fields.ok()) return absl::FailedPreconditionError(fields.status().message());
  if (absl::Status s = CheckFieldSelector(*fields, resource); !s.ok()) return s;
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts = state_->TypeOr404(resource);
  if (!ts.ok()) return ts.status();
  WatchOptions o = options;
  if (!(*ts)->type.namespaced) o.ns.clear();
  auto w = std::make_unique<WatcherImpl>(state_.get(), *ts, o, std::move(*labels), std::move(*fields));
  w->InitLocked(o);
  return std::unique_ptr<Watcher>(std::move(w));
}

size_t Store::WatcherCount(std::string_view resource) const {
  std::lock_guard<std::mutex> l(state_->mu);
  auto t = state_->FindLocked(resource);
  return t ? t->watchers.size() : 0;
}

}  // namespace cloneset::devcluster
