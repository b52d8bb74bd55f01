// The executor's events, written by a thread of their own in the order they were raised.
//
// A plan that updates N pods raises N events (one SuccessfulUpdatePodInPlace per pod), and the plan applier raises
// them after the plan's writes (planapi/applier.h). Written by the worker itself, one POST at a time, they kept the
// CloneSet's key busy: the next plan (the InPlaceUpdateReady=True writes of the pods that restarted meanwhile) waited
// for 1 000 sequential event writes, about a second of a 1 000-pod rollout (docs/performance.md, "Large in-place
// rollout"). Queued, they are written while the next plan runs. client-go's event recorder is asynchronous in the
// same way; unlike its broadcaster, this queue drops nothing: a full queue makes the caller wait (backpressure).
//
// What holds: every event raised reaches the inner sink, in the order raised (the API server's EventRecorder, which
// aggregates repeats and, as client-go does, drops an object's events beyond its spam burst); Stop hands on what is
// still queued before it returns, and an event raised after Stop goes to the inner sink from the caller.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "executor/interfaces.h"

namespace cloneset::executor {

class QueuedEventSink final : public EventSink {
 public:
  // `inner` writes each event; at most `capacity` (>= 1) events wait to be written.
  QueuedEventSink(EventSink& inner, size_t capacity);
  ~QueuedEventSink() override;  // Stop()
  QueuedEventSink(const QueuedEventSink&) = delete;
  QueuedEventSink& operator=(const QueuedEventSink&) = delete;

  // Queues the event and returns; waits only while `capacity` events are queued. The queued event keeps what an
  // event names of the CloneSet (apiVersion, namespace, name, uid, resourceVersion), so `cloneset` need not outlive
  // the call.
  void Event(const pb::CloneSet& cloneset, std::string_view type, std::string_view reason,
             std::string_view message) override;
  // Returns once every event raised before the call has been written.
  void Flush();
  // Writes what is queued, then ends the writer thread. Idempotent.
  void Stop();

 private:
  struct Queued {
    pb::CloneSet cloneset;  // its reference fields only
    std::string type, reason, message;
  };
  void Run();

  EventSink& inner_;
  const size_t capacity_;
  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t raised_ ABSL_GUARDED_BY(mu_) = 0;   // events queued so far
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;  // of those, written
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;  // the writer thread has ended
  std::thread writer_;
};

}  // namespace cloneset::executor
