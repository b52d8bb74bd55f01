// The executor's worker loop, one key at a time, as sample-controller's processNextWorkItem: take a key from the
// work queue; while the caches have not synced, put it back for 200 ms later without reconciling; else reconcile
// it and requeue it by the outcome: after an error (ReconcileResult.error) with the reconciler's back-off when it
// gives one (requeue_after, executor/retry_backoff.h) else the queue's, after the
// plan's delay when it asks for one (requeue_after), not at all otherwise, and forget its back-off on success.
// The key is always marked done, so another worker may take it up again. Several workers may run RunWorker on one
// queue: the queue never hands one key to two of them at once.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "executor/metrics.h"
#include "executor/reconciler.h"
#include "kube/workqueue.h"

namespace cloneset::executor {

// A key taken while the caches were not synced comes back after this long.
inline constexpr absl::Duration kNotSyncedRetry = absl::Milliseconds(200);

struct WorkerDeps {
  kube::WorkQueue* queue;
  std::function<ReconcileResult(const std::string& key)> reconcile;
  std::function<bool()> synced;        // the caches have synced
  const base::Clock* clock;            // times the reconcile for the metrics
  ExecutorMetrics* metrics = nullptr;  // optional
  // Told about every failed reconcile (the key goes back with back-off); optional.
  std::function<void(const std::string& key, const absl::Status& error)> failed;
};

// Processes one key; false once the queue is shut down and has no ready key left (the worker ends).
bool ProcessNextWorkItem(const WorkerDeps& deps);

// ProcessNextWorkItem until it returns false: a worker thread's body.
void RunWorker(const WorkerDeps& deps);

}  // namespace cloneset::executor
