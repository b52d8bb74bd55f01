// One node-side pull with the job's timeout: ImageStatus first (a present image is never pulled again, which is
// also what makes a restarted agent cheap), then PullImage with retries, backing off 1 s doubling to 30 s, until
// the timeout is spent. Time and sleeping are injected.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "agent/cri_client.h"
#include "base/clock.h"

namespace cloneset::agent {

// Delay before retry number `failed_attempts` (1 -> 1 s, 2 -> 2 s, 3 -> 4 s, ... capped at 30 s).
absl::Duration Backoff(int failed_attempts);

struct PullResult {
  bool ok = false;
  bool already_present = false;
  std::string image_id;
  uint64_t size = 0;
  int attempts = 0;  // PullImage calls
  std::string message;
};

// `sleep` waits and returns false when the agent is shutting down (the pull is then abandoned, unreported).
PullResult PullWithRetries(ImageService& cri, const std::string& image, const std::optional<RegistryAuth>& auth,
                           absl::Duration timeout, const base::Clock& clock,
                           const std::function<bool(absl::Duration)>& sleep);

}  // namespace cloneset::agent
