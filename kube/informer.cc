#include "kube/informer.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "kube/api_status.h"

namespace cloneset::kube {

ListWatch::ListWatch(RestClient& client, InformerOptions options, Sink& sink)
    : client_(client),
      opts_(std::move(options)),
      clock_(opts_.clock ? *opts_.clock : base::RealClock::Get()),
      sink_(sink) {}

ListWatch::~ListWatch() { Stop(); }

void ListWatch::Start() {
  thread_ = std::thread([this] { Run(); });
  if (opts_.resync_period > absl::ZeroDuration()) {
    resync_thread_ = std::thread([this] { RunResync(); });
  }
}

void ListWatch::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;  // ends a SleepUnlessStopped: its condition is re-evaluated on unlock
  }
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

std::string ListWatch::resource_version() const {
  absl::MutexLock l(&mu_);
  return rv_;
}

absl::Status ListWatch::last_error() const {
  absl::MutexLock l(&mu_);
  return last_error_;
}

void ListWatch::SetError(absl::Status s) {
  absl::MutexLock l(&mu_);
  last_error_ = std::move(s);
}

bool ListWatch::SleepUnlessStopped(absl::Duration d) {
  absl::MutexLock l(&mu_);
  clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), d);
  return !stopping_;
}

void ListWatch::Run() {
  absl::BitGen rng;
  absl::Duration backoff = opts_.backoff_initial;
  auto wait_backoff = [&] {
    // Jitter 1.0 as client-go's wait.Backoff: [d, 2d).
    const absl::Duration d = backoff * absl::Uniform(rng, 1.0, 2.0);
    backoff = std::min(backoff * 2, opts_.backoff_max);
    return SleepUnlessStopped(d);
  };
  bool need_list = true;
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (stopping_) return;
    }
    if (need_list) {
      absl::Status s = List();
      if (!s.ok()) {
        SetError(s);
        if (!wait_backoff()) return;
        continue;
      }
      need_list = false;
      synced_ = true;
    }
    bool progressed = false;
    absl::Status s = WatchOnce(&progressed);
    if (cancel_.cancelled()) return;
    if (IsGone(s)) {
      // Our resourceVersion was compacted away: only a fresh LIST helps.
      SetError(s);
      need_list = true;
      continue;
    }
    if (s.ok()) {
      backoff = opts_.backoff_initial;  // a normal end (timeoutSeconds): re-watch at once
      continue;
    }
    SetError(s);
    if (progressed) {
      // An established stream that broke (a dropped connection, a proxy timeout) resumes from the last
      // resourceVersion at once, as client-go's reflector does; only failing to (re)establish one backs off.
      // Without this, every drop doubled the wait, and after a few the cache lagged by up to a minute.
      backoff = opts_.backoff_initial;
      continue;
    }
    if (!wait_backoff()) return;
  }
}

absl::Status ListWatch::List() {
  ++lists_;
  ListOptions lo{opts_.label_selector, opts_.field_selector, "", "", opts_.page_size};
  sink_.BeginReplace();
  std::string rv;
  for (;;) {
    auto body = client_.List(opts_.path, lo);
    if (!body.ok()) {
      if (IsGone(body.status()) && !lo.continue_token.empty()) {
        // The continue token expired mid-way: one consistent unpaged LIST.
        sink_.BeginReplace();
        lo.continue_token.clear();
        lo.limit = 0;
        continue;
      }
      return body.status();
    }
    auto page = ParseListPage(*std::move(body));
    if (!page.ok()) return page.status();
    for (std::string_view item : page->items) {
      auto meta = ReadObjectMeta(item);
      if (!meta.ok()) return meta.status();
      sink_.ReplaceItem(*meta, item);
    }
    rv = page->resource_version;
    if (page->continue_token.empty()) break;
    lo.continue_token = page->continue_token;
  }
  sink_.EndReplace();
  absl::MutexLock l(&mu_);
  rv_ = rv;
  return absl::OkStatus();
}

absl::Status ListWatch::WatchOnce(bool* progressed) {
  ++watches_;
  static thread_local absl::BitGen rng;
  const int64_t timeout =
      absl::ToInt64Seconds(opts_.watch_timeout * absl::Uniform(rng, 1.0, 2.0));
  ListOptions lo{opts_.label_selector, opts_.field_selector, resource_version(), "", 0};
  const std::string path = absl::StrCat(WithListOptions(opts_.path, lo),
                                        "&watch=1&allowWatchBookmarks=true&timeoutSeconds=",
                                        std::max<int64_t>(timeout, 1));
  JsonObjectSplitter splitter;
  absl::Status stream_error;
  absl::Status s = client_.Watch(
      path,
      [&](std::string_view data) {
        return splitter.Feed(data, [&](std::string_view obj) {
          auto ev = ParseWatchEvent(obj);
          if (!ev.ok()) {
            stream_error = ev.status();
            return false;
          }
          if (ev->type == "ERROR") {
            stream_error = ev->error;
            return false;
          }
          if (ev->type == "ADDED" || ev->type == "MODIFIED" || ev->type == "DELETED") {
            sink_.Apply(*ev);
          } else if (ev->type != "BOOKMARK") {
            return true;  // unknown types are ignored, like client-go
          }
          *progressed = true;
          if (!ev->meta.resource_version.empty()) {
            absl::MutexLock l(&mu_);
            rv_ = ev->meta.resource_version;
          }
          return true;
        });
      },
      &cancel_);
  if (!stream_error.ok()) return stream_error;
  return s;
}

void ListWatch::RunResync() {
  while (SleepUnlessStopped(opts_.resync_period)) {
    if (synced_) sink_.Resync();
  }
}

}  // namespace cloneset::kube
