#include "executor/worker.h"

namespace cloneset::executor {

bool ProcessNextWorkItem(const WorkerDeps& d) {
  const std::optional<std::string> key = d.queue->Get();
  if (!key.has_value()) return false;
  if (!d.synced()) {
    d.queue->Done(*key);
    d.queue->AddAfter(*key, kNotSyncedRetry);
    return true;
  }
  const absl::Time start = d.clock->Now();
  ReconcileResult r = d.reconcile(*key);
  if (!r.error.ok()) r.result = "error";
  if (d.metrics) d.metrics->Reconciled(r.result, absl::ToDoubleSeconds(d.clock->Now() - start));
  if (!r.error.ok()) {
    if (d.failed) d.failed(*key, r.error);
    if (r.requeue_after > absl::ZeroDuration()) {
      d.queue->AddAfter(*key, r.requeue_after);  // the reconciler's own back-off (retry_backoff.h)
    } else {
      d.queue->AddRateLimited(*key);
    }
  } else {
    d.queue->Forget(*key);
    if (r.requeue_after > absl::ZeroDuration()) d.queue->AddAfter(*key, r.requeue_after);
  }
  d.queue->Done(*key);
  return true;
}

void RunWorker(const WorkerDeps& deps) {
  while (ProcessNextWorkItem(deps)) {
  }
}

}  // namespace cloneset::executor
