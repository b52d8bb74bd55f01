#include "executor/event_queue.h"

#include <algorithm>
#include <utility>

namespace cloneset::executor {

QueuedEventSink::QueuedEventSink(EventSink& inner, size_t capacity)
    : inner_(inner), capacity_(std::max<size_t>(capacity, 1)), writer_([this] { Run(); }) {}

QueuedEventSink::~QueuedEventSink() { Stop(); }

void QueuedEventSink::Event(const pb::CloneSet& cloneset, std::string_view type, std::string_view reason,
                            std::string_view message) {
  Queued e;
  e.cloneset.set_api_version(cloneset.api_version());
  auto* meta = e.cloneset.mutable_metadata();
  meta->set_namespace_(cloneset.metadata().namespace_());
  meta->set_name(cloneset.metadata().name());
  meta->set_uid(cloneset.metadata().uid());
  meta->set_resource_version(cloneset.metadata().resource_version());
  e.type = std::string(type);
  e.reason = std::string(reason);
  e.message = std::string(message);
  {
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(
        +[](QueuedEventSink* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
          return s->stopped_ || s->queue_.size() < s->capacity_;
        },
        this));
    if (!stopped_) {
      queue_.push_back(std::move(e));
      ++raised_;
      return;
    }
  }
  // After Stop: the caller writes it, as without the queue.
  inner_.Event(e.cloneset, e.type, e.reason, e.message);
}

void QueuedEventSink::Run() {
  absl::MutexLock l(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](QueuedEventSink* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) { return s->stopping_ || !s->queue_.empty(); },
        this));
    if (queue_.empty()) break;  // stopping, and everything queued is written
    Queued e = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    inner_.Event(e.cloneset, e.type, e.reason, e.message);
    mu_.Lock();
    ++written_;
  }
  stopped_ = true;
}

void QueuedEventSink::Flush() {
  absl::MutexLock l(&mu_);
  std::pair<QueuedEventSink*, uint64_t> until{this, raised_};
  mu_.Await(absl::Condition(
      +[](std::pair<QueuedEventSink*, uint64_t>* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->first->written_ >= a->second || a->first->stopped_;
      },
      &until));
}

void QueuedEventSink::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (writer_.joinable()) writer_.join();
}

}  // namespace cloneset::executor
